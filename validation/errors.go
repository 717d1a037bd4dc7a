package validation

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
)

// Error is one invalid field, with the cause type and words kube-apiserver
// uses (k8s.io/apimachinery/pkg/util/validation/field). The request path
// turns a list of them into one 422 Invalid with a cause per Error.
type Error struct {
	Type kapi.CauseType
	// Field is the JSON path of the field: spec.ports[1].port, spec.selector[app].
	Field string
	// BadValue is the refused value; nil for Required and TooLong,
	// OmittedValue{} where the message shows none (a rule on an object).
	BadValue any
	// Detail says what the field must be.
	Detail string
}

// OmittedValue is the BadValue of an Error whose message shows no value,
// as field.OmitValueType is in Kubernetes.
type OmittedValue struct{}

func (e *Error) Error() string {
	body := causeWords[e.Type]
	switch e.Type {
	case kapi.CauseTypeFieldValueRequired, kapi.CauseTypeFieldValueTooLong, kapi.CauseTypeFieldValueForbidden, kapi.CauseTypeInternal:
	default:
		if e.BadValue == (OmittedValue{}) {
			break
		}
		body += ": " + formatValue(e.BadValue)
	}
	if e.Detail != "" {
		body += ": " + e.Detail
	}
	return e.Field + ": " + body
}

var causeWords = map[kapi.CauseType]string{
	kapi.CauseTypeFieldValueRequired:     "Required value",
	kapi.CauseTypeFieldValueInvalid:      "Invalid value",
	kapi.CauseTypeFieldValueTypeInvalid:  "Invalid value",
	kapi.CauseTypeFieldValueNotSupported: "Unsupported value",
	kapi.CauseTypeFieldValueTooLong:      "Too long",
	kapi.CauseTypeTooMany:                "Too many",
	kapi.CauseTypeFieldValueForbidden:    "Forbidden",
	kapi.CauseTypeFieldValueDuplicate:    "Duplicate value",
	kapi.CauseTypeFieldValueNotFound:     "Not found",
	kapi.CauseTypeInternal:               "Internal error",
}

// formatValue writes a refused value as field.Error does.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case int64, int32, float64, float32, bool:
		return fmt.Sprint(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("%#v", v)
	}
	return string(b)
}

// The constructors below word each failure as Kubernetes does: the cause
// types a CustomResourceDefinition's schema gives (apiextensions-apiserver's
// kubeOpenAPIResultToFieldErrors), the details as Kubernetes' own
// declarative validation writes them (k8s.io/apimachinery/pkg/api/validate).

func required(path string) *Error {
	return &Error{Type: kapi.CauseTypeFieldValueRequired, Field: path}
}

func invalid(path string, value any, detail string) *Error {
	return &Error{Type: kapi.CauseTypeFieldValueInvalid, Field: path, BadValue: value, Detail: detail}
}

// notSupported is field.NotSupported: the supported values quoted.
func notSupported(path string, value any, supported []string) *Error {
	quoted := make([]string, len(supported))
	for i, s := range supported {
		quoted[i] = strconv.Quote(s)
	}
	return &Error{Type: kapi.CauseTypeFieldValueNotSupported, Field: path, BadValue: value,
		Detail: "supported values: " + strings.Join(quoted, ", ")}
}

// tooLong is field.TooLong, which a CRD's maxLength gives: it counts
// characters but says bytes.
func tooLong(path string, max int64) *Error {
	unit := "bytes"
	if max == 1 {
		unit = "byte"
	}
	return &Error{Type: kapi.CauseTypeFieldValueTooLong, Field: path, Detail: fmt.Sprintf("may not be more than %d %s", max, unit)}
}

// tooMany is field.TooMany.
func tooMany(path string, actual int, max int64) *Error {
	unit := "items"
	if max == 1 {
		unit = "item"
	}
	return &Error{Type: kapi.CauseTypeTooMany, Field: path, BadValue: actual, Detail: fmt.Sprintf("must have at most %d %s", max, unit)}
}

// typeInvalid is field.TypeInvalid, which a CRD's format gives.
func typeInvalid(path string, value any, format string) *Error {
	return &Error{Type: kapi.CauseTypeFieldValueTypeInvalid, Field: path, BadValue: value, Detail: "must be of type " + format}
}
