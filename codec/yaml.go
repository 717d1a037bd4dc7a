package codec

import (
	"encoding/json"
	"fmt"

	"gopkg.in/yaml.v3"
)

// YAMLToJSON converts one YAML document to JSON. JSON is YAML, so a JSON
// body passes through with the same values.
func YAMLToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	v, err := jsonCompatible(v)
	if err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// jsonCompatible turns the maps yaml.v3 makes (map[string]any, and
// map[any]any for non-string keys) into what encoding/json can write.
func jsonCompatible(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[k] = c
		}
		return v, nil
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			ks, ok := k.(string)
			if !ok {
				return nil, fmt.Errorf("map key %v is not a string", k)
			}
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			m[ks] = c
		}
		return m, nil
	case []any:
		for i, e := range v {
			c, err := jsonCompatible(e)
			if err != nil {
				return nil, err
			}
			v[i] = c
		}
		return v, nil
	}
	return v, nil
}
