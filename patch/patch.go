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
)

// Apply returns original with the patch applied. original must be a JSON
// object.
func Apply(typ Type, original, doc []byte) ([]byte, error) {
	switch typ {
	case JSONPatch:
		p, err := jsonpatch.DecodePatch(doc)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrMalformed, err)
		}
		out, err := p.Apply(original)
		if err != nil && hasReplace(p) {
			out, err = applyReplacingMissing(p, original)
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

func hasReplace(p jsonpatch.Patch) bool {
	for _, op := range p {
		if op.Kind() == "replace" {
			return true
		}
	}
	return false
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
	tokens := strings.Split(path[1:], "/")
	for _, tok := range tokens {
		if strings.Contains(strings.ReplaceAll(strings.ReplaceAll(tok, "~0", ""), "~1", ""), "~") {
			return false // a bad escape: no member at all
		}
	}
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
