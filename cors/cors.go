package cors

import (
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strings"
)

// ErrNoOrigins is New's error for an empty list of origin patterns: a
// policy that allows nothing is a mistake, not a setting.
var ErrNoOrigins = errors.New("cors: no allowed origin patterns")

// Policy is a compiled CORS policy. It is immutable and safe for
// concurrent use.
type Policy struct {
	origins     []*regexp.Regexp
	methods     string
	headers     string
	exposed     string
	credentials string
}

// Option changes a Policy's defaults (kube-apiserver's) in New.
type Option func(*Policy)

// WithAllowedMethods replaces the methods a preflight allows.
func WithAllowedMethods(methods ...string) Option {
	return func(p *Policy) { p.methods = strings.Join(methods, ", ") }
}

// WithAllowedHeaders replaces the request headers a preflight allows.
func WithAllowedHeaders(headers ...string) Option {
	return func(p *Policy) { p.headers = strings.Join(headers, ", ") }
}

// WithExposedHeaders replaces the response headers a page may read
// (besides those CORS always exposes, as Content-Type).
func WithExposedHeaders(headers ...string) Option {
	return func(p *Policy) { p.exposed = strings.Join(headers, ", ") }
}

// WithCredentials says whether a page may send credentials (cookies, TLS
// client certificates, an Authorization header) and read the answer;
// kube-apiserver allows it.
func WithCredentials(allow bool) Option {
	return func(p *Policy) { p.credentials = fmt.Sprint(allow) }
}

// New compiles the origin patterns, regular expressions in Go's syntax
// (RE2). As kube-apiserver checks --cors-allowed-origins since
// CVE-2022-1996, each pattern must pin the start of the host (with "^" or
// "//") and its end (with "$" or ":"), so that "example.com" cannot allow
// https://example.com.evil.test. A pattern that is empty, does not compile
// or pins neither end is an error naming it; an empty list is
// ErrNoOrigins.
func New(allowedOrigins []string, opts ...Option) (*Policy, error) {
	if len(allowedOrigins) == 0 {
		return nil, ErrNoOrigins
	}
	p := &Policy{
		methods:     "POST, GET, OPTIONS, PUT, DELETE, PATCH",
		headers:     "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since",
		exposed:     "Date",
		credentials: "true",
	}
	var errs []error
	for _, pattern := range allowedOrigins {
		if pattern == "" {
			errs = append(errs, errors.New("cors: an allowed origin is empty"))
			continue
		}
		re, err := regexp.Compile(pattern)
		if err != nil {
			errs = append(errs, fmt.Errorf("cors: allowed origin %q: %w", pattern, err))
			continue
		}
		pinsStart := strings.Contains(pattern, "^") || strings.Contains(pattern, "//")
		pinsEnd := strings.Contains(pattern, "$") || strings.Contains(pattern, ":")
		if !pinsStart || !pinsEnd {
			errs = append(errs, fmt.Errorf("cors: allowed origin %q: regular expression does not pin to start/end of host in the origin header", pattern))
			continue
		}
		p.origins = append(p.origins, re)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Allowed says whether a pattern matches origin, the value of an Origin
// header.
func (p *Policy) Allowed(origin string) bool {
	for _, re := range p.origins {
		if re.MatchString(origin) {
			return true
		}
	}
	return false
}

// Handler answers the preflights of allowed origins and adds the CORS
// headers to next's answers to them; see the package documentation.
func (p *Policy) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Add("Vary", "Origin")
		origin := r.Header.Get("Origin")
		if origin == "" || !p.Allowed(origin) {
			next.ServeHTTP(w, r)
			return
		}
		h.Set("Access-Control-Allow-Origin", origin)
		h.Set("Access-Control-Allow-Methods", p.methods)
		h.Set("Access-Control-Allow-Headers", p.headers)
		h.Set("Access-Control-Expose-Headers", p.exposed)
		h.Set("Access-Control-Allow-Credentials", p.credentials)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		next.ServeHTTP(w, r)
	})
}
