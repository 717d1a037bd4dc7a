package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestProtobufListFromKeptRuns lists a collection of some 400 KB in
// protobuf again and again, as client-go's typed clients and informers'
// relists do, with writes in between: the server writes such lists from
// the runs kept of the last one (listcache) and the items of the last
// unchanged one (watch.Cache.List), straight to the connection. Every
// list must decode with apimachinery's serializer, hold the current
// objects at the list's resourceVersion (that of the JSON list at the same
// state), page with continue tokens, and an unchanged collection must be
// listed byte for byte again.
func TestProtobufListFromKeptRuns(t *testing.T) {
	srv := startServer(t)
	ctx := ctxFor(t, 90*time.Second)
	client := dynamicClient(t, srv, nil)
	const ns, n = "pb-runs", 300
	createNamespace(t, ctx, client, ns)
	widgets := client.Resource(widgetsGVR).Namespace(ns)
	pad := strings.Repeat("p", 1200) // ~1.4 KB of protobuf per widget: one run of over 32 KiB
	for i := range n {
		w := newWidget(fmt.Sprintf("w-%03d", i), map[string]any{"color": "Red", "size": int64(i)})
		w.SetAnnotations(map[string]string{"pad": pad})
		if _, err := widgets.Create(ctx, w, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	base := srv.URL + "/apis/example.com/v1/namespaces/" + ns + "/widgets"

	// list returns the protobuf list's bytes after checking them against
	// the JSON list of the same state: the same resourceVersion, the same
	// names and sizes, and the widget sizes' changes (want).
	list := func(what string, want map[string]int32) []byte {
		t.Helper()
		r := rawDo(t, "GET", base, nil, "Accept", mediaProtobuf)
		if r.code != http.StatusOK || r.contentType() != mediaProtobuf {
			t.Fatalf("%s: %s", what, r)
		}
		lm, raws, err := decodeListProto(decodeEnvelope(t, r.body).Raw)
		if err != nil {
			t.Fatalf("%s: decoding the list: %v", what, err)
		}
		jr := rawDo(t, "GET", base, nil, "Accept", "application/json")
		var jl struct {
			Metadata metav1.ListMeta `json:"metadata"`
			Items    []pbWidget      `json:"items"`
		}
		if err := json.Unmarshal(jr.body, &jl); err != nil {
			t.Fatalf("%s: the JSON list: %v", what, err)
		}
		if lm.ResourceVersion == "" || lm.ResourceVersion != jl.Metadata.ResourceVersion || lm.Continue != "" {
			t.Errorf("%s: resourceVersion %q (JSON's %q), continue %q", what, lm.ResourceVersion, jl.Metadata.ResourceVersion, lm.Continue)
		}
		if len(raws) != n || len(jl.Items) != n {
			t.Fatalf("%s: %d items, JSON's %d, want %d", what, len(raws), len(jl.Items), n)
		}
		for i, raw := range raws {
			w, err := decodeWidgetProto(raw)
			if err != nil {
				t.Fatalf("%s: item %d: %v", what, i, err)
			}
			size, changed := want[w.Metadata.Name]
			if !changed {
				size = int32(i)
			}
			if j := jl.Items[i]; w.Metadata.Name != j.Metadata.Name || w.Metadata.ResourceVersion != j.Metadata.ResourceVersion ||
				w.Spec.Size != size || j.Spec.Size != size || w.Metadata.Annotations["pad"] != pad {
				t.Fatalf("%s: item %d is %s@%s size %d; JSON's %s@%s size %d; want size %d",
					what, i, w.Metadata.Name, w.Metadata.ResourceVersion, w.Spec.Size, j.Metadata.Name, j.Metadata.ResourceVersion, j.Spec.Size, size)
			}
		}
		return r.body
	}

	changed := map[string]int32{}
	first := list("first list", changed)
	second := list("second list (runs made)", changed)
	third := list("third list (runs and items reused)", changed)
	if !bytes.Equal(first, second) || !bytes.Equal(second, third) {
		t.Error("lists of an unchanged collection differ")
	}
	for round, name := range []string{"w-000", "w-150", "w-299"} {
		patch := fmt.Appendf(nil, `{"spec":{"size":%d}}`, 1000+round)
		if _, err := widgets.Patch(ctx, name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
		changed[name] = int32(1000 + round)
		before := list("after patching "+name, changed)
		if again := list("again after patching "+name, changed); !bytes.Equal(before, again) {
			t.Errorf("after patching %s, two lists of the unchanged collection differ", name)
		}
	}

	// Pages in protobuf: every widget once, in order, at one resourceVersion.
	var names []string
	rv, next := "", ""
	for page := 0; ; page++ {
		r := rawDo(t, "GET", base+"?limit=120&continue="+next, nil, "Accept", mediaProtobuf)
		if r.code != http.StatusOK {
			t.Fatalf("page %d: %s", page, r)
		}
		lm, raws, err := decodeListProto(decodeEnvelope(t, r.body).Raw)
		if err != nil {
			t.Fatalf("page %d: %v", page, err)
		}
		if rv == "" {
			rv = lm.ResourceVersion
		} else if lm.ResourceVersion != rv {
			t.Errorf("page %d at resourceVersion %s, the first at %s", page, lm.ResourceVersion, rv)
		}
		for _, raw := range raws {
			w, err := decodeWidgetProto(raw)
			if err != nil {
				t.Fatal(err)
			}
			names = append(names, w.Metadata.Name)
		}
		if next = lm.Continue; next == "" {
			break
		}
	}
	if len(names) != n || names[0] != "w-000" || names[n-1] != fmt.Sprintf("w-%03d", n-1) {
		t.Errorf("the pages hold %d widgets, %v ... %v", len(names), names[:min(3, len(names))], names[max(0, len(names)-3):])
	}
}
