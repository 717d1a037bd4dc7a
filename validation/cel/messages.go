package cel

import (
	"fmt"
	"math"
	"strings"

	"github.com/google/cel-go/cel"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/schema"
	"github.com/kapi-dev/kapi/validation"
)

func invalid(path string, value any, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: path, BadValue: value, Detail: detail}
}

// ruleText names a rule in an error: its message, or its expression.
func ruleText(r schema.Rule) string {
	if r.Message != "" {
		return strings.TrimSpace(r.Message)
	}
	return strings.TrimSpace(r.Rule)
}

// ruleMessage is the detail of a failed rule without a messageExpression.
func ruleMessage(r schema.Rule) string {
	if r.Message == "" {
		return "failed rule: " + ruleText(r)
	}
	return strings.TrimSpace(r.Message)
}

// errorForReason is a failed rule's error, of the type its reason asks
// for (FieldValueInvalid when none).
func errorForReason(path string, value any, detail string, reason *string) *validation.Error {
	if reason == nil {
		return invalid(path, value, detail)
	}
	switch *reason {
	case "FieldValueForbidden":
		return &validation.Error{Type: kapi.CauseTypeFieldValueForbidden, Field: path, Detail: detail}
	case "FieldValueRequired":
		return &validation.Error{Type: kapi.CauseTypeFieldValueRequired, Field: path, Detail: detail}
	case "FieldValueDuplicate":
		return &validation.Error{Type: kapi.CauseTypeFieldValueDuplicate, Field: path, BadValue: value}
	}
	return invalid(path, value, detail)
}

// messageError is a messageExpression that gave no message; stop says
// that no further rules run.
type messageError struct {
	detail string
	stop   bool
}

// evalMessage evaluates a messageExpression within budget, returning the
// message and the budget left.
func evalMessage(prg cel.Program, src string, act *activation, budget int64) (string, int64, *messageError) {
	out, details, err := prg.Eval(act)
	if details == nil || details.ActualCost() == nil {
		return "", -1, &messageError{stop: true, detail: fmt.Sprintf("runtime cost could not be calculated for messageExpression: %q", src)}
	}
	cost := *details.ActualCost()
	if cost > math.MaxInt64 || int64(cost) > budget {
		return "", -1, &messageError{stop: true, detail: "messageExpression evaluation failed due to running out of cost budget, no further validation rules will be run"}
	}
	left := budget - int64(cost)
	if err != nil {
		if strings.HasPrefix(err.Error(), "operation cancelled: actual cost limit exceeded") {
			return "", -1, &messageError{stop: true, detail: fmt.Sprintf("no further validation rules will be run due to call cost exceeds limit for messageExpression: %q", src)}
		}
		return "", left, &messageError{detail: "messageExpression evaluation failed due to: " + err.Error()}
	}
	msg, ok := out.Value().(string)
	if !ok {
		return "", left, &messageError{detail: "messageExpression failed to convert to string"}
	}
	msg = strings.TrimSpace(msg)
	switch {
	case len(msg) > maxMessageBytes:
		return "", left, &messageError{detail: fmt.Sprintf("messageExpression beyond allowable length of %d", maxMessageBytes)}
	case strings.Contains(msg, "\n"):
		return "", left, &messageError{detail: "messageExpression should not contain line breaks"}
	case msg == "":
		return "", left, &messageError{detail: "messageExpression should evaluate to a non-empty string"}
	}
	return msg, left, nil
}
