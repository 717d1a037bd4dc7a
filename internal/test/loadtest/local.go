package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// localServers are the processes the harness started: the example server
// (kapi), the ceiling and the counting kapi, each its own process so that
// its CPU and RSS are its own.
type localServers struct {
	root, dir  string // the repository; a temporary directory for binaries and profiles
	widgetsBin string
	// controlPlaneBin is examples/controlplane, for the kinds and custom
	// resources' workloads.
	controlPlaneBin string
	kapi            *target
	ceiling         *target
	counting        *target
	// etcd is kapi on etcd and etcdOnly the etcd-only server (startEtcd);
	// nil if not started.
	etcd, etcdOnly *target
	widgetsEtcdBin string
	procs          []*exec.Cmd
	profileSecs    int
}

// repoRoot is the directory of kapi's root module, found upwards from the
// working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if data, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && bytes.HasPrefix(data, []byte("module github.com/kapi-dev/kapi\n")) {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("not inside kapi's repository: run from its root (go run ./internal/test/loadtest)")
		}
		dir = parent
	}
}

func startLocal(ctx context.Context) (*localServers, error) {
	root, err := repoRoot()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "kapi-loadtest-")
	if err != nil {
		return nil, err
	}
	l := &localServers{root: root, dir: dir, widgetsBin: filepath.Join(dir, "widgets"), controlPlaneBin: filepath.Join(dir, "controlplane"), profileSecs: profileSeconds}
	for _, bin := range []string{l.widgetsBin, l.controlPlaneBin} {
		pkg := "./examples/" + filepath.Base(bin)
		log.Printf("building %s", pkg)
		build := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			l.stop()
			return nil, fmt.Errorf("go build %s: %v\n%s", pkg, err, out)
		}
	}
	self, err := os.Executable()
	if err != nil {
		l.stop()
		return nil, err
	}
	if l.kapi, err = l.start(ctx, "kapi", l.widgetsBin, "-pprof", "-addr"); err != nil {
		l.stop()
		return nil, err
	}
	if l.ceiling, err = l.start(ctx, "ceiling", self, "-serve-ceiling"); err != nil {
		l.stop()
		return nil, err
	}
	if l.counting, err = l.start(ctx, "kapi", self, "-serve-kapi"); err != nil {
		l.stop()
		return nil, err
	}
	l.counting.Name = "kapi" // it is kapi; its rows say "counting" in their note
	return l, nil
}

// start starts bin with args and a free loopback address last, and waits
// until it answers HTTP.
func (l *localServers) start(ctx context.Context, name, bin string, args ...string) (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append(args, addr)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	l.procs = append(l.procs, cmd)
	t := &target{Name: name, URL: "http://" + addr, PID: cmd.Process.Pid}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(t.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			return t, nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			stopProc(cmd) // before the caller removes what it was given
			return nil, fmt.Errorf("%s did not answer on %s: %v", bin, addr, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freshCeiling starts another ceiling.
func (l *localServers) freshCeiling() (*target, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	t, err := l.start(context.Background(), "ceiling", self, "-serve-ceiling")
	if err != nil {
		return nil, nil, err
	}
	cmd := l.procs[len(l.procs)-1]
	return t, func() { stopProc(cmd) }, nil
}

// fresh starts another example server, empty, for the memory workload.
func (l *localServers) fresh() (*target, func(), error) {
	t, err := l.start(context.Background(), "kapi", l.widgetsBin, "-pprof", "-addr")
	if err != nil {
		return nil, nil, err
	}
	cmd := l.procs[len(l.procs)-1]
	return t, func() { stopProc(cmd) }, nil
}

// freshControlPlane starts examples/controlplane, empty, in memory.
func (l *localServers) freshControlPlane() (*target, func(), error) {
	t, err := l.start(context.Background(), "kapi", l.controlPlaneBin, "-pprof", "-addr")
	if err != nil {
		return nil, nil, err
	}
	cmd := l.procs[len(l.procs)-1]
	return t, func() { stopProc(cmd) }, nil
}

// freshBolt starts another example server, empty, on the bolt backend, its
// file in a new directory under the harness's temporary one (on disk, so
// that every acknowledged write is fsynced as in production).
func (l *localServers) freshBolt() (*target, func(), error) {
	t, data, stop, err := l.startOnDisk("kapi", l.widgetsBin, func(data string) []string { return []string{"-pprof", "-data", data, "-addr"} })
	if err != nil {
		return nil, nil, err
	}
	// The example opens its file before it serves: a server without one
	// is not on bolt.
	if _, err := os.Stat(filepath.Join(data, "kapi.db")); err != nil {
		stop()
		return nil, nil, fmt.Errorf("the example started with -data has no bolt file: %w", err)
	}
	return t, stop, nil
}

// freshBoltOnly starts the bolt-only server (see ceiling.store), its file
// in a new directory as freshBolt's.
func (l *localServers) freshBoltOnly() (*target, func(), error) {
	self, err := os.Executable()
	if err != nil {
		return nil, nil, err
	}
	t, _, stop, err := l.startOnDisk(boltOnlyName, self, func(data string) []string { return []string{"-ceiling-store", data, "-serve-ceiling"} })
	return t, stop, err
}

// startOnDisk starts bin, as start does, with the arguments args gives for
// a new directory for a bolt file under the harness's temporary one
// (warning if fsync there costs nothing); stop stops it and removes the
// directory.
func (l *localServers) startOnDisk(name, bin string, args func(dir string) []string) (t *target, dir string, stop func(), err error) {
	dir, err = os.MkdirTemp(l.dir, "bolt-")
	if err != nil {
		return nil, "", nil, err
	}
	var fs syscall.Statfs_t
	if syscall.Statfs(dir, &fs) == nil && fs.Type == tmpfsMagic {
		log.Printf("warning: the bolt file is in %s, on tmpfs, where fsync costs nothing: set TMPDIR to a directory on disk", dir)
	}
	if t, err = l.start(context.Background(), name, bin, args(dir)...); err != nil {
		_ = os.RemoveAll(dir)
		return nil, "", nil, err
	}
	cmd := l.procs[len(l.procs)-1]
	return t, dir, func() { stopProc(cmd); _ = os.RemoveAll(dir) }, nil
}

// profileSeconds is how long a missed target's CPU profile runs: long
// enough for some thousand samples on two cores, short enough for a dozen
// of them in a run.
const profileSeconds = 6

// tmpfsMagic is tmpfs's f_type in statfs(2).
const tmpfsMagic = 0x01021994

func stopProc(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

func (l *localServers) stop() {
	// The last started first: kapi on etcd and the etcd-only server before
	// their etcd.
	for _, p := range slices.Backward(l.procs) {
		stopProc(p)
	}
	_ = os.RemoveAll(l.dir)
}

// profile is the reading of one server profile, taken for a missed target.
type profile struct {
	Target  string
	Command string
	Top     string
	Err     string
}

// profileMissed takes a profile of kapi for every missed target: a CPU
// profile while the target's workload runs again, or, for memory, a heap
// profile after the load.
func (l *localServers) profileMissed(ctx context.Context, e *env, verdicts []verdict) []profile {
	var out []profile
	done := map[string]bool{}
	for _, v := range verdicts {
		if v.Met || v.Workload == "" || done[v.Workload] {
			continue
		}
		done[v.Workload] = true
		// One profile for every target of the workload it missed (memory
		// has two).
		target := v.Target
		for _, o := range verdicts {
			if !o.Met && o.Workload == v.Workload && o.Target != v.Target {
				target += "; " + o.Target
			}
		}
		log.Printf("profiling kapi on %s (missed: %s)", v.Workload, target)
		p := profile{Target: target}
		var err error
		switch v.Workload {
		case "memory":
			p.Command, p.Top, err = l.heapProfile(ctx, e)
		case "memory" + customSuffix, "kinds":
			p.Command, p.Top, err = l.controlPlaneHeapProfile(ctx, e, v.Workload)
		case "idle-watchers":
			p.Command, p.Top, err = l.idleProfile(ctx, e)
		default:
			p.Command, p.Top, err = l.cpuProfile(ctx, e, v.Workload)
		}
		if err != nil {
			p.Err = err.Error()
		}
		out = append(out, p)
	}
	return out
}

// cpuProfile runs workload against kapi while kapi profiles itself (a
// fresh kapi on bolt for a bolt workload, kapi on etcd for an etcd one).
func (l *localServers) cpuProfile(ctx context.Context, e *env, workload string) (string, string, error) {
	sz := e.Sizes
	t, bin := e.on(workload), l.widgetsBin
	if t == nil {
		return "", "", errors.New("no kapi on etcd")
	}
	if t == e.Etcd {
		bin = l.widgetsEtcdBin
	}
	var w *requestWorkload
	for _, rw := range requestWorkloads(sz.Conns) {
		if rw.Name == workload {
			w = &rw
		}
	}
	if w != nil && w.Bolt {
		bolt, stop, err := startBolt(ctx, l.freshBolt)
		if err != nil {
			return "", "", err
		}
		defer stop()
		t = bolt
	}
	file := filepath.Join(l.dir, workload+".cpu.pprof")
	got := make(chan error, 1)
	go func() {
		got <- fetch(ctx, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", t.URL, l.profileSecs), file)
	}()
	time.Sleep(200 * time.Millisecond)
	profiled := time.Duration(l.profileSecs) * time.Second
	switch {
	case slices.Contains(watchWorkloads, workload):
		sz.WatchDuration = profiled
		if baseName(workload) == "watch-small" {
			sz.Watchers = sz.SmallWatchers
		}
		if _, err := runWatch(ctx, t, sz); err != nil {
			return "", "", err
		}
	case w != nil:
		spec := loadSpec{Conns: w.conns(sz), Duration: profiled, Rate: sz.Rate}
		runLoad(ctx, t, spec, w.op(t.URL))
	default:
		if s, ok := streamingWorkload(workload, sz); ok {
			// Informers starting, again and again for as long.
			for end := time.Now().Add(profiled); time.Now().Before(end); {
				if _, err := runStreamingLists(ctx, t, s); err != nil {
					return "", "", err
				}
			}
		}
	}
	if err := <-got; err != nil {
		return "", "", err
	}
	return l.topOf(ctx, bin, file)
}

// heapProfile loads a fresh server as the memory workload does and takes
// its heap profile.
func (l *localServers) heapProfile(ctx context.Context, e *env) (string, string, error) {
	t, stop, err := l.fresh()
	if err != nil {
		return "", "", err
	}
	defer stop()
	if _, err := runMemory(ctx, t, e.Sizes); err != nil {
		return "", "", err
	}
	file := filepath.Join(l.dir, "memory.heap.pprof")
	if err := fetch(ctx, t.URL+"/debug/pprof/heap?gc=1", file); err != nil {
		return "", "", err
	}
	return l.top(ctx, file, "-sample_index=inuse_space")
}

// controlPlaneHeapProfile loads a fresh control plane as workload does (the
// largest number of kinds, or the custom objects) and takes its heap
// profile.
func (l *localServers) controlPlaneHeapProfile(ctx context.Context, e *env, workload string) (string, string, error) {
	t, stop, err := l.freshControlPlane()
	if err != nil {
		return "", "", err
	}
	defer stop()
	if workload == "kinds" {
		_, err = runKinds(ctx, t, slices.Max(e.Sizes.KindsCurve), e.Sizes)
	} else if err = defineWidgets(ctx, t); err == nil {
		_, err = runMemory(ctx, t, e.Sizes)
	}
	if err != nil {
		return "", "", err
	}
	file := filepath.Join(l.dir, workload+".heap.pprof")
	if err := fetch(ctx, t.URL+"/debug/pprof/heap?gc=1", file); err != nil {
		return "", "", err
	}
	return l.topOf(ctx, l.controlPlaneBin, file, "-sample_index=inuse_space")
}

// idleProfile opens the idle watchers on a fresh server and takes its heap
// and goroutine profiles while they are open.
func (l *localServers) idleProfile(ctx context.Context, e *env) (string, string, error) {
	t, stop, err := l.fresh()
	if err != nil {
		return "", "", err
	}
	defer stop()
	heap := filepath.Join(l.dir, "idle.heap.pprof")
	goroutines := filepath.Join(l.dir, "idle.goroutine.pprof")
	var fetchErr error
	_, err = runIdleWatchers(ctx, t, e.Sizes, func() {
		fetchErr = errors.Join(fetch(ctx, t.URL+"/debug/pprof/heap?gc=1", heap), fetch(ctx, t.URL+"/debug/pprof/goroutine", goroutines))
	})
	if err = errors.Join(err, fetchErr); err != nil {
		return "", "", err
	}
	cmd1, top1, err := l.top(ctx, heap, "-sample_index=inuse_space")
	if err != nil {
		return "", "", err
	}
	cmd2, top2, err := l.top(ctx, goroutines)
	if err != nil {
		return "", "", err
	}
	return cmd1 + "` and `" + cmd2, top1 + "\n--- goroutines ---\n" + top2, nil
}

func (l *localServers) top(ctx context.Context, file string, extra ...string) (string, string, error) {
	return l.topOf(ctx, l.widgetsBin, file, extra...)
}

// topOf is pprof's top of a profile of the program bin.
func (l *localServers) topOf(ctx context.Context, bin, file string, extra ...string) (string, string, error) {
	args := append([]string{"tool", "pprof", "-top", "-nodecount=25"}, extra...)
	args = append(args, bin, file)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = l.root
	out, err := cmd.CombinedOutput()
	shown := "go " + strings.Join(append(args[:len(args)-2:len(args)-2], filepath.Base(bin), filepath.Base(file)), " ")
	if err != nil {
		return shown, "", fmt.Errorf("%v: %s", err, out)
	}
	// And by cumulative time, which says which of kapi's functions it is.
	cum := exec.CommandContext(ctx, "go", append(append(args[:2:2], "-top", "-cum", "-nodecount=30"), args[4:]...)...)
	cum.Dir = l.root
	if more, err := cum.CombinedOutput(); err == nil {
		out = append(append(out, "\n--- by cumulative ---\n"...), more...)
	}
	// Drop pprof's preamble lines naming the temporary files.
	var b strings.Builder
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") {
			continue
		}
		b.WriteString(line + "\n")
	}
	return shown, b.String(), nil
}

func fetch(ctx context.Context, url, file string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", url, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		body, _ := io.ReadAll(resp.Body)
		return &httpError{"GET", url, resp.StatusCode, string(body)}
	}
	f, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(f, resp.Body); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
