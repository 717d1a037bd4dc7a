package postgres_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage/postgres"
)

// TestArrayArgs: the committer's own array arguments reach PostgreSQL as
// the [][]byte and []int64 pgx encodes by itself do: NULL and empty
// elements, arrays empty and NULL, any int64.
func TestArrayArgs(t *testing.T) {
	needDatabase(t)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, c := range []struct {
		bytes [][]byte
		ints  []int64
	}{
		{[][]byte{[]byte("/a"), nil, {}, {0, 0xff, '"', '\\', ','}}, []int64{0, 1, 255, 256, -1, math.MaxInt64, math.MinInt64}},
		{[][]byte{}, []int64{}},
		{nil, nil},
	} {
		b, i := postgres.ArrayArgs(c.bytes, c.ints)
		var want, got [2]*string
		const q = `SELECT $1::bytea[]::text, $2::bigint[]::text`
		if err := conn.QueryRow(ctx, q, c.bytes, c.ints).Scan(&want[0], &want[1]); err != nil {
			t.Fatal(err)
		}
		if err := conn.QueryRow(ctx, q, b, i).Scan(&got[0], &got[1]); err != nil {
			t.Fatal(err)
		}
		for k := range want {
			if (want[k] == nil) != (got[k] == nil) || want[k] != nil && *want[k] != *got[k] {
				t.Errorf("%q %v: PostgreSQL got %v, want %v", c.bytes, c.ints, deref(got[k]), deref(want[k]))
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "NULL"
	}
	return *s
}

// TestCommitPlans: a commit's writes, as PostgreSQL plans them once it
// plans them generically (after five executions of a prepared
// statement), delete the batch's deletions from the current table through
// its primary key, not by scanning it: as key = ANY (ARRAY(SELECT ...)),
// the DELETE was planned as a scan of a table of a thousand rows, at
// every batch, deletions or not.
func TestCommitPlans(t *testing.T) {
	schema := freshSchema(t)
	mustStore(t, schema)
	ctx := t.Context()
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	current := pgx.Identifier{schema, "current"}.Sanitize()
	// Analyzed, as autovacuum leaves a table.
	for _, sql := range []string{
		"INSERT INTO " + current + " SELECT convert_to('/plan/' || i, 'UTF8'), '\\x00', 1, 1 FROM generate_series(1, 1000) i",
		"ANALYZE " + current,
		"SET plan_cache_mode = force_generic_plan",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := conn.Prepare(ctx, "write_batch", postgres.WriteBatchStatement(schema)); err != nil {
		t.Fatal(err)
	}
	args := []any{pgx.QueryExecModeSimpleProtocol, []int64{2000}, [][]byte{[]byte("/plan/1")}, [][]byte{nil}, []int64{1}, []int64{1},
		[]bool{true}, []bool{true}, "nobody", "", int64(2000)}
	rows, err := conn.Query(ctx, "EXPLAIN EXECUTE write_batch("+placeholders(len(args)-1)+")", args...)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	if text := strings.Join(plan, "\n"); strings.Contains(text, "Seq Scan on current") {
		t.Errorf("a commit's writes scan the current table:\n%s", text)
	}
}

func placeholders(n int) string {
	p := make([]string, n)
	for i := range p {
		p[i] = fmt.Sprintf("$%d", i+1)
	}
	return strings.Join(p, ", ")
}
