package postgres

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/kapi-dev/kapi/storage"
)

// fail turns the error of a call made under ctx (an opContext) into what
// the caller is told: its own context's error if that ended, ErrClosed if
// the store was closed meanwhile, otherwise the error classified as a
// storage fault.
func (s *Store) fail(ctx context.Context, err error) error {
	switch {
	case err == nil:
		return nil
	case context.Cause(ctx) == errStoreTimeout:
		return fmt.Errorf("%w: postgres: no answer in %v: %w", storage.ErrTimeout, s.config.timeout, err)
	case ctx.Err() != nil:
		return fmt.Errorf("postgres: %w", ctx.Err())
	case s.closed.Load(): // its pool closed under the call
		return storage.ErrClosed
	}
	err = mapError(err)
	if errors.Is(err, storage.ErrUnavailable) {
		s.suspect.Store(true)
	}
	return err
}

// mapError classifies an error of PostgreSQL or of the connection to it.
// An error the server reports is classified by its SQLSTATE; any other
// (the connection refused, reset or timed out) makes the store
// unavailable.
func mapError(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		if fault := faultOf(pgErr.Code); fault != nil {
			return fmt.Errorf("%w: postgres: %w", fault, err)
		}
		return fmt.Errorf("postgres: %w", err)
	}
	if pgconn.Timeout(err) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("%w: postgres: %w", storage.ErrTimeout, err)
	}
	return fmt.Errorf("%w: postgres: %w", storage.ErrUnavailable, err)
}

// faultOf is the storage fault a SQLSTATE stands for, or nil for the
// errors of a statement the store should not have sent (a bug).
// https://www.postgresql.org/docs/current/errcodes-appendix.html
func faultOf(code string) error {
	switch code {
	case "57014", // query_canceled: statement_timeout
		"55P03": // lock_not_available: lock_timeout
		return storage.ErrTimeout
	case "53100": // disk_full
		return storage.ErrNoSpace
	case "54000": // program_limit_exceeded: a key too large for the index
		return storage.ErrTooLarge
	case "25006", // read_only_sql_transaction: a standby, after a failover
		"40001", "40P01": // serialization failure, deadlock
		return storage.ErrUnavailable
	}
	switch {
	case strings.HasPrefix(code, "08"), // connection exceptions
		strings.HasPrefix(code, "53"), // insufficient resources: too many connections, out of memory
		strings.HasPrefix(code, "57"), // operator intervention: shutting down, starting up
		strings.HasPrefix(code, "58"): // system errors: I/O
		return storage.ErrUnavailable
	}
	return nil
}

// outcomeUnknown marks err, the failure of a write's round trip (its
// statements, then the commit), as leaving the write's outcome unknown,
// unless the server answered with an error of the transaction's (severity
// ERROR), which means it rolled the transaction back, or the write never
// left: pgx failed preparing the statements, which it does before sending
// them, or says nothing was sent. A lost connection, a timeout, or a
// FATAL error ending the session (a shutdown) may have come after the
// commit was durable.
func outcomeUnknown(err error) error {
	var (
		pgErr      *pgconn.PgError
		preprocess pgx.ErrPreprocessingBatch
	)
	switch {
	case errors.As(err, &pgErr) && cmp.Or(pgErr.SeverityUnlocalized, pgErr.Severity) == "ERROR",
		errors.As(err, &preprocess), pgconn.SafeToRetry(err):
		return err
	}
	return fmt.Errorf("%w (%w)", err, storage.ErrOutcomeUnknown)
}
