package plot_test

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/test/loadtest/plot"
)

// element is what the test reads of an SVG element.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

// parse reads an SVG document with encoding/xml to its end: it fails on
// anything that is not well-formed XML.
func parse(t *testing.T, svg []byte) []element {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var els []element
	var open []int // the indices of the elements open, innermost last
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if len(els) == 0 && (tok.Name.Local != "svg" || tok.Name.Space != "http://www.w3.org/2000/svg") {
				t.Fatalf("the root is %v, want svg in the SVG namespace", tok.Name)
			}
			open = append(open, len(els))
			e := element{name: tok.Name.Local, attrs: map[string]string{}}
			for _, a := range tok.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			els = append(els, e)
		case xml.EndElement:
			open = open[:len(open)-1]
		case xml.CharData:
			if len(open) > 0 {
				els[open[len(open)-1]].text += string(tok)
			}
		}
	}
	if len(els) == 0 || len(open) != 0 {
		t.Fatalf("no element, or unbalanced ones")
	}
	return els
}

func texts(els []element) []string {
	var out []string
	for _, e := range els {
		if e.name == "text" {
			out = append(out, strings.TrimSpace(e.text))
		}
	}
	return out
}

func num(t *testing.T, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%q: %v", s, err)
	}
	return v
}

func TestSVG(t *testing.T) {
	c := plot.Chart{
		Title: "RSS <growth> & kinds", XLabel: "kinds registered", YLabel: "MiB", LogX: true,
		Series: []plot.Series{
			{Name: "RSS", Points: []plot.Point{{10, 20}, {30, 25}, {100, 60}, {300, 150}, {1000, 480}}},
			{Name: "live heap", Points: []plot.Point{{10, 5}, {100, 30}, {1000, 210}}, Color: plot.PaletteColor(0), Dashed: true},
		},
	}
	svg, err := c.SVG()
	if err != nil {
		t.Fatal(err)
	}
	els := parse(t, svg)
	ts := texts(els)
	for _, want := range []string{"RSS <growth> & kinds", "kinds registered", "MiB", "RSS", "live heap", "10", "100", "1k"} {
		if !slices.Contains(ts, want) {
			t.Errorf("no text %q in %q", want, ts)
		}
	}
	// One line per series beside the axes, a marker per point, inside the
	// plotting area; the x positions grow with log10(x): 10→30 is less than
	// half of 10→100.
	var lines, circles, dashed int
	var xs []float64
	for _, e := range els {
		if e.attrs["stroke-dasharray"] != "" {
			dashed++
			if e.attrs["stroke"] != plot.PaletteColor(0) {
				t.Errorf("the dashed series is %s, want the colour given", e.attrs["stroke"])
			}
		}
		switch e.name {
		case "polyline":
			lines++
		case "circle":
			circles++
			cx, cy := num(t, e.attrs["cx"]), num(t, e.attrs["cy"])
			if cx < 70 || cx > 620 || cy < 40 || cy > 345 {
				t.Errorf("a point at (%v, %v), outside the plotting area", cx, cy)
			}
			if len(xs) < 5 {
				xs = append(xs, cx)
			}
		}
	}
	if dashed != 2 { // its line and its legend's
		t.Errorf("%d dashed elements, want 2", dashed)
	}
	if lines != 3 || circles != 8 {
		t.Errorf("%d polylines and %d circles, want 3 (2 series and the axes) and 8", lines, circles)
	}
	if d1, d2 := xs[1]-xs[0], xs[2]-xs[0]; math.Abs(d1/d2-math.Log10(3)) > 0.01 {
		t.Errorf("x positions %v: 10→30 is %.3f of 10→100, want log10(3)", xs, d1/d2)
	}
	if bytes.Contains(svg, []byte("<growth>")) {
		t.Error("the title is not escaped")
	}
}

func TestSVGLinearAndLogY(t *testing.T) {
	for _, c := range []plot.Chart{
		{Title: "linear", Series: []plot.Series{{Name: "a", Points: []plot.Point{{0, 0}, {1, 3}, {2, 7}}}}},
		{Title: "log y", LogY: true, Series: []plot.Series{{Name: "a", Points: []plot.Point{{1, 0.2}, {2, 40}}}}},
		{Title: "one point", Series: []plot.Series{{Name: "a", Points: []plot.Point{{5, 5}}}}},
	} {
		t.Run(c.Title, func(t *testing.T) {
			svg, err := c.SVG()
			if err != nil {
				t.Fatal(err)
			}
			ts := texts(parse(t, svg))
			if !slices.Contains(ts, c.Title) {
				t.Errorf("no title in %q", ts)
			}
			if c.LogY && (!slices.Contains(ts, "0.1") || !slices.Contains(ts, "100")) {
				t.Errorf("log y ticks %q: want 0.1 and 100", ts)
			}
		})
	}
}

func TestSVGRefusesWhatItCannotPlace(t *testing.T) {
	for name, c := range map[string]plot.Chart{
		"empty":         {},
		"no points":     {Series: []plot.Series{{Name: "a"}}},
		"zero on log x": {LogX: true, Series: []plot.Series{{Name: "a", Points: []plot.Point{{0, 1}}}}},
		"NaN":           {Series: []plot.Series{{Name: "a", Points: []plot.Point{{1, math.NaN()}}}}},
	} {
		if _, err := c.SVG(); !errors.Is(err, plot.ErrNoData) {
			t.Errorf("%s: %v, want ErrNoData", name, err)
		}
	}
}

func TestSVGIsSmall(t *testing.T) {
	var s plot.Series
	for i := 1; i <= 1000; i *= 10 {
		s.Points = append(s.Points, plot.Point{X: float64(i), Y: float64(i)})
	}
	svg, err := plot.Chart{Series: []plot.Series{s, s, s, s}, LogX: true, LogY: true}.SVG()
	if err != nil {
		t.Fatal(err)
	}
	if len(svg) > 16<<10 || !strings.HasSuffix(string(svg), "</svg>\n") {
		t.Errorf("%d bytes", len(svg))
	}
}
