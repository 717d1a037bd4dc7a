package schema

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// The codes of kube-openapi's validation errors, which decide the cause
// type of each (apiextensions-apiserver's kubeOpenAPIResultToFieldErrors).
type failure uint8

const (
	failPlain failure = iota // not a validation error: Invalid at the root, value ""
	failType
	failRequired
	failTooLong
	failEnum
	failMaxItems
	failTooManyProperties
	failOther // Invalid at the field
)

// fail is one failure found by the schema's keywords.
type fail struct {
	code   failure
	name   string // the path kube-openapi names ("" at the root, ".x" under it)
	value  any
	max    int64 // maxLength, maxItems, maxProperties
	actual int64
	values []any // an enum's values
	msg    string
}

func (e *fail) fieldError(base string) *validation.Error {
	path := base
	if e.code != failPlain && e.name != "" && e.name != "." {
		path = child(base, strings.TrimPrefix(e.name, "."))
	}
	value := e.value
	if value == nil {
		value = ""
	}
	switch e.code {
	case failPlain:
		// kube-apiserver names no field here; at the root its nil path
		// prints as <nil>, which clients have always seen.
		field := base
		if field == "" {
			field = "<nil>"
		}
		return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: field, BadValue: "", Detail: e.msg}
	case failRequired:
		return &validation.Error{Type: kapi.CauseTypeFieldValueRequired, Field: path, BadValue: ""}
	case failEnum:
		supported := make([]string, len(e.values))
		for i, v := range e.values {
			if s, ok := v.(string); ok {
				supported[i] = strconv.Quote(s)
			} else {
				supported[i] = strconv.Quote(jsonText(v))
			}
		}
		detail := ""
		if len(supported) > 0 {
			detail = "supported values: " + strings.Join(supported, ", ")
		}
		return &validation.Error{Type: kapi.CauseTypeFieldValueNotSupported, Field: path, BadValue: e.value, Detail: detail}
	case failTooLong:
		return tooLong(path, e.max)
	case failMaxItems, failTooManyProperties:
		return tooMany(path, e.actual, e.max)
	case failType:
		return &validation.Error{Type: kapi.CauseTypeFieldValueTypeInvalid, Field: path, BadValue: value, Detail: e.msg}
	}
	return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: path, BadValue: value, Detail: e.msg}
}

func tooLong(path string, max int64) *validation.Error {
	unit := "bytes"
	if max == 1 {
		unit = "byte"
	}
	detail := "value is too long"
	if max >= 0 {
		detail = fmt.Sprintf("may not be more than %d %s", max, unit)
	}
	return &validation.Error{Type: kapi.CauseTypeFieldValueTooLong, Field: path, BadValue: "<value omitted>", Detail: detail}
}

func tooMany(path string, actual, max int64) *validation.Error {
	unit := "items"
	if max == 1 {
		unit = "item"
	}
	detail := "has too many items"
	if max >= 0 {
		detail = fmt.Sprintf("must have at most %d %s", max, unit)
	}
	var value any = int(actual)
	if actual < 0 {
		value = validation.OmittedValue{}
	}
	return &validation.Error{Type: kapi.CauseTypeTooMany, Field: path, BadValue: value, Detail: detail}
}

// jsonText is v as JSON.
func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// child is a field path one name deeper.
func child(base, name string) string {
	if base == "" {
		return name
	}
	return base + "." + name
}

// result is what checking a value against a schema found, with the count
// of checks that passed by which anyOf and oneOf choose the branch whose
// failures they report (kube-openapi's Result.MatchCount).
type result struct {
	errs  []fail
	match int
}

// add appends failures not already there: kube-openapi reports a message
// once.
func (r *result) add(es ...fail) {
	for _, e := range es {
		if !slices.ContainsFunc(r.errs, func(x fail) bool { return x.msg == e.msg }) {
			r.errs = append(r.errs, e)
		}
	}
}

func (r *result) merge(others ...*result) {
	for _, o := range others {
		if o != nil {
			r.add(o.errs...)
			r.match += o.match
		}
	}
}

func (r *result) valid() bool { return r == nil || len(r.errs) == 0 }

func one(e fail) *result { return &result{errs: []fail{e}} }
