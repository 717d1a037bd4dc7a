package names

import (
	"regexp"
	"strings"
	"testing"
)

var dns1123Label = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// The matchers that skip the regexps for valid names say what the regexps
// say.
func FuzzQualifiedNameMatchers(f *testing.F) {
	for _, s := range []string{"", "a", "A", "-", "a-", "-a", "a.b", "a..b", "a_b", "a/b", "example.com/MyName", "/a", "a/", "a/b/c",
		"Example.com/a", "ex-.com/a", "ex.-com/a", "ex..com/a", ".ex.com/a", "ex.com./a", "a" + string(make([]byte, 63)), "é", "a\x00b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := matchesQualifiedName(s), qualifiedNameRegexp.MatchString(s); got != want {
			t.Errorf("matchesQualifiedName(%q) = %v, the regexp %v", s, got, want)
		}
		if got, want := matchesSubdomain(s), dns1123Subdomain.MatchString(s); got != want {
			t.Errorf("matchesSubdomain(%q) = %v, the regexp %v", s, got, want)
		}
		if got, want := MatchesDNS1123Label(s), dns1123Label.MatchString(s); got != want {
			t.Errorf("MatchesDNS1123Label(%q) = %v, the regexp %v", s, got, want)
		}
		if got, want := ValidQualifiedName(s), len(IsQualifiedName(s)) == 0; got != want {
			t.Errorf("ValidQualifiedName(%q) = %v, IsQualifiedName says %v", s, got, IsQualifiedName(s))
		}
		if got, want := ValidLabelValue(s), len(IsLabelValue(s)) == 0; got != want {
			t.Errorf("ValidLabelValue(%q) = %v, IsLabelValue says %v", s, got, IsLabelValue(s))
		}
	})
}

func TestMessages(t *testing.T) {
	for _, tc := range []struct {
		name string
		got  []string
		want int
	}{
		{"qualified name", IsQualifiedName("example.com/MyName"), 0},
		{"empty prefix", IsQualifiedName("/a"), 1},
		{"two slashes", IsQualifiedName("a/b/c"), 1},
		{"label value", IsLabelValue("web-"), 1},
		{"empty label value", IsLabelValue(""), 0},
		{"subdomain", IsDNS1123Subdomain("Example.com"), 1},
		{"label", IsDNS1123Label("a.b"), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if len(tc.got) != tc.want {
				t.Errorf("%d messages %q, want %d", len(tc.got), tc.got, tc.want)
			}
		})
	}
}

func TestGenerate(t *testing.T) {
	for _, base := range []string{"", "gen-", strings.Repeat("a", 70)} {
		got := Generate(base)
		want := base
		if len(want) > 58 {
			want = want[:58]
		}
		if len(got) != len(want)+5 || !strings.HasPrefix(got, want) || strings.ContainsAny(got[len(want):], "aeiou013") {
			t.Errorf("Generate(%q) = %q", base, got)
		}
	}
}
