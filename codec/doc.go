// Package codec holds kapi's table of media types, the negotiation that
// reads it, and the encoders and decoders of every format.
//
// # The table
//
// Each row is a [Format]: a media type, how objects, lists and watch events
// are written in it, and how request bodies in it are read.
//
//	application/json                     watch: application/json (one event per line)
//	application/yaml                     no watch
//	application/vnd.kubernetes.protobuf  watch: ;stream=watch (length-prefixed frames)
//	application/cbor                     watch: application/cbor-seq
//
// [Negotiate] picks a [Target] from an Accept header: a format, and a
// [View] of the objects, the object itself, a Table (as=Table) or its
// metadata (as=PartialObjectMetadata, as=PartialObjectMetadataList), among
// what an [Offer] allows. [ForContentType] picks the decoder of a request
// body.
//
// # Elements
//
// An object is encoded once per format as an element ([Format.Marshal]);
// callers cache elements per object version and assemble responses from
// them ([Format.AppendBody], [Format.AppendList], [Format.AppendEvent])
// without encoding anything again. YAML and CBOR elements are made from the
// JSON element ([Format.Transcode]), protobuf elements from the object.
//
// # Protobuf
//
// Kubernetes' protobuf: the k8s\x00 envelope holding a runtime.Unknown
// whose raw bytes are the object's message. The message is derived from the
// `protobuf:"..."` struct tags on the Go type, the way Kubernetes' own
// types are tagged, and kapi's meta types carry Kubernetes' field numbers,
// so client-go decodes them. [SupportsProtobuf] says whether a type has a
// mapping; [ProtoFile] prints a .proto file for clients in other languages.
//
// # Reading bodies
//
// Textual bodies (JSON, YAML, CBOR) are turned into JSON ([Format.ToJSON])
// so that one path decodes and validates them: [CheckJSONFields] finds the
// unknown and duplicate fields of a JSON body, named by their paths as
// kube-apiserver names them (a duplicate CBOR map key or YAML key is a
// duplicate field); a type that decodes itself from any members, as a
// custom resource does, is looked into for duplicates when it is an
// [AnyFields]. Protobuf bodies are decoded directly
// ([Format.Unmarshal]); unknown fields in them are skipped, as Kubernetes
// does. Every decoder bounds nesting and sizes, and refuses what JSON
// cannot carry (NaN, infinities, non-string keys).
//
// # Errors
//
// Nothing acceptable is [ErrNotAcceptable] (406 at the HTTP layer); an
// unknown request body type is [ErrUnsupportedMediaType] (415).
package codec
