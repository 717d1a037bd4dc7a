package schema

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// checkString checks a string's length in characters and its pattern; the
// first failure found is the result.
func (s *Schema) checkString(data, path string) *result {
	if s.MaxLength != nil && int64(utf8.RuneCountInString(data)) > *s.MaxLength {
		return one(fail{code: failTooLong, name: path, value: data, max: *s.MaxLength,
			msg: fmt.Sprintf("%s in body should be at most %d chars long", path, *s.MaxLength)})
	}
	if s.MinLength != nil && int64(utf8.RuneCountInString(data)) < *s.MinLength {
		return one(fail{code: failOther, name: path, value: data,
			msg: fmt.Sprintf("%s in body should be at least %d chars long", path, *s.MinLength)})
	}
	if s.Pattern != "" {
		re, err := compiled(s.Pattern)
		if err != nil {
			return one(fail{code: failOther, name: path, value: data,
				msg: fmt.Sprintf("%s in body should match '%s, but pattern is invalid: %s'", path, s.Pattern, err)})
		}
		if !re.MatchString(data) {
			return one(fail{code: failOther, name: path, value: data,
				msg: fmt.Sprintf("%s in body should match '%s'", path, s.Pattern)})
		}
	}
	return nil
}

// patterns caches compiled patterns: a schema is checked many times.
var patterns sync.Map // string → *regexp.Regexp or error

func compiled(pattern string) (*regexp.Regexp, error) {
	if v, ok := patterns.Load(pattern); ok {
		if re, ok := v.(*regexp.Regexp); ok {
			return re, nil
		}
		return nil, v.(error)
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		patterns.Store(pattern, err)
		return nil, err
	}
	patterns.Store(pattern, re)
	return re, nil
}

func checkFormat(format, data, path string) *result {
	if valid := stringFormats[strings.ReplaceAll(format, "-", "")]; valid != nil && !valid(data) {
		return one(fail{code: failType, name: path, value: data,
			msg: fmt.Sprintf("%s in body must be of type %s: %q", path, format, data)})
	}
	return nil
}

// checkNumber is kube-openapi's numberValidator: the value and each bound
// must fit the type and format; integers compare as integers.
func (s *Schema) checkNumber(val any, path string) *result {
	typeName, format := "", ""
	if types := s.types(); len(types) == 1 {
		switch types[0] {
		case "integer":
			typeName = "integer"
			if s.Format == "int32" || s.Format == "int64" {
				format = s.Format
			}
		case "number":
			typeName = "number"
			if s.Format == "float" || s.Format == "double" {
				format = s.Format
			}
		}
	}
	res := &result{}
	if msg := outOfRange(val, typeName, format, "Checked", path); msg != "" {
		res.add(fail{msg: msg})
	}
	data := asFloat(val)
	var multiple, minimum, maximum result
	if s.MultipleOf != nil {
		if msg := outOfRange(*s.MultipleOf, typeName, format, "MultipleOf", path); msg != "" {
			multiple.add(fail{msg: msg})
			multiple.add(multipleOfFloat(path, data, *s.MultipleOf)...)
		} else {
			multiple.add(multipleOfNative(path, val, *s.MultipleOf)...)
		}
	}
	if s.Maximum != nil {
		if msg := outOfRange(*s.Maximum, typeName, format, "Maximum boundary", path); msg != "" {
			maximum.add(fail{msg: msg})
			maximum.add(maximumFloat(path, data, *s.Maximum, s.ExclusiveMaximum)...)
		} else if i, ok := asInt(val); ok {
			max := int64(*s.Maximum)
			if (!s.ExclusiveMaximum && i > max) || (s.ExclusiveMaximum && i >= max) {
				maximum.add(fail{code: failOther, name: path, value: i, msg: boundMsg(path, "less", s.ExclusiveMaximum, max)})
			}
		} else {
			maximum.add(maximumFloat(path, data, *s.Maximum, s.ExclusiveMaximum)...)
		}
	}
	if s.Minimum != nil {
		if msg := outOfRange(*s.Minimum, typeName, format, "Minimum boundary", path); msg != "" {
			minimum.add(fail{msg: msg})
			minimum.add(minimumFloat(path, data, *s.Minimum, s.ExclusiveMinimum)...)
		} else if i, ok := asInt(val); ok {
			min := int64(*s.Minimum)
			if (!s.ExclusiveMinimum && i < min) || (s.ExclusiveMinimum && i <= min) {
				minimum.add(fail{code: failOther, name: path, value: i, msg: boundMsg(path, "greater", s.ExclusiveMinimum, min)})
			}
		} else {
			minimum.add(minimumFloat(path, data, *s.Minimum, s.ExclusiveMinimum)...)
		}
	}
	res.merge(&multiple, &minimum, &maximum)
	res.match++
	return res
}

func boundMsg(path, side string, exclusive bool, bound any) string {
	if exclusive {
		return fmt.Sprintf("%s in body should be %s than %v", path, side, bound)
	}
	return fmt.Sprintf("%s in body should be %s than or equal to %v", path, side, bound)
}

func maximumFloat(path string, data, max float64, exclusive bool) []fail {
	if (!exclusive && data > max) || (exclusive && data >= max) {
		return []fail{{code: failOther, name: path, value: data, msg: boundMsg(path, "less", exclusive, max)}}
	}
	return nil
}

func minimumFloat(path string, data, min float64, exclusive bool) []fail {
	if (!exclusive && data < min) || (exclusive && data <= min) {
		return []fail{{code: failOther, name: path, value: data, msg: boundMsg(path, "greater", exclusive, min)}}
	}
	return nil
}

func multipleOfNative(path string, val any, factor float64) []fail {
	i, ok := asInt(val)
	if !ok {
		return multipleOfFloat(path, val.(float64), factor)
	}
	f := int64(factor)
	if f <= 0 {
		return []fail{{code: failOther, name: path, value: f,
			msg: fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, f)}}
	}
	if i/f*f != i {
		return []fail{{code: failOther, name: path, value: i, msg: fmt.Sprintf("%s in body should be a multiple of %v", path, f)}}
	}
	return nil
}

func multipleOfFloat(path string, data, factor float64) []fail {
	if factor <= 0 {
		return []fail{{code: failOther, name: path, value: factor,
			msg: fmt.Sprintf("factor MultipleOf declared for %s must be positive: %v", path, factor)}}
	}
	var mult float64
	if factor < 1 {
		mult = 1 / factor * data
	} else {
		mult = data / factor
	}
	if !isJSONInteger(mult) {
		return []fail{{code: failOther, name: path, value: data, msg: fmt.Sprintf("%s in body should be a multiple of %v", path, factor)}}
	}
	return nil
}

// outOfRange is kube-openapi's IsValueValidAgainstRange: "" when the
// number, written out, parses as the type and format.
func outOfRange(val any, typeName, format, prefix, path string) string {
	var text string
	switch v := val.(type) {
	case int64:
		text = strconv.FormatInt(v, 10)
	case int:
		text = strconv.Itoa(v)
	case float64:
		text = strconv.FormatFloat(v, 'f', -1, 64)
	}
	var err error
	switch typeName {
	case "integer":
		bits := 64
		if format == "int32" {
			bits = 32
		}
		_, err = strconv.ParseInt(text, 10, bits)
	default:
		if format == "float" || format == "float32" {
			_, err = strconv.ParseFloat(text, 32)
		}
	}
	if err == nil {
		return ""
	}
	if format != "" {
		return fmt.Sprintf("%s value must be of type %s with format %s in %s", prefix, typeName, format, path)
	}
	return fmt.Sprintf("%s value must be of type %s (default format) in %s", prefix, typeName, path)
}

func asInt(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

func asFloat(v any) float64 {
	switch v := v.(type) {
	case int64:
		return float64(v)
	case int:
		return float64(v)
	case float64:
		return v
	}
	return 0
}
