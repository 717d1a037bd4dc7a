package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"unicode/utf8"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/kapi-dev/kapi"
)

// protobufMagic starts every Kubernetes protobuf body: the envelope that
// tells a reader it holds a runtime.Unknown.
var protobufMagic = []byte("k8s\x00")

// appendEnvelope wraps a message in Kubernetes' envelope: the magic, then
// runtime.Unknown{typeMeta = 1 {apiVersion = 1, kind = 2}, raw = 2}
// (contentEncoding = 3 and contentType = 4 stay empty: raw is protobuf).
func appendEnvelope(dst []byte, tm kapi.TypeMeta, raw []byte) []byte {
	dst = append(dst, protobufMagic...)
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(typeMetaSize(tm)))
	dst = appendString(dst, 1, tm.APIVersion)
	dst = appendString(dst, 2, tm.Kind)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	return protowire.AppendBytes(dst, raw)
}

func typeMetaSize(tm kapi.TypeMeta) int {
	return stringSize(1, tm.APIVersion) + stringSize(2, tm.Kind)
}

func appendString(dst []byte, num protowire.Number, s string) []byte {
	if s == "" {
		return dst
	}
	dst = protowire.AppendTag(dst, num, protowire.BytesType)
	return protowire.AppendString(dst, s)
}

func stringSize(num protowire.Number, s string) int {
	if s == "" {
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeBytes(len(s))
}

// readEnvelope reads a body written by appendEnvelope (or by Kubernetes):
// the type it names and the message it carries.
func readEnvelope(data []byte) (tm kapi.TypeMeta, raw []byte, err error) {
	rest, ok := bytes.CutPrefix(data, protobufMagic)
	switch {
	case !ok:
		return tm, nil, errors.New("the body does not start with the Kubernetes protobuf envelope (k8s\\x00)")
	case len(rest) == 0:
		return tm, nil, errors.New("empty body")
	}
	var contentEncoding, contentType string
	err = walkMessage(rest, func(num protowire.Number, typ protowire.Type, value []byte) error {
		if typ != protowire.BytesType {
			return nil // unknown or mistyped fields are skipped, as Kubernetes does
		}
		switch num {
		case 1:
			return walkMessage(value, func(num protowire.Number, typ protowire.Type, value []byte) error {
				if typ != protowire.BytesType {
					return nil
				}
				if !utf8.Valid(value) {
					return errors.New("the envelope's type is not valid UTF-8")
				}
				switch num {
				case 1:
					tm.APIVersion = string(value)
				case 2:
					tm.Kind = string(value)
				}
				return nil
			})
		case 2:
			raw = value
		case 3:
			contentEncoding = string(value)
		case 4:
			contentType = string(value)
		}
		return nil
	})
	if err != nil {
		return tm, nil, fmt.Errorf("the protobuf envelope is malformed: %w", err)
	}
	if contentEncoding != "" || contentType != "" && contentType != MediaTypeProtobuf {
		return tm, nil, fmt.Errorf("the protobuf envelope carries %q content with encoding %q; only plain protobuf is accepted", contentType, contentEncoding)
	}
	return tm, raw, nil
}

// walkMessage calls fn for each field of a protobuf message; value is the
// field's bytes for length-delimited fields and nil for the others.
func walkMessage(data []byte, fn func(num protowire.Number, typ protowire.Type, value []byte) error) error {
	for len(data) > 0 {
		num, typ, n := protowire.ConsumeTag(data)
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		var value []byte
		if typ == protowire.BytesType {
			value, n = protowire.ConsumeBytes(data)
		} else {
			n = protowire.ConsumeFieldValue(num, typ, data)
		}
		if n < 0 {
			return protowire.ParseError(n)
		}
		data = data[n:]
		if err := fn(num, typ, value); err != nil {
			return err
		}
	}
	return nil
}

// protoListHead is the head of a list in the shape of every Kubernetes
// list message, {metadata = 1: ListMeta, items = 2: repeated item}, in the
// envelope: everything up to the first item, and the items' field number.
// itemsSize is the bytes of the items' fields, tags and lengths included.
func protoListHead(tm kapi.TypeMeta, meta kapi.ListMeta, itemsSize int) ([]byte, protowire.Number, error) {
	metaBytes, err := marshalProto(nil, &meta)
	if err != nil {
		return nil, 0, err
	}
	metaField, itemsField := protoListFields(tm)
	size := protowire.SizeTag(metaField) + protowire.SizeBytes(len(metaBytes)) + itemsSize
	dst := make([]byte, 0, len(protobufMagic)+2*protowire.SizeBytes(typeMetaSize(tm))+2*binaryPrefixMax+len(metaBytes))
	dst = append(dst, protobufMagic...)
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(typeMetaSize(tm)))
	dst = appendString(dst, 1, tm.APIVersion)
	dst = appendString(dst, 2, tm.Kind)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(size))
	dst = protowire.AppendTag(dst, metaField, protowire.BytesType)
	dst = protowire.AppendBytes(dst, metaBytes)
	return dst, itemsField, nil
}

// protoListFields are the field numbers of a list message's metadata and
// items.
func protoListFields(tm kapi.TypeMeta) (metadata, items protowire.Number) {
	if tm.Kind == "PartialObjectMetadataList" && tm.APIVersion == "meta.k8s.io/v1beta1" {
		return 2, 1 // v1beta1 numbers them the other way round
	}
	return 1, 2
}

// appendProtoEvent writes one frame of a protobuf watch stream as
// kube-apiserver does: a 4-byte big-endian length, then a bare (envelope-less)
// WatchEvent{type = 1, object = 2: RawExtension{raw = 1}} whose raw is the
// object in its envelope.
func appendProtoEvent(dst []byte, eventType string, tm kapi.TypeMeta, element []byte) []byte {
	objectSize := len(protobufMagic) + protowire.SizeTag(1) + protowire.SizeBytes(typeMetaSize(tm)) +
		protowire.SizeTag(2) + protowire.SizeBytes(len(element))
	rawExtSize := protowire.SizeTag(1) + protowire.SizeBytes(objectSize)
	eventSize := stringSize(1, eventType) + protowire.SizeTag(2) + protowire.SizeBytes(rawExtSize)
	dst = binary.BigEndian.AppendUint32(dst, uint32(eventSize))
	dst = appendString(dst, 1, eventType)
	dst = protowire.AppendTag(dst, 2, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(rawExtSize))
	dst = protowire.AppendTag(dst, 1, protowire.BytesType)
	dst = protowire.AppendVarint(dst, uint64(objectSize))
	return appendEnvelope(dst, tm, element)
}
