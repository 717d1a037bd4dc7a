package delegation

import (
	"context"
	"sync"
	"time"
)

// RateLimiter is a token bucket bounding the calls a server makes to the
// cluster: qps tokens a second, up to burst at once. A call waits for a
// token (or for its context to end). Share one between the Clusters that
// should share a budget.
type RateLimiter struct {
	mu     sync.Mutex
	qps    float64
	burst  float64
	tokens float64
	last   time.Time
}

// NewRateLimiter makes a bucket of qps tokens a second holding up to burst
// (at least 1); qps 0 or less never limits.
func NewRateLimiter(qps float64, burst int) *RateLimiter {
	if burst < 1 {
		burst = 1
	}
	return &RateLimiter{qps: qps, burst: float64(burst), tokens: float64(burst)}
}

// The defaults of kube's delegated clients (k8s.io/apiserver's
// DelegatingAuthenticationOptions and friends): enough never to throttle
// the server, a bound if something loops.
const (
	DefaultQPS   = 200
	DefaultBurst = 400
)

// defaultLimiters holds one default bucket per cluster host, shared by every
// Cluster value naming that host.
var defaultLimiters sync.Map // host → *RateLimiter

func (c Cluster) limiter() *RateLimiter {
	if c.RateLimiter != nil {
		return c.RateLimiter
	}
	l, _ := defaultLimiters.LoadOrStore(c.Host, NewRateLimiter(DefaultQPS, DefaultBurst))
	return l.(*RateLimiter)
}

// Wait takes a token, waiting for one if the bucket is empty.
func (l *RateLimiter) Wait(ctx context.Context) error {
	if l == nil || l.qps <= 0 {
		return nil
	}
	l.mu.Lock()
	now := time.Now()
	if !l.last.IsZero() {
		l.tokens = min(l.burst, l.tokens+now.Sub(l.last).Seconds()*l.qps)
	}
	l.last = now
	l.tokens-- // reserve, possibly going into debt
	wait := time.Duration(0)
	if l.tokens < 0 {
		wait = time.Duration(-l.tokens / l.qps * float64(time.Second))
	}
	l.mu.Unlock()
	if wait == 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		l.mu.Lock()
		l.tokens++ // give the reservation back
		l.mu.Unlock()
		return ctx.Err()
	}
}
