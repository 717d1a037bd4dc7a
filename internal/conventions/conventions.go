package conventions

import (
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"regexp"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/validation"
)

// A Finding is one convention a type breaks.
type Finding struct {
	// Field is the JSON path of the field (spec.weight, spec.ports[]).
	Field string
	// Rule names the convention: float-in-spec, unsigned-integer,
	// platform-int, map-of-objects, enum-not-camelcase.
	Rule string
	// Advice says what breaks the convention and what to do instead.
	Advice string
}

func (f Finding) String() string { return f.Field + ": " + f.Advice + " (" + f.Rule + ")" }

// The rules a Finding names.
const (
	FloatInSpec      = "float-in-spec"
	UnsignedInteger  = "unsigned-integer"
	PlatformInt      = "platform-int"
	MapOfObjects     = "map-of-objects"
	EnumNotCamelCase = "enum-not-camelcase"
)

var (
	kapiPackage = reflect.TypeFor[kapi.ObjectMeta]().PkgPath()
	camelCase   = regexp.MustCompile(`^[A-Z][A-Za-z0-9]*$`)
)

// ErrBroken is what Advise's error wraps when it refuses a type.
var ErrBroken = errors.New("the type breaks Kubernetes API conventions")

// Advise checks t, registered as kind: under strict it returns an error
// wrapping ErrBroken that lists what t breaks; else it logs each finding
// as a warning to logger and returns nil.
func Advise(t reflect.Type, kind string, strict bool, logger *slog.Logger) error {
	findings := Check(t)
	if len(findings) == 0 {
		return nil
	}
	if strict {
		list := make([]string, len(findings))
		for i, f := range findings {
			list[i] = f.String()
		}
		return fmt.Errorf("%w: %s", ErrBroken, strings.Join(list, "; "))
	}
	for _, f := range findings {
		logger.Warn("kapi: the type breaks a Kubernetes API convention", "kind", kind, "type", t.String(),
			"field", f.Field, "rule", f.Rule, "advice", f.Advice)
	}
	return nil
}

// Check walks the fields of struct type t (and of every type below it) and
// returns the conventions they break, in the order of the fields.
func Check(t reflect.Type) []Finding {
	c := checker{seen: map[reflect.Type]bool{}}
	c.walk(t, "")
	return c.findings
}

type checker struct {
	seen     map[reflect.Type]bool // named types walked, or being walked
	findings []Finding
}

func (c *checker) add(field, rule, format string, args ...any) {
	c.findings = append(c.findings, Finding{Field: field, Rule: rule, Advice: fmt.Sprintf(format, args...)})
}

// walk checks the type of the value at JSON path path.
func (c *checker) walk(t reflect.Type, path string) {
	t, ok := jsonfields.Deref(t, nil)
	if !ok || jsonfields.DecodesItself(t) || ownType(t) {
		return // its JSON is its own, or Kubernetes'
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map, reflect.Slice, reflect.Array:
		// Once per named composite type, and not again below itself
		// (type Tree map[string]Tree): its findings are at its first
		// path. Only a named type can hold itself.
		if t.Name() != "" {
			if c.seen[t] {
				return
			}
			c.seen[t] = true
		}
	}
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		if path == "spec" || strings.HasPrefix(path, "spec.") || strings.HasPrefix(path, "spec[") {
			c.add(path, FloatInSpec, "a %s in spec does not round-trip between languages and encodings; use an integer (with a unit: milliCPU, basis points) or a resource.Quantity-like string", t)
		}
	case reflect.Uint, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint8, reflect.Uintptr:
		c.add(path, UnsignedInteger, "%s is unsigned, which other languages and JSON parsers lack; use int32 or int64 with validate:\"minimum=0\"", t)
	case reflect.Int:
		c.add(path, PlatformInt, "Go's int has the platform's size; use int32 or int64")
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return // bytes: base64 in JSON
		}
		c.walk(t.Elem(), path+"[]")
	case reflect.Map:
		if v, ok := jsonfields.Deref(t.Elem(), nil); ok && v.Kind() == reflect.Struct && !jsonfields.DecodesItself(v) {
			c.add(path, MapOfObjects, "a map of objects; use a list of named objects (listType=map, listMapKey=name), which clients merge, patch and show by name")
		}
		c.walk(t.Elem(), path+"[*]")
	case reflect.Struct:
		for _, f := range jsonfields.Of(t) {
			fieldPath := f.Name
			if path != "" {
				fieldPath = path + "." + f.Name
			}
			if ownType(f.Owner) {
				continue // a field of an embedded kapi type (TypeMeta, ObjectMeta)
			}
			c.enums(f.StructField, fieldPath)
			c.walk(f.Type, fieldPath)
		}
	}
}

// enums reports the enum values of a field's validate tag that are not
// CamelCase.
func (c *checker) enums(sf reflect.StructField, path string) {
	rules, err := validation.RulesOf(sf)
	if err != nil || rules == nil {
		return // a bad tag is Register's error, not advice
	}
	values := rules.Enum
	if rules.Items != nil {
		values = append(values, rules.Items.Enum...)
	}
	var bad []string
	for _, v := range values {
		if s, ok := v.(string); ok && s != "" && !camelCase.MatchString(s) {
			bad = append(bad, fmt.Sprintf("%q", s))
		}
	}
	if len(bad) > 0 {
		c.add(path, EnumNotCamelCase, "enum values %s are not CamelCase; the conventions spell them as Go constants' names (Red, TCP)", strings.Join(bad, ", "))
	}
}

// ownType says whether t is one of Kubernetes' own types, which kapi
// declares as Kubernetes made them.
func ownType(t reflect.Type) bool {
	pkg := t.PkgPath()
	return pkg == kapiPackage || pkg == kapiPackage+"/builtin"
}
