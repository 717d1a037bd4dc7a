package schema_test

import (
	"testing"

	"github.com/kapi-dev/kapi/schema"
)

// Correlate pairs values as ValidateUpdate ratchets them: members by
// name, map-list items by key, other list items not at all.
func TestCorrelate(t *testing.T) {
	s, err := schema.Parse([]byte(`{"type":"object","properties":{
		"a":{"type":"string"},
		"ports":{"type":"array","x-kubernetes-list-type":"map","x-kubernetes-list-map-keys":["name"],
			"items":{"type":"object","required":["name"],"properties":{"name":{"type":"string"},"port":{"type":"integer"}}}},
		"tags":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	decode := func(text string) any {
		v, err := schema.DecodeJSON([]byte(text))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	old := decode(`{"a":"x","ports":[{"name":"http","port":80},{"name":"dns","port":53}],"tags":["t"]}`)
	obj := decode(`{"a":"y","ports":[{"name":"dns","port":53},{"name":"http","port":8080}],"tags":["t"]}`)
	c := schema.Correlate(obj, old, s)
	if c.Unchanged() {
		t.Error("the object is unchanged")
	}
	if a := c.Key("a"); a.Unchanged() || a.Old() != "x" {
		t.Errorf("a: unchanged %v, old %v", a.Unchanged(), a.Old())
	}
	ports := c.Key("ports")
	if dns := ports.Index(0); !dns.Unchanged() {
		t.Error("the dns port, moved but equal, is changed")
	}
	http := ports.Index(1)
	if http.Unchanged() || http.Old().(map[string]any)["port"] != int64(80) {
		t.Errorf("http: unchanged %v, old %v", http.Unchanged(), http.Old())
	}
	tags := c.Key("tags")
	if !tags.Unchanged() || tags.Index(0) != nil {
		t.Errorf("tags: unchanged %v, item correlated %v", tags.Unchanged(), tags.Index(0))
	}
	if c.Key("missing") != nil || c.Key("missing").Old() != nil || c.Key("missing").Unchanged() {
		t.Error("a member the objects lack has a correlation")
	}
}

func TestFieldPath(t *testing.T) {
	s, err := schema.Parse([]byte(`{"type":"object","properties":{"spec":{"type":"object","properties":{
		"x.y":{"type":"string"},"labels":{"type":"object","additionalProperties":{"type":"string"}}}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{
		".spec":               "spec",
		".spec['x.y']":        "spec.x.y",
		".spec.labels['app']": "spec.labels[app]",
		".spec.labels.app":    "spec.labels[app]",
		".spec['it\\'s']":     "",
		".spec.missing":       "",
		"spec":                "",
		".spec.labels['a'].b": "",
	} {
		got, ok := s.FieldPath(path)
		if got != want || ok != (want != "") {
			t.Errorf("FieldPath(%q) = %q, %v; want %q", path, got, ok, want)
		}
	}
}
