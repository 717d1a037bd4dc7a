package schemadiff

import (
	"encoding/json"
	"reflect"
	"testing"

	"k8s.io/client-go/util/jsonpath"

	kpath "github.com/kapi-dev/kapi/internal/jsonpath"
)

// The paths of printer columns, as kube-apiserver's table convertor reads
// them with client-go's jsonpath ({path}, missing keys allowed): every
// path kapi reads finds what client-go finds (nothing where client-go
// fails, as a column's cell is then empty), and client-go reads it too;
// the ones kapi refuses are refused by client-go, or are forms kapi does
// not read (slices, unions), listed.
func TestJSONPathAgainstClientGo(t *testing.T) {
	var doc any
	if err := json.Unmarshal([]byte(`{
		"metadata": {"name": "a", "labels": {"app.kubernetes.io/name": "web", "app": {"kubernetes": {"io/name": "nested"}}, "tier": "front"}},
		"spec": {"replicas": 3, "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}], "a.b": "dotted", "a": {"b": "deep"}},
		"status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}
	}`), &doc); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		".spec.replicas", ".spec.ports[0].port", ".spec.ports[1].name", ".spec.ports[-1].port", ".spec.ports[-2].port",
		".spec.ports[2].port", ".spec.ports[-3].port", ".spec.ports[*].port", ".spec['a.b']", ".spec['a\\.b']", ".spec.a\\.b",
		".spec['replicas']", ".metadata.labels['app.kubernetes.io/name']", ".metadata.labels.app\\.kubernetes\\.io/name",
		`.status.conditions[?(@.type=="Ready")].status`, `.status.conditions[?(@.type!="Ready")].type`, ".spec.missing",
		".spec.replicas.x", ".spec.ports.name", ".metadata.labels['tier']", ".metadata", ".spec.ports[0]",
	} {
		kp, err := kpath.Parse(path)
		if err != nil {
			t.Errorf("%s: kapi refuses it: %v", path, err)
			continue
		}
		jp := jsonpath.New("column")
		if err := jp.Parse("{" + path + "}"); err != nil {
			t.Errorf("%s: client-go refuses what kapi reads: %v", path, err)
			continue
		}
		jp.AllowMissingKeys(true)
		var want []any
		if results, err := jp.FindResults(doc); err == nil && len(results) > 0 {
			for _, v := range results[0] {
				want = append(want, v.Interface())
			}
		}
		if got := kp.Find(doc); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: kapi finds %v, client-go %v", path, got, want)
		}
	}
	for _, path := range []string{
		`.spec["replicas"]`, ".spec['a]", ".spec[x]", "spec", ".spec..replicas", ".spec.ports[+1]",
		".spec.ports[0:1]", ".spec.ports[0,1]", // client-go's slices and unions, which kapi does not read
	} {
		if _, err := kpath.Parse(path); err == nil {
			t.Errorf("%s: kapi reads it", path)
		}
	}
}
