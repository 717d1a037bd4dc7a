package fairness

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
)

// ErrRejected is the error of a request that is not served: its flow's
// queue is full, there are too many flows waiting, or it waited past its
// limit.
var ErrRejected = errors.New("fairness: request rejected: too many requests")

// Request is what classification looks at.
type Request struct {
	User      string
	Groups    []string
	Namespace string // "" for cluster-scoped and non-resource requests
	Path      string
}

// Distinguisher is how a schema tells flows apart.
type Distinguisher int

const (
	ByUser          Distinguisher = iota // one flow per user
	ByUserNamespace                      // one flow per user and namespace
)

// Schema is a flow schema: which requests it matches, and where they go.
type Schema struct {
	Name  string
	UID   string // "" is made from the name
	Level string // the name of a Level
	// Match says whether a request belongs to the schema.
	Match         func(Request) bool
	Distinguisher Distinguisher
}

// Level is a priority level.
type Level struct {
	Name string
	UID  string // "" is made from the name
	// Exempt levels serve every request at once, without queuing.
	Exempt bool
	// Seats is how many of the level's requests are served at once.
	Seats int
	// QueueLength bounds the requests of one flow waiting for a seat; 0:
	// none waits, a request finding every seat taken is refused at once.
	QueueLength int
	// Flows bounds the flows waiting at once; a request of another flow
	// finding every seat taken is refused at once.
	Flows int
}

// Config is the schemas, in order of precedence, and the levels.
type Config struct {
	Schemas []Schema
	Levels  []Level
	// MaxWait bounds a request's wait in its queue: a quarter of the time
	// left before its context's deadline, as kube-apiserver, and at most
	// MaxWait (kube-apiserver's is a minute; 0 is that).
	MaxWait time.Duration
}

// Default is a configuration modelled on kube-apiserver's mandatory and
// suggested ones, for a server serving seats requests at once (kube's
// total is 600): system:masters and the health checks are exempt, the
// service accounts of kube-system (the server's own controllers) have
// workload-high, everyone else global-default, one flow per user.
func Default(seats int) Config {
	share := func(part int) int { return max(1, seats*part/100) }
	return Config{
		Schemas: []Schema{
			{Name: "exempt", Level: "exempt", Match: InGroup("system:masters")},
			{Name: "probes", Level: "exempt", Match: func(r Request) bool {
				switch r.Path {
				case "/healthz", "/livez", "/readyz":
					return true
				}
				return false
			}},
			{Name: "kube-system-service-accounts", Level: "workload-high", Match: InGroup("system:serviceaccounts:kube-system")},
			{Name: "global-default", Level: "global-default", Match: func(Request) bool { return true }},
		},
		Levels: []Level{
			{Name: "exempt", Exempt: true},
			{Name: "workload-high", Seats: share(40), QueueLength: 50, Flows: 128},
			{Name: "global-default", Seats: share(60), QueueLength: 50, Flows: 128},
		},
	}
}

// InGroup matches the requests of users in any of groups.
func InGroup(groups ...string) func(Request) bool {
	return func(r Request) bool {
		for _, g := range r.Groups {
			if slices.Contains(groups, g) {
				return true
			}
		}
		return false
	}
}

// Controller classifies requests and admits them. It is safe for
// concurrent use.
type Controller struct {
	schemas []schema
	maxWait time.Duration
}

type schema struct {
	Schema
	level *level
}

// New checks c and makes its controller.
func New(c Config) (*Controller, error) {
	var errs []error
	levels := map[string]*level{}
	for i, l := range c.Levels {
		switch {
		case l.Name == "":
			errs = append(errs, fmt.Errorf("level %d has no name", i))
		case levels[l.Name] != nil:
			errs = append(errs, fmt.Errorf("level %q is defined twice", l.Name))
		case !l.Exempt && (l.Seats < 1 || l.QueueLength < 0 || l.Flows < 0):
			errs = append(errs, fmt.Errorf("level %q: seats must be positive, queue length and flows not negative", l.Name))
		}
		if l.UID == "" {
			l.UID = uidOf("level", l.Name)
		}
		levels[l.Name] = &level{Level: l, waiting: map[string]*queue{}, serving: map[string]int{}}
	}
	ctl := &Controller{maxWait: c.MaxWait}
	if ctl.maxWait <= 0 {
		ctl.maxWait = time.Minute
	}
	for i, s := range c.Schemas {
		l := levels[s.Level]
		switch {
		case s.Name == "":
			errs = append(errs, fmt.Errorf("schema %d has no name", i))
		case s.Match == nil:
			errs = append(errs, fmt.Errorf("schema %q matches nothing", s.Name))
		case l == nil:
			errs = append(errs, fmt.Errorf("schema %q: no level %q", s.Name, s.Level))
		}
		if s.UID == "" {
			s.UID = uidOf("schema", s.Name)
		}
		ctl.schemas = append(ctl.schemas, schema{Schema: s, level: l})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("fairness: %w", err)
	}
	return ctl, nil
}

// uidOf makes a stable UID of a name, in the form of a UUID.
func uidOf(kind, name string) string {
	h := sha256.Sum256([]byte("kapi.fairness/" + kind + "/" + name))
	return fmt.Sprintf("%x-%x-%x-%x-%x", h[0:4], h[4:6], h[6:8], h[8:10], h[10:16])
}

// Decision is where a request was classified.
type Decision struct {
	FlowSchema, FlowSchemaUID       string
	PriorityLevel, PriorityLevelUID string
	Flow                            string
	Exempt                          bool
}

// Admit classifies r and waits for a seat for it. It returns where r was
// classified (even when it is rejected, for the response's headers), and,
// once r may be served, a function to call when it is done. The error is
// ErrRejected, or ctx's if it ends while r waits. A request no schema
// matches is served at once.
func (c *Controller) Admit(ctx context.Context, r Request) (Decision, func(), error) {
	i := slices.IndexFunc(c.schemas, func(s schema) bool { return s.Match(r) })
	if i < 0 {
		return Decision{Exempt: true}, func() {}, nil
	}
	s := c.schemas[i]
	d := Decision{FlowSchema: s.Name, FlowSchemaUID: s.UID, PriorityLevel: s.level.Name, PriorityLevelUID: s.level.UID, Exempt: s.level.Exempt}
	if d.Exempt {
		return d, func() {}, nil
	}
	d.Flow = s.Name + "/" + r.User
	if s.Distinguisher == ByUserNamespace {
		d.Flow += "/" + r.Namespace
	}
	wait := c.maxWait
	if deadline, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(deadline)/4)
	}
	done, err := s.level.admit(ctx, d.Flow, wait)
	return d, done, err
}

// Waiting is how many requests wait for a seat, in every level (kube's
// apiserver_flowcontrol_current_inqueue_requests, summed).
func (c *Controller) Waiting() int {
	n := 0
	for _, l := range c.levels() {
		l.mu.Lock()
		for _, q := range l.order {
			n += len(q.waiters)
		}
		l.mu.Unlock()
	}
	return n
}

// levels are the levels of the schemas, each once.
func (c *Controller) levels() []*level {
	var out []*level
	for _, s := range c.schemas {
		if !slices.Contains(out, s.level) {
			out = append(out, s.level)
		}
	}
	return out
}

// level is the state of a priority level that is not exempt.
type level struct {
	Level
	mu      sync.Mutex
	inUse   int
	serving map[string]int    // seats held, by flow
	waiting map[string]*queue // flows with requests waiting
	order   []*queue          // the same, longest-waiting first
}

// queue is the waiting requests of one flow.
type queue struct {
	flow    string
	waiters []*waiter
}

type waiter struct {
	ready    chan struct{}
	admitted bool
}

func (l *level) admit(ctx context.Context, flow string, wait time.Duration) (func(), error) {
	done := func() { l.release(flow) }
	l.mu.Lock()
	if l.inUse < l.Seats && len(l.order) == 0 {
		l.take(flow)
		l.mu.Unlock()
		return done, nil
	}
	q := l.waiting[flow]
	switch {
	case q == nil && len(l.order) >= l.Flows, q != nil && len(q.waiters) >= l.QueueLength, q == nil && l.QueueLength == 0:
		l.mu.Unlock()
		return nil, ErrRejected
	case q == nil:
		q = &queue{flow: flow}
		l.waiting[flow] = q
		l.order = append(l.order, q)
	}
	w := &waiter{ready: make(chan struct{})}
	q.waiters = append(q.waiters, w)
	l.mu.Unlock()

	timer := time.NewTimer(wait)
	defer timer.Stop()
	var err error
	select {
	case <-w.ready:
		return done, nil
	case <-timer.C:
		err = ErrRejected
	case <-ctx.Done():
		err = ctx.Err()
		if errors.Is(err, context.DeadlineExceeded) { // the request's time is up: as a wait too long
			err = fmt.Errorf("%w: %w", ErrRejected, err)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if w.admitted { // a seat came as the wait ended: take it
		return done, nil
	}
	q.waiters = slices.DeleteFunc(q.waiters, func(o *waiter) bool { return o == w })
	if len(q.waiters) == 0 {
		l.drop(q)
	}
	return nil, err
}

func (l *level) take(flow string) {
	l.inUse++
	l.serving[flow]++
}

func (l *level) drop(q *queue) {
	delete(l.waiting, q.flow)
	l.order = slices.DeleteFunc(l.order, func(o *queue) bool { return o == q })
}

// release frees flow's seat and gives the free seats to the waiting flows
// with the fewest being served.
func (l *level) release(flow string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.inUse--
	if l.serving[flow]--; l.serving[flow] == 0 {
		delete(l.serving, flow)
	}
	for l.inUse < l.Seats && len(l.order) > 0 {
		next := 0
		for i, q := range l.order {
			if l.serving[q.flow] < l.serving[l.order[next].flow] {
				next = i
			}
		}
		q := l.order[next]
		w := q.waiters[0]
		q.waiters = q.waiters[1:]
		// The flow goes to the back: the others waiting as long are
		// served before it again.
		l.order = append(slices.Delete(l.order, next, next+1), q)
		if len(q.waiters) == 0 {
			l.drop(q)
		}
		w.admitted = true
		close(w.ready)
		l.take(q.flow)
	}
}
