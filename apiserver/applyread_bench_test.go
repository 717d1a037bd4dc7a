package apiserver_test

import (
	"strconv"
	"testing"

	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
	"github.com/kapi-dev/kapi/internal/applyconfig"
	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/patch"
)

// harnessApply is the load harness's apply body (internal/test/loadtest's
// widgetBody) with spec.size set to size, written over buf: a whole
// widget, as kubectl apply --server-side sends it, of which only the size
// changes from one apply to the next.
func harnessApply(buf []byte, size int) []byte {
	b := append(buf[:0], `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w-00003","namespace":"write","labels":{"app":"loadtest","tier":"backend","team":"platform","shard":"7"}},"spec":{"color":"Red","replicas":3,"size":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, `,"ports":[{"name":"http","port":8080,"protocol":"TCP"},{"name":"metrics","port":9090,"protocol":"TCP"}],"selector":{"app":"loadtest","tier":"backend"}}}`...)
}

// BenchmarkReadDecode is what apiserver's apply of the harness's body
// costs before the merge, its size new at every op as the harness's is:
// the configuration read (Read) and decoded into the Go value
// (Configuration.Decode); read alone (ParseConfiguration), and decoded
// alone. cpu-ns/op is the process's CPU, the collector's included, which
// a machine busy with other work changes less than the time.
func BenchmarkReadDecode(b *testing.B) {
	var buf []byte
	b.Run("both", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			buf = harnessApply(buf, i)
			_, parsed, err := applyconfig.Read(buf, false)
			if err != nil || parsed == nil {
				b.Fatal(err)
			}
			if !parsed.Decode(&widgetapi.Widget{}) {
				b.Fatal("not decoded")
			}
		}
	})
	b.Run("parse", func(b *testing.B) {
		b.ReportAllocs()
		defer reportCPU(b)()
		for i := 0; b.Loop(); i++ {
			buf = harnessApply(buf, i)
			if _, err := patch.ParseConfiguration(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		c, err := patch.ParseConfiguration(harnessApply(nil, 12))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		defer reportCPU(b)()
		for b.Loop() {
			if !c.Decode(&widgetapi.Widget{}) {
				b.Fatal("not decoded")
			}
		}
	})
}

// TestReadDecodeAllocations holds reading and decoding the harness's
// apply body, its size new each time, to its allocation budget: the
// configuration, its root and spec maps (two allocations each) and the
// new size read (parse); the widget, its labels and selector maps (two
// each), its replicas and its ports (decode).
func TestReadDecodeAllocations(t *testing.T) {
	if race.Enabled {
		t.Skip("allocation budgets do not hold under the race detector")
	}
	var buf []byte
	size := 1 << 20
	var parsed *patch.Configuration
	read := func() {
		size++
		buf = harnessApply(buf, size)
		var err error
		if _, parsed, err = applyconfig.Read(buf, false); err != nil || parsed == nil {
			t.Fatal(err)
		}
	}
	read() // the trees kept, the shape seen
	read()
	if n := testing.AllocsPerRun(100, read); n > 6 {
		t.Errorf("reading the configuration: %v allocations, want 6", n)
	}
	if n := testing.AllocsPerRun(100, func() {
		if !parsed.Decode(&widgetapi.Widget{}) {
			t.Fatal("not decoded")
		}
	}); n > 8 {
		t.Errorf("decoding it: %v allocations, want 8", n)
	}
}
