package e2e

import (
	"bytes"
	"context"
	"crypto/tls"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// widgetsBinEnv names the environment variable that carries the path of an
// already built example server, so that a child test process (see
// runInChildProcess) does not build it again.
const widgetsBinEnv = "KAPI_E2E_WIDGETS_BIN"

var (
	widgetsBin      string // path of the built examples/widgets binary
	widgetsBuildErr error  // why it could not be built, reported by every test
	securedBin      string // path of the built examples/secured binary
	securedBuildErr error
	// controlplaneBin is the built examples/controlplane binary.
	controlplaneBin      string
	controlplaneBuildErr error
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if bin := os.Getenv(widgetsBinEnv); bin != "" {
		widgetsBin = bin
		securedBuildErr = fmt.Errorf("examples/secured is not built for child test processes")
		controlplaneBuildErr = securedBuildErr
		return m.Run()
	}
	flag.Parse()
	if f := flag.Lookup("test.fuzzworker"); f != nil && f.Value.String() == "true" {
		// A fuzz worker runs one fuzz target, none of which starts a
		// server: building the examples would take its fuzzing time.
		widgetsBuildErr = fmt.Errorf("the examples are not built for fuzz workers")
		securedBuildErr = widgetsBuildErr
		controlplaneBuildErr = widgetsBuildErr
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "kapi-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	widgetsBin, widgetsBuildErr = buildExample(ctx, dir, "widgets")
	securedBin, securedBuildErr = buildExample(ctx, dir, "secured")
	controlplaneBin, controlplaneBuildErr = buildExample(ctx, dir, "controlplane")
	return m.Run()
}

// buildExample builds examples/NAME into dir.
func buildExample(ctx context.Context, dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/kapi-dev/kapi/examples/"+name)
	build.Dir = filepath.Join("..", "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		return bin, fmt.Errorf("go build examples/%s: %v\n%s", name, err, out)
	}
	return bin, nil
}

// server is one running example process (examples/widgets unless started
// with startProgram).
type server struct {
	URL  string // http://127.0.0.1:PORT
	Addr string // 127.0.0.1:PORT

	cmd     *exec.Cmd
	log     *syncBuffer
	exited  chan struct{} // closed when the process has exited
	exit    error         // the process's exit status, valid after exited is closed
	stopped atomic.Bool   // the test ended it (stop): its exit is no failure
}

// stop kills the server before the test ends, as a crash or an operator
// would.
func (s *server) stop() {
	s.stopped.Store(true)
	_ = s.cmd.Process.Kill()
	<-s.exited
}

// program is an example binary built by TestMain, and how to start it.
type program struct {
	name     string
	bin      string
	buildErr error
	args     []string    // after -addr ADDR
	tls      *tls.Config // how to reach it, if it serves HTTPS
	addrEnv  string      // the environment variable it reads its address from, instead of -addr
}

// startServer builds nothing: it starts the example binary built by TestMain on
// a free loopback port, waits until /healthz answers 200, and stops it when the
// test ends. If the server died on its own during the test, the test fails.
func startServer(t *testing.T) *server {
	t.Helper()
	return startProgram(t, program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr})
}

// startProgram is startServer for any example program.
func startProgram(t *testing.T, p program) *server {
	t.Helper()
	if p.buildErr != nil {
		t.Fatal(p.buildErr)
	}
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := tryStartServer(t, p)
		if err == nil {
			return s
		}
		lastErr = err
	}
	t.Fatalf("starting %s: %v", p.name, lastErr)
	return nil
}

func tryStartServer(t *testing.T, p program) (*server, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	s := &server{
		URL:    "http://" + addr,
		Addr:   addr,
		log:    &syncBuffer{},
		exited: make(chan struct{}),
	}
	if p.tls != nil {
		s.URL = "https://" + addr
	}
	if p.addrEnv != "" {
		s.cmd = exec.Command(p.bin, p.args...)
		s.cmd.Env = append(os.Environ(), p.addrEnv+"="+addr)
	} else {
		s.cmd = exec.Command(p.bin, append([]string{"-addr", addr}, p.args...)...)
	}
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	if err := s.cmd.Start(); err != nil {
		return nil, err
	}
	go func() {
		s.exit = s.cmd.Wait()
		close(s.exited)
	}()

	deadline := time.Now().Add(20 * time.Second)
	client := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{TLSClientConfig: p.tls}}
	defer client.CloseIdleConnections()
	for {
		select {
		case <-s.exited:
			return nil, fmt.Errorf("server exited before it was healthy (%v); its output:\n%s", s.exit, s.log.String())
		default:
		}
		resp, err := client.Get(s.URL + "/healthz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			_ = s.cmd.Process.Kill()
			<-s.exited
			return nil, fmt.Errorf("GET /healthz did not answer 200 within 20s (last: %v, status %v); server output:\n%s", err, statusOf(resp), s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}

	t.Cleanup(func() {
		select {
		case <-s.exited:
			if !s.stopped.Load() {
				t.Errorf("the server exited during the test (%v); its output:\n%s", s.exit, s.log.String())
			}
			return
		default:
		}
		_ = s.cmd.Process.Kill()
		<-s.exited
		if t.Failed() {
			t.Logf("server output:\n%s", s.log.String())
		}
	})
	return s, nil
}

func statusOf(resp *http.Response) any {
	if resp == nil {
		return "none"
	}
	return resp.StatusCode
}

// alive reports an error if the server process has exited.
func (s *server) alive() error {
	select {
	case <-s.exited:
		return fmt.Errorf("server exited (%v); its output:\n%s", s.exit, s.log.String())
	default:
		return nil
	}
}

func freeLoopbackAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// syncBuffer is a bytes.Buffer safe for concurrent writers and readers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// runInChildProcess reruns the named top-level test in a child test process
// with extra environment variables, reusing the server binary built here. It
// is for settings that client-go reads once per process, such as its
// KUBE_FEATURE_* feature gates. It reports whether the caller is the child
// (and should run the test body itself).
func runInChildProcess(t *testing.T, marker string, env ...string) (isChild bool) {
	t.Helper()
	if os.Getenv(marker) != "" {
		return true
	}
	if widgetsBuildErr != nil {
		t.Fatal(widgetsBuildErr)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	name := strings.SplitN(t.Name(), "/", 2)[0]
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env...)
	cmd.Env = append(cmd.Env, marker+"=1", widgetsBinEnv+"="+widgetsBin)
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("--- PASS: "+name)) {
		t.Errorf("child test process with %v failed (%v):\n%s", env, err, out)
		return false
	}
	t.Logf("child test process with %v passed:\n%s", env, lastLines(string(out), 15))
	return false
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
