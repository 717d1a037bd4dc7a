package schemadiff_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/race"
)

// Generated rules: expressions built from the fields of fuzzRuleSchema
// (integers, numbers, strings, booleans, lists, a set, a map, an object,
// an int-or-string), with messages, reasons, field paths and oldSelf, and
// objects whose values make them hold, fail and err.

func genRule(src source, depth int) string {
	if depth > 2 || chance(src, 40) {
		return genAtom(src)
	}
	a, b := genRule(src, depth+1), genRule(src, depth+1)
	switch src.intn(4) {
	case 0:
		return "(" + a + ") && (" + b + ")"
	case 1:
		return "(" + a + ") || (" + b + ")"
	case 2:
		return "!(" + a + ")"
	default:
		return "(" + genAtom(src) + ") ? (" + a + ") : (" + b + ")"
	}
}

func genAtom(src source) string {
	n := fmt.Sprint(src.intn(7) - 2)
	op := pick(src, "<", "<=", ">", ">=", "==", "!=")
	return pick(src,
		"has(self."+pick(src, "i", "n", "s", "b", "l", "set", "m", "o", "ios")+")",
		"self.i "+op+" "+n,
		"self.n "+op+" "+n+".5",
		"self.n "+op+" "+n,
		"self.s "+op+" '"+pick(src, "a", "b", "ab", "")+"'",
		"self.s.startsWith('a')",
		"self.s.matches('^[a-c]+$')",
		"self.s.size() "+op+" "+n,
		"self.l.all(x, x "+op+" "+n+")",
		"self.l.exists(x, x "+op+" "+n+")",
		"self.l.exists_one(x, x == "+n+")",
		"size(self.l) "+op+" "+n,
		n+" in self.l",
		"self.l.isSorted()",
		"self.l.sum() "+op+" "+n,
		"self.l.filter(x, x > 0).size() < 2",
		"self.set == oldSelf.set",
		"self.i == oldSelf.i",
		"self.o == oldSelf.o",
		"self.l == oldSelf.l",
		"self.m == oldSelf.m",
		"'a' in self.m",
		"self.m.all(k, self.m[k].size() < 3)",
		"self.o.x "+op+" "+n,
		"has(self.o.y) && self.o.y != ''",
		"self.b",
		"self.ios == 3 || self.ios == 'x'",
		"self.l[2] > 0",
		"1 / self.i > 0",
		"int(self.s) > 0",
		"self.set.all(x, x.size() < 2)",
		"(self.set + ['a']).size() < 3",
		"self.set.indexOf('b') < 1",
		"isURL(self.s)",
		"isIP(self.s) || isCIDR(self.s)",
		"isQuantity(self.s) && quantity(self.s).isLessThan(quantity('1Ki'))",
		"self.s.find('[a-z]+') == 'ab'",
		"self.s.findAll('[a-c]').size() "+op+" "+n,
		"self.m.exists(k, v, v == 'x')",
		"self.l.sortBy(x, -x)[0] > 0",
		"self.set.join(',') != 'a,b'",
		"self.s.upperAscii() == 'AB'",
		"self.l.max() "+op+" "+n,
		"isSemver(self.s, true) && semver(self.s, true).major() < 2",
		"format.dns1123Label().validate(self.s).hasValue()",
		"format.named(self.s).hasValue()",
		"self.s.replace('a', 'b') == 'bb'",
		"self.s.indexOf('b') "+op+" "+n,
		"self.m.transformList(k, v, k + v).size() < 2",
	)
}

func genRules(src source) []map[string]any {
	var out []map[string]any
	for range 1 + src.intn(3) {
		r := map[string]any{"rule": genRule(src, 0)}
		if chance(src, 50) {
			r["message"] = pick(src, "the rule failed", "nope")
		}
		if chance(src, 30) {
			r["messageExpression"] = pick(src, "'s is ' + self.s", "self.s", "'i: ' + string(self.i)", "'fixed'", "''")
		}
		if chance(src, 30) {
			r["reason"] = pick(src, "FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
		}
		if chance(src, 30) {
			r["fieldPath"] = pick(src, ".s", ".o.x", ".m['a']", ".o", ".l")
		}
		if strings.Contains(r["rule"].(string), "oldSelf") && chance(src, 30) {
			r["rule"] = "oldSelf.hasValue() ? (" + strings.ReplaceAll(r["rule"].(string), "oldSelf", "oldSelf.value()") + ") : true"
			r["optionalOldSelf"] = true
		}
		out = append(out, r)
	}
	return out
}

func genRuleObject(src source) []byte {
	obj := map[string]any{}
	set := func(k string, v any) {
		if chance(src, 75) {
			obj[k] = v
		}
	}
	set("i", src.intn(6)-2)
	set("n", float64(src.intn(8)-3)/2)
	set("s", pick(src, "a", "ab", "abc", "b", "", "12", "zz", "10.0.0.1", "1Mi", "https://x/y", "10.0.0.0/8", "v1.2", "1.2.3-rc.1", "uri"))
	set("b", chance(src, 50))
	var l []any
	for range src.intn(4) {
		l = append(l, src.intn(5)-1)
	}
	set("l", l)
	var st []any
	for _, x := range []string{"a", "b", "cc"} {
		if chance(src, 50) {
			st = append(st, x)
		}
	}
	set("set", st)
	m := map[string]any{}
	for _, k := range []string{"a", "b"} {
		if chance(src, 50) {
			m[k] = pick(src, "x", "xyz", "")
		}
	}
	set("m", m)
	o := map[string]any{}
	if chance(src, 60) {
		o["x"] = src.intn(4) - 1
	}
	if chance(src, 60) {
		o["y"] = pick(src, "", "y")
	}
	set("o", o)
	set("ios", pick[any](src, 3, "x", 4, "y"))
	obj["apiVersion"], obj["kind"], obj["metadata"] = "example.com/v1", "Widget", map[string]any{"name": "a"}
	b, _ := json.Marshal(obj)
	return b
}

func compareGeneratedRules(t *testing.T, src source, objects int) {
	rules, _ := json.Marshal(genRules(src))
	schemaJSON := strings.Replace(fuzzRuleSchema, `[{"rule":%s,"message":"the fuzzed rule"%s}]`, string(rules), 1)
	var list [][]byte
	for range objects {
		list = append(list, genRuleObject(src))
	}
	compareRules(t, []byte(schemaJSON), list)
}

func TestGeneratedRules(t *testing.T) {
	n := 400
	if testing.Short() || race.Enabled {
		n = 60
	}
	for seed := range n {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			compareGeneratedRules(t, randSource{rand.New(rand.NewPCG(uint64(seed), 29))}, 5)
		})
	}
}
