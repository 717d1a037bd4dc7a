package validation

import (
	"fmt"
	"reflect"
	"unicode/utf8"
)

// check runs the value checks of r on v, a set value of the field's type
// without pointers. Required and immutable are the walker's.
//
// Each failed keyword is an Error of its own, as a CRD's schema reports it.
func (r *Rules) check(at *fieldPath, v reflect.Value) []*Error {
	var errs []*Error
	if len(r.enumValues) > 0 && !r.inEnum(v) {
		errs = append(errs, notSupported(at.String(), plain(v), r.enumWords))
	}
	if e := r.checkBounds(at, v); e != nil {
		errs = append(errs, e)
	}
	if isString(r.kind) {
		s := v.String()
		if r.MinLength >= 0 || r.MaxLength >= 0 {
			n := int64(utf8.RuneCountInString(s))
			if r.MinLength >= 0 && n < r.MinLength {
				errs = append(errs, invalid(at.String(), s, fmt.Sprintf("must be at least %d %s", r.MinLength, plural(r.MinLength, "character"))))
			}
			if r.MaxLength >= 0 && n > r.MaxLength {
				errs = append(errs, tooLong(at.String(), r.MaxLength))
			}
		}
		if r.pattern != nil && !r.pattern.MatchString(s) {
			errs = append(errs, invalid(at.String(), s, fmt.Sprintf("must match '%s'", r.Pattern)))
		}
		if r.formatCheck != nil && !r.formatCheck(s) {
			errs = append(errs, typeInvalid(at.String(), s, r.Format))
		}
	}
	if r.MinItems >= 0 || r.MaxItems >= 0 { // set on lists only
		n := v.Len()
		if r.MinItems >= 0 && int64(n) < r.MinItems {
			errs = append(errs, invalid(at.String(), n, fmt.Sprintf("must have at least %d %s", r.MinItems, plural(r.MinItems, "item"))))
		}
		if r.MaxItems >= 0 && int64(n) > r.MaxItems {
			errs = append(errs, tooMany(at.String(), n, r.MaxItems))
		}
	}
	return errs
}

func plural(n int64, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// plain is v as the value a message shows: a named string type's value as
// a string, a number as itself.
func plain(v reflect.Value) any {
	switch {
	case isString(v.Kind()):
		return v.String()
	case isInt(v.Kind()):
		return v.Int()
	case isUint(v.Kind()):
		return v.Uint()
	case v.Kind() == reflect.Float32 || v.Kind() == reflect.Float64:
		return v.Float()
	case v.Kind() == reflect.Bool:
		return v.Bool()
	}
	return v.Interface()
}

func (r *Rules) inEnum(v reflect.Value) bool {
	for _, e := range r.enumValues {
		if e.Equal(v) {
			return true
		}
	}
	return false
}

// checkBounds checks minimum and maximum, worded as Kubernetes words them:
// validate.Minimum and validate.Maximum, and IsInRange's "between" when a
// field has both, inclusive.
func (r *Rules) checkBounds(at *fieldPath, v reflect.Value) *Error {
	if !r.min.set && !r.max.set {
		return nil
	}
	var x bound
	switch {
	case isInt(r.kind):
		x.i = v.Int()
	case isUint(r.kind):
		x.u = v.Uint()
	default:
		x.f = v.Float()
	}
	low := r.min.set && (r.compare(x, r.min) < 0 || r.ExclusiveMinimum && r.compare(x, r.min) == 0)
	high := r.max.set && (r.compare(x, r.max) > 0 || r.ExclusiveMaximum && r.compare(x, r.max) == 0)
	if !low && !high {
		return nil
	}
	value, path := plain(v), at.String()
	switch {
	case r.min.set && r.max.set && !r.ExclusiveMinimum && !r.ExclusiveMaximum:
		return invalid(path, value, fmt.Sprintf("must be between %s and %s, inclusive", r.Minimum, r.Maximum))
	case low && r.ExclusiveMinimum:
		return invalid(path, value, "must be greater than "+r.Minimum.String())
	case low:
		return invalid(path, value, "must be greater than or equal to "+r.Minimum.String())
	case r.ExclusiveMaximum:
		return invalid(path, value, "must be less than "+r.Maximum.String())
	}
	return invalid(path, value, "must be less than or equal to "+r.Maximum.String())
}
