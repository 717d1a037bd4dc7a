package postgres_test

import (
	"context"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/internal/leakcheck"
	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/postgres/pgtest"
)

// The package's tests share one PostgreSQL: the one $KAPI_POSTGRES_URL
// names, or else a throwaway cluster they start themselves (initdb into a
// temporary directory, as the postgres user when run as root, since
// PostgreSQL refuses to run as root; listening on 127.0.0.1 and a Unix
// socket in that directory only) and remove at the end. Each test's stores
// live in a schema of their own. Without PostgreSQL the tests skip, saying
// why, except in CI (CI set), where they fail. No goroutine may outlive
// the tests (leakcheck): a store's Close ends all of its own.

var (
	// baseURL is the connection URL of the tests' database.
	baseURL string
	// skipReason, if not empty, is why there is no database.
	skipReason string
	// testCluster is the throwaway cluster, nil if $KAPI_POSTGRES_URL
	// named one.
	testCluster *pgtest.Cluster
)

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	if url := os.Getenv("KAPI_POSTGRES_URL"); url != "" {
		baseURL = url
		return leakcheck.Main(m)
	}
	c, err := pgtest.Start()
	if err != nil {
		if os.Getenv("CI") != "" {
			fmt.Fprintln(os.Stderr, "starting PostgreSQL for the tests:", err)
			return 1
		}
		skipReason = fmt.Sprintf("no PostgreSQL to test on: %v (install postgresql, or set KAPI_POSTGRES_URL)", err)
		return leakcheck.Main(m)
	}
	defer func() {
		if err := c.Remove(); err != nil {
			fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
		}
	}()
	testCluster, baseURL = c, c.URL()
	return leakcheck.Main(m)
}

// needDatabase skips the test when there is no database.
func needDatabase(t testing.TB) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
}

var schemas atomic.Int64

// freshSchema returns a schema no other test uses, dropped when the test
// ends.
func freshSchema(t testing.TB) string {
	t.Helper()
	needDatabase(t)
	name := fmt.Sprintf("test_%d_%d", os.Getpid(), schemas.Add(1))
	dropAtEnd(t, name)
	return name
}

// dropAtEnd drops the schema when the test ends.
func dropAtEnd(t testing.TB, name string) {
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, baseURL)
		if err != nil {
			return // the test that stopped the server says so
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{name}.Sanitize()+" CASCADE")
	})
}

// mustStore returns a store in schema, closed when the test ends.
func mustStore(t testing.TB, schema string, opts ...postgres.Option) *postgres.Store {
	t.Helper()
	needDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := postgres.Open(ctx, baseURL, append([]postgres.Option{postgres.WithSchema(schema)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}
