package validation

import (
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// formats are the string formats the format keyword checks: those a
// CustomResourceDefinition's schema checks (apiextensions-apiserver
// pkg/apiserver/validation/formats.go) that an API commonly needs, each
// accepting what kube-openapi's strfmt accepts, quirks included (an IPv4
// address may have leading zeros, as before Go 1.17).
var formats = map[string]func(string) bool{
	"byte": base64Pattern.MatchString,
	"cidr": func(s string) bool {
		_, _, err := net.ParseCIDR(withoutLeadingZeros(s))
		return err == nil
	},
	"date": isDate,
	"date-time": func(s string) bool {
		if len(s) < 4 {
			return false
		}
		parts := strings.Split(strings.ToLower(s), "t")
		if len(parts) < 2 || !isDate(parts[0]) {
			return false
		}
		m := clockPattern.FindStringSubmatch(parts[1])
		return m != nil && m[1] <= "23" && m[2] <= "59" && m[3] <= "59"
	},
	"email": func(s string) bool {
		a, err := mail.ParseAddress(s)
		return err == nil && a.Address != ""
	},
	"hostname": func(s string) bool {
		return hostname.MatchString(s) && len(s) <= 255 &&
			!slices.ContainsFunc(strings.Split(s, "."), func(label string) bool { return len(label) > 63 })
	},
	"ipv4": func(s string) bool {
		return strings.Contains(s, ".") && net.ParseIP(withoutLeadingZeros(s)) != nil
	},
	"ipv6": func(s string) bool {
		return strings.Contains(s, ":") && net.ParseIP(s) != nil
	},
	"mac": func(s string) bool {
		_, err := net.ParseMAC(s)
		return err == nil
	},
	"password": func(string) bool { return true },
	"uri": func(s string) bool {
		_, err := url.ParseRequestURI(s)
		return err == nil
	},
	"uuid": uuid.MatchString,
}

// StringFormat is the check of a string format the format keyword knows
// (date-time, ipv4, ...), as a CustomResourceDefinition's schema checks it;
// nil for a format it does not know. Package schema checks a
// CustomResourceDefinition's formats with these and the rarer ones.
func StringFormat(name string) func(string) bool { return formats[name] }

func isDate(s string) bool {
	_, err := time.Parse(time.DateOnly, s)
	return err == nil
}

// withoutLeadingZeros drops the leading zeros of the decimal parts of the
// dotted IPv4 address at the end of s (before a CIDR's prefix length):
// 010.1.1.1 is 10.1.1.1, as k8s.io/utils/net's sloppy parser reads it.
func withoutLeadingZeros(s string) string {
	addr, prefix, hasPrefix := strings.Cut(s, "/")
	head, v4 := "", addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		head, v4 = addr[:i+1], addr[i+1:]
	}
	parts := strings.Split(v4, ".")
	if len(parts) != 4 {
		return s
	}
	for i, p := range parts {
		if len(p) > 1 && len(p) <= 3 {
			if t := strings.TrimLeft(p, "0"); t != "" {
				parts[i] = t
			} else {
				parts[i] = "0"
			}
		}
	}
	out := head + strings.Join(parts, ".")
	if hasPrefix {
		out += "/" + prefix
	}
	return out
}

// The patterns of kube-openapi's strfmt.
var (
	base64Pattern = regexp.MustCompile(`^(?:[A-Za-z0-9+\/]{4})*(?:[A-Za-z0-9+\/]{2}==|[A-Za-z0-9+\/]{3}=|[A-Za-z0-9+\/]{4})$`)
	clockPattern  = regexp.MustCompile(`^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$`)
	hostname      = regexp.MustCompile(`^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$`)
	uuid          = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)
)

func formatNames() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
