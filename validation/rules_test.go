package validation_test

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/validation"
)

// fakeEngine knows three rules, enough to test how rule tags are walked
// and worded; package validation/cel tests CEL itself.
type fakeEngine struct{}

type fakeProgram struct{ rule string }

func (fakeEngine) Compile(rule string) (validation.Program, error) {
	switch rule {
	case "self.min <= self.max", "self == oldSelf", "self != 'x'", "boom":
		return fakeProgram{rule}, nil
	}
	return nil, errors.New("unknown rule")
}

func (p fakeProgram) Transition() bool { return strings.Contains(p.rule, "oldSelf") }

func (p fakeProgram) Eval(self, oldSelf any) (bool, error) {
	switch p.rule {
	case "self.min <= self.max":
		m := self.(map[string]any)
		return m["min"].(int64) <= m["max"].(int64), nil
	case "self == oldSelf":
		return reflect.DeepEqual(self, oldSelf), nil
	case "self != 'x'":
		return self != "x", nil
	}
	return false, errors.New("no such key")
}

type Limits struct {
	Min int32 `json:"min"`
	Max int32 `json:"max"`
}

type Ruled struct {
	Limits Limits   `json:"limits" rule:"self.min <= self.max" ruleMessage:"min must not exceed max"`
	Plain  Limits   `json:"plain,omitempty" rule:"self.min <= self.max"`
	Class  string   `json:"class,omitempty" rule:"self == oldSelf" ruleMessage:"class is immutable"`
	Name   string   `json:"name,omitempty" rule:"self != 'x'"`
	Odd    *string  `json:"odd,omitempty" rule:"boom"`
	Items  []Limits `json:"items,omitempty"`
}

func TestRules(t *testing.T) {
	s, err := validation.For(reflect.TypeFor[Ruled](), validation.WithRuleEngine(fakeEngine{}))
	if err != nil {
		t.Fatal(err)
	}
	odd := "o"
	r := &Ruled{Limits: Limits{Min: 2, Max: 1}, Plain: Limits{Min: 3, Max: 1}, Class: "a", Name: "x", Odd: &odd}
	want := []string{
		`limits: Invalid value: min must not exceed max`,
		`plain: Invalid value: failed rule: self.min <= self.max`,
		`name: Invalid value: "x": failed rule: self != 'x'`,
		`odd: Invalid value: "o": no such key evaluating rule: boom`,
	}
	if got := messages(s.Validate(r, nil)); !slices.Equal(got, want) {
		t.Errorf("create:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// A transition rule runs on updates, where the old value is.
	old := &Ruled{Limits: Limits{Max: 1}, Class: "b"}
	r = &Ruled{Limits: Limits{Max: 1}, Class: "a"}
	want = []string{`class: Invalid value: "a": class is immutable`}
	if got := messages(s.Validate(r, old)); !slices.Equal(got, want) {
		t.Errorf("update:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	old.Class = ""
	if got := messages(s.Validate(r, old)); len(got) > 0 {
		t.Errorf("update from no class: %q, want none (no old value for the transition rule)", got)
	}
	// Rules ratchet like every other check.
	old = &Ruled{Limits: Limits{Min: 5, Max: 1}}
	r = &Ruled{Limits: Limits{Min: 5, Max: 1}, Class: "new"}
	if got := messages(s.Validate(r, old)); len(got) > 0 {
		t.Errorf("an update leaving the broken limits alone: %q", got)
	}
}

func TestRulesNeedAnEngine(t *testing.T) {
	_, err := validation.For(reflect.TypeFor[Ruled]())
	if err == nil || !strings.Contains(err.Error(), `limits (validation_test.Ruled): rule "self.min <= self.max": no RuleEngine`) {
		t.Errorf("For without an engine: %v", err)
	}
	type bad struct {
		A string `json:"a" rule:"nonsense"`
	}
	if _, err := validation.For(reflect.TypeFor[bad](), validation.WithRuleEngine(fakeEngine{})); err == nil || !strings.Contains(err.Error(), "unknown rule") {
		t.Errorf("a rule the engine refuses: %v", err)
	}
	type transitionInList struct {
		A []struct {
			B string `json:"b" rule:"self == oldSelf"`
		} `json:"a"`
	}
	if _, err := validation.For(reflect.TypeFor[transitionInList](), validation.WithRuleEngine(fakeEngine{})); err == nil || !strings.Contains(err.Error(), "must be reached through structs") {
		t.Errorf("a transition rule in a list: %v", err)
	}
	type messageOnly struct {
		A string `json:"a" ruleMessage:"m"`
	}
	if _, err := validation.For(reflect.TypeFor[messageOnly]()); err == nil || !strings.Contains(err.Error(), "ruleMessage without a rule") {
		t.Errorf("a ruleMessage alone: %v", err)
	}
}
