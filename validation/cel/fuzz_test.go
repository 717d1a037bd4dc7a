package cel_test

import (
	"encoding/json"
	"testing"
)

// FuzzEval compiles arbitrary rules and evaluates those that compile on
// arbitrary JSON values: an error, never a panic, and within the cost limit.
func FuzzEval(f *testing.F) {
	f.Add("self.min <= self.max", `{"min":1,"max":2}`, `null`)
	f.Add("self == oldSelf", `"a"`, `"b"`)
	f.Add("self.all(x, x.startsWith('a'))", `["ab","b"]`, `[]`)
	f.Add("size(self) < 3 && self.exists(k, k == 'x')", `{"x":1.5}`, `{}`)
	f.Add("self.split(',').size() > 1", `"a,b"`, `null`)
	e := mustEngine(f)
	f.Fuzz(func(t *testing.T, rule, self, oldSelf string) {
		p, err := e.Compile(rule)
		if err != nil {
			return
		}
		var s, o any
		if json.Unmarshal([]byte(self), &s) != nil || json.Unmarshal([]byte(oldSelf), &o) != nil {
			return
		}
		_, _ = p.Eval(s, o)
	})
}
