//lint:file-ignore ST1005 the errors are github.com/blang/semver's, capitals included, as kube-apiserver's semver library reports them

package cel

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Kubernetes' semver library: semver(s) and isSemver(s) read Semantic
// Versioning 2.0 strictly, semver(s, true) first normalizes (a leading v,
// leading zeros, missing minor or patch); versions compare by precedence,
// with their words for a malformed one.

var semverType = cel.ObjectType("kubernetes.Semver")

type semverVal struct {
	opaque
	major, minor, patch uint64
	pre                 []prerelease
	build               []string
}

type prerelease struct {
	num   uint64
	str   string
	isNum bool
}

func (v semverVal) Equal(other ref.Val) ref.Val {
	o, ok := other.(semverVal)
	if !ok {
		return types.MaybeNoSuchOverloadErr(other)
	}
	return types.Bool(v.compare(o) == 0)
}
func (v semverVal) Value() any { return v }

func (v semverVal) compare(o semverVal) int {
	for _, d := range [][2]uint64{{v.major, o.major}, {v.minor, o.minor}, {v.patch, o.patch}} {
		if d[0] != d[1] {
			if d[0] > d[1] {
				return 1
			}
			return -1
		}
	}
	switch {
	case len(v.pre) == 0 && len(o.pre) == 0:
		return 0
	case len(v.pre) == 0:
		return 1
	case len(o.pre) == 0:
		return -1
	}
	for i := 0; i < len(v.pre) && i < len(o.pre); i++ {
		if c := v.pre[i].compare(o.pre[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(v.pre) == len(o.pre):
		return 0
	case len(v.pre) < len(o.pre):
		return -1
	}
	return 1
}

func (p prerelease) compare(o prerelease) int {
	switch {
	case p.isNum && o.isNum:
		switch {
		case p.num == o.num:
			return 0
		case p.num > o.num:
			return 1
		}
		return -1
	case p.isNum:
		return -1
	case o.isNum:
		return 1
	}
	return strings.Compare(p.str, o.str)
}

func only(s, set string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return !strings.ContainsRune(set, r) }) == -1
}

const (
	digits   = "0123456789"
	alphanum = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-" + digits
)

func leadingZero(s string) bool { return len(s) > 1 && s[0] == '0' }

// parseSemver reads a version as github.com/blang/semver does, with its
// errors.
func parseSemver(s string) (semverVal, error) {
	v := semverVal{opaque: opaque{semverType}}
	if s == "" {
		return v, errors.New("Version string empty")
	}
	parts := strings.SplitN(s, ".", 3)
	if len(parts) != 3 {
		return v, errors.New("No Major.Minor.Patch elements found")
	}
	number := func(part, name string) (uint64, error) {
		if !only(part, digits) {
			return 0, fmt.Errorf("Invalid character(s) found in %s number %q", strings.ToLower(name), part)
		}
		if leadingZero(part) {
			return 0, fmt.Errorf("%s number must not contain leading zeroes %q", name, part)
		}
		return strconv.ParseUint(part, 10, 64)
	}
	var err error
	if v.major, err = number(parts[0], "Major"); err != nil {
		return v, err
	}
	if v.minor, err = number(parts[1], "Minor"); err != nil {
		return v, err
	}
	patch := parts[2]
	var build, pre []string
	if i := strings.IndexRune(patch, '+'); i != -1 {
		build, patch = strings.Split(patch[i+1:], "."), patch[:i]
	}
	if i := strings.IndexRune(patch, '-'); i != -1 {
		pre, patch = strings.Split(patch[i+1:], "."), patch[:i]
	}
	if v.patch, err = number(patch, "Patch"); err != nil {
		return v, err
	}
	for _, p := range pre {
		switch {
		case p == "":
			return v, errors.New("Prerelease is empty")
		case only(p, digits):
			if leadingZero(p) {
				return v, fmt.Errorf("Numeric PreRelease version must not contain leading zeroes %q", p)
			}
			n, err := strconv.ParseUint(p, 10, 64)
			if err != nil {
				return v, err
			}
			v.pre = append(v.pre, prerelease{num: n, isNum: true})
		case only(p, alphanum):
			v.pre = append(v.pre, prerelease{str: p})
		default:
			return v, fmt.Errorf("Invalid character(s) found in prerelease %q", p)
		}
	}
	for _, b := range build {
		if b == "" {
			return v, errors.New("Build meta data is empty")
		}
		if !only(b, alphanum) {
			return v, fmt.Errorf("Invalid character(s) found in build meta data %q", b)
		}
		v.build = append(v.build, b)
	}
	return v, nil
}

// normalizeSemver is what semver(s, true) reads: s without a leading v or
// leading zeros, its missing minor and patch 0.
func normalizeSemver(s string) (semverVal, error) {
	parts := strings.SplitN(strings.TrimPrefix(s, "v"), ".", 3)
	for i, p := range parts {
		if len(p) > 1 {
			p = strings.TrimLeft(p, "0")
			if p == "" || !strings.ContainsAny(p[:1], digits) {
				p = "0" + p
			}
			parts[i] = p
		}
	}
	if len(parts) < 3 {
		if strings.ContainsAny(parts[len(parts)-1], "+-") {
			return semverVal{}, errors.New("short version cannot contain PreRelease/Build meta data")
		}
		for len(parts) < 3 {
			parts = append(parts, "0")
		}
	}
	return parseSemver(strings.Join(parts, "."))
}

func kubeSemver() cel.EnvOption {
	parse := func(s ref.Val, normalize bool) (semverVal, error) {
		if normalize {
			return normalizeSemver(str(s))
		}
		return parseSemver(str(s))
	}
	toSemver := func(s ref.Val, normalize bool) ref.Val {
		v, err := parse(s, normalize)
		if err != nil {
			return types.WrapErr(err)
		}
		return v
	}
	sv := func(v ref.Val) semverVal { return v.(semverVal) }
	part := func(name string, f func(semverVal) uint64) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload("semver_"+name, []*cel.Type{semverType}, cel.IntType,
			cel.UnaryBinding(func(v ref.Val) ref.Val { return types.Int(f(sv(v))) })))
	}
	compare := func(name, id string, f func(int) ref.Val) cel.EnvOption {
		return cel.Function(name, cel.MemberOverload(id, []*cel.Type{semverType, semverType}, cel.BoolType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val { return f(sv(a).compare(sv(b))) })))
	}
	return cel.Lib(libOptions{
		cel.Types(semverType),
		cel.Function("semver",
			cel.Overload("string_to_semver", []*cel.Type{cel.StringType}, semverType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { return toSemver(s, false) })),
			cel.Overload("string_bool_to_semver", []*cel.Type{cel.StringType, cel.BoolType}, semverType,
				cel.BinaryBinding(func(s, n ref.Val) ref.Val { return toSemver(s, bool(n.(types.Bool))) }))),
		cel.Function("isSemver",
			cel.Overload("is_semver_string", []*cel.Type{cel.StringType}, cel.BoolType,
				cel.UnaryBinding(func(s ref.Val) ref.Val { _, err := parse(s, false); return types.Bool(err == nil) })),
			cel.Overload("is_semver_string_bool", []*cel.Type{cel.StringType, cel.BoolType}, cel.BoolType,
				cel.BinaryBinding(func(s, n ref.Val) ref.Val { _, err := parse(s, bool(n.(types.Bool))); return types.Bool(err == nil) }))),
		part("major", func(v semverVal) uint64 { return v.major }),
		part("minor", func(v semverVal) uint64 { return v.minor }),
		part("patch", func(v semverVal) uint64 { return v.patch }),
		compare("isGreaterThan", "semver_is_greater_than", func(c int) ref.Val { return types.Bool(c > 0) }),
		compare("isLessThan", "semver_is_less_than", func(c int) ref.Val { return types.Bool(c < 0) }),
		cel.Function("compareTo", cel.MemberOverload("semver_compare_to", []*cel.Type{semverType, semverType}, cel.IntType,
			cel.BinaryBinding(func(a, b ref.Val) ref.Val { return types.Int(sv(a).compare(sv(b))) }))),
	})
}
