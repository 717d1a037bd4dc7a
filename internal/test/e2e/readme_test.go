package e2e

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// The README's walkthrough is a test: every ```sh block carries a marker
// comment on the line before it,
//
//	<!-- readme-test: SESSION -->        run, in order, in SESSION's shell
//	<!-- readme-test: SESSION fails -->  run there too, and must fail; the
//	                                     ```text block after it holds lines
//	                                     its output must contain
//	<!-- readme-test: skip: REASON -->   not run (a server, the test suite)
//
// and ```go blocks marked first-program are the program the session
// "first" runs against. The session "widgets" runs against
// examples/widgets. Each session is one bash script, with the address
// 127.0.0.1:8080 the README shows replaced by the server's.

const readmeAddr = "127.0.0.1:8080"

var readmeMarker = regexp.MustCompile(`^<!-- readme-test: (.*) -->$`)

// readmeBlock is one fenced block of the README.
type readmeBlock struct {
	line   int    // of the opening fence, 1-based
	lang   string // after the fence
	marker string // the readme-test comment before it, if any
	text   string
}

func readmeBlocks(t *testing.T, file string) []readmeBlock {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var blocks []readmeBlock
	var open *readmeBlock
	prev := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case open == nil && strings.HasPrefix(line, "```"):
			b := readmeBlock{line: n, lang: strings.TrimPrefix(line, "```")}
			if m := readmeMarker.FindStringSubmatch(prev); m != nil {
				b.marker = m[1]
			}
			open = &b
		case open != nil && line == "```":
			blocks = append(blocks, *open)
			open = nil
		case open != nil:
			open.text += line + "\n"
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
	}
	if open != nil {
		t.Fatalf("README.md:%d: a block is never closed", open.line)
	}
	return blocks
}

// readmeSession is the script of one session and what its failing blocks
// must print.
type readmeSession struct {
	script   strings.Builder
	expected map[string][]string // output file -> lines it must contain
}

func TestREADME(t *testing.T) {
	if _, err := os.Stat(dispatcherKubectl); err != nil {
		t.Skipf("kubectl: %v", err)
	}
	readme := filepath.Join("..", "..", "..", "README.md")
	blocks := readmeBlocks(t, readme)
	work := t.TempDir()
	sessions := map[string]*readmeSession{}
	var order []string
	var program string
	for i, b := range blocks {
		switch {
		case b.lang == "go" && b.marker == "first-program":
			program += b.text
			continue
		case b.lang != "sh":
			continue
		case b.marker == "":
			t.Errorf("README.md:%d: a sh block without a readme-test marker: mark it with a session, or skip it saying why", b.line)
			continue
		case strings.HasPrefix(b.marker, "skip:"):
			continue
		}
		name, fails := strings.CutSuffix(b.marker, " fails")
		s := sessions[name]
		if s == nil {
			s = &readmeSession{expected: map[string][]string{}}
			sessions[name] = s
			order = append(order, name)
			s.script.WriteString("set -euo pipefail\nshopt -s expand_aliases\nexport PS4='+ '\nset -x\n")
		}
		text := strings.ReplaceAll(b.text, readmeAddr, "$README_ADDR")
		fmt.Fprintf(&s.script, ": README.md:%d\n", b.line)
		if !fails {
			s.script.WriteString(text)
			continue
		}
		if i+1 >= len(blocks) || blocks[i+1].lang != "text" {
			t.Errorf("README.md:%d: a block that fails is followed by a text block of its output", b.line)
			continue
		}
		out := filepath.Join(work, fmt.Sprintf("out.%d", b.line))
		for _, l := range strings.Split(blocks[i+1].text, "\n") {
			if l = strings.TrimSpace(l); l != "" {
				s.expected[out] = append(s.expected[out], l)
			}
		}
		fmt.Fprintf(&s.script, "if ( set -e\n%s) >%q 2>&1; then cat %q; echo 'README.md:%d: succeeded, but the README shows it failing' >&2; exit 1; fi\ncat %q\n",
			text, out, out, b.line, out)
	}
	if program == "" {
		t.Fatal("README.md has no go block marked first-program")
	}
	for _, name := range order {
		t.Run(name, func(t *testing.T) {
			var srv *server
			switch name {
			case "first":
				srv = startProgram(t, program2(t, program))
			case "widgets":
				srv = startServer(t)
			case "browsers":
				srv = startWidgets(t, readmeServerArgs(t, blocks, name)...)
			default:
				t.Fatalf("README.md: unknown session %q (first, widgets, browsers)", name)
			}
			runReadmeSession(t, sessions[name], srv, work)
		})
	}
}

// readmeServerArgs reads the flags of examples/widgets from the README's
// block that starts the server of session (marked skip: starts the server
// the "SESSION" blocks run against), `go run ./examples/widgets FLAGS`,
// whose values may be in single quotes.
func readmeServerArgs(t *testing.T, blocks []readmeBlock, session string) []string {
	t.Helper()
	marker := fmt.Sprintf("skip: starts the server the %q blocks run against", session)
	for _, b := range blocks {
		if b.marker != marker {
			continue
		}
		rest, ok := strings.CutPrefix(strings.TrimSpace(b.text), "go run ./examples/widgets")
		if !ok || strings.Contains(rest, "\n") {
			t.Fatalf("README.md:%d: want one line, go run ./examples/widgets FLAGS", b.line)
		}
		var args []string
		for _, f := range regexp.MustCompile(`'[^']*'|\S+`).FindAllString(rest, -1) {
			args = append(args, strings.Trim(f, "'"))
		}
		return args
	}
	t.Fatalf("README.md: no block marked %q", marker)
	return nil
}

// startWidgets is startServer with flags.
func startWidgets(t *testing.T, args ...string) *server {
	t.Helper()
	return startProgram(t, program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr, args: args})
}

// program2 builds the README's first program as a module of its own
// requiring this tree's kapi, and runs it on the address the test chose.
func program2(t *testing.T, source string) program {
	t.Helper()
	quoted := `"` + readmeAddr + `"`
	if strings.Count(source, quoted) != 1 || !strings.Contains(source, `"os"`) {
		t.Fatalf("the first program should listen on %s once, and import os", quoted)
	}
	source = strings.Replace(source, quoted, `os.Getenv("KAPI_README_ADDR")`, 1)
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	goMod := "module example.com/widgets\n\ngo 1.26\n\nrequire github.com/kapi-dev/kapi v0.0.0\n\nreplace github.com/kapi-dev/kapi => " + root + "\n"
	sum, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{"go.mod": []byte(goMod), "go.sum": sum, "main.go": []byte(source)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "widgets")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = dir
	// Offline: kapi's requirements are in the module cache, their sums in
	// its go.sum.
	build.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod", "GOPROXY=off", "GOTOOLCHAIN=local")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("the README's first program does not build: %v\n%s", err, out)
	}
	return program{name: "the README's first program", bin: bin, addrEnv: "KAPI_README_ADDR"}
}

func runReadmeSession(t *testing.T, s *readmeSession, srv *server, work string) {
	home := t.TempDir()
	cmd := exec.Command("bash", "-c", s.script.String())
	cmd.Dir = home
	cmd.Env = append(os.Environ(),
		"HOME="+home,
		"KUBECONFIG="+filepath.Join(home, "no-kubeconfig"),
		"PATH="+filepath.Dir(dispatcherKubectl)+string(os.PathListSeparator)+os.Getenv("PATH"),
		"README_ADDR="+srv.Addr,
	)
	// Its own process group: a background kubectl (watch &) is ended with
	// the script, whatever happened.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	if err != nil {
		t.Fatalf("the README's commands failed (%v); the last command traced (+) is the one, and its output follows it:\n%s", err, out.String())
	}
	for file, lines := range s.expected {
		got, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range lines {
			if !strings.Contains(string(got), l) {
				t.Errorf("%s: the README shows %q, the command wrote:\n%s", filepath.Base(file), l, got)
			}
		}
	}
	if t.Failed() {
		t.Logf("the whole session:\n%s", out.String())
	}
}
