package schema

import (
	"encoding/hex"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/kapi-dev/kapi/validation"
)

// stringFormats are the formats a CustomResourceDefinition's schema checks
// on strings (apiextensions-apiserver's supported formats, kube-openapi's
// checks of each), by name without dashes as kube-openapi normalizes
// names: "date-time" is "datetime". The common ones are package
// validation's, which typed kinds use.
var stringFormats = map[string]func(string) bool{
	"bsonobjectid": func(s string) bool {
		b, err := hex.DecodeString(s)
		return err == nil && len(b) == 12
	},
	"uri":        validation.StringFormat("uri"),
	"email":      validation.StringFormat("email"),
	"hostname":   validation.StringFormat("hostname"),
	"ipv4":       validation.StringFormat("ipv4"),
	"ipv6":       validation.StringFormat("ipv6"),
	"cidr":       validation.StringFormat("cidr"),
	"mac":        validation.StringFormat("mac"),
	"uuid":       validation.StringFormat("uuid"),
	"uuid3":      regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$`).MatchString,
	"uuid4":      regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`).MatchString,
	"uuid5":      regexp.MustCompile(`(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$`).MatchString,
	"isbn":       func(s string) bool { return isISBN10(s) || isISBN13(s) },
	"isbn10":     isISBN10,
	"isbn13":     isISBN13,
	"creditcard": isCreditCard,
	"ssn": func(s string) bool {
		return len(s) == 11 && ssnPattern.MatchString(s)
	},
	"hexcolor": regexp.MustCompile(`^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$`).MatchString,
	"rgbcolor": regexp.MustCompile(`^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$`).MatchString,
	"byte":     validation.StringFormat("byte"),
	"password": validation.StringFormat("password"),
	"date":     validation.StringFormat("date"),
	"duration": isDuration,
	"datetime": validation.StringFormat("date-time"),
	"k8sshortname": func(s string) bool {
		return len(s) <= 63 && shortName.MatchString(s)
	},
	"k8slongname": func(s string) bool {
		return len(s) <= 253 && longName.MatchString(s)
	},
}

var (
	ssnPattern    = regexp.MustCompile(`^\d{3}[- ]?\d{2}[- ]?\d{4}$`)
	digitsOnly    = regexp.MustCompile("[^0-9]+")
	creditCard    = regexp.MustCompile(`^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35\d{3})\d{11})$`)
	isbnSpace     = regexp.MustCompile(`[\s-]+`)
	isbn10        = regexp.MustCompile(`^(?:[0-9]{9}X|[0-9]{10})$`)
	isbn13        = regexp.MustCompile(`^(?:[0-9]{13})$`)
	durationParts = regexp.MustCompile(`((\d+)\s*([A-Za-zµ]+))`)
	shortName     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	longName      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
)

// isCreditCard is a Luhn check of the digits, which must look like a
// card number.
func isCreditCard(s string) bool {
	digits := digitsOnly.ReplaceAllString(s, "")
	if !creditCard.MatchString(digits) {
		return false
	}
	sum, double := 0, false
	for i := len(digits) - 1; i >= 0; i-- {
		d := int(digits[i] - '0')
		if double {
			d *= 2
			if d >= 10 {
				d = d%10 + 1
			}
		}
		sum += d
		double = !double
	}
	return sum%10 == 0
}

func isISBN10(s string) bool {
	s = isbnSpace.ReplaceAllString(s, "")
	if !isbn10.MatchString(s) {
		return false
	}
	sum := 0
	for i := range 9 {
		sum += (i + 1) * int(s[i]-'0')
	}
	if s[9] == 'X' {
		sum += 100
	} else {
		sum += 10 * int(s[9]-'0')
	}
	return sum%11 == 0
}

func isISBN13(s string) bool {
	s = isbnSpace.ReplaceAllString(s, "")
	if !isbn13.MatchString(s) {
		return false
	}
	sum := 0
	for i := range 12 {
		f := 1
		if i%2 == 1 {
			f = 3
		}
		sum += f * int(s[i]-'0')
	}
	return int(s[12]-'0')-(10-sum%10)%10 == 0
}

// isDuration accepts Go's durations and the looser "3 days" forms
// kube-openapi's duration format knows.
func isDuration(s string) bool {
	if _, err := time.ParseDuration(s); err == nil {
		return true
	}
	units := [][]string{
		{"ns", "nano"}, {"us", "µs", "micro"}, {"ms", "milli"}, {"s", "sec"},
		{"m", "min"}, {"h", "hr", "hour"}, {"d", "day"}, {"w", "wk", "week"},
	}
	ok := false
	for _, m := range durationParts.FindAllStringSubmatch(s, -1) {
		if _, err := strconv.Atoi(m[2]); err != nil {
			return false
		}
		unit := strings.ToLower(strings.TrimSpace(m[3]))
		for _, variants := range units {
			last := len(variants) - 1
			for i, v := range variants {
				if (i == last && strings.HasPrefix(unit, v)) || strings.EqualFold(v, unit) {
					ok = true
				}
			}
		}
	}
	return ok
}
