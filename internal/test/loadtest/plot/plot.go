// Package plot draws line charts as SVG with Go's standard library only,
// for the figures of BENCHMARKS.md that the load harness generates: how a
// cost grows with the number of objects, watchers or kinds. A chart has
// one x axis (linear or logarithmic), one y axis (linear or logarithmic),
// labelled ticks, axis titles and a legend naming each series.
//
//	c := plot.Chart{Title: "RSS", XLabel: "kinds", YLabel: "MiB", LogX: true,
//		Series: []plot.Series{{Name: "kapi", Points: []plot.Point{{10, 30}, {1000, 400}}}}}
//	svg, err := c.SVG()
package plot

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"math"
	"strconv"
)

// Point is one measurement.
type Point struct{ X, Y float64 }

// Series is one line of a chart.
type Series struct {
	Name   string
	Points []Point
	// Color is an SVG colour; empty: the next of a palette that the
	// colour-blind can tell apart.
	Color string
	// Dashed draws the line dashed (the same quantity measured another
	// way, beside a solid line of the same colour).
	Dashed bool
}

// PaletteColor is the i-th colour of the palette series are drawn in.
func PaletteColor(i int) string { return palette[i%len(palette)] }

// Chart is a line chart.
type Chart struct {
	Title          string
	XLabel, YLabel string
	// LogX and LogY draw an axis on a base-10 logarithmic scale; every
	// value on it must then be positive.
	LogX, LogY bool
	Series     []Series
	// Width and Height in pixels of the chart, the legend below it
	// adding a line a series; 640 × 400 if zero.
	Width, Height int
}

// ErrNoData is the error of a chart with no point, or with a point that
// its scale cannot place (not a finite number; not positive on a log
// scale).
var ErrNoData = errors.New("plot: no data to draw")

// palette is the colours of the series, in turn: distinguishable, and
// readable by the colour-blind (Okabe and Ito's).
var palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"}

// margins around the plotting area, in pixels: room for the tick labels,
// the axis titles and the title.
const (
	marginLeft   = 70
	marginRight  = 20
	marginTop    = 40
	marginBottom = 55
	legendLine   = 18
)

// SVG renders the chart as a standalone SVG document.
func (c Chart) SVG() ([]byte, error) {
	w, h := c.Width, c.Height
	if w <= 0 {
		w = 640
	}
	if h <= 0 {
		h = 400
	}
	xs, ys, err := c.ranges()
	if err != nil {
		return nil, err
	}
	x := newAxis(xs[0], xs[1], c.LogX, marginLeft, float64(w-marginRight))
	y := newAxis(ys[0], ys[1], c.LogY, float64(h-marginBottom), marginTop)

	// The legend goes below the chart, a line a series, where it hides
	// no point.
	total := h + 8 + len(c.Series)*legendLine
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, total, w, total)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, total)
	text(&b, float64(w)/2, 22, "middle", `font-size="14" font-weight="bold"`, c.Title)

	// Grid lines and tick labels.
	for _, t := range x.ticks() {
		px := x.pos(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", px, marginTop, px, h-marginBottom)
		text(&b, px, float64(h-marginBottom+16), "middle", "", label(t))
	}
	for _, t := range y.ticks() {
		py := y.pos(t)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>`+"\n", marginLeft, py, w-marginRight, py)
		text(&b, marginLeft-6, py+4, "end", "", label(t))
	}
	// The axes and their titles.
	fmt.Fprintf(&b, `<polyline points="%d,%d %d,%d %d,%d" fill="none" stroke="black"/>`+"\n",
		marginLeft, marginTop, marginLeft, h-marginBottom, w-marginRight, h-marginBottom)
	text(&b, float64(marginLeft+w-marginRight)/2, float64(h-12), "middle", "", c.XLabel)
	fmt.Fprintf(&b, `<text x="16" y="%.1f" text-anchor="middle" transform="rotate(-90 16 %.1f)">%s</text>`+"\n",
		float64(marginTop+h-marginBottom)/2, float64(marginTop+h-marginBottom)/2, escape(c.YLabel))

	// The series, and the legend.
	for i, s := range c.Series {
		colour := s.Color
		if colour == "" {
			colour = PaletteColor(i)
		}
		dash := ""
		if s.Dashed {
			dash = ` stroke-dasharray="6 4"`
		}
		var pts bytes.Buffer
		for _, p := range s.Points {
			fmt.Fprintf(&pts, "%.1f,%.1f ", x.pos(p.X), y.pos(p.Y))
		}
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", bytes.TrimSpace(pts.Bytes()), escape(colour), dash)
		for _, p := range s.Points {
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>`+"\n", x.pos(p.X), y.pos(p.Y), escape(colour))
		}
		ly := float64(h + 8 + i*legendLine)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="%s" stroke-width="2"%s/>`+"\n", marginLeft+10, ly-4, marginLeft+30, ly-4, escape(colour), dash)
		text(&b, marginLeft+36, ly, "start", "", s.Name)
	}
	b.WriteString("</svg>\n")
	return b.Bytes(), nil
}

// ranges are the smallest and largest x and y of every point, checked
// against the scales.
func (c Chart) ranges() (xs, ys [2]float64, err error) {
	xs = [2]float64{math.Inf(1), math.Inf(-1)}
	ys = xs
	n := 0
	for _, s := range c.Series {
		for _, p := range s.Points {
			if !finite(p.X) || !finite(p.Y) || (c.LogX && p.X <= 0) || (c.LogY && p.Y <= 0) {
				return xs, ys, fmt.Errorf("%w: series %q has the point (%v, %v)", ErrNoData, s.Name, p.X, p.Y)
			}
			xs = [2]float64{min(xs[0], p.X), max(xs[1], p.X)}
			ys = [2]float64{min(ys[0], p.Y), max(ys[1], p.Y)}
			n++
		}
	}
	if n == 0 {
		return xs, ys, ErrNoData
	}
	if !c.LogY {
		ys[0] = min(ys[0], 0) // a linear y axis starts at zero
	}
	return xs, ys, nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// axis maps values to pixels.
type axis struct {
	lo, hi     float64 // in values, rounded out to ticks
	log        bool
	from, to   float64 // in pixels
	step       float64 // between ticks, on a linear axis
	vlo, vspan float64 // lo and hi-lo on the scale (log10 on a log axis)
}

func newAxis(lo, hi float64, log bool, from, to float64) *axis {
	a := &axis{log: log, from: from, to: to}
	if log {
		a.lo = math.Pow(10, math.Floor(math.Log10(lo)))
		a.hi = math.Pow(10, math.Ceil(math.Log10(hi)))
		if a.hi <= a.lo {
			a.hi = a.lo * 10
		}
		a.vlo, a.vspan = math.Log10(a.lo), math.Log10(a.hi)-math.Log10(a.lo)
		return a
	}
	if hi <= lo {
		hi = lo + 1
	}
	a.step = niceStep((hi - lo) / 5)
	a.lo = math.Floor(lo/a.step) * a.step
	a.hi = math.Ceil(hi/a.step) * a.step
	a.vlo, a.vspan = a.lo, a.hi-a.lo
	return a
}

// niceStep is the smallest of 1, 2 and 5 times a power of ten at least d.
func niceStep(d float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(d)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= d {
			return m * p
		}
	}
	return 10 * p
}

func (a *axis) pos(v float64) float64 {
	if a.log {
		v = math.Log10(v)
	}
	return a.from + (v-a.vlo)/a.vspan*(a.to-a.from)
}

// ticks are the values labelled on the axis: each power of ten on a log
// axis (and 2 and 5 times it when there are few decades), each step on a
// linear one.
func (a *axis) ticks() []float64 {
	var ts []float64
	if a.log {
		decades := int(math.Round(a.vspan))
		for d := 0; d < decades; d++ {
			p := a.lo * math.Pow(10, float64(d))
			ts = append(ts, p)
			if decades <= 3 {
				ts = append(ts, 2*p, 5*p)
			}
		}
		return append(ts, a.hi)
	}
	for v := a.lo; v <= a.hi+a.step/2; v += a.step {
		ts = append(ts, v)
	}
	return ts
}

// label is a tick's value as short as it reads: 1000 as 1k, 0.5 as 0.5.
func label(v float64) string {
	switch {
	case v >= 1e6 && math.Mod(v, 1e6) == 0:
		return strconv.FormatFloat(v/1e6, 'f', -1, 64) + "M"
	case v >= 1e3 && math.Mod(v, 1e3) == 0:
		return strconv.FormatFloat(v/1e3, 'f', -1, 64) + "k"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

func text(b *bytes.Buffer, x, y float64, anchor, attrs, s string) {
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="%s" %s>%s</text>`+"\n", x, y, anchor, attrs, escape(s))
}

func escape(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
