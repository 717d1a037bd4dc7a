package cel

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"net/netip"
	"net/url"
	"reflect"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// The value types of Kubernetes' url, ip, cidr and quantity libraries,
// written again on the standard library: url(s) is a URL (absolute, or an
// absolute path), ip(s) and cidr(s) the strict forms isIP and isCIDR
// accept, quantity(s) a resource quantity held as an exact fraction.

var (
	urlType      = cel.ObjectType("kubernetes.URL")
	ipType       = cel.OpaqueType("net.IP")
	cidrType     = cel.OpaqueType("net.CIDR")
	quantityType = cel.ObjectType("kubernetes.Quantity")
)

// opaque is the part of ref.Val these types share.
type opaque struct{ t *types.Type }

func (o opaque) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("type conversion error from '%s' to '%v'", o.t, t)
}
func (o opaque) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return o.t
	}
	return types.NewErr("type conversion error from '%s' to '%s'", o.t, t.TypeName())
}
func (o opaque) Type() ref.Type { return o.t }

type urlVal struct {
	opaque
	u *url.URL
}

func (v urlVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(urlVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(*v.u == *o.u)
}
func (v urlVal) Value() any { return v.u }

type ipVal struct {
	opaque
	a netip.Addr
}

func (v ipVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(ipVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.a == o.a)
}
func (v ipVal) Value() any { return v.a }

type cidrVal struct {
	opaque
	p netip.Prefix
}

func (v cidrVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(cidrVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.p == o.p)
}
func (v cidrVal) Value() any { return v.p }

type quantityVal struct {
	opaque
	q *big.Rat
}

func (v quantityVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(quantityVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.q.Cmp(o.q) == 0)
}
func (v quantityVal) Value() any { return v.q }

func newIP(a netip.Addr) ipVal           { return ipVal{opaque{ipType}, a} }
func newCIDR(p netip.Prefix) cidrVal     { return cidrVal{opaque{cidrType}, p} }
func newQuantity(q *big.Rat) quantityVal { return quantityVal{opaque{quantityType}, q} }

func parseIP(raw string) (netip.Addr, error) {
	a, err := netip.ParseAddr(raw)
	switch {
	case err != nil:
		return a, fmt.Errorf("IP Address %q parse error during conversion from string: %v", raw, err)
	case a.Zone() != "":
		return a, fmt.Errorf("IP address %q with zone value is not allowed", raw)
	case a.Is4In6():
		return a, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return a, nil
}

func parseCIDR(raw string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(raw)
	if err != nil {
		return p, fmt.Errorf("network address parse error during conversion from string: %v", err)
	}
	if p.Addr().Is4In6() {
		return p, fmt.Errorf("IPv4-mapped IPv6 address %q is not allowed", raw)
	}
	return p, nil
}

func str(v ref.Val) string { s, _ := v.Value().(string); return s }

func kubeTypes() cel.EnvOption {
	unary := func(f func(ref.Val) ref.Val) cel.OverloadOpt { return cel.UnaryBinding(f) }
	binary := func(f func(ref.Val, ref.Val) ref.Val) cel.OverloadOpt { return cel.BinaryBinding(f) }
	ipOf := func(v ref.Val) netip.Addr { return v.(ipVal).a }
	cidrOf := func(v ref.Val) netip.Prefix { return v.(cidrVal).p }
	urlOf := func(v ref.Val) *url.URL { return v.(urlVal).u }
	q := func(v ref.Val) *big.Rat { return v.(quantityVal).q }
	ipTest := func(name string, f func(netip.Addr) bool) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("ip_"+name, []*cel.Type{ipType}, cel.BoolType,
			unary(func(v ref.Val) ref.Val { return types.Bool(f(ipOf(v))) })))
	}
	urlGet := func(name string, f func(*url.URL) string) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("url_"+name, []*cel.Type{urlType}, cel.StringType,
			unary(func(v ref.Val) ref.Val { return types.String(f(urlOf(v))) })))
	}
	containsIP := func(c, x ref.Val) ref.Val {
		a, ok := x.(ipVal)
		if !ok {
			addr, err := parseIP(str(x))
			if err != nil {
				return types.NewErr("%v", err)
			}
			a = newIP(addr)
		}
		return types.Bool(cidrOf(c).Contains(a.a))
	}
	containsCIDR := func(c, x ref.Val) ref.Val {
		o, ok := x.(cidrVal)
		if !ok {
			p, err := parseCIDR(str(x))
			if err != nil {
				return types.NewErr("%v", err)
			}
			o = newCIDR(p)
		}
		p := cidrOf(c)
		return types.Bool(p.Bits() <= o.p.Bits() && p.Contains(o.p.Addr()))
	}
	arith := func(sign int64) func(a, b ref.Val) ref.Val {
		return func(a, b ref.Val) ref.Val {
			var r *big.Rat
			switch b := b.(type) {
			case quantityVal:
				r = b.q
			case types.Int:
				r = new(big.Rat).SetInt64(int64(b))
			default:
				return types.MaybeNoSuchOverloadErr(b)
			}
			if sign < 0 {
				r = new(big.Rat).Neg(r)
			}
			return newQuantity(new(big.Rat).Add(q(a), r))
		}
	}
	asInt := func(v ref.Val) (int64, bool) {
		r := q(v)
		if !r.IsInt() || !r.Num().IsInt64() {
			return 0, false
		}
		return r.Num().Int64(), true
	}
	return cel.Lib(libOptions{
		cel.Types(urlType, quantityType),
		cel.Function("url", cel.Overload("string_to_url", []*cel.Type{cel.StringType}, urlType, unary(func(v ref.Val) ref.Val {
			s := str(v)
			if _, err := url.ParseRequestURI(s); err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			u, err := url.Parse(s)
			if err != nil {
				return types.NewErr("URL parse error during conversion from string: %v", err)
			}
			return urlVal{opaque{urlType}, u}
		}))),
		cel.Function("isURL", cel.Overload("is_url_string", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(v ref.Val) ref.Val {
			_, err := url.ParseRequestURI(str(v))
			return types.Bool(err == nil)
		}))),
		urlGet("getScheme", func(u *url.URL) string { return u.Scheme }),
		urlGet("getHost", func(u *url.URL) string { return u.Host }),
		urlGet("getHostname", (*url.URL).Hostname),
		urlGet("getPort", (*url.URL).Port),
		urlGet("getEscapedPath", (*url.URL).EscapedPath),
		cel.Function("getQuery", cel.MemberOverload("url_get_query", []*cel.Type{urlType}, cel.MapType(cel.StringType, cel.ListType(cel.StringType)),
			unary(func(v ref.Val) ref.Val {
				out := map[ref.Val]ref.Val{}
				for k, vs := range urlOf(v).Query() {
					out[types.String(k)] = types.NewStringList(types.DefaultTypeAdapter, vs)
				}
				return types.NewRefValMap(types.DefaultTypeAdapter, out)
			}))),

		cel.Function("ip",
			cel.Overload("string_to_ip", []*cel.Type{cel.StringType}, ipType, unary(func(v ref.Val) ref.Val {
				a, err := parseIP(str(v))
				if err != nil {
					return types.NewErr("%v", err)
				}
				return newIP(a)
			})),
			cel.MemberOverload("cidr_ip", []*cel.Type{cidrType}, ipType, unary(func(v ref.Val) ref.Val { return newIP(cidrOf(v).Addr()) }))),
		cel.Function("family", cel.MemberOverload("ip_family", []*cel.Type{ipType}, cel.IntType, unary(func(v ref.Val) ref.Val {
			if ipOf(v).Is4() {
				return types.Int(4)
			}
			return types.Int(6)
		}))),
		cel.Function("ip.isCanonical", cel.Overload("ip_is_canonical", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(v ref.Val) ref.Val {
			a, err := parseIP(str(v))
			if err != nil {
				return types.NewErr("%v", err)
			}
			return types.Bool(a.String() == str(v))
		}))),
		ipTest("isUnspecified", netip.Addr.IsUnspecified),
		ipTest("isLoopback", netip.Addr.IsLoopback),
		ipTest("isLinkLocalMulticast", netip.Addr.IsLinkLocalMulticast),
		ipTest("isLinkLocalUnicast", netip.Addr.IsLinkLocalUnicast),
		ipTest("isGlobalUnicast", netip.Addr.IsGlobalUnicast),
		cel.Function("cidr", cel.Overload("string_to_cidr", []*cel.Type{cel.StringType}, cidrType, unary(func(v ref.Val) ref.Val {
			p, err := parseCIDR(str(v))
			if err != nil {
				return types.NewErr("%v", err)
			}
			return newCIDR(p)
		}))),
		cel.Function("containsIP",
			cel.MemberOverload("cidr_contains_ip_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, binary(containsIP)),
			cel.MemberOverload("cidr_contains_ip_ip", []*cel.Type{cidrType, ipType}, cel.BoolType, binary(containsIP))),
		cel.Function("containsCIDR",
			cel.MemberOverload("cidr_contains_cidr_string", []*cel.Type{cidrType, cel.StringType}, cel.BoolType, binary(containsCIDR)),
			cel.MemberOverload("cidr_contains_cidr", []*cel.Type{cidrType, cidrType}, cel.BoolType, binary(containsCIDR))),
		cel.Function("prefixLength", cel.MemberOverload("cidr_prefix_length", []*cel.Type{cidrType}, cel.IntType,
			unary(func(v ref.Val) ref.Val { return types.Int(cidrOf(v).Bits()) }))),
		cel.Function("masked", cel.MemberOverload("cidr_masked", []*cel.Type{cidrType}, cidrType,
			unary(func(v ref.Val) ref.Val { return newCIDR(cidrOf(v).Masked()) }))),
		cel.Function("string",
			cel.Overload("ip_to_string", []*cel.Type{ipType}, cel.StringType, unary(func(v ref.Val) ref.Val { return types.String(ipOf(v).String()) })),
			cel.Overload("cidr_to_string", []*cel.Type{cidrType}, cel.StringType, unary(func(v ref.Val) ref.Val { return types.String(cidrOf(v).String()) }))),

		cel.Function("quantity", cel.Overload("string_to_quantity", []*cel.Type{cel.StringType}, quantityType, unary(func(v ref.Val) ref.Val {
			r, err := parseQuantity(str(v))
			if err != nil {
				return types.WrapErr(err)
			}
			return newQuantity(r)
		}))),
		cel.Function("isQuantity", cel.Overload("is_quantity_string", []*cel.Type{cel.StringType}, cel.BoolType, unary(func(v ref.Val) ref.Val {
			_, err := parseQuantity(str(v))
			return types.Bool(err == nil)
		}))),
		cel.Function("sign", cel.Overload("quantity_sign", []*cel.Type{quantityType}, cel.IntType,
			unary(func(v ref.Val) ref.Val { return types.Int(q(v).Sign()) }))),
		cel.Function("isGreaterThan", cel.MemberOverload("quantity_is_greater_than", []*cel.Type{quantityType, quantityType}, cel.BoolType,
			binary(func(a, b ref.Val) ref.Val { return types.Bool(q(a).Cmp(q(b)) > 0) }))),
		cel.Function("isLessThan", cel.MemberOverload("quantity_is_less_than", []*cel.Type{quantityType, quantityType}, cel.BoolType,
			binary(func(a, b ref.Val) ref.Val { return types.Bool(q(a).Cmp(q(b)) < 0) }))),
		cel.Function("compareTo", cel.MemberOverload("quantity_compare_to", []*cel.Type{quantityType, quantityType}, cel.IntType,
			binary(func(a, b ref.Val) ref.Val { return types.Int(q(a).Cmp(q(b))) }))),
		cel.Function("asApproximateFloat", cel.MemberOverload("quantity_get_float", []*cel.Type{quantityType}, cel.DoubleType,
			unary(func(v ref.Val) ref.Val { f, _ := q(v).Float64(); return types.Double(f) }))),
		cel.Function("asInteger", cel.MemberOverload("quantity_get_int", []*cel.Type{quantityType}, cel.IntType,
			unary(func(v ref.Val) ref.Val {
				if i, ok := asInt(v); ok {
					return types.Int(i)
				}
				return types.WrapErr(errors.New("cannot convert value to integer"))
			}))),
		cel.Function("isInteger", cel.MemberOverload("quantity_is_integer", []*cel.Type{quantityType}, cel.BoolType,
			unary(func(v ref.Val) ref.Val { _, ok := asInt(v); return types.Bool(ok) }))),
		cel.Function("add",
			cel.MemberOverload("quantity_add", []*cel.Type{quantityType, quantityType}, quantityType, binary(arith(1))),
			cel.MemberOverload("quantity_add_int", []*cel.Type{quantityType, cel.IntType}, quantityType, binary(arith(1)))),
		cel.Function("sub",
			cel.MemberOverload("quantity_sub", []*cel.Type{quantityType, quantityType}, quantityType, binary(arith(-1))),
			cel.MemberOverload("quantity_sub_int", []*cel.Type{quantityType, cel.IntType}, quantityType, binary(arith(-1)))),
	})
}

// Kubernetes' errors for a malformed quantity.
var (
	errQuantityFormat  = errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	errQuantityNumeric = errors.New("unable to parse numeric part of quantity")
	errQuantitySuffix  = errors.New("unable to parse quantity's suffix")
	quantityPattern    = regexp.MustCompile(`^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$`)
)

// parseQuantity reads a resource quantity (1.5Gi, 100m, 1e3) exactly,
// rounded up to the nano unit as Kubernetes holds quantities.
func parseQuantity(s string) (*big.Rat, error) {
	if s == "" {
		return nil, errors.New("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
	}
	m := quantityPattern.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil || m[0] != s {
		return nil, errQuantityFormat
	}
	num, suffix := m[1], m[2]
	if strings.Count(num, ".") > 1 || strings.Trim(num, "+-.") == "" {
		return nil, errQuantityNumeric
	}
	value, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, errQuantityNumeric
	}
	mult, ok := quantitySuffix(suffix)
	if !ok {
		return nil, errQuantitySuffix
	}
	value.Mul(value, mult)
	// Round away from zero to a multiple of 1e-9.
	nano := new(big.Rat).Mul(value, big.NewRat(1_000_000_000, 1))
	if !nano.IsInt() {
		n := new(big.Int).Quo(nano.Num(), nano.Denom())
		if nano.Sign() > 0 {
			n.Add(n, big.NewInt(1))
		} else {
			n.Sub(n, big.NewInt(1))
		}
		value.SetFrac(n, big.NewInt(1_000_000_000))
	}
	return value, nil
}

func quantitySuffix(s string) (*big.Rat, bool) {
	pow := func(base, exp int64) *big.Rat {
		r := new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(base), big.NewInt(int64(math.Abs(float64(exp)))), nil))
		if exp < 0 {
			r.Inv(r)
		}
		return r
	}
	binary := map[string]int64{"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
	decimal := map[string]int64{"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
	if e, ok := binary[s]; ok {
		return pow(2, e), true
	}
	if e, ok := decimal[s]; ok {
		return pow(10, e), true
	}
	if len(s) > 1 && (s[0] == 'e' || s[0] == 'E') {
		var exp int64
		digits := s[1:]
		neg := false
		if digits[0] == '+' || digits[0] == '-' {
			neg = digits[0] == '-'
			digits = digits[1:]
		}
		if digits == "" || len(digits) > 6 {
			return nil, false
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return nil, false
			}
			exp = exp*10 + int64(c-'0')
		}
		if neg {
			exp = -exp
		}
		return pow(10, exp), true
	}
	return nil, false
}
