package main

import (
	"context"
	"fmt"
	"log"
	"net"
	"net/http"
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
	if etcdBin == "" {
		etcdBin = filepath.Join(l.dir, "etcd")
		log.Printf("building etcd (go.etcd.io/etcd/server/v3, internal/test/robustness's version)")
		build := exec.CommandContext(ctx, "go", "build", "-o", etcdBin, "go.etcd.io/etcd/server/v3")
		build.Dir = filepath.Join(l.root, "internal", "test", "robustness")
		if out, err := build.CombinedOutput(); err != nil {
			return fmt.Errorf("go build etcd: %v\n%s", err, out)
		}
	}
	l.widgetsEtcdBin = filepath.Join(l.dir, "widgets-etcd")
	log.Printf("building ./storage/etcd/cmd/widgets-etcd")
	build := exec.CommandContext(ctx, "go", "build", "-o", l.widgetsEtcdBin, "./storage/etcd/cmd/widgets-etcd")
	build.Dir = l.root
	if out, err := build.CombinedOutput(); err != nil {
		return fmt.Errorf("go build widgets-etcd: %v\n%s", err, out)
	}
	data, err := os.MkdirTemp(l.dir, "etcd-")
	if err != nil {
		return err
	}
	client, peer := freeAddr(), freeAddr()
	cmd := exec.Command(etcdBin, "--data-dir", data,
		"--listen-client-urls", "http://"+client, "--advertise-client-urls", "http://"+client,
		"--listen-peer-urls", "http://"+peer, "--initial-advertise-peer-urls", "http://"+peer,
		"--initial-cluster", "default=http://"+peer, "--log-level", "error")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	l.procs = append(l.procs, cmd)
	endpoint := "http://" + client
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := http.Get(endpoint + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("etcd did not answer on %s: %v", client, err)
		}
	}
	store := []int{cmd.Process.Pid}
	if l.etcd, err = l.start(ctx, "kapi", l.widgetsEtcdBin, "-pprof", "-etcd", endpoint, "-addr"); err != nil {
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

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "127.0.0.1:0"
	}
	defer ln.Close()
	return ln.Addr().String()
}
