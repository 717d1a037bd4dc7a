package kinds

import (
	"fmt"
	"math"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/validation"
)

// check is what kube-apiserver checks of the fields the scale subresource
// maps onto, on every write of a custom resource, with its messages (the
// field the path as written, leading dot and all): the spec's replicas
// (unless spec is false: a status write) and the status's are integers
// from 0 to 2^31-1 when set, the label selector a string.
func (sc *Scale) check(body map[string]any, spec bool) []*validation.Error {
	if sc == nil {
		return nil
	}
	var errs []*validation.Error
	replicas := func(path string) {
		v, err := nested[int64](body, path)
		switch {
		case err != nil:
			errs = append(errs, invalid(path, v, err.Error()))
		case v < 0:
			errs = append(errs, invalid(path, v, "should be a non-negative integer"))
		case v > math.MaxInt32:
			errs = append(errs, invalid(path, v, fmt.Sprintf("should be less than or equal to %v", math.MaxInt32)))
		}
	}
	if spec {
		replicas(sc.SpecReplicasPath)
	}
	replicas(sc.StatusReplicasPath)
	if sc.LabelSelectorPath != "" {
		if v, err := nested[string](body, sc.LabelSelectorPath); err != nil {
			errs = append(errs, invalid(sc.LabelSelectorPath, v, err.Error()))
		}
	}
	return errs
}

func invalid(field string, v any, detail string) *validation.Error {
	return &validation.Error{Type: kapi.CauseTypeFieldValueInvalid, Field: field, BadValue: v, Detail: detail}
}

// nested is the value at path (.a.b) in body, the zero value when it is
// missing, and an error worded as apimachinery's unstructured accessors
// word it when it is not a T or something on the way is not an object.
func nested[T any](body map[string]any, path string) (T, error) {
	var zero T
	fields := strings.Split(strings.TrimPrefix(path, "."), ".")
	var v any = body
	for i, f := range fields {
		if v == nil {
			return zero, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return zero, fmt.Errorf("%v accessor error: %v is of the type %T, expected map[string]interface{}", "."+strings.Join(fields[:i+1], "."), v, v)
		}
		if v, ok = m[f]; !ok {
			return zero, nil
		}
	}
	t, ok := v.(T)
	if !ok {
		return zero, fmt.Errorf("%v accessor error: %v is of the type %T, expected %T", path, v, v, zero)
	}
	return t, nil
}
