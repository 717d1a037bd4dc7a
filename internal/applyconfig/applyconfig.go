package applyconfig

import (
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
)

// Read returns the JSON of doc, an apply configuration in YAML (or JSON),
// or in CBOR when cbor is set, as codec's ToJSON makes it, and that JSON
// read by patch.ParseConfiguration, nil if it could not be. err is
// ToJSON's: the body is not a document of its format.
func Read(doc []byte, cbor bool) (config []byte, parsed *patch.Configuration, err error) {
	if cbor {
		if config, _, err = codec.ByMediaType(codec.MediaTypeCBOR).ToJSON(doc); err != nil {
			return nil, nil, err
		}
		parsed, _ = patch.ParseConfiguration(config)
		return config, parsed, nil
	}
	// patch's reader takes only valid JSON (what encoding/json takes),
	// the condition of YAMLToJSONOfJSON; a YAML document fails at once.
	if parsed, err = patch.ParseConfiguration(doc); err == nil {
		if config, err = codec.YAMLToJSONOfJSON(doc); err != nil {
			return nil, nil, err
		}
		if len(config) == len(doc) && len(doc) > 0 && &config[0] == &doc[0] { // taken as it is
			return config, parsed, nil
		}
	} else if config, err = codec.YAMLToJSON(doc); err != nil {
		return nil, nil, err
	}
	parsed, _ = patch.ParseConfiguration(config)
	return config, parsed, nil
}
