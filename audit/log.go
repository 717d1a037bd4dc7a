package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
	"github.com/kapi-dev/kapi/observe"
)

// Event is kube-apiserver's audit.k8s.io/v1 Event, as it writes it.
type Event struct {
	Kind                     string            `json:"kind"`
	APIVersion               string            `json:"apiVersion"`
	Level                    Level             `json:"level"`
	AuditID                  string            `json:"auditID"`
	Stage                    Stage             `json:"stage"`
	RequestURI               string            `json:"requestURI"`
	Verb                     string            `json:"verb"`
	User                     UserInfo          `json:"user"`
	ImpersonatedUser         *UserInfo         `json:"impersonatedUser,omitempty"`
	SourceIPs                []string          `json:"sourceIPs,omitempty"`
	UserAgent                string            `json:"userAgent,omitempty"`
	ObjectRef                *ObjectReference  `json:"objectRef,omitempty"`
	ResponseStatus           *kapi.Status      `json:"responseStatus,omitempty"`
	RequestObject            json.RawMessage   `json:"requestObject,omitempty"`
	ResponseObject           json.RawMessage   `json:"responseObject,omitempty"`
	RequestReceivedTimestamp kapi.MicroTime    `json:"requestReceivedTimestamp"`
	StageTimestamp           kapi.MicroTime    `json:"stageTimestamp"`
	Annotations              map[string]string `json:"annotations,omitempty"`
}

// UserInfo is who made the request (authentication.k8s.io/v1 UserInfo).
type UserInfo struct {
	Username string              `json:"username,omitempty"`
	UID      string              `json:"uid,omitempty"`
	Groups   []string            `json:"groups,omitempty"`
	Extra    map[string][]string `json:"extra,omitempty"`
}

func userInfo(u auth.User) UserInfo {
	return UserInfo{Username: u.Name, UID: u.UID, Groups: u.Groups, Extra: u.Extra}
}

// ObjectReference is what a resource request is about.
type ObjectReference struct {
	Resource    string `json:"resource,omitempty"`
	Namespace   string `json:"namespace,omitempty"`
	Name        string `json:"name,omitempty"`
	APIGroup    string `json:"apiGroup,omitempty"`
	APIVersion  string `json:"apiVersion,omitempty"`
	Subresource string `json:"subresource,omitempty"`
}

// Option configures a Log.
type Option func(*logConfig)

type logConfig struct {
	buffer   int
	blocking bool
	maxBody  int
}

// WithBuffer sets how many events wait for the sink (default 1000).
func WithBuffer(n int) Option { return func(c *logConfig) { c.buffer = n } }

// WithBlocking makes a request wait for room in the buffer instead of its
// event being dropped.
func WithBlocking() Option { return func(c *logConfig) { c.blocking = true } }

// WithMaxBodyBytes sets the largest request or response body recorded at
// the Request and RequestResponse levels (default 1 MiB); a larger one is
// left out of its event.
func WithMaxBodyBytes(n int) Option { return func(c *logConfig) { c.maxBody = n } }

// Log writes audit events of the requests a server serves to a sink. It is
// an apiserver.Observer.
type Log struct {
	policy  *Policy
	config  logConfig
	lines   chan []byte
	done    chan struct{}
	dropped atomic.Uint64
	failed  atomic.Uint64

	mu     sync.RWMutex // guards closed against sends
	closed bool
	sink   io.Writer
}

var (
	_ observe.Observer = (*Log)(nil)
	_ io.WriteCloser   = (*RotatingFile)(nil)
)

// New makes a Log writing JSON lines to sink under policy. Close it once
// the server is closed.
func New(sink io.Writer, policy *Policy, opts ...Option) (*Log, error) {
	c := logConfig{buffer: 1000, maxBody: 1 << 20}
	for _, o := range opts {
		o(&c)
	}
	var errs []error
	if sink == nil {
		errs = append(errs, errors.New("no sink"))
	}
	if policy == nil {
		errs = append(errs, errors.New("no policy"))
	} else if err := policy.check(); err != nil {
		errs = append(errs, err)
	}
	if c.buffer <= 0 {
		errs = append(errs, fmt.Errorf("buffer must be positive, not %d", c.buffer))
	}
	if c.maxBody < 0 {
		errs = append(errs, fmt.Errorf("max body bytes must not be negative, not %d", c.maxBody))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	l := &Log{policy: policy, config: c, sink: sink, lines: make(chan []byte, c.buffer), done: make(chan struct{})}
	go l.write()
	return l, nil
}

func (l *Log) write() {
	defer close(l.done)
	for line := range l.lines {
		if _, err := l.sink.Write(line); err != nil {
			l.failed.Add(1)
		}
	}
}

// Dropped is how many events were dropped because the buffer was full or
// the Log closed.
func (l *Log) Dropped() uint64 { return l.dropped.Load() }

// Failed is how many events the sink refused.
func (l *Log) Failed() uint64 { return l.failed.Load() }

// Close writes what is buffered and stops; later events are dropped. It
// does not close the sink.
func (l *Log) Close() error {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.lines)
	}
	l.mu.Unlock()
	<-l.done
	return nil
}

func (l *Log) emit(ev *Event) {
	line, err := json.Marshal(ev)
	if err != nil {
		l.failed.Add(1)
		return
	}
	line = append(line, '\n')
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.closed {
		l.dropped.Add(1)
		return
	}
	if l.config.blocking {
		l.lines <- line
		return
	}
	select {
	case l.lines <- line:
	default:
		l.dropped.Add(1)
	}
}

// request is what the Log keeps of one request.
type request struct {
	level   Level
	omit    []Stage
	omitMF  bool
	decided bool
}

type requestKey struct{}

// RequestStarted implements apiserver.Observer.
func (l *Log) RequestStarted(ctx context.Context, rec *observe.RequestRecord) context.Context {
	most := l.policy.maxLevel(rec.Attributes)
	if most == LevelNone {
		return ctx
	}
	if most.rank() >= LevelRequest.rank() && rec.CaptureBytes < l.config.maxBody {
		rec.CaptureBytes = l.config.maxBody
	}
	return context.WithValue(ctx, requestKey{}, &request{})
}

// ResponseStarted implements apiserver.Observer.
func (l *Log) ResponseStarted(ctx context.Context, rec *observe.RequestRecord) {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil || !l.decide(rq, rec) {
		return
	}
	l.stage(rq, rec, StageResponseStarted, &kapi.Status{Code: int32(rec.Code)})
}

// RequestEnded implements apiserver.Observer.
func (l *Log) RequestEnded(ctx context.Context, rec *observe.RequestRecord) {
	rq, _ := ctx.Value(requestKey{}).(*request)
	if rq == nil {
		return
	}
	if rec.Code == http.StatusUnauthorized && !rec.UserKnown && !rq.decided {
		// As kube-apiserver's failed-authentication audit: one event,
		// at ResponseStarted, saying what credentials were tried.
		rq.decided = true
		if rq.level, rq.omit, rq.omitMF = l.policy.decide(rec.Attributes, false); rq.level != LevelNone {
			l.stage(rq, rec, StageResponseStarted, &kapi.Status{Message: attempted(rec.Header), Code: http.StatusUnauthorized})
		}
		return
	}
	if !l.decide(rq, rec) {
		return
	}
	if rec.Panic != nil {
		l.stage(rq, rec, StagePanic, &kapi.Status{Code: http.StatusInternalServerError, Status: kapi.StatusFailure,
			Reason: kapi.StatusReasonInternalError, Message: fmt.Sprintf("APIServer panic'd: %v", rec.Panic)})
		return
	}
	st := &kapi.Status{Code: int32(rec.Code)}
	if rec.Status != nil { // the bounded fields, as kube-apiserver copies them
		st = &kapi.Status{Status: rec.Status.Status, Message: rec.Status.Message, Reason: rec.Status.Reason,
			Details: rec.Status.Details, Code: rec.Status.Code}
		if st.Code == 0 { // a Status of success: the code is the response's, as kube's writer sets it
			st.Code = int32(rec.Code)
		}
	}
	l.stage(rq, rec, StageResponseComplete, st)
}

// attempted is kube-apiserver's message of a failed authentication.
func attempted(h http.Header) string {
	var methods []string
	auth := strings.Fields(h.Get("Authorization"))
	if len(auth) > 1 {
		switch strings.ToLower(auth[0]) {
		case "basic":
			methods = append(methods, "basic")
		case "bearer":
			methods = append(methods, "bearer")
		}
	}
	if len(methods) == 0 {
		return "Authentication failed, no credentials provided"
	}
	return "Authentication failed, attempted: " + strings.Join(methods, ", ")
}

// decide sets the request's level once its user is known, and writes its
// RequestReceived event; it says whether the request is audited.
func (l *Log) decide(rq *request, rec *observe.RequestRecord) bool {
	if !rq.decided {
		rq.decided = true
		// As kube-apiserver, whose audit filter runs before impersonation:
		// the policy sees who authenticated.
		a := rec.Attributes
		if rec.Requestor != nil {
			a.User = *rec.Requestor
		}
		rq.level, rq.omit, rq.omitMF = l.policy.decide(a, rec.UserKnown)
		if rq.level != LevelNone {
			l.stage(rq, rec, StageRequestReceived, nil)
		}
	}
	return rq.level != LevelNone
}

func (l *Log) stage(rq *request, rec *observe.RequestRecord, stage Stage, status *kapi.Status) {
	if slices.Contains(rq.omit, stage) {
		return
	}
	now := time.Now()
	if stage == StageRequestReceived {
		now = rec.Received
	}
	a := rec.Attributes
	ev := &Event{
		Kind: "Event", APIVersion: "audit.k8s.io/v1", Level: rq.level, AuditID: rec.AuditID, Stage: stage,
		RequestURI: rec.RequestURI, Verb: a.Verb, SourceIPs: rec.SourceIPs, UserAgent: rec.UserAgent,
		User:                     userInfo(a.User),
		RequestReceivedTimestamp: kapi.NewMicroTime(rec.Received), StageTimestamp: kapi.NewMicroTime(now),
		ResponseStatus: status,
	}
	if rec.Requestor != nil { // user is who authenticated, impersonatedUser who it acts as
		impersonated := userInfo(a.User)
		ev.User, ev.ImpersonatedUser = userInfo(*rec.Requestor), &impersonated
	}
	if a.ResourceRequest {
		ev.ObjectRef = &ObjectReference{Resource: a.Resource, Namespace: a.Namespace, Name: a.Name,
			APIGroup: a.APIGroup, APIVersion: a.APIVersion, Subresource: a.Subresource}
	}
	if stage != StageRequestReceived && rq.level.rank() >= LevelRequest.rank() {
		ev.RequestObject = l.body(rec.RequestBody, rq.omitMF)
	}
	if stage == StageResponseComplete && rq.level == LevelRequestResponse && !rec.LongRunning {
		ev.ResponseObject = l.body(rec.ResponseBody, rq.omitMF)
	}
	l.emit(ev)
}

// body is a recorded body as JSON, or nil when it is not JSON (the server
// answered or was sent another format) or was too large to keep.
func (l *Log) body(b []byte, omitManagedFields bool) json.RawMessage {
	b = bytes.TrimSpace(b)
	if len(b) == 0 || !json.Valid(b) {
		return nil
	}
	if !omitManagedFields || !bytes.Contains(b, []byte(`"managedFields"`)) {
		return json.RawMessage(slices.Clone(b))
	}
	var obj map[string]any
	if json.Unmarshal(b, &obj) != nil {
		return json.RawMessage(slices.Clone(b))
	}
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "managedFields")
	}
	out, err := json.Marshal(obj)
	if err != nil {
		return nil
	}
	return out
}
