package apiserver_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// CORS on the corpus server (apiserver.WithCORSAllowedOrigins): the origin
// of a web console, the one the WebSocket cases send.
const corpusOrigin = `^http://console\.test$`

var corpusOriginRE = regexp.MustCompile(corpusOrigin)

// corsCorpus is the hostile preflights: Origins that are not the allowed
// one but try to pass for it, with Access-Control-Request-* headers a
// browser would never send. kube-apiserver (v1.37.2, started with
// --cors-allowed-origins '//good\.example$') answers an OPTIONS from an
// origin it does not allow as if CORS were off: the request goes on, and
// OPTIONS of a resource is 405 MethodNotAllowed with no CORS header
// (checked here by FuzzCORS); an allowed one is 204 whatever it asks for.
func corsCorpus() []corpusCase {
	var cases []corpusCase
	preflight := func(name, path, origin string, more ...string) {
		header := append([]string{"Origin", origin, "Access-Control-Request-Method", "POST"}, more...)
		cases = append(cases, corpusCase{name: "cors/" + name, method: http.MethodOptions, path: path, code: 405, header: header})
	}
	for name, origin := range map[string]string{
		"another origin":            "http://evil.test",
		"the origin as a subdomain": "http://console.test.evil.test",
		"the origin as user info":   "http://console.test@evil.test",
		"another port":              "http://console.test:8443",
		"another scheme":            "https://console.test",
		"upper case":                "HTTP://CONSOLE.TEST",
		"null":                      "null",
		"empty":                     "",
		"two origins":               "http://console.test http://evil.test",
		"a wildcard":                "*",
		"not a URL":                 "console.test",
		"a path":                    "http://console.test/",
		"a long one":                "http://console.test." + strings.Repeat("a", 8<<10),
	} {
		preflight(name, widgetsIn(corpusNS), origin)
	}
	preflight("request method a token no server has", widgetsIn(corpusNS), "http://evil.test", "Access-Control-Request-Method", "SELECT\t*")
	preflight("request headers many", widgetsIn(corpusNS), "http://evil.test", "Access-Control-Request-Headers", strings.Repeat("x-a,", 4<<10))
	preflight("request headers not tokens", widgetsIn(corpusNS), "http://evil.test", "Access-Control-Request-Headers", "a b, (c), \"d\"")
	preflight("of an object", corpusItem, "http://evil.test")
	preflight("of a subresource", corpusStatus, "http://evil.test")
	preflight("of an action", corpusItem+"/restart", "http://evil.test")
	preflight("of a create-on-update", corpusLeases+"/absent", "http://evil.test")
	return cases
}

// FuzzCORS sends any request with any Origin and Access-Control-Request-*
// headers to the corpus server, which allows corpusOrigin: an allowed
// origin's OPTIONS is 204, whatever method, path and headers it asks for,
// as kube-apiserver answers it before routing; every answer carries
// Access-Control-Allow-Origin exactly when a pattern allows the origin,
// naming that origin and no other; and, as FuzzRequest, no 5xx, a 4xx is a
// Status, and the store never changes.
func FuzzCORS(f *testing.F) {
	for _, tc := range corsCorpus() {
		f.Add(tc.method, tc.path, tc.header[1], "POST", "")
	}
	f.Add(http.MethodOptions, widgetsIn(corpusNS), "http://console.test", "DELETE", "Authorization, X-Bogus")
	f.Add(http.MethodOptions, "/no/such/path", "http://console.test", "CONNECT", strings.Repeat("x,", 100))
	f.Add(http.MethodGet, corpusItem, "http://console.test", "", "")
	f.Add(http.MethodPut, corpusLeases+"/absent", "http://console.test", "", "")
	f.Add(http.MethodPost, corpusItem+"/restart", "http://evil.test", "", "")
	f.Add(http.MethodGet, widgetsIn(corpusNS)+"?watch=true&timeoutSeconds=1", "http://console.test", "", "")
	s := newFuzzServer(f)
	f.Fuzz(func(t *testing.T, method, path, origin, requestMethod, requestHeaders string) {
		if !strings.HasPrefix(path, "/") {
			return
		}
		if _, query, _ := strings.Cut(path, "?"); s.futureRevision(query) {
			return
		}
		tc := corpusCase{method: method, path: withDryRun(path), header: []string{"Origin", origin,
			"Access-Control-Request-Method", requestMethod, "Access-Control-Request-Headers", requestHeaders}}
		r := s.check(t, tc)
		if r == nil {
			return // no client sends it
		}
		sent := strings.Trim(origin, " \t") // as the server reads a header
		allowed := sent != "" && corpusOriginRE.MatchString(sent)
		if got := r.Header.Get("Access-Control-Allow-Origin"); allowed && got != sent || !allowed && got != "" {
			t.Fatalf("Origin %q: Access-Control-Allow-Origin %q", origin, got)
		}
		if allowed && method == http.MethodOptions && r.Code != http.StatusNoContent {
			t.Fatalf("a preflight of the allowed origin: %d, want 204", r.Code)
		}
	})
}
