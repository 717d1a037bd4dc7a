package e2e

import (
	"slices"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/discovery"
)

// TestDiscovery reads the server's API through client-go's discovery client,
// aggregated (the default: only /api and /apis are fetched) and legacy (one
// request per group-version), and expects the same resources from both.
func TestDiscovery(t *testing.T) {
	srv := startServer(t)

	for _, legacy := range []bool{false, true} {
		name := "aggregated"
		if legacy {
			name = "legacy"
		}
		t.Run(name, func(t *testing.T) {
			log := &requestLog{}
			d, err := discovery.NewDiscoveryClientForConfig(restConfig(srv, log))
			if err != nil {
				t.Fatal(err)
			}
			d.UseLegacyDiscovery = legacy
			_, lists, err := d.ServerGroupsAndResources()
			if err != nil {
				t.Fatalf("ServerGroupsAndResources: %v; requests:\n%s", err, log)
			}
			var paths []string
			for _, r := range log.all() {
				paths = append(paths, strings.SplitN(r.URL, "?", 2)[0])
			}
			if !legacy && !slices.Equal(paths, []string{"/api", "/apis"}) {
				t.Errorf("aggregated discovery should need only /api and /apis; requests:\n%s", log)
			}
			if legacy && !slices.Contains(paths, "/apis/example.com/v1") {
				t.Errorf("legacy discovery did not fetch /apis/example.com/v1; requests:\n%s", log)
			}

			resources := map[string]metav1.APIResource{}
			for _, l := range lists {
				if l.GroupVersion != "example.com/v1" {
					continue
				}
				for _, r := range l.APIResources {
					resources[r.Name] = r
				}
			}
			want := map[string]metav1.APIResource{
				"widgets":        {Name: "widgets", SingularName: "widget", Namespaced: true, Kind: "Widget", ShortNames: []string{"wd"}},
				"widgets/status": {Name: "widgets/status", Namespaced: true, Kind: "Widget"},
				"widgetclasses":  {Name: "widgetclasses", SingularName: "widgetclass", Namespaced: false, Kind: "WidgetClass"},
			}
			for name, w := range want {
				got, ok := resources[name]
				if !ok {
					t.Errorf("resource %s is missing; got %v", name, keys(resources))
					continue
				}
				if got.Namespaced != w.Namespaced || got.Kind != w.Kind || !slices.Equal(got.ShortNames, w.ShortNames) ||
					(w.SingularName != "" && got.SingularName != w.SingularName) {
					t.Errorf("resource %s = %+v, want %+v", name, got, w)
				}
			}
			for _, name := range []string{"widgets", "widgetclasses"} {
				verbs := resources[name].Verbs
				for _, v := range []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"} {
					if !slices.Contains(verbs, v) {
						t.Errorf("%s verbs %v lack %s", name, verbs, v)
					}
				}
			}
			if verbs := resources["widgets/status"].Verbs; !slices.Contains(verbs, "get") || !slices.Contains(verbs, "update") {
				t.Errorf("widgets/status verbs %v lack get or update", verbs)
			}
		})
	}

	t.Run("version", func(t *testing.T) {
		d, err := discovery.NewDiscoveryClientForConfig(restConfig(srv, nil))
		if err != nil {
			t.Fatal(err)
		}
		v, err := d.ServerVersion()
		if err != nil {
			t.Fatalf("ServerVersion: %v", err)
		}
		if v.Major == "" || v.Minor == "" || !strings.HasPrefix(v.GitVersion, "v"+v.Major+"."+strings.TrimSuffix(v.Minor, "+")) {
			t.Errorf("version %+v: want major, minor and a gitVersion v<major>.<minor>...", v)
		}
	})
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
