package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

const (
	dispatcherKubectl = "/usr/bin/kubectl"
	pinnedKubectlGlob = "/usr/lib/google-cloud-sdk/bin/kubectl.1.*"
	kubectlTimeout    = 60 * time.Second
)

// kubectl runs one kubectl binary against one server with a HOME and a
// discovery cache of its own, so nothing leaks between tests or runs.
type kubectl struct {
	bin      string
	server   string
	home     string
	cacheDir string
}

func newKubectl(t *testing.T, bin string, srv *server) *kubectl {
	t.Helper()
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("kubectl binary %s: %v", bin, err)
	}
	home := t.TempDir()
	return &kubectl{bin: bin, server: srv.URL, home: home, cacheDir: filepath.Join(home, "kubecache")}
}

// pinnedKubectls lists the version-pinned kubectl binaries installed here.
func pinnedKubectls() []string {
	bins, _ := filepath.Glob(pinnedKubectlGlob)
	return bins
}

func (k *kubectl) command(ctx context.Context, env []string, args ...string) *exec.Cmd {
	full := append([]string{"--server", k.server, "--cache-dir", k.cacheDir}, args...)
	cmd := exec.CommandContext(ctx, k.bin, full...)
	cmd.Env = append(os.Environ(),
		"HOME="+k.home,
		"KUBECONFIG="+filepath.Join(k.home, "no-kubeconfig"),
		"KUBECACHEDIR="+k.cacheDir,
	)
	cmd.Env = append(cmd.Env, env...)
	cmd.WaitDelay = 5 * time.Second
	return cmd
}

// result is one finished kubectl invocation.
type result struct {
	args           []string
	stdout, stderr string
	err            error
}

func (r result) String() string {
	return fmt.Sprintf("kubectl %s: err=%v\nstdout:\n%s\nstderr:\n%s", strings.Join(r.args, " "), r.err, r.stdout, r.stderr)
}

// run runs kubectl with a 60s timeout and returns what it printed.
func (k *kubectl) run(t *testing.T, args ...string) result {
	t.Helper()
	return k.runEnv(t, nil, args...)
}

func (k *kubectl) runEnv(t *testing.T, env []string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), kubectlTimeout)
	defer cancel()
	cmd := k.command(ctx, env, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		err = fmt.Errorf("%w (timed out after %v)", err, kubectlTimeout)
	}
	return result{args: args, stdout: stdout.String(), stderr: stderr.String(), err: err}
}

// must runs kubectl and fails the test if it does not succeed. On failure it
// reruns the command with -v=8 so the report shows the requests and responses.
func (k *kubectl) must(t *testing.T, args ...string) string {
	t.Helper()
	return k.mustEnv(t, nil, args...)
}

func (k *kubectl) mustEnv(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := k.runEnv(t, env, args...)
	if r.err != nil {
		t.Fatalf("%s\n%s", r, k.verbose(t, env, args...))
	}
	return r.stdout
}

// verbose reruns a command at -v=8 and returns its stderr (request/response log),
// for failure reports. The rerun may itself change state; it only runs after a failure.
func (k *kubectl) verbose(t *testing.T, env []string, args ...string) string {
	t.Helper()
	r := k.runEnv(t, env, append(append([]string{}, args...), "-v=8")...)
	return "rerun with -v=8:\n" + lastLines(r.stderr, 120)
}

// getJSON runs `kubectl get ... -o json` and decodes the object.
func (k *kubectl) getJSON(t *testing.T, args ...string) map[string]any {
	t.Helper()
	out := k.must(t, append(append([]string{"get"}, args...), "-o", "json")...)
	var obj map[string]any
	if err := json.Unmarshal([]byte(out), &obj); err != nil {
		t.Fatalf("kubectl get %v -o json printed something that is not JSON: %v\n%s", args, err, out)
	}
	return obj
}

// background is a kubectl process whose stdout lines arrive on a channel.
type background struct {
	cmd    *exec.Cmd
	cancel context.CancelFunc
	lines  chan string
	stderr *syncBuffer
	done   chan struct{}
	err    error
	mu     sync.Mutex
	seen   []string
}

// start runs kubectl in the background (at most 60s); the process is killed
// when the test ends.
func (k *kubectl) start(t *testing.T, args ...string) *background {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), kubectlTimeout)
	cmd := k.command(ctx, nil, args...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	b := &background{cmd: cmd, cancel: cancel, lines: make(chan string, 1000), stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = b.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	go func() {
		defer close(b.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			b.mu.Lock()
			b.seen = append(b.seen, sc.Text())
			b.mu.Unlock()
			b.lines <- sc.Text()
		}
		_, _ = io.Copy(io.Discard, stdout)
		close(b.lines)
		b.err = cmd.Wait()
	}()
	t.Cleanup(b.stop)
	return b
}

func (b *background) stop() {
	b.cancel()
	<-b.done
}

// waitLine waits until a stdout line satisfies match, or fails the test.
func (b *background) waitLine(t *testing.T, what string, timeout time.Duration, match func(string) bool) string {
	t.Helper()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		select {
		case line, ok := <-b.lines:
			if !ok {
				<-b.done
				t.Fatalf("kubectl %v ended (%v) before printing %s; stdout so far:\n%s\nstderr:\n%s",
					b.cmd.Args[1:], b.err, what, b.output(), b.stderr.String())
			}
			if match(line) {
				return line
			}
		case <-timer.C:
			t.Fatalf("kubectl %v did not print %s within %v; stdout so far:\n%s\nstderr:\n%s",
				b.cmd.Args[1:], what, timeout, b.output(), b.stderr.String())
		}
	}
}

func (b *background) output() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.seen, "\n")
}
