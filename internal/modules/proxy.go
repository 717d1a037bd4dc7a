package main

import (
	stdzip "archive/zip"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

// proxy is a module proxy written in GOPROXY's file layout.
type proxy struct {
	Dir      string // the proxy's directory: GOPROXY=file://Dir
	Required string // the version of kapi's root module the nested modules require, built from git
	Tree     string // the version every module of the work tree is served at
}

// buildProxy writes a proxy into dir: kapi's modules at the commit the
// nested modules require, as git has them, and every module of the work tree
// (root included, uncommitted changes included) at a version made up for
// it, one second newer than HEAD and that commit.
func (r repo) buildProxy(dir string) (proxy, error) {
	required, err := r.check()
	if err != nil {
		return proxy{}, err
	}
	head, err := r.commit("HEAD")
	if err != nil {
		return proxy{}, err
	}
	newest := head.Time
	if required.Time.After(newest) {
		newest = required.Time
	}
	tree := commit{Hash: head.Hash, Time: newest.Add(time.Second)}
	p := proxy{Dir: dir, Required: required.pseudoVersion(), Tree: tree.pseudoVersion()}
	mods, err := r.modules()
	if err != nil {
		return proxy{}, err
	}
	files, err := r.filesAt(required)
	if err != nil {
		return proxy{}, err
	}
	// Every module at that commit, as git has it: a nested module may
	// require another nested one there (examples/aggregated, the exporters).
	for _, m := range mods {
		prefix := m.Dir + "/"
		if m.Dir == "." {
			prefix = ""
		}
		goMod, err := r.git("show", required.Hash+":"+prefix+"go.mod")
		if err != nil {
			continue // not a module at that commit
		}
		err = p.add(m.Path, required, func(w io.Writer) error {
			var sub []zip.File
			for _, f := range files {
				if strings.HasPrefix(f.Path(), prefix) {
					sub = append(sub, movedFile{f, prefix})
				}
			}
			return zip.Create(w, module.Version{Path: m.Path, Version: p.Required}, sub)
		}, func() ([]byte, error) { return []byte(goMod + "\n"), nil })
		if err != nil {
			return proxy{}, err
		}
	}
	for _, m := range mods {
		dir := filepath.Join(r.root, filepath.FromSlash(m.Dir))
		err := p.add(m.Path, tree, func(w io.Writer) error {
			return zip.CreateFromDir(w, module.Version{Path: m.Path, Version: p.Tree}, dir)
		}, func() ([]byte, error) {
			return os.ReadFile(filepath.Join(dir, "go.mod"))
		})
		if err != nil {
			return proxy{}, err
		}
	}
	return p, nil
}

// add writes one version of a module: its .info, .mod and .zip, and its
// line in the module's list.
func (p proxy) add(path string, c commit, writeZip func(io.Writer) error, goMod func() ([]byte, error)) error {
	version := c.pseudoVersion()
	escPath, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	escVersion, err := module.EscapeVersion(version)
	if err != nil {
		return err
	}
	dir := filepath.Join(p.Dir, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, c.Time})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, escVersion+".info"), info, 0o644); err != nil {
		return err
	}
	mod, err := goMod()
	if err != nil {
		return fmt.Errorf("%s@%s: go.mod: %w", path, version, err)
	}
	if err := os.WriteFile(filepath.Join(dir, escVersion+".mod"), mod, 0o644); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(dir, escVersion+".zip"))
	if err != nil {
		return err
	}
	if err := writeZip(z); err != nil {
		z.Close()
		return fmt.Errorf("%s@%s: %w", path, version, err)
	}
	if err := z.Close(); err != nil {
		return err
	}
	list, err := os.OpenFile(filepath.Join(dir, "list"), os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(list, version); err != nil {
		list.Close()
		return err
	}
	return list.Close()
}

// filesAt are the files of the repository at c, as git archive writes
// them. (zip.CreateFromVCS does the same, but does not recognize a git
// worktree whose .git is a file.) zip.Create leaves out those of nested
// modules.
func (r repo) filesAt(c commit) ([]zip.File, error) {
	cmd := exec.Command("git", "-c", "core.autocrlf=input", "-c", "core.eol=lf", "archive", "--format=zip", c.Hash)
	cmd.Dir = r.root
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git archive %s: %w", c.Hash, err)
	}
	archive, err := stdzip.NewReader(bytes.NewReader(out), int64(len(out)))
	if err != nil {
		return nil, err
	}
	var files []zip.File
	for _, f := range archive.File {
		if !strings.HasSuffix(f.Name, "/") {
			files = append(files, archiveFile{f})
		}
	}
	return files, nil
}

// movedFile is a file of a nested module, its path relative to the
// module's directory.
type movedFile struct {
	zip.File
	prefix string
}

func (f movedFile) Path() string { return strings.TrimPrefix(f.File.Path(), f.prefix) }

// archiveFile is a file of git archive's zip, as zip.Create reads it.
type archiveFile struct{ f *stdzip.File }

func (a archiveFile) Path() string                 { return a.f.Name }
func (a archiveFile) Lstat() (os.FileInfo, error)  { return a.f.FileInfo(), nil }
func (a archiveFile) Open() (io.ReadCloser, error) { return a.f.Open() }
