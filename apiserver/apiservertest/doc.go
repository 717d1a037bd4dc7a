// Package apiservertest starts kapi servers for tests, the way
// net/http/httptest starts HTTP servers, and reads what they answer in
// every format a Kubernetes client speaks.
//
// # Servers
//
//	srv := apiservertest.New(t, widgetapi.Register)
//	resp, err := srv.Client().Get(srv.URL + "/apis/example.com/v1/namespaces/default/widgets")
//
// The server listens on a free loopback port, stores in memory unless given
// apiserver.WithStorage, and is shut down by t.Cleanup.
//
// # Formats
//
// kapi serves objects in JSON, YAML, protobuf and CBOR (Formats). A
// Decoder turns a response body or a watch stream in any of them into the
// JSON document it holds, so that a test written once against JSON checks
// every format: compare with SameJSON, decode with DecodeJSON, check a
// failure's Status with Decoder.Failure. Body writes a JSON document as a
// request body in YAML or CBOR; protobuf bodies are written field by field
// with ProtoWrap and the AppendProto functions, with Kubernetes' field
// numbers and not with kapi's encoder, so that a numbering mistake in
// either shows. Protobuf objects are read into the Go types given in
// Decoder.Types.
//
// # Watches
//
// Decoder.Watch opens a watch and reads it in its format; Stream.Next,
// NextN and End wait at most Wait for the server, and Summary makes a
// list of events easy to compare.
//
// # Helpers off the test goroutine
//
// Every helper takes a testing.TB and fails the test on what it cannot
// read. Collect runs helpers where failing the test is not allowed or not
// wanted (a goroutine of a load generator, a judgement of one response
// among many) and returns what they reported as an error.
package apiservertest
