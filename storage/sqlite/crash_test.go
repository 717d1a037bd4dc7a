package sqlite_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
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
	"github.com/kapi-dev/kapi/storage/sqlite"
)

// The crash test: a child process (this test binary, re-executed) writes
// from several goroutines and prints every write the store acknowledged;
// the parent kills it with SIGKILL at a random moment, reopens the file,
// checks its tables, and checks that every acknowledged write is there:
// each key is as the child's last acknowledged write to it left it, but
// for at most one write per writer that reached the file unacknowledged.
// Then again, on the same file, cycle after cycle.

const (
	crashEnv     = "KAPI_SQLITE_CRASH_CHILD" // the file the child writes
	crashWriters = 4
	crashKeys    = 32  // per writer
	crashHistory = 300 // small, so that compaction runs all the time
)

func TestCrash(t *testing.T) {
	if path := os.Getenv(crashEnv); path != "" {
		crashChild(path)
		return
	}
	cycles := 40
	if testing.Short() {
		cycles = 10
	}
	path := filepath.Join(t.TempDir(), "crash.db")
	model := map[string]crashState{} // the live keys as acknowledged
	var acked, adopted int
	for cycle := range cycles {
		acks := runCrashChild(t, path, cycle)
		acked += len(acks)
		adopted += verifyCrash(t, path, model, acks)
		if t.Failed() {
			t.Fatalf("cycle %d failed, after %d acknowledged writes in it", cycle, len(acks))
		}
	}
	t.Logf("%d cycles: %d acknowledged writes, all found; %d unacknowledged writes had reached the file", cycles, acked, adopted)
}

type crashState struct {
	value  string
	create int64
	mod    int64
}

type crashAck struct {
	writer int
	op     string
	key    string
	rev    int64
	value  string
}

func runCrashChild(t *testing.T, path string, cycle int) []crashAck {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
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
	lines := bufio.NewReader(out)
	if ready, err := lines.ReadString('\n'); err != nil || ready != "READY\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("cycle %d: the child said %q, %v; want READY", cycle, ready, err)
	}
	timer := time.AfterFunc(time.Duration(rand.Int64N(int64(300*time.Millisecond))), func() { cmd.Process.Kill() })
	defer timer.Stop()
	var acks []crashAck
	for {
		line, err := lines.ReadString('\n')
		if err != nil { // EOF, or a line cut short by the kill: not acknowledged
			break
		}
		f := strings.Fields(line)
		if len(f) < 5 || f[0] != "ACK" {
			t.Fatalf("cycle %d: the child printed %q", cycle, line)
		}
		w, _ := strconv.Atoi(f[1])
		rev, _ := strconv.ParseInt(f[4], 10, 64)
		a := crashAck{writer: w, op: f[2], key: f[3], rev: rev}
		if len(f) > 5 {
			a.value = f[5]
		}
		acks = append(acks, a)
	}
	var exit *exec.ExitError
	if err := cmd.Wait(); !errors.As(err, &exit) || exit.Exited() {
		t.Fatalf("cycle %d: the child ended with %v, want killed by the signal", cycle, err)
	}
	return acks
}

// verifyCrash reopens the file and checks it against the model and the
// acknowledged writes, which it adds to the model. It returns how many
// unacknowledged writes it found in the file.
func verifyCrash(t *testing.T, path string, model map[string]crashState, acks []crashAck) int {
	t.Helper()
	ctx := t.Context()
	s, err := sqlite.Open(path, sqlite.WithHistory(crashHistory))
	if err != nil {
		t.Fatalf("reopening after the kill: %v", err)
	}
	defer s.Close()
	mustCheck(t, s)
	compacted, err := sqlite.Compacted(s)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range acks {
		switch a.op {
		case "delete":
			delete(model, a.key)
		case "create":
			model[a.key] = crashState{a.value, a.rev, a.rev}
		default:
			st := model[a.key]
			st.value, st.mod = a.value, a.rev
			model[a.key] = st
		}
		if a.rev < compacted {
			continue
		}
		// Still in the window: readable at its revision.
		kv, err := s.Get(ctx, a.key, a.rev)
		if a.op == "delete" {
			if !errors.Is(err, storage.ErrNotFound) {
				t.Errorf("acknowledged delete of %s at %d: Get = %+v, %v", a.key, a.rev, kv, err)
			}
		} else if err != nil || kv.ModRevision != a.rev || string(kv.Value) != a.value {
			t.Errorf("acknowledged %s of %s at %d: Get = {%q %d}, %v", a.op, a.key, a.rev, kv.Value, kv.ModRevision, err)
		}
	}
	list, err := s.List(ctx, "/crash/", storage.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]crashState{}
	for _, kv := range list.Items {
		stored[kv.Key] = crashState{string(kv.Value), kv.CreateRevision, kv.ModRevision}
	}
	unacked := make([]int, crashWriters)
	adopted := 0
	keys := map[string]bool{}
	for k := range model {
		keys[k] = true
	}
	for k := range stored {
		keys[k] = true
	}
	for key := range keys {
		want, inModel := model[key]
		got, inStore := stored[key]
		if inModel == inStore && want == got {
			continue
		}
		w, _ := strconv.Atoi(strings.Split(key, "/")[2])
		if unacked[w]++; unacked[w] > 1 {
			t.Errorf("key %s is %+v (present %v), want %+v (present %v): a second unacknowledged change by writer %d",
				key, got, inStore, want, inModel, w)
			continue
		}
		if inStore {
			model[key] = got
		} else {
			delete(model, key)
		}
		adopted++
	}
	return adopted
}

// crashChild writes until it is killed, printing each acknowledged write.
// Each writer owns its keys, so every precondition is known to hold: a
// failed write is a bug, reported on stderr with an exit that fails the
// parent.
func crashChild(path string) {
	s, err := sqlite.Open(path, sqlite.WithHistory(crashHistory))
	if err != nil {
		fmt.Fprintln(os.Stderr, "crash child:", err)
		os.Exit(2)
	}
	var mu sync.Mutex
	print := func(line string) {
		mu.Lock()
		defer mu.Unlock()
		if _, err := os.Stdout.WriteString(line); err != nil {
			os.Exit(3)
		}
	}
	ctx := context.Background()
	print("READY\n")
	time.AfterFunc(30*time.Second, func() { os.Exit(5) }) // orphaned: give up
	var wg sync.WaitGroup
	for w := range crashWriters {
		wg.Go(func() {
			live := map[string]int64{}
			list, err := s.List(ctx, fmt.Sprintf("/crash/%d/", w), storage.ListOptions{})
			if err != nil {
				fmt.Fprintln(os.Stderr, "crash child: List:", err)
				os.Exit(4)
			}
			for _, kv := range list.Items {
				live[kv.Key] = kv.ModRevision
			}
			rng := rand.New(rand.NewPCG(uint64(w), uint64(time.Now().UnixNano())))
			for seq := 0; ; seq++ {
				key := fmt.Sprintf("/crash/%d/%02d", w, rng.IntN(crashKeys))
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
					fmt.Fprintf(os.Stderr, "crash child: %s %s (expect %d): %v\n", op, key, mod, err)
					os.Exit(4)
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
