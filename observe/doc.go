// Package observe is the port through which metrics, traces, request logs
// and audit see every request a server serves. An exporter implements
// Observer and imports nothing else of kapi's server: the prometheus and
// otel modules below this folder and package audit are such observers.
// Package apiserver calls them (apiserver.WithObserver) and re-declares
// these names as aliases, so code written against apiserver.Observer or
// apiserver.RequestRecord keeps compiling.
//
// # The record of a request
//
// A RequestRecord is what the server knows of one request: its
// attributes as the authorizer sees them, the user once known (and who
// authenticated, when impersonating), the verb and scope as
// kube-apiserver's metrics label them, the audit ID, and at the end the
// response's code, Status, size and watch event count. The server fills
// it; observers only read it, except CaptureBytes, which asks the server
// to keep the bodies for an audit log.
//
// # When observers are called
//
// RequestStarted when a request arrives, before authentication (its
// context is the request's from then on, so a tracer's span covers
// everything); ResponseStarted when a watch sends its header;
// RequestEnded once the handler has returned or panicked. An Observer may
// also be a WatchEventObserver, to see each event a watch sends, or a
// StepObserver, to see the steps of a request (today the encoding of its
// response). Observers run on the request's goroutine, in the order they
// were given, and must not block it for long.
package observe
