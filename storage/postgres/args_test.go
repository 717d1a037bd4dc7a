package postgres_test

import (
	"math"
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
