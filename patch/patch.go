package patch

import (
	"errors"
	"fmt"

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
