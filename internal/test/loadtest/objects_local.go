package main

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/kapi-dev/kapi/storage"
)

// The objects curve's stores as local processes: kapi on a bolt file
// (examples/widgets -data DIR) and kapi on one etcd member
// (storage/etcd/cmd/widgets-etcd), etcd built as sqlrun.sh builds it unless
// -etcd-bin names one.

// objectStores returns the stores of the objects curve named in names
// (bolt, etcd).
func (l *localServers) objectStores(names []string, etcdBin string, etcdMax int) func(ctx context.Context) ([]*objectStore, error) {
	return func(ctx context.Context) ([]*objectStore, error) {
		var out []*objectStore
		for _, name := range names {
			var s *objectStore
			var err error
			switch name {
			case "bolt":
				s, err = l.boltObjects()
			case "etcd":
				if s, err = l.etcdObjects(ctx, etcdBin); err == nil {
					s.Max = etcdMax
				}
			default:
				err = fmt.Errorf("no store %q for the objects curve (bolt, etcd)", name)
			}
			if err != nil {
				for _, s := range out {
					s.Close()
				}
				return nil, err
			}
			out = append(out, s)
		}
		return out, nil
	}
}

func (l *localServers) boltObjects() (*objectStore, error) {
	dir, err := os.MkdirTemp(l.dir, "objects-bolt-")
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, "kapi.db")
	return &objectStore{
		Name: "bolt",
		Template: func(ctx context.Context) (string, []byte, error) {
			return boltTemplate(ctx, file)
		},
		Fill: func(ctx context.Context, key string, value []byte, from, to int) error {
			return fillBolt(ctx, file, key, value, from, to)
		},
		Start: func(ctx context.Context, listening func(*target)) (*target, time.Duration, time.Duration, func(), error) {
			return l.startReady(ctx, listening, l.widgetsBin, "-pprof", "-data", dir, "-addr")
		},
		Size:     func() int64 { return dirSize(dir) },
		StorePID: func() int { return 0 },
		Close:    func() { _ = os.RemoveAll(dir) },
	}, nil
}

// freshUncapped starts another example server, empty, with no cap on the
// watches open at once, for the watchers curve.
func (l *localServers) freshUncapped() (*target, func(), error) {
	t, err := l.start(context.Background(), "kapi", l.widgetsBin, "-pprof", "-max-watches", "0", "-addr")
	if err != nil {
		return nil, nil, err
	}
	cmd := l.procs[len(l.procs)-1]
	return t, func() { stopProc(cmd) }, nil
}

// etcdObjects starts one etcd member, its data in a directory of its own,
// with room for a million widgets (the default quota is 2 GiB) and
// transactions of etcdFillBatch puts; its log goes to a file in the
// harness's temporary directory.
func (l *localServers) etcdObjects(ctx context.Context, etcdBin string) (*objectStore, error) {
	kapiBin, err := l.widgetsEtcd(ctx)
	if err != nil {
		return nil, err
	}
	logFile, err := os.Create(filepath.Join(l.dir, "objects-etcd.log"))
	if err != nil {
		return nil, err
	}
	defer logFile.Close() // the child has its own descriptor
	cmd, endpoint, dir, err := l.runEtcd(ctx, etcdBin, "objects-etcd-", logFile,
		"--quota-backend-bytes", fmt.Sprint(int64(16)<<30), "--max-txn-ops", fmt.Sprint(etcdFillBatch+8), "--max-request-bytes", fmt.Sprint(32<<20))
	if err != nil {
		return nil, err
	}
	remove := func() { stopProc(cmd); _ = os.RemoveAll(dir) }
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 5 * time.Second, MaxCallSendMsgSize: 64 << 20})
	if err != nil {
		remove()
		return nil, err
	}
	const prefix = "/kapi/" // widgets-etcd's default
	return &objectStore{
		Name: "etcd",
		Template: func(ctx context.Context) (string, []byte, error) {
			resp, err := c.Get(ctx, prefix+"data/", clientv3.WithPrefix())
			if err != nil {
				return "", nil, err
			}
			var kvs []storage.KeyValue
			for _, kv := range resp.Kvs {
				kvs = append(kvs, storage.KeyValue{Key: string(kv.Key), Value: kv.Value})
			}
			return objectsTemplate(kvs)
		},
		Fill: func(ctx context.Context, key string, value []byte, from, to int) error {
			return fillEtcd(ctx, c, prefix+"revision", key, value, from, to)
		},
		Start: func(ctx context.Context, listening func(*target)) (*target, time.Duration, time.Duration, func(), error) {
			return l.startReady(ctx, listening, kapiBin, "-etcd", endpoint, "-addr")
		},
		Size:     func() int64 { return dirSize(dir) },
		StorePID: func() int { return cmd.Process.Pid },
		Close:    func() { _ = c.Close(); remove() },
	}, nil
}

// etcdFillBatch is the puts of one of the fill's etcd transactions.
const etcdFillBatch = 2000

// fillEtcd writes the copies in transactions of etcdFillBatch puts, each
// with the store's revision marker as kapi's writes update it, a few at
// once.
func fillEtcd(ctx context.Context, c *clientv3.Client, marker, key string, value []byte, from, to int) error {
	batches := (to - from + etcdFillBatch - 1) / etcdFillBatch
	return inParallel(ctx, batches, 4, func(b int) error {
		ops := make([]clientv3.Op, 0, etcdFillBatch+1)
		for i := from + b*etcdFillBatch; i < min(to, from+(b+1)*etcdFillBatch); i++ {
			k, v := copyObject(key, value, i)
			ops = append(ops, clientv3.OpPut(k, string(v)))
		}
		_, err := c.Txn(ctx).Then(append(ops, clientv3.OpPut(marker, ""))...).Commit()
		return err
	})
}

// startReady starts bin with args and a free loopback address last, and
// waits for its /readyz to answer 200, calling listening (if not nil) at
// its first /healthz answer: it returns the time from the
// process's start to its first /healthz answer and to that 200.
func (l *localServers) startReady(ctx context.Context, listening func(*target), bin string, args ...string) (*target, time.Duration, time.Duration, func(), error) {
	addr := freeAddr()
	cmd := exec.Command(bin, append(args, addr)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return nil, 0, 0, nil, err
	}
	l.procs = append(l.procs, cmd)
	stop := func() { stopProc(cmd) }
	t := &target{Name: "kapi", URL: "http://" + addr, PID: cmd.Process.Pid}
	c := &http.Client{Timeout: 5 * time.Second}
	var healthz time.Duration
	for deadline := start.Add(readyWithin); ; {
		probe := "/readyz"
		if healthz == 0 {
			probe = "/healthz"
		}
		if resp, err := c.Get(t.URL + probe); err == nil {
			resp.Body.Close()
			at := time.Since(start)
			switch {
			case healthz == 0:
				healthz = at
				if listening != nil {
					listening(t)
				}
				continue // and /readyz at once
			case resp.StatusCode == http.StatusOK:
				return t, healthz, at, stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, 0, 0, nil, fmt.Errorf("%s: %w", filepath.Base(bin), errNotReady)
		}
		if ctx.Err() != nil {
			stop()
			return nil, 0, 0, nil, ctx.Err()
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitHTTP(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("%s did not answer 200: %v", url, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// dirSize is the bytes of the files under dir.
func dirSize(dir string) int64 {
	var n int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil && !strings.HasSuffix(path, ".tmp") {
				n += info.Size()
			}
		}
		return nil
	})
	return n
}
