package codec

import (
	"encoding/json"

	"github.com/kapi-dev/kapi"
)

// cborListHead is the head of {kind, apiVersion, metadata, items} as a
// CBOR map, the same document the JSON list is: everything up to the first
// of n items, which follow one another with nothing between them.
func cborListHead(tm kapi.TypeMeta, meta kapi.ListMeta, n int) ([]byte, error) {
	metaJSON, err := json.Marshal(meta)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, 0, len(metaJSON)+len(tm.Kind)+len(tm.APIVersion)+64)
	dst = append(dst, cborSelfDescribed...)
	dst = appendCBORHead(dst, cborMap, 4)
	dst = appendCBORString(dst, "kind")
	dst = appendCBORString(dst, tm.Kind)
	dst = appendCBORString(dst, "apiVersion")
	dst = appendCBORString(dst, tm.APIVersion)
	dst = appendCBORString(dst, "metadata")
	if dst, err = appendCBOR(dst, metaJSON); err != nil {
		return nil, err
	}
	dst = appendCBORString(dst, "items")
	return appendCBORHead(dst, cborArray, uint64(n)), nil
}

// appendCBOREvent writes one item of an application/cbor-seq watch stream:
// {type, object} with the object self-described, as kube-apiserver embeds it.
func appendCBOREvent(dst []byte, eventType string, element []byte) []byte {
	dst = append(dst, cborSelfDescribed...)
	dst = appendCBORHead(dst, cborMap, 2)
	dst = appendCBORString(dst, "type")
	dst = appendCBORString(dst, eventType)
	dst = appendCBORString(dst, "object")
	dst = append(dst, cborSelfDescribed...)
	return append(dst, element...)
}

// appendCBORString writes a string as Kubernetes writes strings and keys:
// a byte string.
func appendCBORString(dst []byte, s string) []byte {
	return append(appendCBORHead(dst, cborBytes, uint64(len(s))), s...)
}
