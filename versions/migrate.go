package versions

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/storage"
)

// Rewrite returns a stored value in the current storage version, and
// whether that differs from the value: false leaves the key alone.
type Rewrite func(key string, value []byte) (current []byte, changed bool, err error)

// MigrateOptions say where a migration starts and whom it tells.
type MigrateOptions struct {
	// After resumes a migration after this key: the Key of the last
	// Progress an interrupted one reported. Empty starts at the prefix.
	After string
	// PageSize is how many keys are read at a time (default 500).
	PageSize int64
	// Progress, if set, is called after each page and at the end.
	Progress func(Progress)
}

// Progress is how far a migration has come.
type Progress struct {
	// Key is the last key done: pass it as MigrateOptions.After to resume.
	Key string
	// Seen counts the keys read, Rewritten those written anew.
	Seen, Rewritten int64
	// Remaining counts the keys after Key when the page was read (-1:
	// some, which the store did not count; see storage.ListResult).
	Remaining int64
}

// Migrate rewrites every key under prefix whose value rewrite changes, in
// key order. Each write is an update conditional on the revision read, so
// a concurrent write is never lost: on a conflict the key is read again
// and rewritten only if it still needs it; a key deleted meanwhile is
// skipped. It returns the progress made, also on error.
func Migrate(ctx context.Context, store storage.Interface, prefix string, rewrite Rewrite, opts MigrateOptions) (Progress, error) {
	if opts.PageSize <= 0 {
		opts.PageSize = 500
	}
	var p Progress
	start := prefix
	if opts.After != "" {
		start = opts.After + "\x00"
	}
	for {
		page, err := store.List(ctx, prefix, storage.ListOptions{Start: start, Limit: opts.PageSize})
		if err != nil {
			return p, err
		}
		for _, kv := range page.Items {
			done, err := migrateKey(ctx, store, kv, rewrite)
			if err != nil {
				return p, fmt.Errorf("migrate %s: %w", kv.Key, err)
			}
			p.Seen++
			if done {
				p.Rewritten++
			}
			p.Key = kv.Key
		}
		p.Remaining = page.Remaining
		if opts.Progress != nil {
			opts.Progress(p)
		}
		if page.Remaining == 0 || len(page.Items) == 0 {
			return p, nil
		}
		start = p.Key + "\x00"
	}
}

// migrateKey rewrites one key, reading it again after a conflict.
func migrateKey(ctx context.Context, store storage.Interface, kv storage.KeyValue, rewrite Rewrite) (bool, error) {
	for {
		value, changed, err := rewrite(kv.Key, kv.Value)
		if err != nil || !changed {
			return false, err
		}
		_, err = store.Update(ctx, kv.Key, value, kv.ModRevision)
		switch {
		case err == nil:
			return true, nil
		case errors.Is(err, storage.ErrNotFound):
			return false, nil
		case !errors.Is(err, storage.ErrConflict):
			return false, err
		}
		if kv, err = store.Get(ctx, kv.Key, 0); errors.Is(err, storage.ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
}
