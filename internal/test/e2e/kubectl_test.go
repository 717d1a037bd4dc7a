package e2e

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// TestKubectl runs the README's kubectl session, with no special flags and
// kubectl's default validation, through /usr/bin/kubectl (a dispatcher that
// picks a pinned kubectl from the server's /version) and through each pinned
// kubectl 1.27–1.33 installed on the machine. Each gets its own server.
func TestKubectl(t *testing.T) {
	t.Run("dispatcher", func(t *testing.T) {
		kubectlSession(t, dispatcherKubectl)
	})
	for _, bin := range pinnedKubectls() {
		t.Run(strings.TrimPrefix(filepath.Base(bin), "kubectl."), func(t *testing.T) {
			kubectlSession(t, bin)
		})
	}
}

const widgetW1 = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w1
spec:
  color: Red
  size: 3
  ports:
  - name: http
    port: 80
`

const widgetW2 = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: w2
spec:
  color: Green
`

const widgetApplied = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: applied
spec:
  color: Green
  replicas: REPLICAS
`

const widgetPurple = `apiVersion: example.com/v1
kind: Widget
metadata:
  name: bad
spec:
  color: purple
`

const widgetClassGold = `apiVersion: example.com/v1
kind: WidgetClass
metadata:
  name: gold
spec:
  description: the shiny ones
  maxReplicas: 5
`

// step is one named part of a session.
type step struct {
	name string
	run  func(t *testing.T)
}

func kubectlSession(t *testing.T, bin string) {
	srv := startServer(t)
	k := newKubectl(t, bin, srv)

	// Independent steps first; then the chain on w1, which stops at its first
	// failure because every later step needs what the earlier ones made.
	independent := []step{
		{"api-resources", func(t *testing.T) {
			out := k.must(t, "api-resources")
			rows := map[string][]string{}
			for _, line := range strings.Split(out, "\n") {
				f := strings.Fields(line)
				if len(f) > 0 {
					rows[f[0]] = f
				}
			}
			// NAME SHORTNAMES APIVERSION NAMESPACED KIND
			if got, want := strings.Join(rows["widgets"], " "), "widgets wd example.com/v1 true Widget"; got != want {
				t.Errorf("api-resources row for widgets = %q, want %q; output:\n%s", got, want, out)
			}
			if got, want := strings.Join(rows["widgetclasses"], " "), "widgetclasses example.com/v1 false WidgetClass"; got != want {
				t.Errorf("api-resources row for widgetclasses = %q, want %q; output:\n%s", got, want, out)
			}
		}},
		{"cluster-scoped", func(t *testing.T) {
			out := k.must(t, "create", "-f", writeFile(t, "gold.yaml", widgetClassGold))
			if !strings.Contains(out, "widgetclass.example.com/gold created") {
				t.Errorf("create printed %q, want %q", out, "widgetclass.example.com/gold created")
			}
			obj := k.getJSON(t, "widgetclass", "gold")
			wantField(t, obj, "WidgetClass", "kind")
			wantField(t, obj, "the shiny ones", "spec", "description")
			wantField(t, obj, 5, "spec", "maxReplicas")
			if ns, ok := field(obj, "metadata", "namespace"); ok {
				t.Errorf("cluster-scoped object has metadata.namespace %v", ns)
			}
			if list := k.must(t, "get", "widgetclasses"); !hasRowNamed(list, "gold") {
				t.Errorf("get widgetclasses has no row for gold:\n%s", list)
			}
			out = k.must(t, "delete", "widgetclass", "gold")
			if !strings.Contains(out, `widgetclass.example.com "gold" deleted`) {
				t.Errorf("delete printed %q, want %q", out, `widgetclass.example.com "gold" deleted`)
			}
			if r := k.run(t, "get", "widgetclass", "gold"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
				t.Errorf("get after delete should fail with NotFound; %s", r)
			}
		}},
		{"create-invalid", func(t *testing.T) {
			r := k.run(t, "create", "-f", writeFile(t, "bad.yaml", widgetPurple))
			if r.err == nil {
				t.Fatalf("creating a purple widget succeeded; %s", r)
			}
			if !strings.Contains(r.stderr, "is invalid") || !strings.Contains(r.stderr, "spec.color") || !strings.Contains(r.stderr, "purple") {
				t.Errorf("create of a purple widget should print the server's Invalid message naming spec.color; %s\n%s",
					r, k.verbose(t, nil, "create", "-f", writeFile(t, "bad.yaml", widgetPurple)))
			}
			if r := k.run(t, "get", "wd", "bad"); r.err == nil || !strings.Contains(r.stderr, "NotFound") {
				t.Errorf("the invalid widget was stored; %s", r)
			}
		}},
	}
	chain := []step{
		{"create", func(t *testing.T) {
			out := k.must(t, "create", "-f", writeFile(t, "w1.yaml", widgetW1))
			if !strings.Contains(out, "widget.example.com/w1 created") {
				t.Errorf("create printed %q, want it to contain %q", out, "widget.example.com/w1 created")
			}
		}},
		{"get", func(t *testing.T) {
			out := k.must(t, "get", "widgets")
			if !hasRowNamed(out, "w1") {
				t.Errorf("get widgets has no row for w1:\n%s", out)
			}
		}},
		{"get-yaml", func(t *testing.T) {
			out := k.must(t, "get", "wd", "w1", "-o", "yaml")
			var obj map[string]any
			if err := yaml.Unmarshal([]byte(out), &obj); err != nil {
				t.Fatalf("get -o yaml printed invalid YAML: %v\n%s", err, out)
			}
			wantField(t, obj, "example.com/v1", "apiVersion")
			wantField(t, obj, "Widget", "kind")
			wantField(t, obj, "w1", "metadata", "name")
			wantField(t, obj, "default", "metadata", "namespace")
			wantField(t, obj, 1, "metadata", "generation")
			for _, f := range []string{"uid", "resourceVersion"} {
				if str(obj, "metadata", f) == "" {
					t.Errorf("metadata.%s is empty; object:\n%s", f, out)
				}
			}
			if _, err := time.Parse(time.RFC3339, str(obj, "metadata", "creationTimestamp")); err != nil {
				t.Errorf("metadata.creationTimestamp: %v; object:\n%s", err, out)
			}
			wantField(t, obj, "Red", "spec", "color")
			wantField(t, obj, 3, "spec", "size")
			wantField(t, obj, 1, "spec", "replicas") // defaulted
			ports, _ := field(obj, "spec", "ports")
			if p, ok := ports.([]any); !ok || len(p) != 1 {
				t.Errorf("spec.ports = %v, want one port", ports)
			} else if pm, _ := p[0].(map[string]any); pm["protocol"] != "TCP" || pm["name"] != "http" {
				t.Errorf("spec.ports[0] = %v, want name http and the defaulted protocol TCP", p[0])
			}
		}},
		{"get-watch", func(t *testing.T) {
			w := k.start(t, "get", "widgets", "-w")
			w.waitLine(t, "the row for w1", 30*time.Second, rowNamed("w1"))
			// The watch starts at the list's resourceVersion, so a change made
			// after the list has been printed is seen however late the watch request is.
			k.must(t, "create", "-f", writeFile(t, "w2.yaml", widgetW2))
			w.waitLine(t, "a row for w2 created meanwhile", 30*time.Second, rowNamed("w2"))
			k.must(t, "label", "wd", "w2", "seen=twice")
			w.waitLine(t, "a second row for w2 after it was labelled", 30*time.Second, rowNamed("w2"))
			w.stop()
		}},
		{"edit", func(t *testing.T) {
			editor := writeFile(t, "editor.sh", "#!/bin/sh\nsed -i 's/color: Red/color: Blue/' \"$1\"\n")
			out := k.mustEnv(t, []string{"KUBE_EDITOR=" + editor, "EDITOR=" + editor}, "edit", "wd", "w1")
			if !strings.Contains(out, "widget.example.com/w1 edited") {
				t.Errorf("edit printed %q, want %q", out, "widget.example.com/w1 edited")
			}
			obj := k.getJSON(t, "wd", "w1")
			wantField(t, obj, "Blue", "spec", "color")
			wantField(t, obj, 2, "metadata", "generation")
		}},
		{"apply-server-side", func(t *testing.T) {
			out := k.must(t, "apply", "--server-side", "-f", writeFile(t, "applied.yaml", strings.Replace(widgetApplied, "REPLICAS", "2", 1)))
			if !strings.Contains(out, "widget.example.com/applied serverside-applied") {
				t.Errorf("apply printed %q, want %q", out, "widget.example.com/applied serverside-applied")
			}
			obj := k.getJSON(t, "wd", "applied")
			wantField(t, obj, "Green", "spec", "color")
			wantField(t, obj, 2, "spec", "replicas")
			wantField(t, obj, 1, "metadata", "generation")
			uid := str(obj, "metadata", "uid")

			out = k.must(t, "apply", "--server-side", "-f", writeFile(t, "applied.yaml", strings.Replace(widgetApplied, "REPLICAS", "3", 1)))
			if !strings.Contains(out, "widget.example.com/applied serverside-applied") {
				t.Errorf("second apply printed %q, want %q", out, "widget.example.com/applied serverside-applied")
			}
			obj = k.getJSON(t, "wd", "applied")
			wantField(t, obj, 3, "spec", "replicas")
			wantField(t, obj, 2, "metadata", "generation")
			wantField(t, obj, uid, "metadata", "uid")
		}},
		{"label", func(t *testing.T) {
			out := k.must(t, "label", "wd", "w1", "env=prod")
			if !strings.Contains(out, "widget.example.com/w1 labeled") {
				t.Errorf("label printed %q, want %q", out, "widget.example.com/w1 labeled")
			}
			obj := k.getJSON(t, "wd", "w1")
			wantField(t, obj, "prod", "metadata", "labels", "env")
			wantField(t, obj, "Blue", "spec", "color")
		}},
		{"delete", func(t *testing.T) {
			out := k.must(t, "delete", "wd", "w1")
			if !strings.Contains(out, `widget.example.com "w1" deleted`) {
				t.Errorf("delete printed %q, want %q", out, `widget.example.com "w1" deleted`)
			}
			r := k.run(t, "get", "wd", "w1")
			if r.err == nil || !strings.Contains(r.stderr, "NotFound") || !strings.Contains(r.stderr, `"w1" not found`) {
				t.Errorf("get after delete should fail with NotFound; %s", r)
			}
		}},
	}
	for _, s := range independent {
		t.Run(s.name, s.run)
	}
	for _, s := range chain {
		if !t.Run(s.name, s.run) {
			t.Errorf("stopping the session after %s failed", s.name)
			break
		}
	}

	if err := srv.alive(); err != nil {
		t.Fatal(err)
	}
}

// hasRowNamed reports whether a table printed by kubectl has a row whose first
// column is name.
func hasRowNamed(table, name string) bool {
	for _, line := range strings.Split(table, "\n") {
		if rowNamed(name)(line) {
			return true
		}
	}
	return false
}

func rowNamed(name string) func(string) bool {
	return func(line string) bool {
		f := strings.Fields(line)
		return len(f) > 0 && f[0] == name
	}
}

// mustJSON is for failure messages.
func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err.Error()
	}
	return string(b)
}
