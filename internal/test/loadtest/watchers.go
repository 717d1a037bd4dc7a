package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The watchers curve: the watch fan-out (runWatch) on a fresh kapi (memory
// backend) with 100 to 10,000 watchers of one collection, at a fixed
// write rate, and the ceiling with as many: CPU per delivered event,
// delivery latency and RSS against the watchers, and, to say why the
// cost bends where it does, counted quantities: the server's write system
// calls per delivered event (/proc/PID/io), the harness's own CPU, and
// where kapi's CPU goes (a CPU profile taken during each point's writes).

// WatchersPoint is what the watchers curve measured at one number of
// watchers.
type WatchersPoint struct {
	Watchers int `json:"watchers"`
	Writes   int `json:"writes"`
	// Kapi and Ceiling are the fan-out's results on each (Ceiling nil if
	// there is no ceiling).
	Kapi    *Result `json:"kapi"`
	Ceiling *Result `json:"ceiling,omitempty"`
	// RSSBaseMiB is kapi's RSS before the watches opened.
	RSSBaseMiB float64 `json:"rssBaseMiB"`
	// Write system calls per delivered event, kapi's and the ceiling's,
	// and kapi's bytes written per delivered event.
	WritesPerEvent        float64 `json:"writeSyscallsPerEvent"`
	CeilingWritesPerEvent float64 `json:"ceilingWriteSyscallsPerEvent,omitempty"`
	BytesPerEvent         float64 `json:"bytesPerEvent"`
	// HarnessCPUPerEventUs is the harness's own CPU per delivered event
	// (its watchers' reading) during kapi's fan-out.
	HarnessCPUPerEventUs float64 `json:"harnessCPUPerEventMicros"`
	// Profile is the share of kapi's CPU samples (cumulative) in each of
	// profileParts, from a CPU profile over the writes; nil if kapi
	// serves no profile.
	Profile map[string]float64 `json:"profile,omitempty"`
}

// CPUPerEventUs is a fan-out result's server CPU per delivered event, µs.
func cpuPerEventUs(r *Result) float64 {
	if r == nil || r.Delivered == 0 {
		return 0
	}
	return r.ServerCPUSeconds * 1e6 / float64(r.Delivered)
}

// profileParts are the functions whose cumulative share of kapi's CPU the
// watchers curve reports: writing to the connections, the garbage
// collector, the goroutine scheduler and allocation.
var profileParts = []struct{ Name, Func string }{
	{"socket writes", "internal/poll.(*FD).Write"},
	{"scheduler", "runtime.schedule"},
	{"GC", "runtime.gcBgMarkWorker"},
	{"allocation", "runtime.mallocgc"},
}

// runWatchersCurve runs the fan-out at each of sz.Curves.Watchers on a fresh
// kapi from fresh, and on ceil if it is not nil.
func runWatchersCurve(ctx context.Context, fresh func() (*target, func(), error), ceil *target, sz sizes, logf func(string, ...any)) ([]*WatchersPoint, error) {
	raiseOpenFiles()
	var points []*WatchersPoint
	for _, n := range sz.Curves.Watchers {
		p, err := watchersPoint(ctx, fresh, ceil, n, sz)
		if err != nil {
			return points, fmt.Errorf("%d watchers: %w", n, err)
		}
		logf("watchers %6d: kapi %.1f µs CPU/event (ceiling %.1f), p99 %.1f ms, RSS %.0f → %.0f MiB, %.2f writes/event, harness %.1f µs/event",
			n, cpuPerEventUs(p.Kapi), cpuPerEventUs(p.Ceiling), p.Kapi.P99ms, p.RSSBaseMiB, p.Kapi.RSSPeakMiB, p.WritesPerEvent, p.HarnessCPUPerEventUs)
		points = append(points, p)
	}
	return points, nil
}

func watchersPoint(ctx context.Context, fresh func() (*target, func(), error), ceil *target, n int, sz sizes) (*WatchersPoint, error) {
	t, stop, err := fresh()
	if err != nil {
		return nil, err
	}
	defer stop()
	if _, err := seed(ctx, t, nsWatch, "w", 10, 4); err != nil {
		return nil, err
	}
	ws := sz
	ws.Watchers, ws.WatchRate, ws.WatchDuration = n, sz.Curves.WatchersRate, sz.Curves.WatchersDuration
	// A server behind is late, not losing events: wait for them.
	ws.WatchDrain = time.Minute
	p := &WatchersPoint{Watchers: n}
	settle(sz)
	if rss, err := rssBytes(t.PID); err == nil {
		p.RSSBaseMiB = mib(rss)
	}
	// A CPU profile over the writes (the watches open before them).
	profile := make(chan []byte, 1)
	go func() {
		secs := max(1, int(ws.WatchDuration.Seconds()))
		time.Sleep(time.Duration(n/2000+1) * time.Second)
		c := t.client(1)
		defer c.CloseIdleConnections()
		_, body, _, err := send(ctx, c, "GET", fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", t.URL, secs), nil, nil, true)
		if err != nil {
			body = nil
		}
		profile <- body
	}()
	io0, _ := procIO(t.PID)
	self0, _ := cpuSeconds(os.Getpid())
	r, err := runWatch(ctx, t, ws)
	if err != nil {
		return nil, err
	}
	self1, _ := cpuSeconds(os.Getpid())
	io1, _ := procIO(t.PID)
	r.Workload = "watchers"
	p.Kapi, p.Writes = r, r.Events
	if r.Delivered > 0 {
		p.WritesPerEvent = float64(io1.syscw-io0.syscw) / float64(r.Delivered)
		p.BytesPerEvent = float64(io1.wchar-io0.wchar) / float64(r.Delivered)
		p.HarnessCPUPerEventUs = (self1 - self0) * 1e6 / float64(r.Delivered)
	}
	if prof := <-profile; len(prof) > 0 {
		p.Profile = profileShares(ctx, prof)
	}
	if ceil == nil {
		return p, nil
	}
	cfg, err := recordWatch(ctx, t)
	if err != nil {
		return nil, fmt.Errorf("recording kapi's watch frame: %w", err)
	}
	if err := configureCeiling(ctx, ceil.URL, cfg); err != nil {
		return nil, err
	}
	c0, _ := procIO(ceil.PID)
	cr, err := runWatch(ctx, ceil, ws)
	if err != nil {
		return nil, fmt.Errorf("ceiling: %w", err)
	}
	c1, _ := procIO(ceil.PID)
	cr.Workload = "watchers"
	p.Ceiling = cr
	if cr.Delivered > 0 {
		p.CeilingWritesPerEvent = float64(c1.syscw-c0.syscw) / float64(cr.Delivered)
	}
	return p, nil
}

// ioCounts are a process's I/O counters from /proc/PID/io.
type ioCounts struct{ syscw, wchar int64 }

func procIO(pid int) (ioCounts, error) {
	var c ioCounts
	if pid <= 0 {
		return c, fmt.Errorf("no process")
	}
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid))
	if err != nil {
		return c, err
	}
	for line := range bytes.Lines(data) {
		k, v, ok := bytes.Cut(bytes.TrimSpace(line), []byte(": "))
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(string(v), 10, 64)
		switch string(k) {
		case "syscw":
			c.syscw = n
		case "wchar":
			c.wchar = n
		}
	}
	return c, nil
}

// profileShares is the cumulative share of each of profileParts in a CPU
// profile, from `go tool pprof -top -cum` (the profile carries its
// symbols: no binary is needed).
func profileShares(ctx context.Context, prof []byte) map[string]float64 {
	dir, err := os.MkdirTemp("", "kapi-watchers-")
	if err != nil {
		return nil
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "cpu.pprof")
	if err := os.WriteFile(file, prof, 0o644); err != nil {
		return nil
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", "-nodecount=1000", file).Output()
	if err != nil {
		return nil
	}
	return cumShares(out)
}

// profileTop is the first n functions of a CPU profile by cumulative
// share, as pprof's -top -cum prints them.
func profileTop(ctx context.Context, prof []byte, n int) string {
	dir, err := os.MkdirTemp("", "kapi-objects-")
	if err != nil {
		return ""
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "cpu.pprof")
	if err := os.WriteFile(file, prof, 0o644); err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, "go", "tool", "pprof", "-top", "-cum", fmt.Sprintf("-nodecount=%d", n), file).Output()
	if err != nil {
		return ""
	}
	var b strings.Builder
	for line := range strings.Lines(string(out)) {
		if !strings.HasPrefix(line, "File:") && !strings.HasPrefix(line, "Build ID:") && !strings.HasPrefix(line, "Type:") && !strings.HasPrefix(line, "Time:") {
			b.WriteString(line)
		}
	}
	return b.String()
}

// cumShares reads pprof's -top -cum table: "flat flat% sum% cum cum% name".
func cumShares(top []byte) map[string]float64 {
	shares := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(top))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 6 || !strings.HasSuffix(f[4], "%") {
			continue
		}
		name := strings.Join(f[5:], " ")
		for _, part := range profileParts {
			if name == part.Func {
				v, err := strconv.ParseFloat(strings.TrimSuffix(f[4], "%"), 64)
				if err == nil {
					shares[part.Name] = v
				}
			}
		}
	}
	return shares
}

// raiseOpenFiles raises the harness's soft limit on open files to its hard
// limit: every watcher is a connection. Set explicitly, the limit is also
// what the servers the harness starts afterwards inherit.
func raiseOpenFiles() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// watchersPoints are the watchers curve's points, in the order measured.
func watchersPoints(results []*Result) []*WatchersPoint {
	var out []*WatchersPoint
	for _, r := range results {
		if r.WatchersCurve != nil {
			out = append(out, r.WatchersCurve)
		}
	}
	return out
}

// note is the point as the results table's note says it.
func (p *WatchersPoint) note() string {
	s := fmt.Sprintf("%d watchers × %d writes: %.1f µs of server CPU per delivered event", p.Watchers, p.Writes, cpuPerEventUs(p.Kapi))
	if p.Ceiling != nil {
		s += fmt.Sprintf(" (ceiling %.1f µs, %.2f×)", cpuPerEventUs(p.Ceiling), ratio(cpuPerEventUs(p.Kapi), cpuPerEventUs(p.Ceiling)))
	}
	return s + fmt.Sprintf(", p99 delivery %.1f ms, RSS %.0f → %.0f MiB, lost %d", p.Kapi.P99ms, p.RSSBaseMiB, p.Kapi.RSSPeakMiB, p.Kapi.Lost)
}
