package cel

import (
	"errors"
	"fmt"
	"github.com/google/cel-go/cel"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// CheckRules is kube-apiserver's check of the x-kubernetes-validations
// rules of a CustomResourceDefinition's schema s at path, for
// schema.RuleCompiler: each rule and messageExpression must compile, to a
// bool and a string, within the estimated cost limits (per expression,
// times the most times it may run on one object; and in total), a rule
// may read oldSelf only where the old value can be found (not under a
// list other than a list-type map list), and optionalOldSelf only if it
// reads oldSelf.
func (e *Engine) CheckRules(s *schema.Schema, path string) []*validation.Error {
	if !hasRules(s) {
		return nil
	}
	base, err := e.schemaEnv()
	if err != nil {
		return []*validation.Error{{Type: kapi.CauseTypeFieldValueInvalid, Field: path + ".x-kubernetes-validations", BadValue: "", Detail: err.Error()}}
	}
	c := &compiled{meta: map[*schema.Schema]*schema.Schema{}}
	ck := &ruleChecker{c: c, base: base}
	one := uint64(1)
	ck.walk(s, path, true, &one, "")
	if ck.total > staticCRDLimit {
		for _, x := range ck.expensive {
			ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: x.path,
				Detail: "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema"})
		}
		ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: path,
			Detail: costMessage("x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema", ck.total, staticCRDLimit)})
	}
	return ck.errs
}

type ruleChecker struct {
	c         *compiled
	base      *cel.Env
	errs      []*validation.Error
	total     uint64
	expensive []pathCost
}

type pathCost struct {
	path string
	cost uint64
}

// ruleValue is how kube-apiserver shows a rule as a refused value.
type ruleValue struct {
	Rule              string
	Message           string
	MessageExpression string
	Reason            *string
	FieldPath         string
	OptionalOldSelf   *bool
}

// walk checks the rules at s and below. cardinality is the most times
// s's value may occur in one object (nil when unbounded); uncorrelatable
// is the outermost list above s whose items have no old counterparts.
func (ck *ruleChecker) walk(s *schema.Schema, path string, root bool, cardinality *uint64, uncorrelatable string) {
	if s == nil {
		return
	}
	if len(s.Validations) > 0 {
		ck.checkNode(s, path, root, cardinality, uncorrelatable)
	}
	child := func(sub *schema.Schema) *uint64 {
		if cardinality == nil {
			return nil
		}
		var most uint64 = 1
		switch {
		case s.Type == "object" && s.AdditionalProperties != nil:
			if s.MaxProperties == nil {
				return nil
			}
			most = uint64(max(*s.MaxProperties, 0))
		case s.Type == "array":
			if s.MaxItems == nil {
				return nil
			}
			most = uint64(max(*s.MaxItems, 0))
		}
		n := multiply(*cardinality, most)
		return &n
	}
	if s.AdditionalProperties != nil {
		ck.walk(s.AdditionalProperties, path+".additionalProperties", s.AdditionalProperties.EmbeddedResource, child(s.AdditionalProperties), uncorrelatable)
	}
	for name, p := range s.Properties {
		ck.walk(p, path+".properties["+name+"]", p.EmbeddedResource, child(p), uncorrelatable)
	}
	if s.Items != nil {
		u := uncorrelatable
		if u == "" && (s.ListType == nil || *s.ListType != schema.ListMap) {
			u = path
		}
		ck.walk(s.Items, path+".items", s.Items.EmbeddedResource, child(s.Items), u)
	}
}

func (ck *ruleChecker) checkNode(s *schema.Schema, path string, root bool, cardinality *uint64, uncorrelatable string) {
	d := ck.c.declTypeOf(s, root, "object", map[string]*declType{})
	at := path + ".x-kubernetes-validations"
	if d == nil {
		// A value rules cannot see (no type): refused as kube-apiserver's
		// CRD validation refuses it, when converting the node's schema
		// to CEL declarations fails.
		ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeInternal, Field: at,
			Detail: "internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations"})
		return
	}
	rules, err := ck.c.compileRules(ck.base, s, root, d)
	if err != nil {
		ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: at, BadValue: "", Detail: "internal error: " + err.Error()})
		return
	}
	for i, r := range rules {
		ruleAt := at + "[" + strconv.Itoa(i) + "]"
		cost := multiply(r.maxCost, r.cardinality)
		if cardinality != nil {
			cost = multiply(r.maxCost, *cardinality)
		}
		if cost > staticRuleLimit {
			ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: ruleAt + ".rule",
				Detail: costMessage("estimated rule cost", cost, staticRuleLimit)})
		}
		ck.observe(ruleAt+".rule", cost)
		value := ruleValue{r.src.Rule, r.src.Message, r.src.MessageExpression, r.src.Reason, r.src.FieldPath, r.src.OptionalOldSelf}
		if r.err != nil {
			ck.errs = append(ck.errs, invalid(ruleAt+".rule", value, r.err.detail))
		}
		if r.messageErr != nil {
			ck.errs = append(ck.errs, invalid(ruleAt+".messageExpression", value, r.messageErr.detail))
		} else if r.message != nil {
			if r.messageCost > staticRuleLimit {
				ck.errs = append(ck.errs, &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: ruleAt + ".messageExpression",
					Detail: costMessage("estimated messageExpression cost", r.messageCost, staticRuleLimit)})
			}
			ck.observe(ruleAt+".messageExpression", r.messageCost)
		}
		if r.usesOldSelf {
			if uncorrelatable != "" {
				ck.errs = append(ck.errs, invalid(ruleAt+".rule", r.src.Rule, fmt.Sprintf("oldSelf cannot be used on the uncorrelatable portion of the schema within %v", uncorrelatable)))
			}
		} else if r.src.OptionalOldSelf != nil {
			ck.errs = append(ck.errs, invalid(ruleAt+".optionalOldSelf", *r.src.OptionalOldSelf, "may not be set if oldSelf is not used in rule"))
		}
	}
}

func (ck *ruleChecker) observe(path string, cost uint64) {
	if math.MaxUint64-ck.total < cost {
		ck.total = math.MaxUint64
	} else {
		ck.total += cost
	}
	if cost < staticCRDLimit/100 {
		return
	}
	ck.expensive = append(ck.expensive, pathCost{path, cost})
	sort.SliceStable(ck.expensive, func(i, j int) bool { return ck.expensive[i].cost > ck.expensive[j].cost })
	if len(ck.expensive) > 4 {
		ck.expensive = ck.expensive[:4]
	}
}

func multiply(a, b uint64) uint64 {
	if a == 0 {
		return 0
	}
	if math.MaxUint64/a < b {
		return math.MaxUint64
	}
	return a * b
}

// costMessage is kube-apiserver's words for an estimate over its limit.
func costMessage(name string, cost, limit uint64) string {
	factor := float64(cost) / float64(limit)
	var f string
	switch {
	case factor > 100:
		f = "more than 100x"
	case factor < 1.5:
		f = fmt.Sprintf("%fx", factor)
	default:
		f = fmt.Sprintf("%.1fx", factor)
	}
	return fmt.Sprintf("%s exceeds budget by factor of %s (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", name, f)
}

// ErrRules is the error of RulesFor for a schema whose rules
// kube-apiserver would refuse.
var ErrRules = errors.New("cel: invalid x-kubernetes-validations")

// RulesFor checks the rules of s, the openAPIV3Schema of a kind
// registered without a CustomResourceDefinition (where nothing else has
// run CheckRules), and compiles them: an error wrapping ErrRules names
// every rule kube-apiserver would refuse, with its message. The RuleSet
// is nil when s has no rules.
func (e *Engine) RulesFor(s *schema.Schema) (schema.RuleSet, error) {
	if errs := e.CheckRules(s, "openAPIV3Schema"); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, err := range errs {
			msgs[i] = err.Error()
		}
		return nil, fmt.Errorf("%w: %s", ErrRules, strings.Join(msgs, "; "))
	}
	return e.CompileRules(s), nil
}
