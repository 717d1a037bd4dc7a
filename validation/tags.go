package validation

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Rules are the constraints declared on one struct field by its tags, as
// the OpenAPI schema shows them. The zero value declares nothing.
type Rules struct {
	Required, Optional, Immutable bool

	// Enum holds the allowed values as JSON values (string, float64,
	// bool), in the order of the tag.
	Enum []any
	// Minimum and Maximum are JSON numbers ("" when unset).
	Minimum, Maximum                   json.Number
	ExclusiveMinimum, ExclusiveMaximum bool
	// MinLength … MaxItems are -1 when unset.
	MinLength, MaxLength, MinItems, MaxItems int64
	Pattern                                  string
	Format                                   string
	// Default is the default as a JSON value; nil when there is none.
	Default any
	// Rule is the expression of the rule tag, which must hold of the
	// field's value (a CRD's x-kubernetes-validations rule, CEL); a
	// RuleEngine given to For evaluates it. RuleMessage, from the
	// ruleMessage tag, is what a failure says.
	Rule, RuleMessage string
	// Items are the constraints on each item of a list, from the items:
	// keywords (items:enum=a;b, kubebuilder's items:Enum); nil without.
	Items *Rules

	// What the checks use, compiled once.
	kind        reflect.Kind // of the field's type without pointers
	enumValues  []reflect.Value
	enumWords   []string // as NotSupported lists them
	min, max    bound
	pattern     *regexp.Regexp
	formatCheck func(string) bool
	deflt       reflect.Value // of the field's type without pointers; invalid without a default
	defaultJSON []byte        // for non-scalar defaults, decoded afresh each time
}

// bound is a minimum or maximum in the field's own arithmetic.
type bound struct {
	set bool
	i   int64
	u   uint64
	f   float64
}

// keywords are the words of the validate tag: those with a value, and flags.
var keywords = map[string]bool{
	"required": false, "optional": false, "immutable": false,
	"exclusiveMinimum": false, "exclusiveMaximum": false,
	"enum": true, "minimum": true, "maximum": true,
	"minLength": true, "maxLength": true, "minItems": true, "maxItems": true,
	"format": true,
}

// keywordList names the keywords in an error, in sorted order.
var keywordList = strings.Join(slices.Sorted(maps.Keys(keywords)), ", ")

// RulesOf parses the tags of a struct field: validate, pattern, default,
// rule and ruleMessage.
// It returns nil (and no error) when the field declares nothing, and an
// error when a tag is malformed or does not fit the field's type.
func RulesOf(sf reflect.StructField) (*Rules, error) {
	v, hasValidate := sf.Tag.Lookup("validate")
	pattern, hasPattern := sf.Tag.Lookup("pattern")
	deflt, hasDefault := sf.Tag.Lookup("default")
	rule, hasRule := sf.Tag.Lookup("rule")
	message, hasMessage := sf.Tag.Lookup("ruleMessage")
	if !hasValidate && !hasPattern && !hasDefault && !hasRule && !hasMessage {
		return nil, nil
	}
	r, err := parseRules(sf.Type, v, pattern, hasPattern, deflt, hasDefault)
	if err == nil && (hasRule || hasMessage) {
		if strings.TrimSpace(rule) == "" {
			err = errors.New("rule: empty, or a ruleMessage without a rule")
		}
		r.Rule, r.RuleMessage = strings.TrimSpace(rule), strings.TrimSpace(message)
	}
	if err != nil {
		return nil, fmt.Errorf("field %s: %w", sf.Name, err)
	}
	return r, nil
}

func parseRules(t reflect.Type, validate, pattern string, hasPattern bool, deflt string, hasDefault bool) (*Rules, error) {
	r := &Rules{MinLength: -1, MaxLength: -1, MinItems: -1, MaxItems: -1}
	base := t
	for base.Kind() == reflect.Pointer {
		base = base.Elem()
	}
	r.kind = base.Kind()
	seen := map[string]bool{}
	var errs []error
	var itemWords []string
	if validate != "" {
		for _, word := range strings.Split(validate, ",") {
			if w, ok := strings.CutPrefix(word, "items:"); ok {
				itemWords = append(itemWords, w)
				continue
			}
			key, value, hasValue := strings.Cut(word, "=")
			takesValue, known := keywords[key]
			switch {
			case !known:
				errs = append(errs, fmt.Errorf("validate: unknown keyword %q; the keywords are %s, and items: before one for each item of a list (pattern and default are tags of their own)", key, keywordList))
				continue
			case seen[key]:
				errs = append(errs, fmt.Errorf("validate: %s given twice", key))
				continue
			case takesValue && !hasValue:
				errs = append(errs, fmt.Errorf("validate: %s needs a value (%s=...)", key, key))
				continue
			case !takesValue && hasValue:
				errs = append(errs, fmt.Errorf("validate: %s takes no value", key))
				continue
			}
			seen[key] = true
			if err := r.set(key, value, base); err != nil {
				errs = append(errs, fmt.Errorf("validate: %s: %w", key, err))
			}
		}
	}
	if len(itemWords) > 0 {
		errs = append(errs, r.setItems(base, itemWords))
	}
	if hasPattern {
		if !isString(r.kind) {
			errs = append(errs, fmt.Errorf("pattern: applies to strings, not %v", base))
		} else if re, err := regexp.Compile(pattern); err != nil {
			errs = append(errs, fmt.Errorf("pattern: %w", err))
		} else {
			r.Pattern, r.pattern = pattern, re
		}
	}
	errs = append(errs, r.consistent())
	if errors.Join(errs...) == nil && hasDefault {
		errs = append(errs, r.setDefault(base, deflt))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

func isString(k reflect.Kind) bool { return k == reflect.String }

func isNumber(k reflect.Kind) bool {
	return isInt(k) || isUint(k) || k == reflect.Float32 || k == reflect.Float64
}

func isInt(k reflect.Kind) bool { return k >= reflect.Int && k <= reflect.Int64 }

func isUint(k reflect.Kind) bool { return k >= reflect.Uint && k <= reflect.Uintptr }

// isList says whether t is a list in JSON: a slice or array, but not
// []byte, which is a base64 string.
func isList(t reflect.Type) bool {
	return t.Kind() == reflect.Array || t.Kind() == reflect.Slice && t.Elem().Kind() != reflect.Uint8
}

// set records one keyword of the validate tag.
func (r *Rules) set(key, value string, base reflect.Type) error {
	k := base.Kind()
	switch key {
	case "required":
		r.Required = true
	case "optional":
		r.Optional = true
	case "immutable":
		r.Immutable = true
	case "exclusiveMinimum":
		r.ExclusiveMinimum = true
	case "exclusiveMaximum":
		r.ExclusiveMaximum = true
	case "enum":
		if !isString(k) && !isNumber(k) && k != reflect.Bool {
			return fmt.Errorf("applies to strings, numbers and booleans, not %v", base)
		}
		return r.setEnum(value, base)
	case "minimum", "maximum":
		if !isNumber(k) {
			return fmt.Errorf("applies to numbers, not %v", base)
		}
		b, text, err := parseBound(value, base)
		if err != nil {
			return err
		}
		if key == "minimum" {
			r.min, r.Minimum = b, json.Number(text)
		} else {
			r.max, r.Maximum = b, json.Number(text)
		}
	case "minLength", "maxLength", "minItems", "maxItems":
		if strings.HasSuffix(key, "Length") && !isString(k) {
			return fmt.Errorf("applies to strings, not %v", base)
		}
		if strings.HasSuffix(key, "Items") && !isList(base) {
			return fmt.Errorf("applies to lists, not %v", base)
		}
		n, err := strconv.ParseInt(value, 10, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%q is not a count (a non-negative integer)", value)
		}
		switch key {
		case "minLength":
			r.MinLength = n
		case "maxLength":
			r.MaxLength = n
		case "minItems":
			r.MinItems = n
		case "maxItems":
			r.MaxItems = n
		}
	case "format":
		if !isString(k) {
			return fmt.Errorf("applies to strings, not %v", base)
		}
		check, ok := formats[value]
		if !ok {
			return fmt.Errorf("unknown format %q (known: %s)", value, strings.Join(formatNames(), ", "))
		}
		r.Format, r.formatCheck = value, check
	}
	return nil
}

// itemKeywords are those that may follow items:.
var itemKeywords = map[string]bool{
	"enum": true, "minimum": true, "maximum": true, "exclusiveMinimum": true, "exclusiveMaximum": true,
	"minLength": true, "maxLength": true, "format": true,
}

// setItems parses the items: keywords of a list of strings or numbers.
func (r *Rules) setItems(base reflect.Type, words []string) error {
	if !isList(base) {
		return fmt.Errorf("validate: items: applies to lists, not %v", base)
	}
	elem := base.Elem()
	for elem.Kind() == reflect.Pointer {
		elem = elem.Elem()
	}
	if k := elem.Kind(); !isString(k) && !isNumber(k) && k != reflect.Bool {
		return fmt.Errorf("validate: items: applies to lists of strings, numbers and booleans, not %v", base)
	}
	for _, w := range words {
		if key, _, _ := strings.Cut(w, "="); !itemKeywords[key] {
			return fmt.Errorf("validate: items:%s: not a keyword for items; those are %s", key, strings.Join(slices.Sorted(maps.Keys(itemKeywords)), ", "))
		}
	}
	items, err := parseRules(elem, strings.Join(words, ","), "", false, "", false)
	if err != nil {
		return fmt.Errorf("items: %w", err)
	}
	r.Items = items
	return nil
}

// setEnum parses enum=a;b;c: strings as they are, other values as JSON.
func (r *Rules) setEnum(list string, base reflect.Type) error {
	for _, word := range strings.Split(list, ";") {
		v := reflect.New(base).Elem()
		if isString(base.Kind()) {
			v.SetString(word)
			r.Enum = append(r.Enum, word)
			r.enumWords = append(r.enumWords, word)
		} else {
			if err := json.Unmarshal([]byte(word), v.Addr().Interface()); err != nil {
				return fmt.Errorf("%q is not a %v", word, base)
			}
			var j any
			_ = json.Unmarshal([]byte(word), &j)
			r.Enum = append(r.Enum, j)
			text, _ := json.Marshal(v.Interface())
			r.enumWords = append(r.enumWords, string(text))
		}
		if slices.ContainsFunc(r.enumValues, func(e reflect.Value) bool { return e.Equal(v) }) {
			return fmt.Errorf("value %s listed twice", word)
		}
		r.enumValues = append(r.enumValues, v)
	}
	return nil
}

// parseBound reads a minimum or maximum in the arithmetic of the field's
// type, and writes it back as a JSON number.
func parseBound(s string, base reflect.Type) (bound, string, error) {
	k := base.Kind()
	switch {
	case isInt(k):
		i, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bound{}, "", fmt.Errorf("%q is not an integer", s)
		}
		return bound{set: true, i: i}, strconv.FormatInt(i, 10), nil
	case isUint(k):
		u, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return bound{}, "", fmt.Errorf("%q is not a non-negative integer", s)
		}
		return bound{set: true, u: u}, strconv.FormatUint(u, 10), nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
		return bound{}, "", fmt.Errorf("%q is not a finite number", s)
	}
	return bound{set: true, f: f}, strconv.FormatFloat(f, 'g', -1, 64), nil
}

// consistent refuses combinations no value could satisfy or that mean nothing.
func (r *Rules) consistent() error {
	var errs []error
	if r.Required && r.Optional {
		errs = append(errs, errors.New("validate: required and optional together"))
	}
	if r.ExclusiveMinimum && !r.min.set {
		errs = append(errs, errors.New("validate: exclusiveMinimum needs a minimum"))
	}
	if r.ExclusiveMaximum && !r.max.set {
		errs = append(errs, errors.New("validate: exclusiveMaximum needs a maximum"))
	}
	if r.min.set && r.max.set && r.compare(r.min, r.max) > 0 {
		errs = append(errs, fmt.Errorf("validate: minimum %s is greater than maximum %s", r.Minimum, r.Maximum))
	}
	if r.MinLength >= 0 && r.MaxLength >= 0 && r.MinLength > r.MaxLength {
		errs = append(errs, fmt.Errorf("validate: minLength %d is greater than maxLength %d", r.MinLength, r.MaxLength))
	}
	if r.MinItems >= 0 && r.MaxItems >= 0 && r.MinItems > r.MaxItems {
		errs = append(errs, fmt.Errorf("validate: minItems %d is greater than maxItems %d", r.MinItems, r.MaxItems))
	}
	return errors.Join(errs...)
}

// compare orders two bounds of the rules' kind.
func (r *Rules) compare(a, b bound) int {
	switch {
	case isInt(r.kind):
		return cmp.Compare(a.i, b.i)
	case isUint(r.kind):
		return cmp.Compare(a.u, b.u)
	}
	return cmp.Compare(a.f, b.f)
}

// setDefault parses the default tag: the string itself for a string field,
// JSON for any other. The default must pass the field's own checks.
func (r *Rules) setDefault(base reflect.Type, text string) error {
	v := reflect.New(base)
	if isString(base.Kind()) {
		v.Elem().SetString(text)
	} else if err := strictUnmarshal([]byte(text), v.Interface()); err != nil {
		return fmt.Errorf("default: %q is not a JSON %v: %w", text, base, err)
	}
	raw, err := json.Marshal(v.Interface())
	if err != nil {
		return fmt.Errorf("default: %w", err)
	}
	if err := json.Unmarshal(raw, &r.Default); err != nil {
		return fmt.Errorf("default: %w", err)
	}
	if errs := r.check(&fieldPath{b: []byte("default")}, v.Elem()); len(errs) > 0 {
		return fmt.Errorf("default %s does not pass the field's checks: %v", raw, errs[0])
	}
	switch {
	case isString(base.Kind()), isNumber(base.Kind()), base.Kind() == reflect.Bool:
		r.deflt = v.Elem()
	default:
		r.defaultJSON = raw
	}
	return nil
}

func strictUnmarshal(data []byte, v any) error {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("more than one value")
	}
	return nil
}
