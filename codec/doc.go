// Package codec holds kapi's table of media types and the negotiation that
// reads it.
//
// # The table
//
// Each row is a [Format]: a media type, how to encode and decode a body in it,
// and how a watch stream in it is framed. Negotiation ([Negotiate] for the
// Accept header, [ForContentType] for a request body) only reads the table.
//
// # Field validation
//
// [CheckJSONFields] finds the unknown and duplicate fields of a JSON body,
// named by their paths as kube-apiserver names them, and gives the document
// decoded as kube-apiserver would decode it. The server uses it for
// fieldValidation=Strict|Warn|Ignore.
//
// # Errors
//
// Nothing acceptable is [ErrNotAcceptable] (406 at the HTTP layer); an
// unknown request body type is [ErrUnsupportedMediaType] (415).
package codec
