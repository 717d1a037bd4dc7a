package auth_test

import (
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/auth"
)

// FuzzReadTokenFile: any file is read without a panic, and every token it
// yields authenticates, through StaticTokens, as the user the file names.
func FuzzReadTokenFile(f *testing.F) {
	f.Add("t1,alice,1,\"admins,devs\"\nt2,bob,2\n")
	f.Add("t1,alice\n")
	f.Add("t1,\"alice,1\n")
	f.Add(",bob,2\n")
	f.Add("t1,alice,1\nt1,bob,2\n")
	f.Fuzz(func(t *testing.T, file string) {
		tokens, err := auth.ReadTokenFile(strings.NewReader(file))
		if err != nil {
			return
		}
		authenticator := auth.StaticTokens(tokens)
		for token, want := range tokens {
			if token == "" {
				t.Fatalf("an empty token for %+v", want)
			}
			if strings.TrimSpace(token) != token || strings.Contains(token, " ") {
				continue // an Authorization header cannot carry it as one bearer token
			}
			r := httptest.NewRequest("GET", "/", nil)
			r.Header.Set("Authorization", "Bearer "+token)
			got, ok, err := authenticator.Authenticate(r)
			if !ok || err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("token %q: %+v, %v, %v; want %+v", token, got, ok, err, want)
			}
		}
	})
}

// FuzzBearerHeader: any Authorization header is read without a panic, and
// only the one token the authenticator knows is accepted.
func FuzzBearerHeader(f *testing.F) {
	f.Add("Bearer s3cret")
	f.Add("bearer  s3cret")
	f.Add("Basic czNjcmV0")
	f.Add("Bearer")
	f.Fuzz(func(t *testing.T, header string) {
		a := auth.StaticTokens(map[string]auth.User{"s3cret": {Name: "alice"}})
		r := httptest.NewRequest("GET", "/", nil)
		r.Header["Authorization"] = []string{header}
		u, ok, err := a.Authenticate(r)
		if ok && (err != nil || u.Name != "alice" || !strings.Contains(header, "s3cret")) {
			t.Errorf("%q: %+v, %v, %v", header, u, ok, err)
		}
	})
}
