// Package httpbody writes the bodies of a kapi server's responses: headers,
// length or compression, and the pooled buffers and gzip writers that keep
// a large body from costing allocations in proportion to its size; and
// reads a request's body ([Read]) into one allocation of the size it claims.
//
// # What it owns
//
// [Write] writes a body held whole; [WriteStreamed] one of known length
// written from its pieces (a list made of its items' cached elements);
// [Start] and [Finish] a body its caller writes itself (a response spliced
// from a stored value); [Buffer] and [Release] gather many small writes (a
// burst of watch events) into 32 KiB ones.
//
// # Invariant
//
// A body is compressed only when the client accepts gzip ([AcceptsGzip])
// and it is at least [GzipMinBytes], as kube-apiserver decides; otherwise
// it carries its exact Content-Length. Pooled writers never keep a
// response's writer after they are given back.
//
// # The slow, obviously correct path
//
// w.Write of the whole body after setting the headers, through a new
// gzip.Writer when compressed: what Write does, without the pools.
package httpbody
