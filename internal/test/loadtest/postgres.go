package main

import (
	"bytes"
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/kapi-dev/kapi/storage/postgres/pgtest"
)

// The PostgreSQL rows of the load run (see doc.go): -serve-postgres starts
// the throwaway cluster that kapi on PostgreSQL, the PostgreSQL-only
// server (-serve-ceiling -ceiling-postgres) and, for the scale run,
// -fill-postgres use.

// servePostgres starts a throwaway cluster, writes its URL and its
// postmaster's PID to file, one a line, and removes the cluster when ctx
// ends.
func servePostgres(ctx context.Context, file string) error {
	c, err := pgtest.Start()
	if err != nil {
		return err
	}
	defer func() {
		if err := c.Remove(); err != nil {
			log.Print(err)
		}
	}()
	pid, err := c.PID()
	if err != nil {
		return err
	}
	if err := os.WriteFile(file, fmt.Appendf(nil, "%s\n%d\n", c.URL(), pid), 0o644); err != nil {
		return err
	}
	log.Printf("PostgreSQL at %s, postmaster %d, in %s", c.URL(), pid, c.Dir())
	<-ctx.Done()
	return nil
}

// fillPostgres stores n widgets in kapi's schema of the database at url as
// kapi on PostgreSQL stores them, for the scale run: copies of the newest
// widget there (created through kapi beforehand, so that key and value are
// kapi's own), named fill-0000001 and on, in the template's namespace, each
// its own revision, as if written one by one. The store must not be open
// meanwhile: the fill moves its revision counter.
func fillPostgres(ctx context.Context, url string, n int) error {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	var key, value []byte
	err = conn.QueryRow(ctx, `SELECT key, value FROM kapi.current WHERE key LIKE '/widgets.%' ORDER BY mod_rev DESC LIMIT 1`).Scan(&key, &value)
	if err != nil {
		return fmt.Errorf("the template widget (create one through kapi first): %w", err)
	}
	i := bytes.LastIndexByte(key, '/')
	prefix, name := key[:i+1], key[i+1:]
	if !bytes.Contains(value, []byte(`"name":"`+string(name)+`"`)) {
		return fmt.Errorf("the template %s does not hold its name as \"name\":%q", key, name)
	}
	started := time.Now()
	tx, err := conn.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx)
	var rev int64
	if err := tx.QueryRow(ctx, `SELECT rev FROM kapi.revision FOR UPDATE`).Scan(&rev); err != nil {
		return err
	}
	// The name, and the uid's last 7 digits, made unique from the row's
	// number.
	_, err = tx.Exec(ctx, `INSERT INTO kapi.log (rev, key, value, create_rev, prev_rev, deleted)
SELECT $1 + i, $2 || convert_to('fill-' || lpad(i::text, 7, '0'), 'UTF8'),
  convert_to(regexp_replace(replace(convert_from($3, 'UTF8'), '"name":"' || $4 || '"', '"name":"fill-' || lpad(i::text, 7, '0') || '"'),
    '"uid":"([0-9a-f-]{29})[0-9a-f]{7}"', '"uid":"\1' || lpad(to_hex(i), 7, '0') || '"'), 'UTF8'),
  $1 + i, 0, false
FROM generate_series(1, $5::bigint) i`, rev, prefix, value, string(name), n)
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `INSERT INTO kapi.current (key, value, create_rev, mod_rev) SELECT key, value, rev, rev FROM kapi.log WHERE rev > $1`, rev); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE kapi.revision SET rev = $1`, rev+int64(n)); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE kapi.current, kapi.log`); err != nil {
		return err
	}
	var size int64
	_ = conn.QueryRow(ctx, `SELECT pg_total_relation_size('kapi.current') + pg_total_relation_size('kapi.log')`).Scan(&size)
	log.Printf("stored %d widgets under %s in %s (revisions %d to %d); the tables take %.0f MiB", n, prefix, time.Since(started).Round(time.Millisecond), rev+1, rev+int64(n), float64(size)/(1<<20))
	return nil
}
