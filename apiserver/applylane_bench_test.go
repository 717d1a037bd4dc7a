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
	benchmarkApplyLane(b, []string{realisticWidget("default", "w").UID})
}

// BenchmarkApplyLaneInTurn is BenchmarkApplyLane over 8 widgets applied
// in turn, as the load harness's 8 connections apply theirs. The last two
// uids fell in one slot of patch's live hints when it kept one hint a
// slot: each apply to either replaced the other's hint, and both took the
// whole-tree path (patch's livehints.go).
func BenchmarkApplyLaneInTurn(b *testing.B) {
	var uids []string
	for i := range 8 {
		uids = append(uids, fmt.Sprintf("6f1c8a52-3b1e-4c8e-9a55-0d2f6b7e9c%02d", 13+i))
	}
	benchmarkApplyLane(b, uids)
}

func benchmarkApplyLane(b *testing.B, uids []string) {
	apply := newApplyLane(b, uids)
	b.ReportAllocs()
	defer reportCPU(b)()
	for i := len(uids); b.Loop(); i++ {
		apply(i)
	}
}

// newApplyLane returns BenchmarkApplyLane's apply of its i-th
// configuration to widgets of these uids in turn, each applied to once.
func newApplyLane(b testing.TB, uids []string) func(i int) {
	s, err := patch.SchemaOf(reflect.TypeFor[widgetapi.Widget]())
	if err != nil {
		b.Fatal(err)
	}
	created, err := s.Update(nil, creatable("default", "w"), nil, patch.UpdateOptions{Manager: "creator", APIVersion: "example.com/v1", Ignore: []string{"status"}})
	if err != nil {
		b.Fatal(err)
	}
	lives := make([]*widgetapi.Widget, len(uids))
	for i, uid := range uids {
		live := realisticWidget("default", "w")
		live.Status = widgetapi.WidgetStatus{}
		live.UID, live.ManagedFields = uid, created
		lives[i] = live
	}
	body := creatable("default", "w")
	opts := patch.ApplyOptions{Manager: "bench", APIVersion: "example.com/v1", Force: true, Ignore: []string{"status"}, Now: kapi.Now()}
	apply := func(i int) {
		live := lives[i%len(lives)]
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
		lives[i%len(lives)] = next
	}
	for i := range lives { // the first apply takes the size from the creator
		apply(i)
	}
	return apply
}
