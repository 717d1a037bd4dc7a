// Package examplecheck drives the storage backends' widgets commands
// (storage/sqlite/cmd/widgets-sqlite, storage/postgres/cmd/widgets-postgres)
// the way their users do: the command runs as a process of its own, and
// kubectl talks to it.
//
// A command's test calls Main from its TestMain, so that the test binary
// can be started again as the command itself; Start does that, on a free
// loopback port, and Kubectl runs kubectl against what it started.
package examplecheck

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// KubectlBin is the kubectl the checks run.
const KubectlBin = "/usr/bin/kubectl"

// childEnv marks the test binary started again as the command.
const childEnv = "KAPI_EXAMPLECHECK_MAIN"

// Main runs main instead of the tests when the test binary was started by
// Start, and exits with its end; otherwise it returns.
func Main(main func()) {
	if os.Getenv(childEnv) != "1" {
		return
	}
	main()
	os.Exit(0)
}

// Server is a command started by Start.
type Server struct {
	URL    string
	cmd    *exec.Cmd
	exited chan struct{} // closed when the command has exited
	err    error         // how it exited, once exited is closed
}

// Start starts the test binary again as the command, with args and
// -addr on a free loopback port, and waits until /readyz answers 200. It
// is stopped (SIGTERM, as a service manager stops it) by Stop or at the
// test's end.
func Start(t testing.TB, args ...string) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(os.Args[0], append(args, "-addr", addr)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + addr, cmd: cmd, exited: make(chan struct{})}
	go func() { s.err = cmd.Wait(); close(s.exited) }()
	t.Cleanup(func() { s.Stop(t) })
	client := &http.Client{Timeout: 5 * time.Second}
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := client.Get(s.URL + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		select {
		case <-s.exited:
			t.Fatalf("%s %v exited before it was ready: %v", os.Args[0], args, s.err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s %v: not ready after a minute (last: %v)", os.Args[0], args, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Stop stops the command with SIGTERM and waits for it to exit, which it
// must do cleanly and within 10 s (it is killed then).
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	select {
	case <-s.exited:
		return // stopped already, or exited: Start said so
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Error(err)
	}
	select {
	case <-s.exited:
		if s.err != nil {
			t.Errorf("the command stopped with %v", s.err)
		}
	case <-time.After(10 * time.Second):
		s.cmd.Process.Kill()
		<-s.exited
		t.Error("the command did not stop within 10 s of SIGTERM: killed")
	}
}

// Kubectl returns a function that runs kubectl against s, with a home and
// a discovery cache of its own and stdin as its input, and returns its
// standard output; it fails t with all of kubectl's output if kubectl
// fails or takes over a minute. It skips t when kubectl is not installed.
func Kubectl(t testing.TB, s *Server) func(stdin string, args ...string) string {
	t.Helper()
	if _, err := os.Stat(KubectlBin); err != nil {
		t.Skipf("kubectl: %v", err)
	}
	home := t.TempDir()
	return func(stdin string, args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, KubectlBin, append([]string{"--server", s.URL, "--cache-dir", filepath.Join(home, "cache")}, args...)...)
		cmd.Env = append(os.Environ(), "HOME="+home, "KUBECONFIG="+filepath.Join(home, "none"))
		cmd.Stdin = strings.NewReader(stdin)
		cmd.WaitDelay = 10 * time.Second
		var stderr strings.Builder // warnings, such as a deprecated version's
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
}

// Widget is a v1 widget with one port, named "default" so that v1beta1
// shows it as spec.port.
func Widget(name, color string, port int) string {
	return fmt.Sprintf(`apiVersion: example.com/v1
kind: Widget
metadata: {name: %s, namespace: default}
spec: {color: %s, size: 3, ports: [{name: default, port: %d}]}
`, name, color, port)
}

// Serves checks, through kubectl, that s serves what examples/widgets
// serves: the namespaces it starts with, widgets written in v1 and read in
// v1beta1 (conversion), widget classes, leases and events.
func Serves(t testing.TB, s *Server) {
	t.Helper()
	k := Kubectl(t, s)
	want := func(got, want string) {
		t.Helper()
		if strings.TrimSpace(got) != want {
			t.Errorf("got %q, want %q", strings.TrimSpace(got), want)
		}
	}
	want(k("", "get", "namespaces", "-o", "jsonpath={.items[*].metadata.name}"), "default kube-node-lease kube-public kube-system")
	k(Widget("w1", "Red", 8080), "apply", "--server-side", "-f", "-")
	want(k("", "get", "widgets.v1beta1.example.com", "w1", "-o", "jsonpath={.apiVersion} {.spec.color} {.spec.port}"), "example.com/v1beta1 Red 8080")
	k(`{"apiVersion":"example.com/v1","kind":"WidgetClass","metadata":{"name":"small"},"spec":{"maxReplicas":3}}`, "create", "-f", "-")
	want(k("", "get", "widgetclasses", "small", "-o", "jsonpath={.spec.maxReplicas}"), "3")
	k(`apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: default}
spec: {holderIdentity: replica-a, leaseDurationSeconds: 15}
`, "create", "-f", "-")
	want(k("", "get", "lease", "leader", "-o", "jsonpath={.spec.holderIdentity}"), "replica-a")
	k(`apiVersion: v1
kind: Event
metadata: {name: w1.checked, namespace: default}
involvedObject: {apiVersion: example.com/v1, kind: Widget, name: w1, namespace: default}
reason: Checked
message: checked with kubectl
type: Normal
`, "create", "-f", "-")
	want(k("", "get", "events", "--field-selector", "involvedObject.name=w1", "-o", "jsonpath={.items[*].reason}"), "Checked")
	want(k("", "get", "events.v1.events.k8s.io", "w1.checked", "-o", "jsonpath={.regarding.kind} {.note}"), "Widget checked with kubectl")
}
