package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
)

// rootPath is the root module's path; the nested modules' paths start with
// it.
const rootPath = "github.com/kapi-dev/kapi"

// kapiModule is one module of the repository.
type kapiModule struct {
	Path string // module path
	Dir  string // directory, slash-separated, relative to the repository's root; "." for the root module
}

// repo is the repository's work tree.
type repo struct {
	root string // absolute
}

func findRepo() (repo, error) {
	out, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		return repo{}, fmt.Errorf("not in kapi's git work tree: %w", err)
	}
	return repo{root: strings.TrimSpace(string(out))}, nil
}

func (r repo) git(args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = r.root
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(exit.Stderr)))
		}
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

// modules are the repository's modules, the root first: every go.mod git
// tracks or would track (untracked but not ignored).
func (r repo) modules() ([]kapiModule, error) {
	out, err := r.git("ls-files", "--cached", "--others", "--exclude-standard", "--", "go.mod", "**/go.mod")
	if err != nil {
		return nil, err
	}
	var mods []kapiModule
	for _, file := range strings.Fields(out) {
		if _, err := os.Stat(filepath.Join(r.root, file)); err != nil {
			continue // deleted in the work tree
		}
		data, err := os.ReadFile(filepath.Join(r.root, file))
		if err != nil {
			return nil, err
		}
		p := modfile.ModulePath(data)
		if p != rootPath && !strings.HasPrefix(p, rootPath+"/") {
			continue // a test's fixture
		}
		mods = append(mods, kapiModule{Path: p, Dir: path.Dir(file)})
	}
	slices.SortFunc(mods, func(a, b kapiModule) int { return strings.Compare(a.Dir, b.Dir) })
	if len(mods) == 0 || mods[0].Dir != "." {
		return nil, errors.New("no go.mod at the repository's root")
	}
	return mods, nil
}

// workspace is the set of directories go.work uses.
func (r repo) workspace() (map[string]bool, error) {
	data, err := os.ReadFile(filepath.Join(r.root, "go.work"))
	if err != nil {
		return nil, err
	}
	w, err := modfile.ParseWork("go.work", data, nil)
	if err != nil {
		return nil, err
	}
	dirs := map[string]bool{}
	for _, u := range w.Use {
		dirs[path.Clean(filepath.ToSlash(u.Path))] = true
	}
	return dirs, nil
}

// commit is a commit of the repository.
type commit struct {
	Hash string    // full
	Time time.Time // the committer's time, which pseudo-versions carry
}

func (r repo) commit(rev string) (commit, error) {
	out, err := r.git("show", "-s", "--format=%H %ct", rev+"^{commit}")
	if err != nil {
		return commit{}, err
	}
	hash, secs, _ := strings.Cut(out, " ")
	n, err := strconv.ParseInt(secs, 10, 64)
	if err != nil {
		return commit{}, fmt.Errorf("git show %s: %q", rev, out)
	}
	return commit{Hash: hash, Time: time.Unix(n, 0).UTC()}, nil
}

// pseudoVersion is the version go gives c: v0.0.0-yyyymmddhhmmss-abcdef123456.
func (c commit) pseudoVersion() string {
	return module.PseudoVersion("", "", c.Time, c.Hash[:12])
}

// hasModule reports whether m exists at c.
func (r repo) hasModule(c commit, m kapiModule) bool {
	_, err := r.git("cat-file", "-e", c.Hash+":"+path.Join(m.Dir, "go.mod"))
	return err == nil
}

// requirement is a nested go.mod's requirement of one of kapi's modules.
type requirement struct {
	In      kapiModule // the module whose go.mod requires
	Path    string     // what it requires
	Version string
}

func (r repo) readMod(m kapiModule) (*modfile.File, error) {
	file := filepath.Join(r.root, filepath.FromSlash(m.Dir), "go.mod")
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(file, data, nil)
}

// check reports every way the nested modules' requirements of kapi's
// modules fail a consumer, and returns the commit they require.
func (r repo) check() (commit, error) {
	mods, err := r.modules()
	if err != nil {
		return commit{}, err
	}
	inWorkspace, err := r.workspace()
	if err != nil {
		return commit{}, err
	}
	byPath := map[string]kapiModule{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	var errs []error
	var reqs []requirement
	for _, m := range mods[1:] {
		f, err := r.readMod(m)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		for _, req := range f.Require {
			if _, ok := byPath[req.Mod.Path]; ok {
				reqs = append(reqs, requirement{In: m, Path: req.Mod.Path, Version: req.Mod.Version})
			}
		}
		for _, rep := range f.Replace {
			if _, ok := byPath[rep.Old.Path]; ok && inWorkspace[m.Dir] {
				errs = append(errs, fmt.Errorf("%s/go.mod: replace %s: consumers ignore replace lines, and go.work already uses the local module; remove it", m.Dir, rep.Old.Path))
			}
		}
	}
	errs = append(errs, r.checkWorkReplaces(reqs, byPath)...)
	revs := map[string][]string{} // short revision -> requirements naming it
	for _, req := range reqs {
		if !module.IsPseudoVersion(req.Version) {
			errs = append(errs, fmt.Errorf("%s/go.mod: requires %s at %s, not the pseudo-version of a commit", req.In.Dir, req.Path, req.Version))
			continue
		}
		rev, _ := module.PseudoVersionRev(req.Version)
		revs[rev] = append(revs[rev], req.In.Dir+"/go.mod")
	}
	if len(revs) > 1 {
		var list []string
		for rev, files := range revs {
			list = append(list, fmt.Sprintf("%s (%s)", rev, strings.Join(files, ", ")))
		}
		slices.Sort(list)
		errs = append(errs, fmt.Errorf("the nested modules require kapi's modules at several commits, %s: run go run ./internal/modules -w", strings.Join(list, "; ")))
	}
	var c commit
	for _, req := range reqs {
		if !module.IsPseudoVersion(req.Version) || len(revs) > 1 {
			continue
		}
		rev, _ := module.PseudoVersionRev(req.Version)
		if c, err = r.commit(rev); err != nil {
			errs = append(errs, fmt.Errorf("%s/go.mod: %s %s: no such commit in this repository", req.In.Dir, req.Path, req.Version))
			break
		}
		if _, err := r.git("merge-base", "--is-ancestor", c.Hash, "HEAD"); err != nil {
			errs = append(errs, fmt.Errorf("%s/go.mod: %s %s: commit %s is not in HEAD's history", req.In.Dir, req.Path, req.Version, rev))
		}
		if want := c.pseudoVersion(); req.Version != want {
			errs = append(errs, fmt.Errorf("%s/go.mod: %s %s: that commit's pseudo-version is %s", req.In.Dir, req.Path, req.Version, want))
		}
		if !r.hasModule(c, byPath[req.Path]) {
			errs = append(errs, fmt.Errorf("%s/go.mod: %s %s: the module does not exist at that commit", req.In.Dir, req.Path, req.Version))
		}
	}
	return c, errors.Join(errs...)
}

// write requires every kapi module each nested module requires at c, and
// drops the replace lines of kapi modules from the go.mod files of modules
// in the workspace (a module outside it, built with GOWORK=off, keeps its
// own).
func (r repo) write(c commit) error {
	mods, err := r.modules()
	if err != nil {
		return err
	}
	inWorkspace, err := r.workspace()
	if err != nil {
		return err
	}
	byPath := map[string]kapiModule{}
	for _, m := range mods {
		byPath[m.Path] = m
	}
	version := c.pseudoVersion()
	for _, m := range mods[1:] {
		f, err := r.readMod(m)
		if err != nil {
			return err
		}
		for _, req := range f.Require {
			if required, ok := byPath[req.Mod.Path]; ok {
				if !r.hasModule(c, required) {
					return fmt.Errorf("%s/go.mod requires %s, which does not exist at %s", m.Dir, req.Mod.Path, c.Hash[:12])
				}
				if err := f.AddRequire(req.Mod.Path, version); err != nil {
					return err
				}
			}
		}
		if inWorkspace[m.Dir] {
			for _, rep := range slices.Clone(f.Replace) {
				if _, ok := byPath[rep.Old.Path]; ok {
					if err := f.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
						return err
					}
				}
			}
		}
		f.Cleanup()
		data, err := f.Format()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(r.root, filepath.FromSlash(m.Dir), "go.mod"), data, 0o644); err != nil {
			return err
		}
	}
	return r.writeWorkReplaces(version, byPath)
}

// The workspace replaces each kapi module some nested module requires, at
// the version required, with its directory. Without that, go would look
// the required version up (and read its go.mod) although go.work uses the
// module's directory; with it, development needs no network and no module
// proxy that has the commit.

// wantWorkReplaces are go.work's replace lines: old path and version, new
// directory.
func (r repo) wantWorkReplaces(version string, required map[string]bool, byPath map[string]kapiModule) [][3]string {
	var want [][3]string
	for p := range required {
		dir := "./" + byPath[p].Dir
		if byPath[p].Dir == "." {
			dir = "./"
		}
		want = append(want, [3]string{p, version, dir})
	}
	slices.SortFunc(want, func(a, b [3]string) int { return strings.Compare(a[0], b[0]) })
	return want
}

func (r repo) readWork() (*modfile.WorkFile, error) {
	data, err := os.ReadFile(filepath.Join(r.root, "go.work"))
	if err != nil {
		return nil, err
	}
	return modfile.ParseWork("go.work", data, nil)
}

func (r repo) checkWorkReplaces(reqs []requirement, byPath map[string]kapiModule) []error {
	w, err := r.readWork()
	if err != nil {
		return []error{err}
	}
	have := map[[3]string]bool{}
	for _, rep := range w.Replace {
		if _, ok := byPath[rep.Old.Path]; ok {
			have[[3]string{rep.Old.Path, rep.Old.Version, path.Clean(rep.New.Path)}] = true
		}
	}
	var errs []error
	reported := map[[3]string]bool{}
	for _, req := range reqs {
		if !r.inWorkspaceMust(req, w) {
			continue
		}
		want := r.wantWorkReplaces(req.Version, map[string]bool{req.Path: true}, byPath)[0]
		want[2] = path.Clean(want[2])
		if !have[want] && !reported[want] {
			reported[want] = true
			errs = append(errs, fmt.Errorf("go.work: no line replace %s %s => %s, so go would look that version up: run go run ./internal/modules -w", want[0], want[1], want[2]))
		}
		reported[want] = true
	}
	for want := range reported {
		delete(have, want)
	}
	for extra := range have {
		errs = append(errs, fmt.Errorf("go.work: replace %s %s => %s: no nested module requires that version", extra[0], extra[1], extra[2]))
	}
	return errs
}

// inWorkspaceMust reports whether req is made by a module go.work uses:
// only those need go.work's replace lines.
func (r repo) inWorkspaceMust(req requirement, w *modfile.WorkFile) bool {
	for _, u := range w.Use {
		if path.Clean(filepath.ToSlash(u.Path)) == req.In.Dir {
			return true
		}
	}
	return false
}

func (r repo) writeWorkReplaces(version string, byPath map[string]kapiModule) error {
	w, err := r.readWork()
	if err != nil {
		return err
	}
	for _, rep := range slices.Clone(w.Replace) {
		if _, ok := byPath[rep.Old.Path]; ok {
			if err := w.DropReplace(rep.Old.Path, rep.Old.Version); err != nil {
				return err
			}
		}
	}
	required := map[string]bool{}
	inWorkspace := map[string]bool{}
	for _, u := range w.Use {
		inWorkspace[path.Clean(filepath.ToSlash(u.Path))] = true
	}
	for _, m := range byPath {
		if m.Dir == "." || !inWorkspace[m.Dir] {
			continue
		}
		f, err := r.readMod(m)
		if err != nil {
			return err
		}
		for _, req := range f.Require {
			if _, ok := byPath[req.Mod.Path]; ok {
				required[req.Mod.Path] = true
			}
		}
	}
	for _, rep := range r.wantWorkReplaces(version, required, byPath) {
		if err := w.AddReplace(rep[0], rep[1], rep[2], ""); err != nil {
			return err
		}
	}
	w.Cleanup()
	data := modfile.Format(w.Syntax)
	if !bytes.HasSuffix(data, []byte("\n")) {
		data = append(data, '\n')
	}
	return os.WriteFile(filepath.Join(r.root, "go.work"), data, 0o644)
}
