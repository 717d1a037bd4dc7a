package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/internal/websocket"
)

// chromiumBin finds Debian's chromium; without it the browser tests skip,
// except in CI (.ci/run installs it), where they fail.
func chromiumBin(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium is not installed (.ci/run installs Debian's chromium package)")
	}
	t.Skip("chromium is not installed: `apt-get install -y chromium` to run the browser tests")
	return ""
}

// browser is a headless Chromium showing one page.
type browser struct {
	cmd     *exec.Cmd
	dataDir string
	exited  chan struct{}
}

// startBrowser opens pageURL in headless Chromium with its DevTools on a
// free port, and ends it when the test ends.
func startBrowser(t *testing.T, pageURL string) *browser {
	dataDir := t.TempDir()
	b := &browser{dataDir: dataDir, exited: make(chan struct{})}
	b.cmd = exec.Command(chromiumBin(t), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
		"--disable-dev-shm-usage", "--no-first-run", "--window-size=1024,768",
		"--remote-debugging-port=0", "--user-data-dir="+dataDir, pageURL)
	log := &syncBuffer{}
	b.cmd.Stdout, b.cmd.Stderr = log, log
	b.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its renderers and helpers end with it
	if err := b.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = b.cmd.Wait(); close(b.exited) }()
	t.Cleanup(func() {
		_ = syscall.Kill(-b.cmd.Process.Pid, syscall.SIGKILL)
		<-b.exited
		if t.Failed() {
			t.Logf("chromium's output:\n%s", log.String())
		}
	})
	return b
}

// screenshot saves what the page shows as a PNG, through the DevTools
// protocol, and returns the file's path.
func (b *browser) screenshot(ctx context.Context) (string, error) {
	port, err := os.ReadFile(filepath.Join(b.dataDir, "DevToolsActivePort"))
	if err != nil {
		return "", err
	}
	base := "http://127.0.0.1:" + strings.SplitN(string(port), "\n", 2)[0]
	resp, err := http.Get(base + "/json/list")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var targets []struct{ Type, WebSocketDebuggerURL string }
	if err := json.NewDecoder(resp.Body).Decode(&targets); err != nil {
		return "", err
	}
	i := slices.IndexFunc(targets, func(t struct{ Type, WebSocketDebuggerURL string }) bool { return t.Type == "page" })
	if i < 0 {
		return "", fmt.Errorf("no page among %v", targets)
	}
	c, _, err := websocket.Dial(ctx, targets[i].WebSocketDebuggerURL, nil)
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Write(websocket.OpText, []byte(`{"id":1,"method":"Page.captureScreenshot","params":{"format":"png"}}`)); err != nil {
		return "", err
	}
	for {
		_, msg, err := c.Read()
		if err != nil {
			return "", err
		}
		var reply struct {
			ID     int
			Result struct{ Data string }
		}
		if json.Unmarshal(msg, &reply) != nil || reply.ID != 1 {
			continue // an event
		}
		png, err := base64.StdEncoding.DecodeString(reply.Result.Data)
		if err != nil {
			return "", err
		}
		f, err := os.CreateTemp("", "kapi-browser-*.png")
		if err != nil {
			return "", err
		}
		defer f.Close()
		_, err = f.Write(png)
		return f.Name(), err
	}
}

// pageReport is what the console page tells its own server.
type pageReport struct {
	Stage    string
	Error    string
	Listed   []string
	Events   []string
	Protocol string
}

// console is the console page served from an origin of its own, opened in
// headless Chromium against examples/widgets.
type console struct {
	srv     *server
	kubectl *kubectl
	browser *browser
	reports chan pageReport
	ctx     context.Context
}

// openConsole starts examples/widgets with -cors-allowed-origins set to
// the pattern allowed makes of the console's origin, and opens the page.
func openConsole(t *testing.T, allowed func(origin string) string) *console {
	chromiumBin(t)
	page, err := os.ReadFile(filepath.Join("testdata", "browser", "console.html"))
	if err != nil {
		t.Fatal(err)
	}
	c := &console{reports: make(chan pageReport, 8)}
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/console.html":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(page)
		case "/report":
			var rep pageReport
			body, _ := io.ReadAll(r.Body)
			if err := json.Unmarshal(body, &rep); err != nil {
				rep = pageReport{Stage: "error", Error: fmt.Sprintf("report %q: %v", body, err)}
			}
			c.reports <- rep
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(site.Close)
	c.srv = startProgram(t, program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr,
		args: []string{"-cors-allowed-origins", allowed(site.URL)}})
	c.kubectl = newKubectl(t, "/usr/bin/kubectl", c.srv)
	c.kubectl.must(t, "create", "-f", writeFile(t, "listed.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: listed, namespace: default}\nspec: {color: Red}\n"))
	c.browser = startBrowser(t, site.URL+"/console.html?api="+url.QueryEscape(c.srv.URL))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a guard against a hung browser, not a measurement
	t.Cleanup(cancel)
	c.ctx = ctx
	return c
}

// next waits for the page's next report, which must be of stage.
func (c *console) next(t *testing.T, stage string) pageReport {
	t.Helper()
	select {
	case rep := <-c.reports:
		if rep.Stage != stage {
			c.browser.fail(c.ctx, t, fmt.Sprintf("the page reports %+v, want stage %s", rep, stage))
		}
		return rep
	case <-c.ctx.Done():
		c.browser.fail(c.ctx, t, "the page reported nothing")
	}
	return pageReport{}
}

// TestBrowserConsole loads a web console from an origin of its own in
// headless Chromium: it lists widgets with fetch from examples/widgets
// started with -cors-allowed-origins, creates one (a request the browser
// preflights), and follows a watch over a WebSocket, in which a widget
// created with kubectl appears. On failure the page is kept as a
// screenshot.
func TestBrowserConsole(t *testing.T) {
	c := openConsole(t, func(origin string) string { return "^" + regexp.QuoteMeta(origin) + "$" })
	rep := c.next(t, "watching")
	if !slices.Equal(rep.Listed, []string{"listed"}) {
		c.browser.fail(c.ctx, t, fmt.Sprintf("the page listed %v, want [listed]", rep.Listed))
	}
	c.kubectl.must(t, "create", "-f", writeFile(t, "from-go.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: from-go, namespace: default}\nspec: {color: Green}\n"))
	rep = c.next(t, "done")
	if want := []string{"ADDED from-browser", "ADDED from-go"}; !slices.Equal(rep.Events, want) {
		c.browser.fail(c.ctx, t, fmt.Sprintf("the page watched %v, want %v", rep.Events, want))
	}
	// The widget the browser created is stored.
	if got := c.kubectl.must(t, "get", "widget", "from-browser", "-o", "jsonpath={.spec.color}"); got != "Blue" {
		t.Errorf("the browser's widget has color %q, want Blue", got)
	}
}

// TestBrowserConsoleOtherOrigin: a console whose origin no pattern allows
// cannot read the API: the browser refuses the page the answer.
func TestBrowserConsoleOtherOrigin(t *testing.T) {
	c := openConsole(t, func(string) string { return `^https://console\.example\.com$` })
	select {
	case rep := <-c.reports:
		if rep.Stage != "error" || rep.Error != "TypeError: Failed to fetch" {
			c.browser.fail(c.ctx, t, fmt.Sprintf("the page reports %+v, want the browser's refusal", rep))
		}
	case <-c.ctx.Done():
		c.browser.fail(c.ctx, t, "the page reported nothing")
	}
}

// fail ends the test with msg and a screenshot of the page.
func (b *browser) fail(ctx context.Context, t *testing.T, msg string) {
	t.Helper()
	shot, err := b.screenshot(context.WithoutCancel(ctx))
	if err != nil {
		t.Fatalf("%s (no screenshot: %v)", msg, err)
	}
	t.Fatalf("%s; the page: %s", msg, shot)
}
