package cel

import (
	"errors"
	"fmt"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/ext"

	"github.com/kapi-dev/kapi/validation"
)

// costLimit is kube-apiserver's limit on the cost of one evaluation
// (apiextensions' PerCallLimit).
const costLimit = 1_000_000

// Engine compiles rules to CEL programs. It is safe for concurrent use.
type Engine struct {
	env *cel.Env

	// The environment of schemas' rules, made on first use.
	once    sync.Once
	base    *cel.Env
	baseErr error
}

var _ validation.RuleEngine = (*Engine)(nil)

// New returns an Engine whose rules see self and oldSelf.
func New() (*Engine, error) {
	env, err := cel.NewEnv(
		cel.Variable("self", cel.DynType),
		cel.Variable("oldSelf", cel.DynType),
		cel.CrossTypeNumericComparisons(true),
		ext.Strings(),
		ext.Lists(),
		ext.Sets(),
	)
	if err != nil {
		return nil, fmt.Errorf("cel: %w", err)
	}
	return &Engine{env: env}, nil
}

// Compile checks that rule is CEL evaluating to a bool.
func (e *Engine) Compile(rule string) (validation.Program, error) {
	ast, iss := e.env.Compile(rule)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if !ast.OutputType().IsExactType(cel.BoolType) && !ast.OutputType().IsExactType(cel.DynType) {
		return nil, fmt.Errorf("evaluates to %v, not a bool", ast.OutputType())
	}
	prg, err := e.env.Program(ast, cel.CostLimit(costLimit), cel.EvalOptions(cel.OptTrackCost))
	if err != nil {
		return nil, err
	}
	p := &program{prg: prg}
	for _, ref := range ast.NativeRep().ReferenceMap() {
		if ref.Name == "oldSelf" {
			p.transition = true
		}
	}
	return p, nil
}

type program struct {
	prg        cel.Program
	transition bool
}

var _ validation.Program = (*program)(nil)

func (p *program) Transition() bool { return p.transition }

func (p *program) Eval(self, oldSelf any) (bool, error) {
	vars := map[string]any{"self": self}
	if p.transition {
		vars["oldSelf"] = oldSelf
	}
	out, _, err := p.prg.Eval(vars)
	if err != nil {
		return false, err
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, errors.New("the rule did not evaluate to a bool")
	}
	return b, nil
}
