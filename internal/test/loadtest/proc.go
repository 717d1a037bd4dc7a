package main

import (
	"bytes"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// clockTicks is the unit of utime and stime in /proc/<pid>/stat: USER_HZ,
// which is 100 on every Linux a Go program runs on.
const clockTicks = 100

// cpuSeconds is the user plus system CPU time the process has used.
func cpuSeconds(pid int) (float64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name, field 2, is in parentheses and may hold spaces:
	// count the fields after its closing parenthesis.
	i := bytes.LastIndexByte(data, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: no command name", pid)
	}
	fields := bytes.Fields(data[i+1:])
	// fields[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(fields) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(fields))
	}
	utime, err1 := strconv.ParseInt(string(fields[11]), 10, 64)
	stime, err2 := strconv.ParseInt(string(fields[12]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: bad utime or stime", pid)
	}
	return float64(utime+stime) / clockTicks, nil
}

// rssBytes is the process's resident set size (VmRSS).
func rssBytes(pid int) (int64, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for line := range bytes.Lines(data) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			f := bytes.Fields(rest) // "1234 kB"
			if len(f) != 2 || string(f[1]) != "kB" {
				break
			}
			kb, err := strconv.ParseInt(string(f[0]), 10, 64)
			if err != nil {
				break
			}
			return kb << 10, nil
		}
	}
	return 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
}

// procWatch follows one server process during a workload: CPU used since
// start, and RSS sampled every interval for its peak.
type procWatch struct {
	pid      int
	cpu0     float64
	store    []int   // the store's processes (see storePIDs)
	store0   float64 // their CPU at the start
	mu       sync.Mutex
	peak     int64
	stopped  chan struct{}
	finished chan struct{}
}

// watchTarget starts following t's process, t's store's processes
// (t.StorePIDs) counted apart; without them, -store-pid's.
func watchTarget(t *target) *procWatch {
	store := t.StorePIDs
	if store == nil {
		store = storePIDs
	}
	return watchProcAndStore(t.PID, store)
}

// watchProcAndStore starts following pid and the store's processes; it
// returns nil for pid 0 (the server is not a local process, or its pid is
// unknown), and every method of a nil procWatch reports nothing.
func watchProcAndStore(pid int, store []int) *procWatch {
	if pid <= 0 {
		return nil
	}
	cpu, err := cpuSeconds(pid)
	if err != nil {
		return nil
	}
	p := &procWatch{pid: pid, cpu0: cpu, store: store, store0: storeCPUSeconds(store), stopped: make(chan struct{}), finished: make(chan struct{})}
	p.sample()
	go func() {
		defer close(p.finished)
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-p.stopped:
				return
			case <-t.C:
				p.sample()
			}
		}
	}()
	return p
}

func (p *procWatch) sample() int64 {
	rss, err := rssBytes(p.pid)
	if err != nil {
		return 0
	}
	p.mu.Lock()
	p.peak = max(p.peak, rss)
	p.mu.Unlock()
	return rss
}

// stop ends the sampling and fills r's server CPU and RSS figures.
func (p *procWatch) stop(r *Result) {
	if p == nil {
		return
	}
	close(p.stopped)
	<-p.finished
	end := p.sample()
	if cpu, err := cpuSeconds(p.pid); err == nil {
		r.ServerCPUSeconds = cpu - p.cpu0
		if r.Requests > 0 {
			r.CPUSecPer1k = r.ServerCPUSeconds / float64(r.Requests) * 1000
		}
	}
	if len(p.store) > 0 {
		r.StoreCPUSeconds = storeCPUSeconds(p.store) - p.store0
	}
	p.mu.Lock()
	r.RSSPeakMiB = mib(p.peak)
	p.mu.Unlock()
	r.RSSEndMiB = mib(end)
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// storePIDs are the processes of the store the server under test uses
// (etcd; PostgreSQL's postmaster), set by -store-pid: their CPU, and their
// children's, is the store's share of a workload's server CPU.
var storePIDs []int

func setStorePIDs(list string) error {
	for f := range strings.SplitSeq(list, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		pid, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-store-pid: %w", err)
		}
		storePIDs = append(storePIDs, pid)
	}
	return nil
}

// storeCPUSeconds is the CPU time used so far by the store's processes
// pids and their children that still run (PostgreSQL's backends live as
// long as the server's connections, which a pool keeps).
func storeCPUSeconds(pids []int) float64 {
	if len(pids) == 0 {
		return 0
	}
	var sum float64
	for _, pid := range pids {
		if cpu, err := cpuSeconds(pid); err == nil {
			sum += cpu
		}
	}
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(data, ')')
		fields := bytes.Fields(data[i+1:])
		if i < 0 || len(fields) < 2 {
			continue
		}
		ppid, _ := strconv.Atoi(string(fields[1]))
		if slices.Contains(pids, ppid) {
			if cpu, err := cpuSeconds(pid); err == nil {
				sum += cpu
			}
		}
	}
	return sum
}
