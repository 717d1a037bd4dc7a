package pgtest_test

import (
	"context"
	"errors"
	"log"

	"github.com/kapi-dev/kapi/storage/postgres"
	"github.com/kapi-dev/kapi/storage/postgres/pgtest"
)

// A test's own PostgreSQL: started, crashed as a power cut would and
// started again, then removed.
func ExampleStart() {
	c, err := pgtest.Start("shared_buffers=64MB")
	if errors.Is(err, pgtest.ErrNoPostgres) {
		log.Print("skipping: ", err)
		return
	}
	if err != nil {
		log.Fatal(err)
	}
	defer c.Remove()

	ctx := context.Background()
	s, err := postgres.Open(ctx, c.URL())
	if err != nil {
		log.Fatal(err)
	}
	defer s.Close()
	if err := c.Stop("immediate"); err != nil { // a crash
		log.Fatal(err)
	}
	if err := c.Start(); err != nil {
		log.Fatal(err)
	}
	// s reconnects by itself: no need to reopen it.
}
