package validation

import (
	"fmt"
	"reflect"
	"regexp"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/names"
)

// Conditions are validated as kube-apiserver validates a list of
// metav1.Condition (k8s.io/apimachinery's ValidateConditions), with its
// words, so that a controller written against Kubernetes' condition
// helpers (meta.SetStatusCondition) meets the same rules on kapi. For's
// schema applies them to every field of type []kapi.Condition.

// Limits of a condition, as Kubernetes sets them.
const (
	MaxConditionReasonBytes  = 1 << 10
	MaxConditionMessageBytes = 32 << 10
)

var (
	conditionsType  = reflect.TypeFor[[]kapi.Condition]()
	conditionReason = regexp.MustCompile(`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`)
	// conditionStatuses are the statuses a condition may have, sorted as
	// Kubernetes lists them in its message.
	conditionStatuses = []string{kapi.ConditionFalse, kapi.ConditionTrue, kapi.ConditionUnknown}
)

// conditionReasonMessage is Kubernetes' message for a reason that does not
// match its pattern, examples and all (validation.RegexError's wording).
const conditionReasonMessage = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' " +
	"(e.g. 'my_name',  or 'MY_NAME',  or 'MyName',  or 'ReasonA,ReasonB',  or 'ReasonA:ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')"

// Conditions checks a list of conditions at field (status.conditions):
// each condition's type is set and unique in the list, and a qualified
// name; its status is True, False or Unknown; its observedGeneration is
// not negative; its lastTransitionTime is set; its reason is set, matches
// Kubernetes' pattern and holds at most MaxConditionReasonBytes; its
// message (which may be empty) at most MaxConditionMessageBytes.
func Conditions(conditions []kapi.Condition, field string) []*Error {
	var errs []*Error
	seen := make(map[string]bool, len(conditions))
	for i, c := range conditions {
		at := fmt.Sprintf("%s[%d]", field, i)
		if seen[c.Type] {
			errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueDuplicate, Field: at, BadValue: c.Type})
		}
		seen[c.Type] = true
		errs = append(errs, Condition(c, at)...)
	}
	return errs
}

// Condition checks one condition at field (status.conditions[0]); see
// Conditions.
func Condition(c kapi.Condition, field string) []*Error {
	var errs []*Error
	if c.Type == "" {
		errs = append(errs, &Error{Type: kapi.CauseTypeFieldValueRequired, Field: field + ".type", Detail: "is required"})
	} else {
		for _, msg := range names.IsQualifiedName(c.Type) {
			errs = append(errs, invalid(field+".type", c.Type, msg))
		}
	}
	switch c.Status {
	case "":
		errs = append(errs, required(field+".status"))
	case kapi.ConditionTrue, kapi.ConditionFalse, kapi.ConditionUnknown:
	default:
		errs = append(errs, notSupported(field+".status", c.Status, conditionStatuses))
	}
	if c.ObservedGeneration < 0 {
		errs = append(errs, invalid(field+".observedGeneration", c.ObservedGeneration, "must be greater than or equal to zero"))
	}
	if c.LastTransitionTime.IsZero() {
		errs = append(errs, required(field+".lastTransitionTime"))
	}
	if c.Reason == "" {
		errs = append(errs, required(field+".reason"))
	} else {
		if !conditionReason.MatchString(c.Reason) {
			errs = append(errs, invalid(field+".reason", c.Reason, conditionReasonMessage))
		}
		if len(c.Reason) > MaxConditionReasonBytes {
			errs = append(errs, tooLong(field+".reason", MaxConditionReasonBytes))
		}
	}
	if len(c.Message) > MaxConditionMessageBytes {
		errs = append(errs, tooLong(field+".message", MaxConditionMessageBytes))
	}
	return errs
}

// conditionsOf is v, a []kapi.Condition, as one: a copy where v was
// reached through an unexported embedded struct, whose values reflection
// does not hand out.
func conditionsOf(v reflect.Value) []kapi.Condition {
	if v.CanInterface() {
		return v.Interface().([]kapi.Condition)
	}
	out := make([]kapi.Condition, v.Len())
	for i := range out {
		c := v.Index(i)
		out[i] = kapi.Condition{
			Type: c.FieldByName("Type").String(), Status: c.FieldByName("Status").String(),
			ObservedGeneration: c.FieldByName("ObservedGeneration").Int(),
			Reason:             c.FieldByName("Reason").String(), Message: c.FieldByName("Message").String(),
		}
		if !c.FieldByName("LastTransitionTime").IsZero() {
			out[i].LastTransitionTime = kapi.Now() // only whether it is set matters
		}
	}
	return out
}
