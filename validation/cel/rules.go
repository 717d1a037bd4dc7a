package cel

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

// Kubernetes' limits on the cost of rules (k8s.io/apiserver/pkg/apis/cel):
// one evaluation of a rule, all the rules run on one object, and the
// estimates a CustomResourceDefinition's rules must stay within.
const (
	perCallLimit        = 1_000_000
	runtimeBudget       = 10_000_000
	staticRuleLimit     = 10_000_000
	staticCRDLimit      = 100_000_000
	maxMessageBytes     = 5 * 1024
	interruptFrequency  = 100
	selfVar, oldSelfVar = "self", "oldSelf"
)

var _ schema.RuleCompiler = (*Engine)(nil)

// CompileRules compiles the x-kubernetes-validations rules of s, the
// openAPIV3Schema of a resource, for schema.RuleCompiler.
func (e *Engine) CompileRules(s *schema.Schema) schema.RuleSet {
	if !hasRules(s) {
		return nil
	}
	c, err := e.compile(s)
	if err != nil {
		return &failedSet{err: err}
	}
	return c
}

// compiled is the rules of one schema, compiled node by node.
type compiled struct {
	// meta holds the resource form (withMeta) of the nodes that are
	// resources, made while compiling and only read after.
	meta   map[*schema.Schema]*schema.Schema
	frozen bool // set once compiled: meta is only read
	root   *node
}

// node is a schema node that has rules, or has them below it.
type node struct {
	s     *schema.Schema // as the object holds it (withMeta is applied when read)
	root  bool           // a resource: the schema's root or an embedded one
	rules []*rule
	// initErr is set when the node's rules could not be compiled at all.
	initErr    error
	props      map[string]*node
	items      *node
	additional *node
}

// rule is one compiled x-kubernetes-validations entry.
type rule struct {
	src         schema.Rule
	program     cel.Program
	err         *ruleError // the rule's compile error, if any
	usesOldSelf bool
	message     cel.Program
	messageErr  *ruleError
	fieldPath   string // normalized, "" when none
	maxCost     uint64
	messageCost uint64
	cardinality uint64 // the most times the rule may run on one object, from request size
}

// ruleError is a compile error with the cause type kube gives it.
type ruleError struct {
	internal bool
	detail   string
}

func (e *ruleError) Error() string { return e.detail }

// failedSet is a schema whose rules' environment could not be built.
type failedSet struct{ err error }

func (f *failedSet) Validate(obj, old any) []*validation.Error {
	return []*validation.Error{{Type: kapi.CauseTypeFieldValueInvalid, Field: "<nil>", BadValue: "object",
		Detail: fmt.Sprintf("rule compiler initialization error: %v", f.err)}}
}

func hasRules(s *schema.Schema) bool {
	if s == nil {
		return false
	}
	if len(s.Validations) > 0 || hasRules(s.Items) || hasRules(s.AdditionalProperties) {
		return true
	}
	for _, p := range s.Properties {
		if hasRules(p) {
			return true
		}
	}
	return false
}

func (e *Engine) compile(s *schema.Schema) (*compiled, error) {
	base, err := e.schemaEnv()
	if err != nil {
		return nil, err
	}
	c := &compiled{meta: map[*schema.Schema]*schema.Schema{}}
	c.prepareMeta(s, true)
	c.root = c.node(base, s, true, c.declTypeOf(s, true, "object", map[string]*declType{}))
	c.frozen = true
	return c, nil
}

// prepareMeta makes the resource form of every resource node, so that
// evaluation only reads c.meta.
func (c *compiled) prepareMeta(s *schema.Schema, root bool) {
	if s == nil {
		return
	}
	if root || s.EmbeddedResource {
		c.withMeta(s)
	}
	for _, p := range s.Properties {
		c.prepareMeta(p, false)
	}
	c.prepareMeta(s.Items, false)
	c.prepareMeta(s.AdditionalProperties, false)
}

// node compiles the rules at s and below, where d is s's type as its
// parent's type declares it (nil if the rules cannot see it).
func (c *compiled) node(base *cel.Env, s *schema.Schema, root bool, d *declType) *node {
	if !hasRules(s) {
		return nil
	}
	n := &node{s: s, root: root}
	if len(s.Validations) > 0 {
		n.rules, n.initErr = c.compileRules(base, s, root, d)
	}
	var elem *declType
	if d != nil {
		elem = d.elem
	}
	if s.Items != nil {
		n.items = c.node(base, s.Items, s.Items.EmbeddedResource, elem)
	}
	for name, p := range s.Properties {
		var pt *declType
		if field, ok := escape(name); ok {
			if d == nil || d.fields[field] == nil {
				continue
			}
			pt = d.fields[field]
		} else if pt = c.declTypeOf(p, p.EmbeddedResource, "object", map[string]*declType{}); pt == nil {
			continue
		}
		if sub := c.node(base, p, p.EmbeddedResource, pt); sub != nil {
			if n.props == nil {
				n.props = map[string]*node{}
			}
			n.props[name] = sub
		}
	}
	if s.AdditionalProperties != nil {
		n.additional = c.node(base, s.AdditionalProperties, s.AdditionalProperties.EmbeddedResource, elem)
	}
	return n
}

// compileRules compiles the rules of one node, with self typed as the
// node's value.
func (c *compiled) compileRules(base *cel.Env, s *schema.Schema, root bool, d *declType) ([]*rule, error) {
	if d == nil {
		return nil, errors.New("failed to convert to declType for CEL validation rules")
	}
	// The node's own types, named from selfType as kube-apiserver names
	// them (after a unique prefix), so that messages naming a type read
	// alike.
	reg := map[string]*declType{}
	self := c.declTypeOf(s, root, "selfType", reg)
	if self == nil {
		return nil, errors.New("failed to convert to declType for CEL validation rules")
	}
	prov := &provider{Provider: base.CELTypeProvider(), objects: reg}
	env, err := base.Extend(cel.CustomTypeProvider(prov),
		cel.Variable(selfVar, self.cel), cel.Variable(oldSelfVar, self.cel))
	if err != nil {
		return nil, err
	}
	var optEnv *cel.Env // oldSelf an optional, for rules with optionalOldSelf; made on first use
	est := &estimator{root: self}
	cardinality := uint64(maxRequestBytes / (self.minSize + 1))
	out := make([]*rule, len(s.Validations))
	for i, src := range s.Validations {
		r := &rule{src: src, cardinality: cardinality}
		out[i] = r
		ruleEnv := env
		if src.OptionalOldSelf != nil && *src.OptionalOldSelf {
			if optEnv == nil {
				if optEnv, err = base.Extend(cel.CustomTypeProvider(prov),
					cel.Variable(selfVar, self.cel), cel.Variable(oldSelfVar, types.NewOptionalType(self.cel))); err != nil {
					return nil, err
				}
			}
			ruleEnv = optEnv
		}
		r.compile(ruleEnv, est)
		if src.FieldPath != "" {
			r.fieldPath, _ = s.FieldPath(src.FieldPath)
		}
	}
	return out, nil
}

func (r *rule) compile(env *cel.Env, est *estimator) {
	if strings.TrimSpace(r.src.Rule) == "" {
		return
	}
	ast, iss := env.Compile(r.src.Rule)
	if iss != nil && iss.Err() != nil {
		r.err = &ruleError{detail: "compilation failed: " + iss.String()}
		return
	}
	if !ast.OutputType().IsExactType(cel.BoolType) {
		r.err = &ruleError{detail: "cel expression must evaluate to a bool"}
		return
	}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref.Name == oldSelfVar {
			r.usesOldSelf = true
			break
		}
	}
	prg, err := env.Program(ast, programOptions(est)...)
	if err != nil {
		r.err = &ruleError{detail: "program instantiation failed: " + err.Error()}
		return
	}
	cost, err := env.EstimateCost(ast, est)
	if err != nil {
		r.err = &ruleError{internal: true, detail: "cost estimation failed: " + err.Error()}
		return
	}
	r.maxCost, r.program = cost.Max, prg
	if r.src.MessageExpression == "" {
		return
	}
	ast, iss = env.Compile(r.src.MessageExpression)
	if iss != nil && iss.Err() != nil {
		r.messageErr = &ruleError{detail: "messageExpression compilation failed: " + iss.String()}
		return
	}
	if !ast.OutputType().IsExactType(cel.StringType) {
		r.messageErr = &ruleError{detail: "messageExpression must evaluate to a string"}
		return
	}
	if prg, err = env.Program(ast, programOptions(est)...); err != nil {
		r.messageErr = &ruleError{detail: "messageExpression instantiation failed: " + err.Error()}
		return
	}
	if cost, err = env.EstimateCost(ast, est); err != nil {
		r.messageErr = &ruleError{internal: true, detail: "cost estimation failed for messageExpression: " + err.Error()}
		return
	}
	r.message, r.messageCost = prg, cost.Max
}

func programOptions(est *estimator) []cel.ProgramOption {
	return []cel.ProgramOption{
		cel.EvalOptions(cel.OptOptimize, cel.OptTrackCost),
		cel.CostLimit(perCallLimit),
		cel.CostTracking(est),
		cel.CostTrackerOptions(interpreter.PresenceTestHasCost(false)),
		cel.InterruptCheckFrequency(interruptFrequency),
	}
}

// Validate evaluates the rules on obj, with old its value before an
// update (nil on create), for schema.RuleSet.
func (c *compiled) Validate(obj, old any) []*validation.Error {
	var corr ratchet
	if old != nil {
		corr = ratchet{current: schema.Correlate(obj, old, c.root.s)}
	}
	errs, _ := c.root.validate(c, "", obj, old, corr, runtimeBudget)
	slices.SortStableFunc(errs, func(a, b *validation.Error) int { return strings.Compare(a.Field, b.Field) })
	return errs
}

func childPath(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func (n *node) validate(c *compiled, path string, obj, old any, corr ratchet, budget int64) ([]*validation.Error, int64) {
	if n == nil || obj == nil {
		return nil, budget
	}
	errs, budget := n.evalRules(c, path, obj, old, corr, budget)
	if budget < 0 {
		return errs, budget
	}
	switch v := obj.(type) {
	case []any:
		if n.items == nil {
			return errs, budget
		}
		oldList, _ := old.([]any)
		var oldItems *schema.Correlation
		if oldList != nil {
			oldItems = schema.Correlate(v, oldList, n.s)
		}
		for i, item := range v {
			var sub []*validation.Error
			sub, budget = n.items.validate(c, path+"["+strconv.Itoa(i)+"]", item, oldItems.Index(i).Old(), corr.index(i), budget)
			errs = append(errs, sub...)
			if budget < 0 {
				return errs, budget
			}
		}
	case map[string]any:
		oldMap, _ := old.(map[string]any)
		if n.additional != nil {
			for k, x := range v {
				var sub []*validation.Error
				sub, budget = n.additional.validate(c, path+"["+k+"]", x, oldMap[k], corr.key(k), budget)
				errs = append(errs, sub...)
				if budget < 0 {
					return errs, budget
				}
			}
		}
		for k, x := range v {
			p, ok := n.props[k]
			if !ok {
				continue
			}
			var sub []*validation.Error
			sub, budget = p.validate(c, childPath(path, k), x, oldMap[k], corr.key(k), budget)
			errs = append(errs, sub...)
			if budget < 0 {
				return errs, budget
			}
		}
	}
	return errs, budget
}

func (n *node) readsOldSelf() bool {
	for _, r := range n.rules {
		if r.usesOldSelf {
			return true
		}
	}
	return false
}

// activation gives a rule its variables.
type activation struct {
	self, oldSelf ref.Val
	hasOldSelf    bool
}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case selfVar:
		return a.self, true
	case oldSelfVar:
		return a.oldSelf, a.hasOldSelf
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

func (n *node) evalRules(c *compiled, path string, obj, old any, corr ratchet, budget int64) ([]*validation.Error, int64) {
	at := path
	if at == "" {
		at = "<nil>"
	}
	s := n.s
	if n.root {
		s = c.withMeta(s)
	}
	if n.initErr != nil {
		return []*validation.Error{invalid(at, s.Type, fmt.Sprintf("rule compiler initialization error: %v", n.initErr))}, budget
	}
	if len(n.rules) == 0 {
		return nil, budget
	}
	if budget <= 0 {
		return []*validation.Error{invalid(at, s.Type, "validation failed due to running out of cost budget, no further validation rules will be run")}, -1
	}
	self := c.toVal(obj, s)
	act := &activation{self: self}
	optAct := &activation{self: self, hasOldSelf: true, oldSelf: types.OptionalNone}
	if old != nil && n.readsOldSelf() {
		// As in kube-apiserver, oldSelf is bound only for a node with a
		// rule that reads it (a messageExpression alone does not count).
		act.oldSelf, act.hasOldSelf = c.toVal(old, s), true
		optAct.oldSelf = types.OptionalOf(act.oldSelf)
	}
	var errs []*validation.Error
	for _, r := range n.rules {
		if r.err != nil {
			errs = append(errs, invalid(at, s.Type, "rule compile error: "+r.err.detail))
			continue
		}
		if r.program == nil {
			continue
		}
		optional := r.src.OptionalOldSelf != nil && *r.src.OptionalOldSelf
		if r.usesOldSelf && old == nil && !optional {
			continue
		}
		ruleAct := act
		if optional {
			ruleAct = optAct
		}
		out, details, err := r.program.Eval(ruleAct)
		if details == nil || details.ActualCost() == nil {
			errs = append(errs, invalid(at, s.Type, fmt.Sprintf("runtime cost could not be calculated for validation rule: %v, no further validation rules will be run", ruleText(r.src))))
			return errs, -1
		}
		cost := *details.ActualCost()
		if cost > math.MaxInt64 || int64(cost) > budget {
			errs = append(errs, invalid(at, s.Type, "validation failed due to running out of cost budget, no further validation rules will be run"))
			return errs, -1
		}
		budget -= int64(cost)
		if err != nil {
			switch msg := err.Error(); {
			case strings.HasPrefix(msg, "no such overload"):
				errs = append(errs, invalid(at, s.Type, fmt.Sprintf("'%v': call arguments did not match a supported operator, function or macro signature for rule: %v", err, ruleText(r.src))))
			case strings.HasPrefix(msg, "operation cancelled: actual cost limit exceeded"):
				errs = append(errs, invalid(at, s.Type, fmt.Sprintf("'%v': no further validation rules will be run due to call cost exceeds limit for rule: %v", err, ruleText(r.src))))
				return errs, -1
			default:
				errs = append(errs, invalid(at, s.Type, fmt.Sprintf("%v evaluating rule: %v", err, ruleText(r.src))))
			}
			continue
		}
		if out == types.True {
			continue
		}
		fieldAt := path
		if r.fieldPath != "" {
			if strings.HasPrefix(r.fieldPath, "[") { // a map key or list index first: spec.m[x], not spec.m.[x]
				fieldAt = path + r.fieldPath
			} else {
				fieldAt = childPath(path, r.fieldPath)
			}
		}
		if fieldAt == "" {
			fieldAt = "<nil>"
		}
		ratcheted := !r.usesOldSelf && corr.unchanged()
		add := func(e *validation.Error) {
			if !ratcheted {
				errs = append(errs, e)
			}
		}
		detail, ok := "", false
		if r.message != nil {
			msg, left, msgErr := evalMessage(r.message, r.src.MessageExpression, ruleAct, budget)
			switch {
			case msgErr == nil:
				detail, ok, budget = msg, true, left
			case msgErr.stop:
				add(invalid(fieldAt, s.Type, msgErr.detail))
				return errs, -1
			default:
				budget = left
			}
		}
		if !ok {
			detail = ruleMessage(r.src)
		}
		var value any = obj
		if s.Type == "object" || s.Type == "array" {
			value = validation.OmittedValue{}
		}
		add(errorForReason(fieldAt, value, detail, r.src.Reason))
	}
	return errs, budget
}
