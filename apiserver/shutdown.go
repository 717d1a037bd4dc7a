package apiserver

import "context"

// Shutdown stops the server gracefully, for a host that is being replaced
// or scaled down:
//
//   - new requests are answered 503 ServiceUnavailable with Retry-After, so
//     that clients retry, at another replica if there is one;
//   - open watches end at once, cleanly: the stream ends as when its
//     timeoutSeconds is up (with a last BOOKMARK if the client allows
//     bookmarks), and clients such as client-go's reflectors watch again
//     from the last resourceVersion they saw;
//   - requests in flight are left to finish.
//
// It returns nil once every request has returned, or ctx.Err() if ctx is
// done first. Either way the server is then closed as by Close: the cache
// is stopped and later requests are answered 503. Requests still running
// at that point go on with their own contexts and deadlines.
//
// Shutdown stops only kapi: the host stops its http.Server (whose own
// Shutdown waits for connections, and so for kapi's watches to end) and
// closes the storage it passed in.
func (s *Server) Shutdown(ctx context.Context) error {
	err := s.flow.Drain(ctx)
	_ = s.Close()
	return err
}
