package storagetest

import (
	"context"
	"testing"

	"github.com/kapi-dev/kapi/storage"
)

// Compactor is implemented by backends that can compact on demand; the
// suite uses it to test [storage.ErrExpired].
type Compactor interface {
	// Compact discards the history before rev: afterwards reads at
	// revisions below rev, and watches from them, fail with
	// storage.ErrExpired, while rev and later keep working. A watcher still
	// reading events below rev ends with an ErrExpired event. A rev newer
	// than the store's is storage.ErrFutureRevision; one at or below an
	// earlier compaction changes nothing.
	Compact(ctx context.Context, rev int64) error
}

type testCase struct {
	name string
	run  func(t *testing.T, s storage.Interface)
}

var suite = []struct {
	group string
	cases []testCase
}{
	{"Write", []testCase{
		{"Empty", testEmpty},
		{"CreateGet", testCreateGet},
		{"CreateExisting", testCreateExisting},
		{"Update", testUpdate},
		{"Delete", testDelete},
		{"NotFound", testNotFound},
		{"StoreWideRevisions", testStoreWideRevisions},
		{"Preconditions", testPreconditions},
	}},
	{"Read", []testCase{
		{"Revision", testRevision},
		{"GetAtRevision", testGetAtRevision},
		{"List", testList},
		{"ListAtRevision", testListAtRevision},
		{"ListPaging", testListPaging},
		{"RemainingBeyondTheCap", testRemainingBeyondTheCap},
		{"EveryRevision", testEveryRevision},
	}},
	{"Watch", []testCase{
		{"Events", testWatchEvents},
		{"FromRevision", testWatchFromRevision},
		{"FromZero", testWatchFromZero},
		{"Interleaved", testWatchInterleaved},
		{"CancelEndsWatch", testWatchCancel},
		{"ManyWatchers", testWatchManyWatchers},
		{"ConcurrentWriters", testWatchConcurrentWriters},
	}},
	{"Compact", []testCase{
		{"Reads", testCompactReads},
		{"Watch", testCompactWatch},
		{"BehindWatcher", testCompactBehindWatcher},
	}},
	{"Concurrency", []testCase{
		{"Creates", testConcurrentCreates},
		{"Counter", testConcurrentCounter},
		{"Linearizable", testLinearizable},
	}},
	{"Context", []testCase{
		{"Cancelled", testCancelledContext},
	}},
	{"Migration", []testCase{
		{"Migrate", testMigrate},
	}},
	{"Faults", []testCase{
		{"Answers", testFaultAnswers},
		{"Readyz", testFaultReadyz},
		{"WatchBreak", testFaultWatchBreak},
		{"WatchRelist", testFaultWatchRelist},
	}},
	{"Close", []testCase{
		{"EndsEverything", testClose},
	}},
}

// Run runs the conformance suite, one subtest per case, each against a
// fresh store from newStore. newStore registers the store's cleanup with
// t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) storage.Interface) {
	for _, g := range suite {
		t.Run(g.group, func(t *testing.T) {
			for _, tc := range g.cases {
				t.Run(tc.name, func(t *testing.T) { tc.run(t, newStore(t)) })
			}
		})
	}
}
