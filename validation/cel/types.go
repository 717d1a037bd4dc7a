package cel

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"

	"github.com/kapi-dev/kapi/schema"
)

// Sizes kube-apiserver assumes when it estimates what a rule may cost:
// the largest request, and the smallest JSON each kind of value takes.
const (
	maxRequestBytes  = 3 * 1024 * 1024
	minStringSize    = 2  // ""
	minBoolSize      = 4  // true
	minNumberSize    = 1  // 0
	minDurationSize  = 3  // "0"
	maxDurationSize  = 32 // an RFC 3339 duration, quoted
	dateSize         = 12 // "YYYY-MM-DD"
	minDateTimeSize  = 21 // "YYYY-MM-DDTHH:MM:SSZ"
	maxDateTimeSize  = 32 // "9999-12-31T23:59:59.999999999Z"
	metaNameMaxBytes = 253
)

// declType is the CEL type of a schema node (kube's DeclType): an object
// with its declared fields, a map, a list, or a scalar, with the most
// elements it may have and the least bytes it takes, from which the cost
// of a rule is estimated.
type declType struct {
	cel         *types.Type
	fields      map[string]*declType // an object's, by escaped name
	elem        *declType            // a list's items, a map's values
	key         *declType            // a map's keys
	maxElements int64
	minSize     int64
}

var (
	stringDecl = &declType{cel: cel.StringType}
	boolDecl   = &declType{cel: cel.BoolType, minSize: minBoolSize}
	intDecl    = &declType{cel: cel.IntType, minSize: minNumberSize}
	doubleDecl = &declType{cel: cel.DoubleType, minSize: minNumberSize}
)

// declTypeOf is the type of s; nil where a rule cannot see the value (no
// type, as under x-kubernetes-preserve-unknown-fields alone). name is the
// object type's name, and root says that s is a resource (the schema's
// root, or an embedded resource), whose apiVersion, kind, metadata.name
// and metadata.generateName a rule may read even if s does not declare
// them.
func (c *compiled) declTypeOf(s *schema.Schema, root bool, name string, reg map[string]*declType) *declType {
	if s == nil {
		return nil
	}
	if s.IntOrString {
		d := &declType{cel: cel.DynType, minSize: 1, maxElements: maxRequestBytes - 2}
		if s.MaxLength != nil {
			d.maxElements = max(*s.MaxLength, 0) * 4
		}
		return d
	}
	if root {
		s = c.withMeta(s)
	}
	switch s.Type {
	case "array":
		if s.Items == nil {
			return nil
		}
		items := c.declTypeOf(s.Items, s.Items.EmbeddedResource, name+".@idx", reg)
		if items == nil {
			return nil
		}
		d := &declType{cel: types.NewListType(items.cel), elem: items, minSize: 2}
		if s.MaxItems != nil {
			d.maxElements = max(*s.MaxItems, 0)
		} else {
			d.maxElements = (maxRequestBytes - 2) / (items.minSize + 1)
		}
		return d
	case "object":
		if s.AdditionalProperties != nil {
			values := c.declTypeOf(s.AdditionalProperties, s.AdditionalProperties.EmbeddedResource, name+".@elem", reg)
			if values == nil {
				return nil
			}
			d := &declType{cel: types.NewMapType(types.StringType, values.cel), elem: values, key: stringDecl, minSize: 2}
			if s.MaxProperties != nil {
				d.maxElements = max(*s.MaxProperties, 0)
			} else {
				d.maxElements = (maxRequestBytes - 2) / (values.minSize + 6)
			}
			return d
		}
		d := &declType{cel: types.NewObjectType(name), fields: map[string]*declType{}, minSize: 2}
		for prop, sub := range s.Properties {
			field, ok := escape(prop)
			if !ok {
				continue
			}
			ft := c.declTypeOf(sub, sub.EmbeddedResource, name+"."+field, reg)
			if ft == nil {
				continue
			}
			d.fields[field] = ft
			if sub.Default == nil && contains(s.Required, prop) {
				d.minSize += int64(len(prop)) + ft.minSize + 4
			}
		}
		reg[name] = d
		return d
	case "string":
		switch s.Format {
		case "byte":
			d := &declType{cel: cel.BytesType, minSize: minStringSize, maxElements: maxRequestBytes - 2}
			if s.MaxLength != nil {
				d.maxElements = max(*s.MaxLength, 0)
			}
			return d
		case "duration":
			return &declType{cel: cel.DurationType, minSize: minDurationSize, maxElements: maxDurationSize}
		case "date":
			return &declType{cel: cel.TimestampType, minSize: dateSize, maxElements: dateSize}
		case "date-time":
			return &declType{cel: cel.TimestampType, minSize: minDateTimeSize, maxElements: maxDateTimeSize}
		}
		d := &declType{cel: cel.StringType, minSize: minStringSize, maxElements: maxRequestBytes - 2}
		switch {
		case s.MaxLength != nil:
			d.maxElements = max(*s.MaxLength, 0) * 4
		case len(s.Enum) > 0:
			d.maxElements = 0
			for _, e := range s.Enum {
				if str, ok := e.(string); ok && int64(len(str)) > d.maxElements {
					d.maxElements = int64(len(str))
				}
			}
		}
		return d
	case "boolean":
		return boolDecl
	case "number":
		return doubleDecl
	case "integer":
		return intDecl
	}
	return nil
}

func contains(l []string, s string) bool {
	for _, x := range l {
		if x == s {
			return true
		}
	}
	return false
}

// withMeta is s as a rule sees a resource: with apiVersion, kind and
// metadata.name and generateName (no longer than a name may be) whether
// or not s declares them. It is computed once per node while compiling
// (prepareMeta), so that evaluation, which runs concurrently, only reads
// c.meta.
func (c *compiled) withMeta(s *schema.Schema) *schema.Schema {
	if m, ok := c.meta[s]; ok {
		return m
	}
	if c.frozen {
		// Not met while compiling (it should have been): made again, not
		// kept, as c.meta may be read concurrently.
		return (&compiled{meta: map[*schema.Schema]*schema.Schema{}}).withMeta(s)
	}
	if p := s.Properties; p != nil && p["kind"] != nil && p["kind"].Type == "string" &&
		p["apiVersion"] != nil && p["apiVersion"].Type == "string" &&
		p["metadata"] != nil && p["metadata"].Type == "object" && p["metadata"].Properties != nil &&
		p["metadata"].Properties["name"] != nil && p["metadata"].Properties["name"].Type == "string" &&
		p["metadata"].Properties["generateName"] != nil && p["metadata"].Properties["generateName"].Type == "string" {
		c.meta[s] = s
		return s
	}
	out := *s
	out.Properties = make(map[string]*schema.Schema, len(s.Properties)+3)
	for k, v := range s.Properties {
		out.Properties[k] = v
	}
	var metaProps map[string]*schema.Schema
	if m := s.Properties["metadata"]; m != nil {
		metaProps = m.Properties
	}
	out.Properties["kind"] = &schema.Schema{Type: "string"}
	out.Properties["apiVersion"] = &schema.Schema{Type: "string"}
	out.Properties["metadata"] = &schema.Schema{Type: "object", Properties: map[string]*schema.Schema{
		"name":         cappedString(metaProps["name"], metaNameMaxBytes),
		"generateName": cappedString(metaProps["generateName"], metaNameMaxBytes-1),
	}}
	c.meta[s] = &out
	c.meta[&out] = &out // the resource form is its own, found without a write
	return &out
}

func cappedString(s *schema.Schema, limit int64) *schema.Schema {
	if s != nil && s.MaxLength != nil && *s.MaxLength < limit {
		limit = *s.MaxLength
	}
	return &schema.Schema{Type: "string", MaxLength: &limit}
}

// provider tells the type checker the fields of a node's object types,
// and defers to CEL's own provider for everything else.
type provider struct {
	types.Provider
	objects map[string]*declType
}

func (p *provider) FindStructType(name string) (*types.Type, bool) {
	if _, ok := p.objects[name]; ok {
		return types.NewTypeTypeWithParam(types.NewObjectType(name)), true
	}
	return p.Provider.FindStructType(name)
}

func (p *provider) FindStructFieldNames(name string) ([]string, bool) {
	d, ok := p.objects[name]
	if !ok {
		return p.Provider.FindStructFieldNames(name)
	}
	out := make([]string, 0, len(d.fields))
	for f := range d.fields {
		out = append(out, f)
	}
	return out, true
}

func (p *provider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	d, ok := p.objects[name]
	if !ok {
		return p.Provider.FindStructFieldType(name, field)
	}
	f, ok := d.fields[field]
	if !ok && reserved[field] {
		// Kubernetes lets a rule write self.namespace for the escaped
		// self.__namespace__.
		f, ok = d.fields["__"+field+"__"]
	}
	if !ok {
		return nil, false
	}
	return &types.FieldType{Type: f.cel}, true
}

func (p *provider) NewValue(name string, fields map[string]ref.Val) ref.Val {
	if _, ok := p.objects[name]; ok {
		return types.NewErr("cannot construct values of type %s", name)
	}
	return p.Provider.NewValue(name, fields)
}

// parseDuration reads a duration as kube-openapi's duration format does:
// Go's form, or a sum of number-unit terms ("3 days"), a unit matching
// every spelling whose prefix it has.
func parseDuration(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(s); err == nil {
		return d, nil
	}
	units := []struct {
		spellings []string
		d         time.Duration
	}{
		{[]string{"ns", "nano"}, time.Nanosecond}, {[]string{"us", "µs", "micro"}, time.Microsecond},
		{[]string{"ms", "milli"}, time.Millisecond}, {[]string{"s", "sec"}, time.Second},
		{[]string{"m", "min"}, time.Minute}, {[]string{"h", "hr", "hour"}, time.Hour},
		{[]string{"d", "day"}, 24 * time.Hour}, {[]string{"w", "wk", "week"}, 7 * 24 * time.Hour},
	}
	var total time.Duration
	ok := false
	for _, m := range durationTerm.FindAllStringSubmatch(s, -1) {
		n, err := strconv.Atoi(m[2])
		if err != nil {
			return 0, err
		}
		unit := strings.ToLower(strings.TrimSpace(m[3]))
		for _, u := range units {
			last := len(u.spellings) - 1
			for i, v := range u.spellings {
				if (i == last && strings.HasPrefix(unit, v)) || strings.EqualFold(v, unit) {
					ok = true
					total += time.Duration(n) * u.d
				}
			}
		}
	}
	if !ok {
		return 0, fmt.Errorf("unable to parse %s as duration", s)
	}
	return total, nil
}

var (
	durationTerm = regexp.MustCompile(`((\d+)\s*([A-Za-zµ]+))`)
)

// dateTimeLayouts are the forms of a date-time kube-openapi reads, in
// its order.
var dateTimeLayouts = []string{
	"2006-01-02T15:04:05.000000Z07:00", "2006-01-02T15:04:05.000Z07:00", time.RFC3339, time.RFC3339Nano, "2006-01-02T15:04:05",
}

// parseDateTime reads a date-time as kube-openapi does: "" is the Unix
// epoch, and a failure is the last form's error.
func parseDateTime(s string) (time.Time, error) {
	if s == "" {
		return time.Unix(0, 0).UTC(), nil
	}
	var err error
	for _, layout := range dateTimeLayouts {
		var t time.Time
		if t, err = time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, err
}
