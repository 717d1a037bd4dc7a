// Package cors lets web pages of other origins call an HTTP handler, as
// kube-apiserver does for the origins its --cors-allowed-origins flag
// lists: a web console served from its own origin (Headlamp, the
// Kubernetes dashboard, a service's own UI) lists, watches and writes
// objects with fetch.
//
// # Behaviour
//
// A Policy is a list of regular expressions matched against the Origin
// header. As kube-apiserver requires since CVE-2022-1996, each must pin the
// start of the host ("^" or "//") and its end ("$" or ":"):
// `^https://console\.example\.com$`, or `//console\.example\.com(:|$)` for
// any scheme and port; "example.com" alone, which would also allow
// https://example.com.evil.test, is refused.
//
// A request from an allowed origin gets Access-Control-Allow-Origin (the
// origin itself), -Allow-Methods, -Allow-Headers, -Expose-Headers and
// -Allow-Credentials; an OPTIONS request from one is a preflight and is
// answered 204 No Content at once, before authentication, as
// kube-apiserver answers it. A request without an Origin, or from an
// origin no pattern allows, goes to the handler untouched: the browser,
// not the server, refuses the page the response. Every response says
// Vary: Origin, so that a cache does not give one origin's answer to
// another (kube-apiserver leaves that out).
//
// The defaults are kube-apiserver's: methods POST, GET, OPTIONS, PUT,
// DELETE, PATCH; headers Content-Type, Content-Length, Accept-Encoding,
// X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since;
// exposed headers Date; credentials allowed.
//
// # WebSockets
//
// Browsers do not apply CORS to WebSockets: a page of any origin may open
// one, and the server sees its Origin header. A watch over a WebSocket
// (package apiserver) is served to every origin, as kube-apiserver serves
// it; it carries no cookies kapi would trust, so a page learns only what
// its own credentials let it read.
package cors
