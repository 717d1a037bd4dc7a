package observe

import (
	"context"
	"net/http"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/auth"
)

// Observer sees every request a server serves: metrics, traces, request
// logs and audit are observers (the prometheus and otel modules under
// observe/, package audit). A server calls its observers in the order they
// were given, from the request's goroutine; they must not block it for
// long.
type Observer interface {
	// RequestStarted is called when a request arrives, before it is
	// authenticated or counted against the in-flight caps. The context
	// it returns is the request's from then on (a tracer puts its span
	// there); rec.Attributes.User is not known yet.
	RequestStarted(ctx context.Context, rec *RequestRecord) context.Context
	// ResponseStarted is called when a long-running request (a watch)
	// sends its response header, as kube-apiserver's audit stage of that
	// name: the request goes on for long after.
	ResponseStarted(ctx context.Context, rec *RequestRecord)
	// RequestEnded is called once the handler has returned (or panicked,
	// with rec.Panic set), with what the response was.
	RequestEnded(ctx context.Context, rec *RequestRecord)
}

// WatchEventObserver is an Observer that also sees every event a watch
// sends, with its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and its
// size framed.
type WatchEventObserver interface {
	WatchEventSent(rec *RequestRecord, eventType string, size int)
}

// StepObserver is an Observer that also sees the steps of a request: today
// "encode", the response's encoding (and, for a list, its writing). The
// context is the request's, as RequestStarted returned it; end is called
// when the step ends.
type StepObserver interface {
	StepStarted(ctx context.Context, rec *RequestRecord, step string) (end func())
}

// RequestRecord is what the server knows of one request, for observers. The
// server fills it; observers read it, except CaptureBytes. The fields the
// server sets while the handler runs (the user, Status, Panic) are final
// when RequestEnded is called, and not before.
type RequestRecord struct {
	// Attributes are what the request asks for, as the authorizer sees
	// them; User is set once the request is authenticated (UserKnown).
	Attributes auth.Attributes
	UserKnown  bool
	// Requestor is who authenticated, when the request impersonates
	// another user (then Attributes.User): audit logs name both.
	Requestor *auth.User
	// MetricsVerb is the verb as kube-apiserver's metrics name it: GET,
	// LIST, WATCH, POST, PUT, PATCH, APPLY, DELETE, DELETECOLLECTION; for
	// other requests the HTTP method.
	MetricsVerb string
	// Scope is kube-apiserver's metrics scope: resource (one object, or a
	// create), namespace, cluster, or "" for other requests.
	Scope string
	// DryRun is the dryRun query parameter's values joined ("All" or "").
	DryRun string
	// LongRunning says the request is a watch, or a subresource kube-apiserver
	// holds long-running (a log followed: log, exec, attach, portforward, proxy).
	LongRunning bool
	// Mutating says the request may write: kube-apiserver's request_kind
	// mutating (else readOnly).
	Mutating bool
	// AuditID is the request's Audit-ID header if it had one, else a new
	// one; the response carries it back.
	AuditID    string
	Method     string
	RequestURI string
	UserAgent  string
	SourceIPs  []string
	Received   time.Time
	// Header is the request's header, to read only (a tracer reads the
	// caller's trace context there).
	Header http.Header

	// CaptureBytes asks the server (from RequestStarted) to keep up to
	// this many bytes of the request body and of a response that is not a
	// watch, in RequestBody and ResponseBody; an observer that needs them
	// sets it, and a body larger is left out (BodiesTruncated).
	CaptureBytes    int
	RequestBody     []byte
	ResponseBody    []byte
	BodiesTruncated bool

	// Code is the response's status code; Status is the Status it
	// answered, when it answered one (errors, and deletes that answer a
	// Status). ResponseBytes counts what was written.
	Code          int
	ContentType   string // the response's media type, as sent
	Status        *kapi.Status
	ResponseBytes int64
	WatchEvents   int64
	// Panic is what the handler panicked with, or nil.
	Panic any
}
