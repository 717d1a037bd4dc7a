package bolt_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/bolt"
)

// The crash test: a child process (this test binary, re-executed) writes
// continuously from several goroutines and prints every write the store
// acknowledged; the parent kills it with SIGKILL at a random moment, reopens
// the file and checks that every acknowledged write is there and that the
// file is whole. Then again, on the same file, for many cycles.

const (
	crashEnv       = "KAPI_BOLT_CRASH_CHILD" // the file the child writes
	crashWriters   = 4
	crashKeys      = 48   // per writer
	crashHistory   = 1000 // small, so that compaction runs all the time
	crashChildLife = 20 * time.Second
)

func TestCrash(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	cycles := 100
	if testing.Short() {
		cycles = 20
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	model := crashModel{keys: map[string]crashState{}}
	var acked, adopted int
	start := time.Now()
	for cycle := range cycles {
		acks := runCrashChild(t, path, cycle)
		acked += len(acks)
		adopted += verifyCrash(t, path, &model, acks)
		if t.Failed() {
			t.Fatalf("cycle %d failed, after %d acknowledged writes in this cycle", cycle, len(acks))
		}
	}
	t.Logf("%d cycles in %v: %d acknowledged writes, all found; %d unacknowledged writes had reached the disk",
		cycles, time.Since(start).Round(time.Millisecond), acked, adopted)
}

// crashAck is one acknowledged write, as the child printed it.
type crashAck struct {
	writer int
	op     string // create, update or delete
	key    string
	rev    int64
	value  string // empty for a delete
}

// crashState is what the parent knows of a key.
type crashState struct {
	value  string
	create int64
	mod    int64
}

type crashModel struct {
	keys map[string]crashState // the live keys
	rev  int64                 // the newest revision known written
}

// runCrashChild runs one child on path, kills it after a random time, and
// returns the writes it acknowledged.
func runCrashChild(t *testing.T, path string, cycle int) []crashAck {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), crashChildLife)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestCrash$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashEnv+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := bufio.NewReaderSize(out, 1<<16)
	var acks []crashAck
	var readErr error
	// Kill at a random moment once the child has opened the store; some
	// cycles kill it before its first write.
	ready, err := lines.ReadString('\n')
	if err != nil || ready != "READY\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("cycle %d: the child said %q, %v; want READY", cycle, ready, err)
	}
	killed := make(chan struct{})
	timer := time.AfterFunc(time.Duration(rand.Int64N(int64(120*time.Millisecond))), func() {
		cmd.Process.Kill()
		close(killed)
	})
	defer timer.Stop()
	for {
		line, err := lines.ReadString('\n')
		if err != nil {
			// A line cut short by the kill was not acknowledged for sure.
			if !errors.Is(err, io.EOF) {
				readErr = err
			}
			break
		}
		ack, perr := parseCrashAck(line)
		if perr != nil {
			t.Errorf("cycle %d: %v", cycle, perr)
			continue
		}
		acks = append(acks, ack)
	}
	<-killed
	werr := cmd.Wait()
	if readErr != nil {
		t.Fatalf("cycle %d: reading the child: %v", cycle, readErr)
	}
	var exit *exec.ExitError
	if !errors.As(werr, &exit) || exit.Exited() {
		t.Fatalf("cycle %d: the child ended with %v, want killed by the signal", cycle, werr)
	}
	return acks
}

func parseCrashAck(line string) (crashAck, error) {
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "ACK" {
		return crashAck{}, fmt.Errorf("the child printed %q", line)
	}
	w, err1 := strconv.Atoi(f[1])
	rev, err2 := strconv.ParseInt(f[4], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return crashAck{}, fmt.Errorf("the child printed %q: %v", line, err)
	}
	a := crashAck{writer: w, op: f[2], key: f[3], rev: rev}
	if len(f) > 5 {
		a.value = f[5]
	}
	return a, nil
}

// verifyCrash reopens the file after a kill and checks it against the
// model and the child's acknowledged writes, which it then adds to the
// model. It returns how many unacknowledged writes it found on disk.
func verifyCrash(t *testing.T, path string, model *crashModel, acks []crashAck) int {
	t.Helper()
	ctx := t.Context()
	s, err := bolt.Open(path)
	if err != nil {
		t.Fatalf("reopening after the kill: %v", err)
	}
	defer s.Close()
	if err := bolt.Check(s); err != nil {
		t.Fatalf("the file is inconsistent: %v", err)
	}
	rev, err := s.Revision(ctx)
	if err != nil {
		t.Fatal(err)
	}
	compacted, err := bolt.Compacted(s)
	if err != nil {
		t.Fatal(err)
	}

	// Each writer's acknowledged revisions increase, and every one is at or
	// below the store's.
	lastAck := make([]int64, crashWriters)
	for _, a := range acks {
		if a.rev <= lastAck[a.writer] || a.rev <= model.rev || a.rev > rev {
			t.Errorf("writer %d's write at %d: after its previous at %d, the last cycle's %d, at most the store's %d",
				a.writer, a.rev, lastAck[a.writer], model.rev, rev)
		}
		lastAck[a.writer] = a.rev
	}

	// Every acknowledged write that is still in the window reads back.
	for _, a := range acks {
		if a.rev < compacted {
			continue
		}
		kv, err := s.Get(ctx, a.key, a.rev)
		switch {
		case a.op == "delete":
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("acknowledged %s %s at %d: Get at %d = %+v, %v; want not found", a.op, a.key, a.rev, a.rev, kv, err)
			}
		case err != nil || kv.ModRevision != a.rev || string(kv.Value) != a.value:
			t.Errorf("acknowledged %s %s at %d: Get at %d = {%q mod %d}, %v", a.op, a.key, a.rev, a.rev, kv.Value, kv.ModRevision, err)
		}
	}

	// The acknowledged writes, applied to the model, give the store's
	// state, except for at most one write per writer that reached the disk
	// without being acknowledged: it comes after the writer's last
	// acknowledged one.
	for _, a := range acks {
		switch a.op {
		case "create":
			model.keys[a.key] = crashState{value: a.value, create: a.rev, mod: a.rev}
		case "update":
			st := model.keys[a.key]
			st.value, st.mod = a.value, a.rev
			model.keys[a.key] = st
		case "delete":
			delete(model.keys, a.key)
		}
	}
	list, err := s.List(ctx, "/crash/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if list.Revision != rev {
		t.Errorf("List at revision %d, store at %d", list.Revision, rev)
	}
	stored := map[string]crashState{}
	for i, kv := range list.Items {
		if i > 0 && kv.Key <= list.Items[i-1].Key {
			t.Errorf("List out of order: %q after %q", kv.Key, list.Items[i-1].Key)
		}
		stored[kv.Key] = crashState{string(kv.Value), kv.CreateRevision, kv.ModRevision}
		got, err := s.Get(ctx, kv.Key, 0)
		if err != nil || !sameKV(got, kv) {
			t.Errorf("List has %+v, Get %+v, %v", kv, got, err)
		}
	}
	unacked := make([]int, crashWriters)
	adopted := 0
	for _, key := range unionKeys(model.keys, stored) {
		want, inModel := model.keys[key]
		got, inStore := stored[key]
		if inModel == inStore && want == got {
			continue
		}
		w := crashWriterOf(key)
		if unacked[w]++; unacked[w] > 1 {
			t.Errorf("key %s is %+v (present %v), want %+v (present %v): a second unacknowledged change by writer %d",
				key, got, inStore, want, inModel, w)
			continue
		}
		// The unacknowledged write: the only change to key after its
		// model state, so a revision above both the writer's acknowledged
		// ones and the key's. Checked against the history where possible.
		after := max(lastAck[w], want.mod, model.rev)
		if inStore {
			if got.mod <= after || inModel && got.create != want.create || !inModel && got.create != got.mod {
				t.Errorf("key %s is %+v, want %+v or one later write to it", key, got, want)
			}
			model.keys[key] = got
		} else {
			// Deleted: then its state just before the store's revision of
			// the deletion is the model's.
			delete(model.keys, key)
		}
		adopted++
	}
	if t.Failed() {
		return adopted
	}

	// Watch from the window's start replays to the same state: the List at
	// the start plus every event after it, each consistent with the state
	// it applies to, with consecutive revisions.
	replayFromWindowStart(t, s, compacted, rev, stored)
	model.rev = rev
	return adopted
}

func replayFromWindowStart(t *testing.T, s *bolt.Store, from, to int64, want map[string]crashState) {
	t.Helper()
	ctx := t.Context()
	base, err := s.List(ctx, "/crash/", storage.ListOptions{Revision: from})
	if err != nil {
		t.Fatalf("List at the window's start %d: %v", from, err)
	}
	state := map[string]crashState{}
	for _, kv := range base.Items {
		state[kv.Key] = crashState{string(kv.Value), kv.CreateRevision, kv.ModRevision}
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	events, err := s.Watch(wctx, "/crash/", from)
	if err != nil {
		t.Fatalf("Watch from the window's start %d: %v", from, err)
	}
	next := from + 1
	for next <= to {
		ev := <-events
		if ev.Err != nil {
			t.Fatalf("watch from %d ended at %d: %v", from, next, ev.Err)
		}
		if ev.ModRevision != next {
			t.Fatalf("watch from %d: event at %d, want %d", from, ev.ModRevision, next)
		}
		cur, live := state[ev.Key]
		switch {
		case ev.Type == storage.Delete:
			if !live || string(ev.Prev) != cur.value || string(ev.Value) != cur.value || ev.CreateRevision != cur.create {
				t.Fatalf("event %d deletes %s %q (created %d), state %+v (live %v)", next, ev.Key, ev.Prev, ev.CreateRevision, cur, live)
			}
			delete(state, ev.Key)
		case ev.Prev == nil:
			if live || ev.CreateRevision != next {
				t.Fatalf("event %d creates %s, created %d, state %+v (live %v)", next, ev.Key, ev.CreateRevision, cur, live)
			}
			state[ev.Key] = crashState{string(ev.Value), next, next}
		default:
			if !live || string(ev.Prev) != cur.value || ev.CreateRevision != cur.create {
				t.Fatalf("event %d updates %s from %q, state %+v (live %v)", next, ev.Key, ev.Prev, cur, live)
			}
			state[ev.Key] = crashState{string(ev.Value), cur.create, next}
		}
		next++
	}
	for _, key := range unionKeys(state, want) {
		if state[key] != want[key] {
			t.Errorf("replay gives %s = %+v, List %+v", key, state[key], want[key])
		}
	}
}

func unionKeys(a, b map[string]crashState) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	return keys
}

func crashKey(w, n int) string { return fmt.Sprintf("/crash/%d/%02d", w, n) }

func crashWriterOf(key string) int {
	w, _ := strconv.Atoi(strings.Split(key, "/")[2])
	return w
}

func sameKV(a, b storage.KeyValue) bool {
	return a.Key == b.Key && string(a.Value) == string(b.Value) &&
		a.CreateRevision == b.CreateRevision && a.ModRevision == b.ModRevision
}

// crashChild writes until it is killed, printing each acknowledged write.
// Each writer owns its keys, so every write's precondition is known to
// hold: a failed one is a bug, which the child reports on stderr and exits
// for, failing the parent.
func crashChild(path string) {
	s, err := bolt.Open(path, bolt.WithHistory(crashHistory))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	var mu sync.Mutex // one line per write(2), whole
	print := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := os.Stdout.WriteString(line); err != nil {
			os.Exit(3)
		}
	}
	fail := func(format string, args ...any) {
		fmt.Fprintf(os.Stderr, "crash child: "+format+"\n", args...)
		os.Exit(4)
	}
	ctx := context.Background()
	print("READY\n")
	time.AfterFunc(crashChildLife, func() { os.Exit(5) }) // orphaned: give up
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Go(func() {
			// What this writer's keys are now, unacknowledged writes of
			// the last child included.
			live := map[string]int64{} // key → ModRevision
			list, err := s.List(ctx, fmt.Sprintf("/crash/%d/", w), storage.ListOptions{})
			if err != nil {
				fail("List: %v", err)
			}
			for _, kv := range list.Items {
				live[kv.Key] = kv.ModRevision
			}
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for seq := 0; ; seq++ {
				key := crashKey(w, rng.IntN(crashKeys))
				// Values of varied sizes, up to a few pages, so that
				// commits split and merge pages.
				value := fmt.Sprintf("w%d.%d.%d.", w, seq, rng.Uint32()) + strings.Repeat("x", rng.IntN(3)*rng.IntN(3000))
				mod, ok := live[key]
				var (
					op  string
					rev int64
				)
				switch {
				case !ok:
					op = "create"
					rev, err = s.Create(ctx, key, []byte(value))
				case rng.IntN(4) == 0:
					op, value = "delete", ""
					var removed storage.KeyValue
					removed, err = s.Delete(ctx, key, mod)
					rev = removed.ModRevision
				default:
					op = "update"
					rev, err = s.Update(ctx, key, []byte(value), mod)
				}
				if err != nil {
					fail("%s %s (expect %d): %v", op, key, mod, err)
				}
				if op == "delete" {
					delete(live, key)
				} else {
					live[key] = rev
				}
				print(fmt.Sprintf("ACK %d %s %s %d %s\n", w, op, key, rev, value))
			}
		})
	}
	wg.Wait()
}
