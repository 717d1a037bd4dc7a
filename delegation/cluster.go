package delegation

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"sync"
	"time"
)

// Cluster is how to reach kube-apiserver.
type Cluster struct {
	// Host is kube-apiserver's address, as https://kubernetes.default.svc.
	Host string
	// Client sends the calls; it must trust the cluster's CA. nil is
	// http.DefaultClient.
	Client *http.Client
	// BearerToken is the server's own credential (its service account's
	// token), sent with each call; empty sends none.
	BearerToken string
	// RateLimiter bounds the calls; nil shares one bucket per Host of
	// DefaultQPS and DefaultBurst, as kube's delegated clients allow.
	RateLimiter *RateLimiter
}

// check reports a Cluster that cannot work.
func (c Cluster) check() error {
	u, err := url.Parse(c.Host)
	if err != nil {
		return fmt.Errorf("delegation: cluster host: %w", err)
	}
	if u.Scheme != "https" && u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("delegation: cluster host %q: want https://HOST[:PORT]", c.Host)
	}
	return nil
}

// post sends a review and decodes the answer into out.
func (c Cluster) post(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.Host+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	code, data, err := c.do(req)
	if err != nil {
		return err
	}
	if code != http.StatusOK && code != http.StatusCreated {
		var st struct{ Message string }
		if json.Unmarshal(data, &st) == nil && st.Message != "" {
			return fmt.Errorf("%s: HTTP %d: %s", path, code, st.Message)
		}
		return fmt.Errorf("%s: HTTP %d", path, code)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: the answer is not a review: %w", path, err)
	}
	return nil
}

// get reads a path of the cluster's API in JSON.
func (c Cluster) get(ctx context.Context, path string) (code int, data []byte, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Host+path, nil)
	if err != nil {
		return 0, nil, err
	}
	return c.do(req)
}

// do sends a request with the server's credentials and reads the answer.
func (c Cluster) do(req *http.Request) (code int, data []byte, err error) {
	req.Header.Set("Accept", "application/json")
	if c.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+c.BearerToken)
	}
	if err := c.limiter().Wait(req.Context()); err != nil {
		return 0, nil, err
	}
	hc := c.Client
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	return resp.StatusCode, data, err
}

// Option tunes an authenticator or authorizer of this package; each says
// which it applies to.
type Option func(*config)

type config struct {
	timeout                 time.Duration
	successTTL, failureTTL  time.Duration
	audiences               []string
	alwaysAllowGroups       []string
	alwaysAllowPaths        []string
	maxCached               int
	now                     func() time.Time
	usernameHeaders         []string
	groupHeaders, uidHeader []string
	extraPrefixes           []string
	allowedNames            []string
	webhookRefresh          time.Duration
	namespaceLifecycle      bool
	webhooks                bool
}

// kube's delegated defaults.
func defaults() config {
	return config{
		timeout:    10 * time.Second,
		successTTL: 10 * time.Second, failureTTL: 10 * time.Second,
		alwaysAllowGroups: []string{"system:masters"},
		alwaysAllowPaths:  []string{"/healthz", "/readyz", "/livez"},
		maxCached:         4096,
		webhookRefresh:    10 * time.Second,
		now:               time.Now,
		usernameHeaders:   []string{"X-Remote-User"},
		groupHeaders:      []string{"X-Remote-Group"},
		uidHeader:         []string{"X-Remote-Uid"},
		extraPrefixes:     []string{"X-Remote-Extra-"},
	}
}

func newConfig(opts []Option) (config, error) {
	c := defaults()
	for _, o := range opts {
		o(&c)
	}
	var errs []error
	if c.timeout <= 0 {
		errs = append(errs, fmt.Errorf("timeout %v: want more than 0", c.timeout))
	}
	if c.successTTL < 0 || c.failureTTL < 0 {
		errs = append(errs, fmt.Errorf("cache TTLs %v, %v: want 0 (no cache) or more", c.successTTL, c.failureTTL))
	}
	if len(c.usernameHeaders) == 0 {
		errs = append(errs, errors.New("no user name header"))
	}
	if err := errors.Join(errs...); err != nil {
		return c, fmt.Errorf("delegation: %w", err)
	}
	return c, nil
}

// WithTimeout bounds each call to kube-apiserver (default 10s); a call
// that takes longer is an error, so the request is 401 (authentication) or
// 500 (authorization), never a hang.
func WithTimeout(d time.Duration) Option { return func(c *config) { c.timeout = d } }

// WithCacheTTL sets how long answers are remembered (default 10s each):
// success for accepted tokens and allowed requests, failure for refused
// tokens and denied requests. 0 remembers nothing.
func WithCacheTTL(success, failure time.Duration) Option {
	return func(c *config) { c.successTTL, c.failureTTL = success, failure }
}

// WithAudiences makes NewTokenReview ask for tokens meant for these
// audiences and refuse tokens the cluster says are for none of them.
func WithAudiences(audiences ...string) Option {
	return func(c *config) { c.audiences = append([]string(nil), audiences...) }
}

// WithAlwaysAllowGroups replaces the groups NewSubjectAccessReview allows
// without asking (default system:masters).
func WithAlwaysAllowGroups(groups ...string) Option {
	return func(c *config) { c.alwaysAllowGroups = append([]string(nil), groups...) }
}

// WithAlwaysAllowPaths replaces the non-resource paths
// NewSubjectAccessReview allows without asking (default /healthz, /readyz,
// /livez); a path ending in "*" is a prefix.
func WithAlwaysAllowPaths(paths ...string) Option {
	return func(c *config) { c.alwaysAllowPaths = append([]string(nil), paths...) }
}

// cache remembers answers by key until they expire. It holds at most max
// entries: when full, expired entries go first, then arbitrary ones.
type cache[V any] struct {
	mu      sync.Mutex
	entries map[[sha256.Size]byte]cacheEntry[V]
	max     int
	now     func() time.Time
}

type cacheEntry[V any] struct {
	value   V
	expires time.Time
}

func newCache[V any](max int, now func() time.Time) *cache[V] {
	return &cache[V]{entries: map[[sha256.Size]byte]cacheEntry[V]{}, max: max, now: now}
}

func (c *cache[V]) get(key [sha256.Size]byte) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[key]
	if !ok || !c.now().Before(e.expires) {
		var zero V
		return zero, false
	}
	return e.value, true
}

func (c *cache[V]) put(key [sha256.Size]byte, v V, ttl time.Duration) {
	if ttl <= 0 {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now()
	if len(c.entries) >= c.max {
		for k, e := range c.entries {
			if !now.Before(e.expires) {
				delete(c.entries, k)
			}
		}
		for k := range c.entries {
			if len(c.entries) < c.max {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[key] = cacheEntry[V]{v, now.Add(ttl)}
}

// cacheKey digests a value's JSON, so no token is kept in the clear.
func cacheKey(v any) [sha256.Size]byte {
	data, _ := json.Marshal(v) // plain data: it marshals
	return sha256.Sum256(data)
}
