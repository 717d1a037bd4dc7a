// Package audit writes kube-apiserver's audit log for a kapi server:
// audit.k8s.io/v1 Events as JSON lines, chosen by a Policy of kube's
// format, so that tools that read kube-apiserver's audit log read kapi's.
//
// # Use
//
// Parse a policy (ParsePolicy reads kube's YAML or JSON), make a Log with
// New on an io.Writer (or NewRotatingFile) and give it to the server with
// apiserver.WithObserver. Close it after the server, to write what is
// buffered.
//
// # Stages and levels
//
// As kube-apiserver: RequestReceived when a request arrives (written once
// its user is known, stamped with the time it arrived), ResponseStarted when
// a watch begins its response, ResponseComplete when the response is done,
// Panic instead when the handler panicked; a request no authenticator
// accepted is one ResponseStarted event saying what it tried, as kube's
// failed-authentication audit. A request's level is that of the
// first rule that matches it: None writes nothing, Metadata the request's
// metadata and response status, Request adds the request body and
// RequestResponse the response body (not for watches).
//
// # A slow sink
//
// Events go through a bounded buffer to one writer goroutine. When the
// buffer is full an event is dropped and counted (Dropped), so no request
// waits on the sink; WithBlocking makes requests wait instead, so that no
// event is lost.
package audit
