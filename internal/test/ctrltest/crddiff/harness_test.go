package crddiff

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd/crdtest"
	"github.com/kapi-dev/kapi/validation/cel"
)

var update = flag.Bool("update", false, "record kube-apiserver's answers as the golden files (needs KAPI_ENVTEST_ASSETS)")

// Content types of the steps.
const (
	jsonType  = "application/json"
	mergeType = "application/merge-patch+json"
	patchType = "application/json-patch+json"
	smpType   = "application/strategic-merge-patch+json"
	applyType = "application/apply-patch+yaml"

	tableAccept   = "application/json;as=Table;v=v1;g=meta.k8s.io"
	pomAccept     = "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"
	pomListAccept = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
	aggAccept     = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
)

// step is one request of a script, sent to kube-apiserver and to kapi
// alike.
type step struct {
	name         string
	method, path string
	ctype        string // request body's content type (JSON when empty and there is a body)
	accept       string
	body         string // YAML, sent as JSON unless ctype is apply-patch+yaml
	// until, when set, repeats the request until it holds of the
	// answer (the definition established, the objects gone): the last
	// answer is compared.
	until func(a *answer) bool
	// pick keeps the part of the body compared (one group of discovery).
	pick func(body any) any
	// raw sends body as it is (JSON with a duplicate field).
	raw bool
	// rvFrom is a path read first: its object's resourceVersion is put in
	// the body's metadata (an update that must name it).
	rvFrom string
	// generated: the object's name was generated (generateName).
	generated bool
	// differs is why kapi deliberately answers otherwise than
	// kube-apiserver: the step runs and both answers are shown, but a
	// difference does not fail the test.
	differs string
}

// known is a difference between kapi's answers and kube-apiserver's that
// is expected: a diff line (as compare writes it) of step (of any step
// when empty) containing path is logged with why rather than failing.
type known struct {
	step, path, why string
}

func (k known) matches(step, diff string) bool {
	return (k.step == "" || k.step == step) && strings.Contains(diff, k.path)
}

// answer is what is compared of a response.
type answer struct {
	Step        string   `json:"step"`
	Request     string   `json:"request"`
	Code        int      `json:"code"`
	ContentType string   `json:"contentType,omitempty"`
	Warnings    []string `json:"warnings,omitempty"`
	Body        any      `json:"body,omitempty"`
}

// target is a server the script runs against.
type target struct {
	base   string
	client *http.Client
}

func (tg *target) do(t *testing.T, s step) *answer {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		a := tg.once(t, s)
		if s.until == nil || s.until(a) {
			return a
		}
		if time.Now().After(deadline) {
			t.Fatalf("step %s: never came to pass; last answer %s", s.name, mustJSON(a))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (tg *target) once(t *testing.T, s step) *answer {
	t.Helper()
	var body io.Reader
	ctype := s.ctype
	if s.body != "" {
		b := []byte(s.body)
		if ctype != applyType && !s.raw {
			var err error
			if b, err = yaml.YAMLToJSON(b); err != nil {
				t.Fatalf("step %s: body: %v", s.name, err)
			}
		}
		if ctype == "" {
			ctype = jsonType
		}
		if s.rvFrom != "" {
			b = tg.withResourceVersion(t, s, b)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(s.method, tg.base+s.path, body)
	if err != nil {
		t.Fatal(err)
	}
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	accept := s.accept
	if accept == "" {
		accept = jsonType
	}
	req.Header.Set("Accept", accept)
	req.Header.Set("User-Agent", "crddiff/v0.0.0")
	resp, err := tg.client.Do(req)
	if err != nil {
		t.Fatalf("step %s: %v", s.name, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("step %s: %v", s.name, err)
	}
	a := &answer{Step: s.name, Request: s.method + " " + s.path, Code: resp.StatusCode,
		ContentType: resp.Header.Get("Content-Type"), Warnings: resp.Header.Values("Warning")}
	if len(raw) > 0 {
		a.Body = decode(raw, a.ContentType)
	}
	if s.pick != nil {
		a.Body = s.pick(a.Body)
	}
	a.Body = normalize(a.Body, s.generated)
	sortCauses(a.Body)
	// Through JSON, so that answers made here and read from a golden
	// file hold the same Go types.
	var n answer
	if err := json.Unmarshal(mustJSON(a), &n); err != nil {
		t.Fatal(err)
	}
	return &n
}

func (tg *target) withResourceVersion(t *testing.T, s step, body []byte) []byte {
	t.Helper()
	resp, err := tg.client.Get(tg.base + s.rvFrom)
	if err != nil {
		t.Fatalf("step %s: %v", s.name, err)
	}
	defer resp.Body.Close()
	var cur struct {
		Metadata struct{ ResourceVersion string } `json:"metadata"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&cur); err != nil || cur.Metadata.ResourceVersion == "" {
		t.Fatalf("step %s: reading %s: %v", s.name, s.rvFrom, err)
	}
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		t.Fatalf("step %s: %v", s.name, err)
	}
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	md["resourceVersion"] = cur.Metadata.ResourceVersion
	b, _ := json.Marshal(obj)
	return b
}

func decode(raw []byte, ctype string) any {
	if strings.HasPrefix(ctype, "application/yaml") {
		if j, err := yaml.YAMLToJSON(raw); err == nil {
			raw = j
		}
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return string(raw)
	}
	return v
}

// volatile are the fields whose values differ from run to run: compared
// only for being set.
var volatile = map[string]bool{"uid": true, "resourceVersion": true, "creationTimestamp": true,
	"deletionTimestamp": true, "time": true, "lastTransitionTime": true, "continue": true}

func normalize(v any, generated bool) any {
	switch v := v.(type) {
	case map[string]any:
		if v["kind"] == "Table" {
			normalizeTable(v)
		}
		for k, e := range v {
			if s, ok := e.(string); ok && volatile[k] && s != "" {
				v[k] = "<set>"
				continue
			}
			if generated && k == "metadata" {
				if m, ok := e.(map[string]any); ok && m["name"] != nil && m["generateName"] != nil {
					m["name"] = "<generated>"
				}
			}
			v[k] = normalize(e, generated)
		}
		if mf, ok := v["managedFields"].([]any); ok {
			// In the order of the managers' writes, which for writers
			// racing (a definition's creator and its controllers) is
			// not the same from run to run.
			sort.SliceStable(mf, func(i, j int) bool { return managerKey(mf[i]) < managerKey(mf[j]) })
		}
	case []any:
		for i, e := range v {
			v[i] = normalize(e, generated)
		}
	case string:
		// A name generated from generateName "gen-".
		if len(v) == len("gen-abcde") && strings.HasPrefix(v, "gen-") {
			return "gen-<generated>"
		}
	}
	return v
}

// sortCauses puts a Status's causes in order, and its message's list of
// them: kube-apiserver reports a schema's errors in the order of Go's map
// iteration (go-openapi's validator), which differs from run to run.
func sortCauses(body any) {
	st, _ := body.(map[string]any)
	details, _ := st["details"].(map[string]any)
	causes, _ := details["causes"].([]any)
	msg, _ := st["message"].(string)
	if len(causes) < 2 {
		return
	}
	text := func(c any) string {
		m, _ := c.(map[string]any)
		f, _ := m["field"].(string)
		d, _ := m["message"].(string)
		return f + ": " + d
	}
	sort.SliceStable(causes, func(i, j int) bool { return text(causes[i]) < text(causes[j]) })
	if i := strings.Index(msg, ": ["); i >= 0 && strings.HasSuffix(msg, "]") {
		parts := make([]string, len(causes))
		for k, c := range causes {
			parts[k] = text(c)
		}
		st["message"] = msg[:i+3] + strings.Join(parts, ", ") + "]"
	}
}

func managerKey(e any) string {
	m, _ := e.(map[string]any)
	return fmt.Sprint(m["manager"], "/", m["operation"], "/", m["subresource"])
}

// normalizeTable blanks the cells of date columns (an object's age).
func normalizeTable(t map[string]any) {
	cols, _ := t["columnDefinitions"].([]any)
	rows, _ := t["rows"].([]any)
	for i, c := range cols {
		if c, ok := c.(map[string]any); !ok || (c["format"] != "date" && c["type"] != "date") {
			continue
		}
		for _, r := range rows {
			if r, ok := r.(map[string]any); ok {
				if cells, ok := r["cells"].([]any); ok && i < len(cells) {
					cells[i] = "<age>"
				}
			}
		}
	}
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

// events reads a watch stream's body (a JSON document per event) as a
// list of the events.
func events(body any) any {
	s, ok := body.(string)
	if !ok {
		return []any{body} // one event, decoded whole
	}
	dec := json.NewDecoder(strings.NewReader(s))
	var out []any
	for {
		var ev any
		if dec.Decode(&ev) != nil {
			return out
		}
		out = append(out, ev)
	}
}

// groupOnly keeps, of a list of groups (/apis, legacy or aggregated), the
// one named.
func groupOnly(name string) func(any) any {
	return func(body any) any {
		m, ok := body.(map[string]any)
		if !ok {
			return body
		}
		for _, key := range []string{"groups", "items"} {
			list, ok := m[key].([]any)
			if !ok {
				continue
			}
			var kept []any
			for _, g := range list {
				if g, ok := g.(map[string]any); ok && (g["name"] == name || nameOf(g) == name) {
					kept = append(kept, g)
				}
			}
			m[key] = kept
		}
		return m
	}
}

func nameOf(g map[string]any) any {
	md, _ := g["metadata"].(map[string]any)
	return md["name"]
}

// run runs script against kube-apiserver (recording the golden file, with
// -update) and against kapi, and compares each of kapi's answers with
// kube-apiserver's.
func run(t *testing.T, script string, steps []step, expected []known) {
	golden := filepath.Join("testdata", script+".json")
	if *update {
		assets := os.Getenv("KAPI_ENVTEST_ASSETS")
		if assets == "" {
			t.Fatal("-update needs KAPI_ENVTEST_ASSETS: a directory holding kube-apiserver and etcd")
		}
		kube := runKube(t, assets, steps)
		if err := os.WriteFile(golden, append(mustJSON(kube), '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	raw, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (record it with KAPI_ENVTEST_ASSETS=... go test -run %s -update)", err, t.Name())
	}
	var want []*answer
	if err := json.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != len(steps) {
		t.Fatalf("%s holds %d answers for %d steps: record it anew with -update", golden, len(want), len(steps))
	}
	got := runKapi(t, steps)
	if out := os.Getenv("CRDDIFF_KAPI_OUT"); out != "" {
		// kapi's answers, in the golden files' form, to compare by eye.
		if err := os.WriteFile(out, mustJSON(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var failed, expectedSteps int
	used := make([]bool, len(expected))
	for i, s := range steps {
		w, g := want[i], got[i]
		if w.Step != s.name {
			t.Fatalf("%s: answer %d is of step %q, not %q: record it anew with -update", golden, i, w.Step, s.name)
		}
		var diffs, whys []string
		for _, d := range compare("", w, g) {
			i := slices.IndexFunc(expected, func(k known) bool { return k.matches(s.name, d) })
			if i < 0 {
				diffs = append(diffs, d)
				continue
			}
			used[i] = true
			if !slices.Contains(whys, expected[i].why) {
				whys = append(whys, expected[i].why)
				t.Logf("step %s: differs as expected: %s (%s)", s.name, expected[i].why, d)
			}
		}
		switch {
		case len(diffs) == 0 && s.differs != "":
			t.Errorf("step %s: expected to differ (%s) but answers as kube-apiserver does: drop differs", s.name, s.differs)
		case len(diffs) == 0:
		case s.differs != "":
			expectedSteps++
			t.Logf("step %s: differs as expected (%s): %s", s.name, s.differs, strings.Join(diffs, "; "))
		default:
			failed++
			t.Errorf("step %s (%s): kapi differs from kube-apiserver:\n  %s\nkube-apiserver: %s\nkapi: %s",
				s.name, w.Request, strings.Join(diffs, "\n  "), mustJSON(w), mustJSON(g))
		}
	}
	for i, k := range expected {
		inScript := k.step == "" || slices.ContainsFunc(steps, func(s step) bool { return s.name == k.step })
		if !used[i] && inScript {
			t.Errorf("expected difference %q (step %q, %s) no longer seen: drop it", k.path, k.step, k.why)
		}
	}
	t.Logf("%s: %d steps compared, %d differ, %d differ as expected as a whole", script, len(steps), failed, expectedSteps)
}

// compare lists where got differs from want, by path.
func compare(path string, want, got any) []string {
	if w, ok := want.(*answer); ok {
		g := got.(*answer)
		var d []string
		if w.Code != g.Code {
			d = append(d, fmt.Sprintf("code: %d, kapi %d", w.Code, g.Code))
		}
		if w.ContentType != g.ContentType {
			d = append(d, fmt.Sprintf("Content-Type: %q, kapi %q", w.ContentType, g.ContentType))
		}
		if !slices.Equal(w.Warnings, g.Warnings) {
			d = append(d, fmt.Sprintf("Warning: %q, kapi %q", w.Warnings, g.Warnings))
		}
		return append(d, compare("body", w.Body, g.Body)...)
	}
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			break
		}
		var d []string
		keys := map[string]bool{}
		for k := range w {
			keys[k] = true
		}
		for k := range g {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			wv, wok := w[k]
			gv, gok := g[k]
			switch {
			case !gok:
				d = append(d, fmt.Sprintf("%s.%s: missing in kapi (kube %s)", path, k, short(wv)))
			case !wok:
				d = append(d, fmt.Sprintf("%s.%s: only in kapi (%s)", path, k, short(gv)))
			default:
				d = append(d, compare(path+"."+k, wv, gv)...)
			}
		}
		return d
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			break
		}
		var d []string
		for i := range w {
			d = append(d, compare(fmt.Sprintf("%s[%d]", path, i), w[i], g[i])...)
		}
		return d
	}
	if reflect.DeepEqual(want, got) {
		return nil
	}
	return []string{fmt.Sprintf("%s: kube %s, kapi %s", path, short(want), short(got))}
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 300 {
		return string(b[:300]) + "..."
	}
	return string(b)
}

func runKapi(t *testing.T, steps []step) []*answer {
	engine, err := cel.New()
	if err != nil {
		t.Fatal(err)
	}
	// examples/controlplane's server (namespaces, leases, events,
	// definitions), with the rule engine of validation/cel.
	env := &crdtest.Environment{Options: []apiserver.Option{apiserver.WithRuleEngine(engine)}}
	url, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	tg := &target{base: url, client: &http.Client{}}
	return runSteps(t, tg, steps)
}

func runKube(t *testing.T, assets string, steps []step) []*answer {
	ctrllog.SetLogger(logr.Discard())
	env := &envtest.Environment{BinaryAssetsDirectory: assets}
	cfg, err := env.Start()
	if err != nil {
		t.Fatal(err)
	}
	defer env.Stop()
	client, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	u, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return runSteps(t, &target{base: strings.TrimSuffix(u.String(), "/"), client: client}, steps)
}

func runSteps(t *testing.T, tg *target, steps []step) []*answer {
	out := make([]*answer, len(steps))
	for i, s := range steps {
		out[i] = tg.do(t, s)
		if os.Getenv("CRDDIFF_VERBOSE") != "" {
			t.Logf("%s", mustJSON(out[i]))
		}
	}
	return out
}
