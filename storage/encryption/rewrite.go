package encryption

import (
	"context"
	"errors"
	"fmt"

	"github.com/kapi-dev/kapi/storage"
)

// RewriteResult counts what [Rewrite] found.
type RewriteResult struct {
	// Rewritten values were re-encrypted under their resource's first
	// provider and key.
	Rewritten int
	// Current values were written so already, and left alone.
	Current int
	// Unreadable values opened under no provider (Kubernetes' corrupt
	// objects): left as they are, for an unsafe delete to remove.
	Unreadable int
}

// rewritePage is how many keys Rewrite reads at a time.
const rewritePage = 500

// Rewrite completes a key rotation: it re-writes, under the first
// provider and key of its resource, every value under prefix that was
// written otherwise (under an older key, another provider, or in clear).
// Once it returns, the keys after the first can leave the configuration.
//
// wrapped is what [New] returned. Every re-write is an update conditional on
// the revision read, so a write racing with it wins and is read again; a
// value re-written gets a new revision, as after any update (watchers see
// a modification with the same content). Run it once the configuration
// with the new first key is on every replica, or a replica still on the
// old one may write under the old key again.
func Rewrite(ctx context.Context, wrapped storage.Interface, prefix string) (RewriteResult, error) {
	var res RewriteResult
	wrapper, ok := wrapped.(interface{ encryptionStore() *store })
	if !ok {
		return res, fmt.Errorf("%w: Rewrite needs the store encryption.New returned, not a %T", ErrConfig, wrapped)
	}
	s := wrapper.encryptionStore()
	start := ""
	for {
		page, err := s.inner.List(ctx, prefix, storage.ListOptions{Start: start, Limit: rewritePage})
		if err != nil {
			return res, err
		}
		for _, kv := range page.Items {
			if err := s.rewrite(ctx, kv, &res); err != nil {
				return res, fmt.Errorf("encryption: rewrite %s: %w", kv.Key, err)
			}
		}
		if page.Remaining == 0 || len(page.Items) == 0 {
			return res, nil
		}
		start = page.Items[len(page.Items)-1].Key + "\x00"
	}
}

// rewrite re-writes one value if it is not current, reading it again
// after each lost race.
func (s *store) rewrite(ctx context.Context, kv storage.KeyValue, res *RewriteResult) error {
	ch := s.chainFor(kv.Key)
	for {
		plaintext, current, ok := ch.open(kv.Value, kv.Key)
		switch {
		case !ok:
			res.Unreadable++
			return nil
		case current:
			res.Current++
			return nil
		}
		sealed, err := ch.seal(plaintext, kv.Key)
		if err != nil {
			return err
		}
		_, err = s.inner.Update(ctx, kv.Key, sealed, kv.ModRevision)
		switch {
		case err == nil:
			res.Rewritten++
			return nil
		case errors.Is(err, storage.ErrNotFound):
			return nil // deleted since
		case !errors.Is(err, storage.ErrConflict):
			return err
		}
		if kv, err = s.inner.Get(ctx, kv.Key, 0); errors.Is(err, storage.ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
	}
}
