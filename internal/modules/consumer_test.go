package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// consumerProgram uses kapi with two of its nested modules: the etcd
// backend and the CEL rule engine.
const consumerProgram = `package main

import (
	"context"
	"log"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/storage/etcd"
	"github.com/kapi-dev/kapi/validation/cel"
	clientv3 "go.etcd.io/etcd/client/v3"
)

func main() {
	client, err := clientv3.New(clientv3.Config{Endpoints: []string{"127.0.0.1:2379"}})
	if err != nil {
		log.Fatal(err)
	}
	store, err := etcd.New(context.Background(), client)
	if err != nil {
		log.Fatal(err)
	}
	engine, err := cel.New()
	if err != nil {
		log.Fatal(err)
	}
	api, err := apiserver.New(apiserver.WithStorage(store), apiserver.WithRuleEngine(engine))
	if err != nil {
		log.Fatal(err)
	}
	defer api.Close()
}
`

// TestConsumer gets kapi's modules as a project of its own would, through
// a module proxy built from this repository, with no replace lines: first
// two nested modules alone, which bring kapi at the commit they require,
// and builds a program using all three; then kapi at the work tree's
// version; then every other nested module a consumer may import.
func TestConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a consumer module against a local module proxy")
	}
	r, err := findRepo()
	if err != nil {
		t.Fatal(err)
	}
	p, err := r.buildProxy(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	modcache := strings.TrimSpace(goOutput(t, "", nil, "env", "GOMODCACHE"))
	upstream := strings.TrimSpace(goOutput(t, "", nil, "env", "GOPROXY"))
	dir := t.TempDir()
	env := []string{
		// kapi's modules from the proxy; the others from this machine's
		// module cache (in GOPROXY's layout), else from the usual proxy.
		"GOPROXY=file://" + p.Dir + ",file://" + filepath.Join(modcache, "cache", "download") + "," + upstream,
		// The module cache's contents were checked against the checksum
		// database when they were downloaded; kapi's versions here are
		// made up, so no database knows them. No network needed.
		"GOSUMDB=off",
		"GOFLAGS=-mod=mod",
		"GOWORK=off",
		"GOTOOLCHAIN=local",
	}
	goOutput(t, dir, env, "mod", "init", "example.com/consumer")

	t.Run("nested modules bring the kapi they require", func(t *testing.T) {
		goOutput(t, dir, env, "get", rootPath+"/storage/etcd@"+p.Tree, rootPath+"/validation/cel@"+p.Tree)
		if got := requiredVersion(t, dir, rootPath); got != p.Required {
			t.Fatalf("go.mod requires kapi at %s, want %s (what the nested modules require)", got, p.Required)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(consumerProgram), 0o644); err != nil {
			t.Fatal(err)
		}
		goOutput(t, dir, env, "mod", "tidy")
		defer func() {
			if t.Failed() {
				t.Logf("if a nested module uses more of kapi than %s has, commit that and run .ci/modversions -w", p.Required)
			}
		}()
		goOutput(t, dir, env, "build", "-o", filepath.Join(t.TempDir(), "consumer"), ".")
	})
	t.Run("kapi itself, newer", func(t *testing.T) {
		goOutput(t, dir, env, "get", rootPath+"@"+p.Tree)
		if got := requiredVersion(t, dir, rootPath); got != p.Tree {
			t.Fatalf("go.mod requires kapi at %s, want %s", got, p.Tree)
		}
		goOutput(t, dir, env, "build", "-o", filepath.Join(t.TempDir(), "consumer"), ".")
	})
	t.Run("every nested module resolves", func(t *testing.T) {
		mods, err := r.modules()
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mods[1:] {
			if strings.Contains("/"+m.Dir+"/", "/internal/") {
				continue // not importable outside kapi
			}
			goOutput(t, dir, env, "get", m.Path+"@"+p.Tree)
		}
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err != nil {
			t.Fatal(err)
		}
		f, err := modfile.Parse("go.mod", data, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Replace) > 0 {
			t.Errorf("the consumer's go.mod has replace lines:\n%s", data)
		}
	})
}

// goOutput runs the go command in dir with env added, and fails the test
// with its output if it fails.
func goOutput(t *testing.T, dir string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// requiredVersion is the version dir's go.mod requires path at.
func requiredVersion(t *testing.T, dir, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range f.Require {
		if r.Mod.Path == path {
			return r.Mod.Version
		}
	}
	t.Fatalf("go.mod does not require %s:\n%s", path, data)
	return ""
}
