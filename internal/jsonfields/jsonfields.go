package jsonfields

import (
	"cmp"
	"reflect"
	"slices"
	"strings"
	"unicode"
)

// Field is a field of a struct as encoding/json sees it.
type Field struct {
	Name        string              // the JSON name
	Index       []int               // for reflect.Value.FieldByIndex
	Type        reflect.Type        // the field's Go type
	StructField reflect.StructField // the Go field, for its other tags
	Owner       reflect.Type        // the struct type that declares it
	Tagged      bool                // named by its json tag
	Optional    bool                // promoted through an embedded pointer, which may be nil

	OmitEmpty bool // `json:",omitempty"`
	OmitZero  bool // `json:",omitzero"`
	Quoted    bool // `json:",string"`, on a type it applies to
}

// Of returns the fields encoding/json encodes and decodes for struct type t,
// in the order it writes them (by Index). It returns nil if t is not a
// struct type. The result is the caller's own.
func Of(t reflect.Type) []Field {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	// embedded is a struct whose fields are promoted, found at one depth.
	type embedded struct {
		typ      reflect.Type
		index    []int
		optional bool // reached through an embedded pointer
	}
	var current []embedded
	next := []embedded{{typ: t}}
	var count, nextCount map[reflect.Type]int
	visited := map[reflect.Type]bool{}
	var fields []Field
	for len(next) > 0 {
		current, next = next, current[:0]
		count, nextCount = nextCount, map[reflect.Type]int{}
		for _, e := range current {
			if visited[e.typ] {
				continue
			}
			visited[e.typ] = true
			for i := range e.typ.NumField() {
				sf := e.typ.Field(i)
				if sf.Anonymous {
					ft := sf.Type
					if ft.Kind() == reflect.Pointer {
						ft = ft.Elem()
					}
					// An unexported embedded struct may have exported fields.
					if !sf.IsExported() && ft.Kind() != reflect.Struct {
						continue
					}
				} else if !sf.IsExported() {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, opts, _ := strings.Cut(tag, ",")
				if !ValidName(name) {
					name = ""
				}
				index := append(e.index[:len(e.index):len(e.index)], i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					nextCount[ft]++
					if nextCount[ft] == 1 {
						next = append(next, embedded{typ: ft, index: index, optional: e.optional || sf.Type.Kind() == reflect.Pointer})
					}
					continue
				}
				f := Field{
					Name: name, Index: index, Type: sf.Type, StructField: sf, Owner: e.typ,
					Tagged: name != "", Optional: e.optional,
					OmitEmpty: hasOption(opts, "omitempty"),
					OmitZero:  hasOption(opts, "omitzero"),
					Quoted:    hasOption(opts, "string") && quotable(ft),
				}
				if !f.Tagged {
					f.Name = sf.Name
				}
				fields = append(fields, f)
				if count[e.typ] > 1 {
					// The same struct embedded twice at one depth: twice,
					// so that its fields' names are dropped below.
					fields = append(fields, f)
				}
			}
		}
	}

	slices.SortFunc(fields, func(a, b Field) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.Index), len(b.Index)); c != 0 {
			return c
		}
		if a.Tagged != b.Tagged {
			if a.Tagged {
				return -1
			}
			return +1
		}
		return slices.Compare(a.Index, b.Index)
	})
	out := fields[:0]
	for i := 0; i < len(fields); {
		j := i + 1
		for j < len(fields) && fields[j].Name == fields[i].Name {
			j++
		}
		// The shallowest wins, then a tagged one; a tie drops the name.
		if j == i+1 || len(fields[i].Index) < len(fields[i+1].Index) || fields[i].Tagged != fields[i+1].Tagged {
			out = append(out, fields[i])
		}
		i = j
	}
	slices.SortFunc(out, func(a, b Field) int { return slices.Compare(a.Index, b.Index) })
	return out
}

// Named returns the field with JSON name name, if any. Names match exactly,
// as in Of's result.
func Named(t reflect.Type, name string) (Field, bool) {
	for _, f := range Of(t) {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}

// hasOption reports whether the options of a json tag (after its name)
// include option.
func hasOption(opts, option string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == option {
			return true
		}
	}
	return false
}

// quotable reports whether `json:",string"` applies to a field of type t
// (a pointer's target for an unnamed pointer type).
func quotable(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Bool,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64,
		reflect.String:
		return true
	}
	return false
}

// ValidName is encoding/json's test of a json tag's name: a field whose
// tag names it otherwise goes by its Go name (json/v2 takes the tag's).
func ValidName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		switch {
		case strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c):
		case !unicode.IsLetter(c) && !unicode.IsDigit(c):
			return false
		}
	}
	return true
}
