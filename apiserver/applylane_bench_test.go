package apiserver_test

import (
	"bytes"
	"fmt"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/patch"
)

// BenchmarkApplyLane is what BenchmarkApply's handler asks of package
// patch for one apply, without HTTP, the store or the watch cache: the
// configuration read and decoded, merged into the live widget (a Go
// value, as the watch cache holds it, whose creator's entry makes a
// second manager), and the result decoded, which is the next apply's
// live object. BenchmarkApply's CPU per op spreads over tens of µs from
// one run to the next on a shared machine; this one does not, so a cut
// of a few µs to the apply path shows here first.
func BenchmarkApplyLane(b *testing.B) {
	s, err := patch.SchemaOf(reflect.TypeFor[widgetapi.Widget]())
	if err != nil {
		b.Fatal(err)
	}
	live := realisticWidget("default", "w")
	live.Status = widgetapi.WidgetStatus{}
	created, err := s.Update(nil, creatable("default", "w"), nil, patch.UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Ignore: []string{"status"}})
	if err != nil {
		b.Fatal(err)
	}
	live.ManagedFields = created
	body := creatable("default", "w")
	opts := patch.ApplyOptions{Manager: "bench", APIVersion: "example.com/v1", Force: true, Ignore: []string{"status"}, Now: kapi.Now()}
	apply := func(i int) {
		config, err := patch.ParseConfiguration(bytes.Replace(body, []byte(`"size":12`), fmt.Appendf(nil, `"size":%d`, i%1000+13), 1))
		if err != nil {
			b.Fatal(err)
		}
		applied := &widgetapi.Widget{}
		if !config.Decode(applied) {
			b.Fatal("the configuration was not decoded")
		}
		o := opts
		o.Live = live
		merged, managed, err := s.ApplyMerged(nil, config, live.ManagedFields, o)
		if err != nil {
			b.Fatal(err)
		}
		next := &widgetapi.Widget{}
		if !merged.Decode(next, live, applied) {
			b.Fatal("the result was not decoded")
		}
		next.ManagedFields, next.ResourceVersion = managed, fmt.Sprint(i+1)
		next.Generation++
		live = next
	}
	apply(0) // the first apply takes the size from the creator
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := 1; b.Loop(); i++ {
		apply(i)
	}
}
