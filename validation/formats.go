package validation

import (
	"encoding/base64"
	"net"
	"net/mail"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// formats are the string formats the format keyword checks: those of the
// formats a CustomResourceDefinition's schema checks (apiextensions-apiserver
// pkg/apiserver/validation/formats.go) that an API commonly needs, each
// parsed as kube-openapi's strfmt parses it.
var formats = map[string]func(string) bool{
	"byte": func(s string) bool {
		_, err := base64.StdEncoding.DecodeString(s)
		return err == nil
	},
	"cidr": func(s string) bool {
		_, _, err := net.ParseCIDR(s)
		return err == nil
	},
	"date": func(s string) bool {
		_, err := time.Parse(time.DateOnly, s)
		return err == nil
	},
	"date-time": func(s string) bool {
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05"} {
			if _, err := time.Parse(layout, s); err == nil {
				return true
			}
		}
		return false
	},
	"email": func(s string) bool {
		_, err := mail.ParseAddress(s)
		return err == nil
	},
	"hostname": func(s string) bool {
		return len(s) <= 255 && hostname.MatchString(s) &&
			!slices.ContainsFunc(strings.Split(s, "."), func(label string) bool { return len(label) > 63 })
	},
	"ipv4": func(s string) bool {
		ip := net.ParseIP(s)
		return ip != nil && ip.To4() != nil && !strings.Contains(s, ":")
	},
	"ipv6": func(s string) bool {
		ip := net.ParseIP(s)
		return ip != nil && strings.Contains(s, ":")
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

// hostname is RFC 1034's host name, as kube-openapi's strfmt writes it.
var hostname = regexp.MustCompile(`^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$`)

var uuid = regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$`)

func formatNames() []string {
	names := make([]string, 0, len(formats))
	for n := range formats {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}
