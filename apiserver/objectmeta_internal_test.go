package apiserver

import "testing"

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
		if got, want := validQualifiedName(s), len(isQualifiedName(s)) == 0; got != want {
			t.Errorf("validQualifiedName(%q) = %v, isQualifiedName says %v", s, got, isQualifiedName(s))
		}
		if got, want := len(validateLabels(map[string]string{s: s}, "l")) == 0, len(isQualifiedName(s))+len(isLabelValue(s)) == 0; got != want {
			t.Errorf("validateLabels of %q: valid %v, want %v", s, got, want)
		}
	})
}
