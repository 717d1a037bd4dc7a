package patch_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/patch"
)

// BenchmarkServerSideApply measures a second apply of a configuration
// with a hundred list items and labels to an object another manager also
// writes: the common path of kubectl apply --server-side.
func BenchmarkServerSideApply(b *testing.B) {
	s := widgetSchema(b)
	var ports, labels []string
	for i := 0; i < 100; i++ {
		ports = append(ports, fmt.Sprintf(`{"name":"p%d","port":%d}`, i, i+1))
		labels = append(labels, fmt.Sprintf(`"l%d":"v"`, i))
	}
	config := []byte(obj(`,"labels":{` + strings.Join(labels, ",") + `}},"spec":{"replicas":1,"ports":[` + strings.Join(ports, ",") + `]}`))
	opts := patch.ApplyOptions{Manager: "kubectl", APIVersion: gv, Now: kapi.NewTime(base)}
	live, managed, err := s.Apply(nil, config, nil, opts)
	if err != nil {
		b.Fatal(err)
	}
	managed, err = s.Update(live, []byte(strings.Replace(string(live), `"replicas":1`, `"replicas":1,"color":"red"`, 1)), managed, patch.UpdateOptions{Manager: "ctl", APIVersion: gv})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := s.Apply(live, config, managed, opts); err != nil {
			b.Fatal(err)
		}
	}
}
