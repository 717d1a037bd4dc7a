package patch

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// Type is a patch format, named by its media type.
type Type string

// The patch formats.
const (
	JSONPatch           Type = "application/json-patch+json"
	MergePatch          Type = "application/merge-patch+json"
	StrategicMergePatch Type = "application/strategic-merge-patch+json"
	ApplyYAML           Type = "application/apply-patch+yaml"
	ApplyCBOR           Type = "application/apply-patch+cbor"
)

// Sentinel errors; see the package documentation.
var (
	ErrMalformed     = errors.New("patch: malformed patch document")
	ErrNotApplicable = errors.New("patch: patch does not apply")
	// ErrUnknownVersion is what a Converter returns for a version the kind
	// no longer has: the entries of managers in it are dropped, as
	// structured-merge-diff drops them.
	ErrUnknownVersion = errors.New("patch: no such version")
	// ErrTooManyOperations is a JSON Patch of more than
	// MaxJSONPatchOperations operations; its text after the sentinel's is
	// kube-apiserver's message.
	ErrTooManyOperations = errors.New("patch: too many operations")
)

// MaxJSONPatchOperations is the most operations a JSON Patch may have, as
// kube-apiserver bounds them (its patch handler answers 413 past it).
const MaxJSONPatchOperations = 10000

// maxSlowReplaces bounds the replaces of a numeric member name a patch
// may have for applyReplacingMissing's pass per such operation; past it,
// the patch fails as RFC 6902 says rather than cost a pass of the whole
// document per operation.
const maxSlowReplaces = 16

// Apply returns original with the patch applied. original must be a JSON
// object.
func Apply(typ Type, original, doc []byte) ([]byte, error) {
	switch typ {
	case JSONPatch:
		p, err := jsonpatch.DecodePatch(doc)
		if errors.Is(err, jsonpatch.ErrMissing) {
			p, err = decodeNullValues(doc)
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		if len(p) > MaxJSONPatchOperations {
			return nil, fmt.Errorf("%w: The allowed maximum operations in a JSON patch is %d, got %d", ErrTooManyOperations, MaxJSONPatchOperations, len(p))
		}
		out, err := p.Apply(original)
		if err != nil && hasReplace(p) {
			// The replaces-as-adds pass fails where v4 fails, unless a
			// replace of a numeric member name needs the slow path.
			out, err = replacesAsAdds(p).Apply(original)
			if n := numericReplaces(p); err != nil && n > 0 && n <= maxSlowReplaces {
				out, err = applyReplacingMissing(p, original)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrNotApplicable, err)
		}
		return out, nil
	case MergePatch:
		if out, ok := mergeStored(original, doc); ok {
			return out, nil
		}
		out, err := jsonpatch.MergePatch(original, doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unsupported patch type %q", ErrMalformed, typ)
}

// decodeNullValues decodes a JSON patch whose adds and replaces without a
// value set null, as kube-apiserver's JSON Patch library
// (evanphx/json-patch v4) applies them: its Operation.value is then a nil
// node, which it writes as null. v5 refuses them ("missing value"), so
// they are given the value null first; only a patch v5 refused pays.
func decodeNullValues(doc []byte) (jsonpatch.Patch, error) {
	var ops []map[string]json.RawMessage
	if err := json.Unmarshal(doc, &ops); err != nil {
		return nil, err
	}
	for _, op := range ops {
		var kind string
		if _, ok := op["value"]; !ok && json.Unmarshal(op["op"], &kind) == nil && (kind == "add" || kind == "replace") {
			op["value"] = json.RawMessage("null")
		}
	}
	fixed, err := json.Marshal(ops)
	if err != nil {
		return nil, err
	}
	return jsonpatch.DecodePatch(fixed)
}

func hasReplace(p jsonpatch.Patch) bool {
	for _, op := range p {
		if op.Kind() == "replace" {
			return true
		}
	}
	return false
}

// replacesAsAdds is p with every replace whose last path token cannot be
// an array index made an add: on an object member, add sets it whether it
// is there or not, which is what kube-apiserver's JSON Patch library
// (evanphx/json-patch v4) makes of a replace (v5 fails a replace of a
// missing member, as RFC 6902 says); on anything else both fail. So a
// patch that applies this way applies as v4 applies it, in one pass.
func replacesAsAdds(p jsonpatch.Patch) jsonpatch.Patch {
	add := json.RawMessage(`"add"`)
	out := make(jsonpatch.Patch, len(p))
	for i, op := range p {
		out[i] = op
		if path, err := op.Path(); err == nil && op.Kind() == "replace" && strings.HasPrefix(path, "/") && !indexLike(path) && !badEscape(path) {
			asAdd := make(jsonpatch.Operation, len(op))
			for k, v := range op {
				asAdd[k] = v
			}
			asAdd["op"] = &add
			out[i] = asAdd
		}
	}
	return out
}

// indexLike says whether the last token of a JSON pointer could name an
// array element (digits, or "-"), where add inserts and replace replaces.
func indexLike(path string) bool {
	tok := path[strings.LastIndexByte(path, '/')+1:]
	if tok == "-" {
		return true
	}
	for _, c := range []byte(tok) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return tok != ""
}

// badEscape says whether a JSON pointer has a "~" that is not "~0" or
// "~1", which names no member (v4 and v5 fail a replace of it alike).
func badEscape(path string) bool {
	return strings.Contains(strings.ReplaceAll(strings.ReplaceAll(path, "~0", ""), "~1", ""), "~")
}

// numericReplaces counts p's replaces that replacesAsAdds leaves alone.
func numericReplaces(p jsonpatch.Patch) int {
	n := 0
	for _, op := range p {
		if path, err := op.Path(); err == nil && op.Kind() == "replace" && indexLike(path) {
			n++
		}
	}
	return n
}

// applyReplacingMissing applies p an operation at a time, as
// kube-apiserver's JSON Patch library (evanphx/json-patch v4) does: a
// replace of a member missing from an object adds it there, rather than
// fail (v5 fails it, as RFC 6902 says). A missing object or array index
// still fails.
func applyReplacingMissing(p jsonpatch.Patch, doc []byte) ([]byte, error) {
	add := json.RawMessage(`"add"`)
	for _, op := range p {
		out, err := jsonpatch.Patch{op}.Apply(doc)
		if err != nil && op.Kind() == "replace" {
			if path, perr := op.Path(); perr == nil && memberOfObject(doc, path) {
				asAdd := jsonpatch.Operation{}
				for k, v := range op {
					asAdd[k] = v
				}
				asAdd["op"] = &add
				out, err = jsonpatch.Patch{asAdd}.Apply(doc)
			}
		}
		if err != nil {
			return nil, err
		}
		doc = out
	}
	return doc, nil
}

// memberOfObject says whether the JSON pointer path names a member of an
// object that doc has.
func memberOfObject(doc []byte, path string) bool {
	if !strings.HasPrefix(path, "/") {
		return false
	}
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return false
	}
	if badEscape(path) {
		return false // no member at all
	}
	tokens := strings.Split(path[1:], "/")
	for _, tok := range tokens[:len(tokens)-1] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := v.(type) {
		case map[string]any:
			v = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return false
			}
			v = c[i]
		default:
			return false
		}
	}
	_, ok := v.(map[string]any)
	return ok
}
