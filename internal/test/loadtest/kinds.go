package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kapi-dev/kapi/internal/test/loadtest/plot"
)

// KindsPoint is what the kinds workload measured at one number of kinds
// registered at run time, each by a CustomResourceDefinition applied over
// HTTP to a fresh control plane.
type KindsPoint struct {
	Kinds int `json:"kinds"`
	// Groups the kinds are in (kindsPerGroup to a group).
	Groups int `json:"groups"`
	// DefinitionBytes is the JSON of the definitions applied, in all.
	DefinitionBytes int64 `json:"definitionBytes"`
	// ApplySeconds: every definition but the last, applied over
	// kindsApplyConns connections.
	ApplySeconds float64 `json:"applySeconds"`
	// The last definition, applied alone once the others are established:
	// from the apply's request to the definition's Established condition,
	// and to a first object of its kind created.
	LastEstablishedMs float64 `json:"lastEstablishedMs"`
	LastServedMs      float64 `json:"lastServedMs"`
	// The server's RSS and live heap (after a forced GC), before the first
	// definition and after the last, settled.
	RSSBaseMiB  float64 `json:"rssBaseMiB"`
	RSSEndMiB   float64 `json:"rssEndMiB"`
	HeapBaseMiB float64 `json:"heapBaseMiB,omitempty"`
	HeapEndMiB  float64 `json:"heapEndMiB,omitempty"`
	// Response times in ms: the first request after the last definition
	// (whatever the server builds lazily, it builds then) and the median
	// of kindsRepeats more.
	Responses []KindsResponse `json:"responses"`
}

// KindsResponse is one document's response times and size.
type KindsResponse struct {
	Name    string  `json:"name"`
	FirstMs float64 `json:"firstMs"`
	WarmMs  float64 `json:"warmMs"`
	Bytes   int     `json:"bytes"`
}

// The documents a client reads that grow with the kinds served.
const (
	respAggregated = "discovery, aggregated (/apis as APIGroupDiscoveryList)"
	respLegacy     = "discovery, unaggregated (/apis, then every /apis/GROUP/VERSION)"
	respV2         = "OpenAPI v2 (/openapi/v2: kapi serves it without paths, the schemas are in v3)"
	respV3Index    = "OpenAPI v3 index (/openapi/v3)"
	respV3Doc      = "OpenAPI v3, one group-version (/openapi/v3/apis/GROUP/v1)"
)

const (
	kindsApplyConns = 4
	kindsRepeats    = 5
)

// RSSPerKindKiB is the RSS growth per kind.
func (p *KindsPoint) RSSPerKindKiB() float64 {
	return (p.RSSEndMiB - p.RSSBaseMiB) * 1024 / float64(p.Kinds)
}

// HeapPerKindKiB is the live heap's growth per kind.
func (p *KindsPoint) HeapPerKindKiB() float64 {
	return (p.HeapEndMiB - p.HeapBaseMiB) * 1024 / float64(p.Kinds)
}

func (p *KindsPoint) response(name string) *KindsResponse {
	for i := range p.Responses {
		if p.Responses[i].Name == name {
			return &p.Responses[i]
		}
	}
	return nil
}

// runKinds registers n generated kinds on t, a fresh control plane, and
// measures what they cost: see KindsPoint.
func runKinds(ctx context.Context, t *target, n int, sz sizes) (*KindsPoint, error) {
	p := &KindsPoint{Kinds: n, Groups: (n + kindsPerGroup - 1) / kindsPerGroup}
	if t.PID <= 0 {
		return nil, errors.New("kinds: the server's RSS is unknown (not a local process)")
	}
	if err := ensureNamespace(ctx, t, "default"); err != nil {
		return nil, err
	}
	settle(sz)
	base, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	p.RSSBaseMiB = mib(base)
	heapBase, err := liveHeap(ctx, t)
	if err != nil && !errors.Is(err, errNoHeap) {
		return nil, err
	}
	p.HeapBaseMiB = mib(heapBase)

	// Every definition but the last, a few at once.
	c := t.client(kindsApplyConns)
	defer c.CloseIdleConnections()
	var size atomic.Int64
	start := time.Now()
	err = inParallel(ctx, n-1, kindsApplyConns, func(i int) error {
		doc := genCRD(i)
		size.Add(int64(len(doc)))
		return applyCRD(ctx, c, t.URL, genKind(i).name(), doc)
	})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	for i := range n - 1 {
		if err := waitEstablished(wctx, c, t.URL, genKind(i).name()); err != nil {
			return nil, err
		}
	}
	p.ApplySeconds = time.Since(start).Seconds()

	// The last, alone: how long until a client can use it.
	last := genKind(n - 1)
	doc := genCRD(n - 1)
	size.Add(int64(len(doc)))
	p.DefinitionBytes = size.Load()
	start = time.Now()
	if err := applyCRD(wctx, c, t.URL, last.name(), doc); err != nil {
		return nil, err
	}
	if err := waitEstablished(wctx, c, t.URL, last.name()); err != nil {
		return nil, err
	}
	p.LastEstablishedMs = msSince(start)
	if err := createWhenServed(wctx, c, last.objectsURL(t.URL, "default"), genObject(last, "default", "first")); err != nil {
		return nil, err
	}
	p.LastServedMs = msSince(start)

	if err := kindsResponses(ctx, t, p, last); err != nil {
		return nil, err
	}
	settle(sz)
	end, err := rssBytes(t.PID)
	if err != nil {
		return nil, err
	}
	p.RSSEndMiB = mib(end)
	if heapBase > 0 {
		heapEnd, err := liveHeap(ctx, t)
		if err != nil {
			return nil, err
		}
		p.HeapEndMiB = mib(heapEnd)
	}
	return p, nil
}

func msSince(t time.Time) float64 { return float64(time.Since(t)) / float64(time.Millisecond) }

// kindsResponses times the documents that grow with the kinds: discovery
// in both forms and OpenAPI v2 and v3, each first and then warm.
func kindsResponses(ctx context.Context, t *target, p *KindsPoint, last generatedKind) error {
	c := t.client(1)
	defer c.CloseIdleConnections()
	get := func(path, accept, wantType string) (time.Duration, []byte, error) {
		start := time.Now()
		_, body, resp, err := send(ctx, c, "GET", t.URL+path, http.Header{"Accept": {accept}}, nil, true)
		d := time.Since(start)
		if err == nil && !strings.HasPrefix(resp.Header.Get("Content-Type"), wantType) {
			err = fmt.Errorf("GET %s: Content-Type %q, want %s", path, resp.Header.Get("Content-Type"), wantType)
		}
		return d, body, err
	}
	// The unaggregated walk: /apis, then each group version it lists, as
	// kubectl does without aggregated discovery.
	legacy := func() (time.Duration, int, error) {
		d, body, err := get("/apis", "application/json", "application/json")
		if err != nil {
			return 0, 0, err
		}
		var groups struct {
			Groups []struct {
				Versions []struct{ GroupVersion string } `json:"versions"`
			} `json:"groups"`
		}
		if err := json.Unmarshal(body, &groups); err != nil {
			return 0, 0, err
		}
		size := len(body)
		for _, g := range groups.Groups {
			for _, v := range g.Versions {
				dv, b, err := get("/apis/"+v.GroupVersion, "application/json", "application/json")
				if err != nil {
					return 0, 0, err
				}
				d += dv
				size += len(b)
			}
		}
		if len(groups.Groups) < p.Groups {
			return 0, 0, fmt.Errorf("/apis lists %d groups, want at least %d", len(groups.Groups), p.Groups)
		}
		return d, size, nil
	}
	simple := func(path, accept, wantType string) func() (time.Duration, int, error) {
		return func() (time.Duration, int, error) {
			d, body, err := get(path, accept, wantType)
			return d, len(body), err
		}
	}
	const aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
	for _, doc := range []struct {
		name string
		do   func() (time.Duration, int, error)
	}{
		{respAggregated, simple("/apis", aggregated+",application/json", aggregated)},
		{respLegacy, legacy},
		{respV2, simple("/openapi/v2", "application/json", "application/json")},
		{respV3Index, simple("/openapi/v3", "application/json", "application/json")},
		{respV3Doc, simple("/openapi/v3/apis/"+last.Group+"/v1", "application/json", "application/json")},
	} {
		first, size, err := doc.do()
		if err != nil {
			return fmt.Errorf("%s: %w", doc.name, err)
		}
		var warm []time.Duration
		for range kindsRepeats {
			d, _, err := doc.do()
			if err != nil {
				return fmt.Errorf("%s: %w", doc.name, err)
			}
			warm = append(warm, d)
		}
		slices.Sort(warm)
		p.Responses = append(p.Responses, KindsResponse{Name: doc.name, FirstMs: ms(first), WarmMs: ms(warm[len(warm)/2]), Bytes: size})
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// kindsFigures draws the kinds curve: memory per kind, and the response
// times, against the kinds registered. It writes kinds-memory.svg and
// kinds-responses.svg into dir.
func kindsFigures(dir string, points []*KindsPoint) error {
	if len(points) == 0 {
		return nil
	}
	var rss, heap plot.Series
	rss.Name, heap.Name = "RSS growth per kind", "live heap growth per kind (after a forced GC)"
	for _, p := range points {
		rss.Points = append(rss.Points, plot.Point{X: float64(p.Kinds), Y: p.RSSPerKindKiB()})
		if p.HeapEndMiB > 0 {
			heap.Points = append(heap.Points, plot.Point{X: float64(p.Kinds), Y: p.HeapPerKindKiB()})
		}
	}
	mem := plot.Chart{Title: "Memory per kind defined at run time (flat: linear growth)", XLabel: "kinds registered (CustomResourceDefinitions)", YLabel: "KiB per kind", LogX: true, Series: []plot.Series{rss}}
	if len(heap.Points) > 0 {
		mem.Series = append(mem.Series, heap)
	}
	// One colour per document: its warm median solid, its first request
	// (what the server builds lazily) dashed.
	var series []plot.Series
	for i, r := range points[0].Responses {
		for _, first := range []bool{false, true} {
			s := plot.Series{Name: strings.SplitN(r.Name, " (", 2)[0], Color: plot.PaletteColor(i), Dashed: first}
			if first {
				s.Name += ", first request"
			}
			for _, p := range points {
				if got := p.response(r.Name); got != nil {
					v := got.WarmMs
					if first {
						v = got.FirstMs
					}
					s.Points = append(s.Points, plot.Point{X: float64(p.Kinds), Y: max(v, 0.01)})
				}
			}
			series = append(series, s)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	resp := plot.Chart{Title: "Response times against kinds registered", XLabel: "kinds registered (CustomResourceDefinitions)", YLabel: "ms (log scale)", LogX: true, LogY: true, Series: series, Height: 560}
	for file, c := range map[string]plot.Chart{"kinds-memory.svg": mem, "kinds-responses.svg": resp} {
		svg, err := c.SVG()
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		if err := os.WriteFile(filepath.Join(dir, file), svg, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// kindsPoints are the kinds workload's points, in the order measured.
func kindsPoints(results []*Result) []*KindsPoint {
	var out []*KindsPoint
	for _, r := range results {
		if r.Kinds != nil {
			out = append(out, r.Kinds)
		}
	}
	return out
}

// note is the point as the results table's note says it.
func (p *KindsPoint) note() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d CRDs (%d groups, %.1f MiB of definitions): RSS %.1f → %.1f MiB, %.0f KiB per kind", p.Kinds, p.Groups, mib(p.DefinitionBytes), p.RSSBaseMiB, p.RSSEndMiB, p.RSSPerKindKiB())
	if p.HeapEndMiB > 0 {
		fmt.Fprintf(&b, " (live heap %.0f KiB)", p.HeapPerKindKiB())
	}
	fmt.Fprintf(&b, "; the last: established in %.1f ms, an object created in %.1f ms", p.LastEstablishedMs, p.LastServedMs)
	for _, r := range p.Responses {
		fmt.Fprintf(&b, "; %s %.1f ms first, %.1f ms warm, %.0f KiB", strings.SplitN(r.Name, " (", 2)[0], r.FirstMs, r.WarmMs, float64(r.Bytes)/1024)
	}
	return b.String()
}

// kindsTargets are issue 28's targets at the largest number of kinds
// measured: RSS per definition ≤ 1 MB, and its last definition served
// within a second of its apply.
func kindsTargets(results []*Result) []verdict {
	points := kindsPoints(results)
	if len(points) == 0 {
		return nil
	}
	p := points[0]
	for _, q := range points {
		if q.Kinds > p.Kinds {
			p = q
		}
	}
	perKind := p.RSSPerKindKiB() * 1024 / 1e6
	return []verdict{
		{Target: fmt.Sprintf("kinds: %d CustomResourceDefinitions in ≤ 1 MB of RSS each", p.Kinds), Workload: "kinds",
			Measured: fmt.Sprintf("%.2f MB (RSS %.0f → %.0f MiB)", perKind, p.RSSBaseMiB, p.RSSEndMiB), Met: perKind <= 1, Value: perKind, Limit: 1},
		{Target: fmt.Sprintf("kinds: the %d-th definition's objects served ≤ 1 s after its apply", p.Kinds), Workload: "kinds",
			Measured: fmt.Sprintf("%.1f ms (established in %.1f ms)", p.LastServedMs, p.LastEstablishedMs), Met: p.LastServedMs <= 1000, Value: p.LastServedMs / 1000, Limit: 1},
	}
}

// customTargets compare the custom resource's memory with the typed
// widget's measured in the same run: issue 28's "within 1.5x".
func customTargets(results []*Result) []verdict {
	typed, custom := pairOf(results, "memory"), pairOf(results, "memory"+customSuffix)
	if typed == nil || custom == nil {
		return nil
	}
	q := ratio(custom.RSSPerJSON, typed.RSSPerJSON)
	vs := []verdict{{Target: fmt.Sprintf("memory: %d custom objects in ≤ 1.5× the typed widget's RSS per byte of JSON", custom.Objects), Workload: "memory" + customSuffix,
		Measured: fmt.Sprintf("%.2f× (%.2f× their JSON against %.2f×)", q, custom.RSSPerJSON, typed.RSSPerJSON), Met: q <= 1.5, Value: q, Limit: 1.5}}
	if typed.HeapPerJSON > 0 && custom.HeapPerJSON > 0 {
		q := ratio(custom.HeapPerJSON, typed.HeapPerJSON)
		vs = append(vs, verdict{Target: fmt.Sprintf("memory: %d custom objects in ≤ 1.5× the typed widget's live heap per byte of JSON", custom.Objects), Workload: "memory" + customSuffix,
			Measured: fmt.Sprintf("%.2f× (%.2f× their JSON against %.2f×)", q, custom.HeapPerJSON, typed.HeapPerJSON), Met: q <= 1.5, Value: q, Limit: 1.5})
	}
	return vs
}

func pairOf(results []*Result, workload string) *Result {
	k, _ := pair(results, workload)
	return k
}

// kindsMarkdown is the report's section on the kinds curve: a row per
// number of kinds, and the figures if they were drawn into figures (a
// path relative to the report).
func kindsMarkdown(points []*KindsPoint, figures string) string {
	if len(points) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\n## How cost grows: kinds defined at run time\n\n")
	fmt.Fprintf(&b, "Each row a fresh `examples/controlplane` (memory backend) to which that many generated CustomResourceDefinitions (20 to 50 properties each, with descriptions; %d kinds to a group) were applied server-side over HTTP, %d at a time, the last one alone. Memory: RSS and live heap (after a forced GC) growth per kind. *Served*: from the last definition's apply to a first object of its kind created. Response times: the first request after the last definition (what the server builds lazily, it builds then) / the median of %d more, in ms.\n\n", kindsPerGroup, kindsApplyConns, kindsRepeats)
	fmt.Fprintf(&b, "| kinds | groups | definitions MiB | RSS KiB/kind | heap KiB/kind | established ms | served ms |")
	for _, r := range points[0].Responses {
		fmt.Fprintf(&b, " %s |", r.Name)
	}
	fmt.Fprintf(&b, "\n|--:|--:|--:|--:|--:|--:|--:|%s\n", strings.Repeat("--:|", len(points[0].Responses)))
	for _, p := range points {
		fmt.Fprintf(&b, "| %d | %d | %.1f | %.0f | %.0f | %.1f | %.1f |", p.Kinds, p.Groups, mib(p.DefinitionBytes), p.RSSPerKindKiB(), p.HeapPerKindKiB(), p.LastEstablishedMs, p.LastServedMs)
		for _, r := range points[0].Responses {
			if got := p.response(r.Name); got != nil {
				fmt.Fprintf(&b, " %s / %s (%.0f KiB) |", msText(got.FirstMs), msText(got.WarmMs), float64(got.Bytes)/1024)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	if figures != "" {
		fmt.Fprintf(&b, "\n![Memory per kind against kinds registered](%s/kinds-memory.svg)\n\n![Response times against kinds registered](%s/kinds-responses.svg)\n", figures, figures)
	}
	return b.String()
}

func msText(v float64) string {
	if v < 10 {
		return fmt.Sprintf("%.2f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
