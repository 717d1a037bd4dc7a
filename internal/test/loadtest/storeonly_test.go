package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestStoreOnlyRow: a server making only its store's requests (-store-only;
// here the bolt-only server under the etcd-only server's name, for etcd is
// not at hand) runs beside kapi and the ceiling in GET and the writes, and
// the report sets kapi's writes against it and its GET against the
// ceiling, as it does for kapi on etcd.
func TestStoreOnlyRow(t *testing.T) {
	kapi, ceil := newKapiAndCeiling(t)
	sz := sizes{Small: 5, Large: 20, Duration: 100 * time.Millisecond, Conns: 2, Settle: 10 * time.Millisecond}
	e := &env{
		Kapi: kapi, Ceiling: ceil,
		StoreOnly: serveHandler(t, etcdOnlyName, newTestCeiling(t, t.TempDir())),
		Workloads: []string{"get", "list-small-json", "create", "update", "patch", "apply"},
		Sizes:     sz, Logf: t.Logf,
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	results, err := run(ctx, e)
	if err != nil {
		t.Fatal(err)
	}
	only := map[string]bool{}
	for _, r := range results {
		if r.Server == etcdOnlyName {
			only[r.Workload] = true
			if r.Errors > 0 || r.RequestsPerSec <= 0 {
				t.Errorf("%s on the etcd-only server: %d errors (%s), %.0f req/s", r.Workload, r.Errors, r.FirstError, r.RequestsPerSec)
			}
		}
		if k, _ := pair(results, r.Workload); k == nil || k.Server != "kapi" {
			t.Errorf("%s: kapi's result is %+v", r.Workload, k)
		}
	}
	for _, w := range e.Workloads {
		if want := w != "list-small-json"; only[w] != want {
			t.Errorf("%s measured on the etcd-only server: %v, want %v", w, only[w], want)
		}
	}
	targets := targetsTable(judge(results, sz))
	for _, want := range []string{
		"GET on etcd ≥ 60% of its ceiling's requests/s",
		"CREATE on etcd ≥ 75% of the etcd-only server's requests/s",
		"PUT on etcd ≥ 75% of the etcd-only server's requests/s",
		"merge PATCH on etcd ≥ 75%", "server-side apply on etcd ≥ 75%",
		"% of the ceiling's; 1 etcd round trip)", "% of the etcd-only server's",
	} {
		if !strings.Contains(targets, want) {
			t.Errorf("the targets lack %q:\n%s", want, targets)
		}
	}
	if tb := table(results); !strings.Contains(tb, "the etcd-only server") {
		t.Errorf("the table does not say where the etcd-only server stands:\n%s", tb)
	}
}
