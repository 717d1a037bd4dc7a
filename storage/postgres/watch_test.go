package postgres_test

import (
	"testing"

	"github.com/kapi-dev/kapi/storage/postgres"
)

// TestRecentKeepsTheLatest checks the watchers' in-memory log as the
// committer fills it, far past its bound (4,096 events): after every
// commit it holds the latest events, in revision order, and its array
// holds nothing else (a dropped event's value is not kept alive). No
// PostgreSQL needed.
func TestRecentKeepsTheLatest(t *testing.T) {
	if err := postgres.FollowCommits(3000, benchValue, true); err != nil {
		t.Fatal(err)
	}
}
