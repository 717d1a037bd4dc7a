package cel

import (
	"fmt"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strings"
	"sync"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/checker"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/ext"

	"github.com/kapi-dev/kapi/validation"
)

// schemaEnv is the environment of x-kubernetes-validations rules, made
// once: CEL's standard functions with the extensions kube-apiserver
// enables (strings, sets, lists, two-variable comprehensions, optional
// types), and those of Kubernetes' own libraries this package writes
// again (lists, regex, url, ip, cidr, quantity, semver, named formats).
func (e *Engine) schemaEnv() (*cel.Env, error) {
	e.once.Do(func() {
		e.base, e.baseErr = cel.NewEnv(
			cel.HomogeneousAggregateLiterals(),
			cel.EagerlyValidateDeclarations(true),
			cel.DefaultUTCTimeZone(true),
			cel.CrossTypeNumericComparisons(true),
			cel.OptionalTypes(),
			cel.CostEstimatorOptions(checker.PresenceTestHasCost(false)),
			cel.ASTValidators(
				cel.ValidateDurationLiterals(),
				cel.ValidateTimestampLiterals(),
				cel.ValidateRegexLiterals(),
				cel.ValidateHomogeneousAggregateLiterals(),
			),
			ext.Strings(ext.StringsVersion(2)),
			ext.Sets(),
			ext.TwoVarComprehensions(),
			ext.Lists(ext.ListsVersion(3)),
			kubeLists(),
			kubeRegex(),
			kubeIP(),
			kubeFormats(),
			kubeTypes(),
			kubeSemver(),
		)
	})
	return e.base, e.baseErr
}

var comparable = []*cel.Type{cel.IntType, cel.UintType, cel.DoubleType, cel.BoolType, cel.StringType, cel.BytesType, cel.DurationType, cel.TimestampType}

// kubeLists is Kubernetes' lists library: isSorted, sum, min, max,
// indexOf and lastIndexOf on lists.
func kubeLists() cel.EnvOption {
	var isSorted, minO, maxO, sum []cel.FunctionOpt
	for _, t := range comparable {
		name := strings.ToLower(t.String())
		isSorted = append(isSorted, cel.MemberOverload("list_"+name+"_is_sorted_bool", []*cel.Type{cel.ListType(t)}, cel.BoolType, cel.UnaryBinding(isSortedList)))
		minO = append(minO, cel.MemberOverload("list_"+name+"_min_"+name, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(extreme("min", -1))))
		maxO = append(maxO, cel.MemberOverload("list_"+name+"_max_"+name, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(extreme("max", 1))))
	}
	for _, z := range []ref.Val{types.IntZero, types.Uint(0), types.Double(0), types.Duration{}} {
		t := z.Type().(*types.Type)
		name := strings.ToLower(t.String())
		zero := z
		sum = append(sum, cel.MemberOverload("list_"+name+"_sum_"+name, []*cel.Type{cel.ListType(t)}, t, cel.UnaryBinding(func(v ref.Val) ref.Val { return sumList(v, zero) })))
	}
	elem := cel.TypeParamType("T")
	return cel.Lib(libOptions{
		cel.Function("isSorted", isSorted...),
		cel.Function("sum", sum...),
		cel.Function("min", minO...),
		cel.Function("max", maxO...),
		cel.Function("indexOf", cel.MemberOverload("list_a_index_of_int", []*cel.Type{cel.ListType(elem), elem}, cel.IntType, cel.BinaryBinding(indexOf(false)))),
		cel.Function("lastIndexOf", cel.MemberOverload("list_a_last_index_of_int", []*cel.Type{cel.ListType(elem), elem}, cel.IntType, cel.BinaryBinding(indexOf(true)))),
	})
}

// libOptions turns env options into a cel.Library.
type libOptions []cel.EnvOption

func (l libOptions) CompileOptions() []cel.EnvOption     { return l }
func (l libOptions) ProgramOptions() []cel.ProgramOption { return nil }

func isSortedList(v ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	var prev traits.Comparer
	for it := l.Iterator(); it.HasNext() == types.True; {
		next := it.Next()
		c, ok := next.(traits.Comparer)
		if !ok {
			return types.MaybeNoSuchOverloadErr(next)
		}
		if prev != nil {
			cmp := prev.Compare(next)
			if types.IsError(cmp) {
				return cmp
			}
			if cmp == types.IntOne {
				return types.False
			}
		}
		prev = c
	}
	return types.True
}

func extreme(name string, sign types.Int) func(ref.Val) ref.Val {
	return func(v ref.Val) ref.Val {
		l, ok := v.(traits.Lister)
		if !ok {
			return types.MaybeNoSuchOverloadErr(v)
		}
		if l.Size() == types.IntZero {
			return types.NewErr("%s(list) argument must not be empty", name)
		}
		var best ref.Val
		for it := l.Iterator(); it.HasNext() == types.True; {
			next := it.Next()
			if best == nil {
				best = next
				continue
			}
			c, ok := next.(traits.Comparer)
			if !ok {
				return types.MaybeNoSuchOverloadErr(next)
			}
			cmp := c.Compare(best)
			if types.IsError(cmp) {
				return cmp
			}
			if cmp == sign {
				best = next
			}
		}
		return best
	}
}

func sumList(v, zero ref.Val) ref.Val {
	l, ok := v.(traits.Lister)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	acc := zero
	for it := l.Iterator(); it.HasNext() == types.True; {
		a, ok := acc.(traits.Adder)
		if !ok {
			return types.MaybeNoSuchOverloadErr(acc)
		}
		acc = a.Add(it.Next())
		if types.IsError(acc) {
			return acc
		}
	}
	return acc
}

func indexOf(last bool) func(ref.Val, ref.Val) ref.Val {
	return func(lv, x ref.Val) ref.Val {
		l, ok := lv.(traits.Lister)
		if !ok {
			return types.MaybeNoSuchOverloadErr(lv)
		}
		n := int64(l.Size().(types.Int))
		for i := int64(0); i < n; i++ {
			j := i
			if last {
				j = n - 1 - i
			}
			if l.Get(types.Int(j)).Equal(x) == types.True {
				return types.Int(j)
			}
		}
		return types.Int(-1)
	}
}

// regexCache keeps compiled patterns, which rules repeat.
var regexCache sync.Map

func compileRegex(pattern string) (*regexp.Regexp, error) {
	if re, ok := regexCache.Load(pattern); ok {
		return re.(*regexp.Regexp), nil
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return nil, err
	}
	regexCache.Store(pattern, re)
	return re, nil
}

// kubeRegex is Kubernetes' regex library: find and findAll.
func kubeRegex() cel.EnvOption {
	find := func(s, p ref.Val) ref.Val {
		re, err := compileRegex(string(p.(types.String)))
		if err != nil {
			return types.WrapErr(err)
		}
		return types.String(re.FindString(string(s.(types.String))))
	}
	findAll := func(s, p ref.Val, n int) ref.Val {
		re, err := compileRegex(string(p.(types.String)))
		if err != nil {
			return types.WrapErr(err)
		}
		return types.DefaultTypeAdapter.NativeToValue(re.FindAllString(string(s.(types.String)), n))
	}
	return cel.Lib(libOptions{
		cel.Function("find", cel.MemberOverload("string_find_string", []*cel.Type{cel.StringType, cel.StringType}, cel.StringType, cel.BinaryBinding(find))),
		cel.Function("findAll",
			cel.MemberOverload("string_find_all_string", []*cel.Type{cel.StringType, cel.StringType}, cel.ListType(cel.StringType),
				cel.BinaryBinding(func(s, p ref.Val) ref.Val { return findAll(s, p, -1) })),
			cel.MemberOverload("string_find_all_string_int", []*cel.Type{cel.StringType, cel.StringType, cel.IntType}, cel.ListType(cel.StringType),
				cel.FunctionBinding(func(args ...ref.Val) ref.Val { return findAll(args[0], args[1], int(args[2].(types.Int))) }))),
	})
}

// kubeIP is the isIP and isCIDR functions of Kubernetes' ip and cidr
// libraries: strict forms, without zones, leading zeros or IPv4 mapped
// into IPv6.
func kubeIP() cel.EnvOption {
	isIP := func(v ref.Val) ref.Val {
		a, err := netip.ParseAddr(string(v.(types.String)))
		return types.Bool(err == nil && a.Zone() == "" && !a.Is4In6())
	}
	isCIDR := func(v ref.Val) ref.Val {
		p, err := netip.ParsePrefix(string(v.(types.String)))
		return types.Bool(err == nil && !p.Addr().Is4In6())
	}
	return cel.Lib(libOptions{
		cel.Function("isIP", cel.Overload("is_ip", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(isIP))),
		cel.Function("isCIDR", cel.Overload("is_cidr", []*cel.Type{cel.StringType}, cel.BoolType, cel.UnaryBinding(isCIDR))),
	})
}

// formatType is Kubernetes' named format: format.dns1123Label() and the
// like, whose validate(s) is none or the reasons s is not of the format.
var formatType = cel.ObjectType("kubernetes.NamedFormat")

const (
	maxFormatRegexSize = 128
	maxFormatSize      = 64
)

type namedFormat struct {
	name         string
	check        func(string) []string
	maxRegexSize int
}

func (f *namedFormat) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from 'Format' to '%v'", t)
}
func (f *namedFormat) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return formatType
	}
	return types.NewErr("type conversion error from '%s' to '%s'", formatType, t)
}
func (f *namedFormat) Equal(other ref.Val) ref.Val {
	o, ok := other.(*namedFormat)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(f.name == o.name)
}
func (f *namedFormat) Type() ref.Type { return formatType }
func (f *namedFormat) Value() any     { return f }

var namedFormats = map[string]*namedFormat{
	"dns1123Label":           {name: "DNS1123Label", check: dns1123Label, maxRegexSize: 30},
	"dns1123Subdomain":       {name: "DNS1123Subdomain", check: dns1123Subdomain, maxRegexSize: 60},
	"dns1035Label":           {name: "DNS1035Label", check: dns1035Label, maxRegexSize: 30},
	"dns1123LabelPrefix":     {name: "DNS1123LabelPrefix", check: prefixed(dns1123Label), maxRegexSize: 30},
	"dns1123SubdomainPrefix": {name: "DNS1123SubdomainPrefix", check: prefixed(dns1123Subdomain), maxRegexSize: 60},
	"dns1035LabelPrefix":     {name: "DNS1035LabelPrefix", check: prefixed(dns1035Label), maxRegexSize: 30},
	"labelValue":             {name: "LabelValue", check: labelValue, maxRegexSize: 40},
	"qualifiedName":          {name: "QualifiedName", check: qualifiedName, maxRegexSize: 60},
	"uri": {name: "URI", maxRegexSize: 1103, check: func(s string) []string {
		if _, err := url.ParseRequestURI(s); err != nil {
			return []string{err.Error()}
		}
		return nil
	}},
	"uuid":     {name: "uuid", maxRegexSize: 70, check: formatCheck("uuid", "does not match the UUID format")},
	"byte":     {name: "byte", maxRegexSize: 84, check: formatCheck("byte", "invalid base64")},
	"date":     {name: "date", maxRegexSize: 71, check: formatCheck("date", "invalid date")},
	"datetime": {name: "datetime", maxRegexSize: 71, check: formatCheck("date-time", "invalid datetime")},
}

// formatCheck is a named format checked as a CRD's format keyword checks
// it, with one message.
func formatCheck(format, message string) func(string) []string {
	valid := validation.StringFormat(format)
	return func(s string) []string {
		if !valid(s) {
			return []string{message}
		}
		return nil
	}
}

func kubeFormats() cel.EnvOption {
	opts := libOptions{cel.Types(formatType)}
	for name, f := range namedFormats {
		f := f
		opts = append(opts, cel.Function("format."+name, cel.Overload("format."+name, nil, formatType,
			cel.FunctionBinding(func(...ref.Val) ref.Val { return f }))))
	}
	opts = append(opts,
		cel.Function("format.named", cel.Overload("format-named", []*cel.Type{cel.StringType}, cel.OptionalType(formatType),
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				if f, ok := namedFormats[string(v.(types.String))]; ok {
					return types.OptionalOf(f)
				}
				return types.OptionalNone
			}))),
		cel.Function("validate", cel.MemberOverload("format-validate", []*cel.Type{formatType, cel.StringType}, cel.OptionalType(cel.ListType(cel.StringType)),
			cel.BinaryBinding(func(fv, s ref.Val) ref.Val {
				f, ok := fv.(*namedFormat)
				if !ok {
					return types.MaybeNoSuchOverloadErr(fv)
				}
				if problems := f.check(string(s.(types.String))); len(problems) > 0 {
					return types.OptionalOf(types.NewStringList(types.DefaultTypeAdapter, problems))
				}
				return types.OptionalNone
			}))),
	)
	return cel.Lib(opts)
}

const (
	labelFmt       = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
	subdomainFmt   = labelFmt + "(\\." + labelFmt + ")*"
	dns1035Fmt     = "[a-z]([-a-z0-9]*[a-z0-9])?"
	labelValueFmt  = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
	labelMsg       = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character"
	subdomainMsg   = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character"
	dns1035Msg     = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character"
	labelValueMsg  = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
	maxLabelLen    = 63
	maxSubdomainLn = 253
)

var (
	labelRe      = regexp.MustCompile("^" + labelFmt + "$")
	subdomainRe  = regexp.MustCompile("^" + subdomainFmt + "$")
	dns1035Re    = regexp.MustCompile("^" + dns1035Fmt + "$")
	labelValueRe = regexp.MustCompile("^" + labelValueFmt + "$")
)

func regexError(msg, format string, examples ...string) string {
	msg += " (e.g. "
	for i, e := range examples {
		if i > 0 {
			msg += " or "
		}
		msg += "'" + e + "', "
	}
	return msg + "regex used for validation is '" + format + "')"
}

func maxLen(n int) string   { return fmt.Sprintf("must be no more than %d characters", n) }
func maxBytes(n int) string { return fmt.Sprintf("must be no more than %d bytes", n) }

const (
	qualifiedNameFmt = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
	qualifiedNameMsg = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)

var qualifiedNameRe = regexp.MustCompile("^" + qualifiedNameFmt + "$")

func qualifiedName(s string) []string {
	var out []string
	parts := strings.Split(s, "/")
	name := parts[0]
	switch len(parts) {
	case 1:
	case 2:
		prefix := parts[0]
		name = parts[1]
		if prefix == "" {
			out = append(out, "prefix part must be non-empty")
		} else {
			if len(prefix) > maxSubdomainLn {
				out = append(out, "prefix part "+maxBytes(maxSubdomainLn))
			}
			if !subdomainRe.MatchString(prefix) {
				out = append(out, "prefix part "+regexError(subdomainMsg, subdomainFmt, "example.com"))
			}
		}
	default:
		return []string{"a valid label key " + regexError(qualifiedNameMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc") +
			" with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"}
	}
	if name == "" {
		out = append(out, "name part must be non-empty")
	} else if len(name) > maxLabelLen {
		out = append(out, "name part "+maxBytes(maxLabelLen))
	}
	if !qualifiedNameRe.MatchString(name) {
		out = append(out, "name part "+regexError(qualifiedNameMsg, qualifiedNameFmt, "MyName", "my.name", "123-abc"))
	}
	return out
}

func dns1123Label(s string) []string {
	var out []string
	if len(s) > maxLabelLen {
		out = append(out, maxLen(maxLabelLen))
	}
	if !labelRe.MatchString(s) {
		if subdomainRe.MatchString(s) {
			out = append(out, "must not contain dots")
		} else {
			out = append(out, regexError(labelMsg, labelFmt, "my-name", "123-abc"))
		}
	}
	return out
}

func dns1123Subdomain(s string) []string {
	var out []string
	if len(s) > maxSubdomainLn {
		out = append(out, maxLen(maxSubdomainLn))
	}
	if !subdomainRe.MatchString(s) {
		out = append(out, regexError(subdomainMsg, subdomainFmt, "example.com"))
	}
	return out
}

func dns1035Label(s string) []string {
	var out []string
	if len(s) > maxLabelLen {
		out = append(out, maxLen(maxLabelLen))
	}
	if !dns1035Re.MatchString(s) {
		out = append(out, regexError(dns1035Msg, dns1035Fmt, "my-name", "abc-123"))
	}
	return out
}

// labelValue and qualifiedName are worded as Kubernetes words label
// values and keys: lengths in bytes.
func labelValue(s string) []string {
	var out []string
	if len(s) > maxLabelLen {
		out = append(out, maxBytes(maxLabelLen))
	}
	if !labelValueRe.MatchString(s) {
		out = append(out, regexError(labelValueMsg, labelValueFmt, "MyValue", "my_value", "12345"))
	}
	return out
}

// prefixed checks a name to which a suffix will be added, as
// generateName: a trailing dash is allowed.
func prefixed(check func(string) []string) func(string) []string {
	return func(s string) []string {
		if strings.HasSuffix(s, "-") {
			s = s[:len(s)-1] + "a"
		}
		return check(s)
	}
}
