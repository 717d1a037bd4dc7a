package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// startEtcd starts kapi on etcd for the workloads named with etcdSuffix:
// one etcd member (etcdBin, or built from the version
// internal/test/robustness requires, as sqlrun.sh builds it) with its data
// in a directory on disk, storage/etcd/cmd/widgets-etcd (-pprof) on it, and
// the etcd-only server (-serve-ceiling -ceiling-etcd) on the same member.
// etcd's CPU is counted apart from each server's (target.StorePIDs).
func (l *localServers) startEtcd(ctx context.Context, etcdBin string) error {
	cmd, endpoint, _, err := l.runEtcd(ctx, etcdBin, "etcd-", os.Stderr)
	if err != nil {
		return err
	}
	widgetsEtcd, err := l.widgetsEtcd(ctx)
	if err != nil {
		return err
	}
	store := []int{cmd.Process.Pid}
	if l.etcd, err = l.start(ctx, "kapi", widgetsEtcd, "-pprof", "-etcd", endpoint, "-addr"); err != nil {
		return err
	}
	l.etcd.StorePIDs = store
	self, err := os.Executable()
	if err != nil {
		return err
	}
	if l.etcdOnly, err = l.start(ctx, etcdOnlyName, self, "-ceiling-etcd", endpoint, "-serve-ceiling"); err != nil {
		return err
	}
	l.etcdOnly.StorePIDs = store
	return nil
}

// etcdBinary is etcdBin, or etcd built once from the version
// internal/test/robustness requires, as sqlrun.sh builds it.
func (l *localServers) etcdBinary(ctx context.Context, etcdBin string) (string, error) {
	if etcdBin != "" {
		return etcdBin, nil
	}
	bin := filepath.Join(l.dir, "etcd")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	log.Printf("building etcd (go.etcd.io/etcd/server/v3, internal/test/robustness's version)")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "go.etcd.io/etcd/server/v3")
	build.Dir = filepath.Join(l.root, "internal", "test", "robustness")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build etcd: %v\n%s", err, out)
	}
	return bin, nil
}

// widgetsEtcd is storage/etcd/cmd/widgets-etcd, built once.
func (l *localServers) widgetsEtcd(ctx context.Context) (string, error) {
	if l.widgetsEtcdBin != "" {
		return l.widgetsEtcdBin, nil
	}
	bin := filepath.Join(l.dir, "widgets-etcd")
	log.Printf("building ./storage/etcd/cmd/widgets-etcd")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./storage/etcd/cmd/widgets-etcd")
	build.Dir = l.root
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build widgets-etcd: %v\n%s", err, out)
	}
	l.widgetsEtcdBin = bin
	return bin, nil
}

// runEtcd starts one etcd member on loopback, its data in a new directory
// of the harness's named from pattern, its log to logTo, and waits for it
// to answer: its process, client URL and data directory. The member is
// stopped with the harness's other processes. extra are more flags for it.
func (l *localServers) runEtcd(ctx context.Context, etcdBin, pattern string, logTo io.Writer, extra ...string) (cmd *exec.Cmd, endpoint, data string, err error) {
	bin, err := l.etcdBinary(ctx, etcdBin)
	if err != nil {
		return nil, "", "", err
	}
	if data, err = os.MkdirTemp(l.dir, pattern); err != nil {
		return nil, "", "", err
	}
	client, peer := freeAddr(), freeAddr()
	endpoint = "http://" + client
	args := append([]string{"--data-dir", data,
		"--listen-client-urls", endpoint, "--advertise-client-urls", endpoint,
		"--listen-peer-urls", "http://" + peer, "--initial-advertise-peer-urls", "http://" + peer,
		"--initial-cluster", "default=http://" + peer, "--log-level", "error"}, extra...)
	cmd = exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = logTo, logTo
	if err := cmd.Start(); err != nil {
		return nil, "", "", err
	}
	l.procs = append(l.procs, cmd)
	if err := waitHTTP(ctx, endpoint+"/health", 30*time.Second); err != nil {
		return nil, "", "", fmt.Errorf("etcd: %w", err)
	}
	return cmd, endpoint, data, nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}
