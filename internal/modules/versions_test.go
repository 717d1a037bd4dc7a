package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCheck: a repository whose nested module requires the root at a
// commit of its history, with go.work's replace line, passes; each way a
// consumer or the workspace would fail is named. -w repairs them.
func TestCheck(t *testing.T) {
	r, first := newTestRepo(t)
	good := first.pseudoVersion()
	cases := []struct {
		name   string
		nested string // the nested go.mod's require and replace lines
		work   string // go.work's replace lines
		want   string // in check's error; "" for none
	}{
		{"a commit of HEAD's history", "require " + rootPath + " " + good + "\n", "replace " + rootPath + " " + good + " => ./\n", ""},
		{"the placeholder", "require " + rootPath + " v0.0.0-00010101000000-000000000000\n", "", "no such commit"},
		{"not a pseudo-version", "require " + rootPath + " v0.0.0\n", "", "not the pseudo-version of a commit"},
		{"another time", "require " + rootPath + " v0.0.0-20200101000000-" + first.Hash[:12] + "\n", "replace " + rootPath + " v0.0.0-20200101000000-" + first.Hash[:12] + " => ./\n",
			"that commit's pseudo-version is " + good},
		{"a replace line", "require " + rootPath + " " + good + "\nreplace " + rootPath + " => ../\n", "replace " + rootPath + " " + good + " => ./\n", "consumers ignore replace lines"},
		{"go.work without its replace", "require " + rootPath + " " + good + "\n", "", "go.work: no line replace"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			writeFile(t, filepath.Join(r.root, "nested", "go.mod"), "module "+rootPath+"/nested\n\ngo 1.26\n\n"+tc.nested)
			writeFile(t, filepath.Join(r.root, "go.work"), "go 1.26\n\nuse (\n\t.\n\t./nested\n)\n\n"+tc.work)
			_, err := r.check()
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("check: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("check = %v, want an error saying %q", err, tc.want)
			}
			if err := r.write(first); err != nil {
				t.Fatalf("write: %v", err)
			}
			if _, err := r.check(); err != nil {
				t.Fatalf("check after write: %v", err)
			}
		})
	}
	t.Run("a commit outside HEAD's history", func(t *testing.T) {
		r.run(t, "checkout", "-q", "-b", "side")
		writeFile(t, filepath.Join(r.root, "side.go"), "package kapi\n")
		r.run(t, "add", "-A")
		r.run(t, "commit", "-q", "-m", "side")
		side, err := r.commit("HEAD")
		if err != nil {
			t.Fatal(err)
		}
		r.run(t, "checkout", "-q", "main")
		v := side.pseudoVersion()
		writeFile(t, filepath.Join(r.root, "nested", "go.mod"), "module "+rootPath+"/nested\n\ngo 1.26\n\nrequire "+rootPath+" "+v+"\n")
		writeFile(t, filepath.Join(r.root, "go.work"), "go 1.26\n\nuse (\n\t.\n\t./nested\n)\n\nreplace "+rootPath+" "+v+" => ./\n")
		if _, err := r.check(); err == nil || !strings.Contains(err.Error(), "not in HEAD's history") {
			t.Fatalf("check = %v, want not in HEAD's history", err)
		}
	})
}

// newTestRepo is a git repository with a root module and a nested one,
// and its first commit.
func newTestRepo(t *testing.T) (testRepo, commit) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	r := testRepo{repo{root: t.TempDir()}}
	r.run(t, "init", "-q", "-b", "main")
	r.run(t, "config", "user.email", "test@example.com")
	r.run(t, "config", "user.name", "test")
	writeFile(t, filepath.Join(r.root, "go.mod"), "module "+rootPath+"\n\ngo 1.26\n")
	writeFile(t, filepath.Join(r.root, "nested", "go.mod"), "module "+rootPath+"/nested\n\ngo 1.26\n")
	writeFile(t, filepath.Join(r.root, "go.work"), "go 1.26\n\nuse (\n\t.\n\t./nested\n)\n")
	r.run(t, "add", "-A")
	r.run(t, "commit", "-q", "-m", "first")
	c, err := r.commit("HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return r, c
}

type testRepo struct{ repo }

func (r testRepo) run(t *testing.T, args ...string) {
	t.Helper()
	if _, err := r.git(args...); err != nil {
		t.Fatal(err)
	}
}

func writeFile(t *testing.T, file, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
