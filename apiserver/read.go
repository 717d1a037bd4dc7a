package apiserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/watch"
)

func (rq *request) get(ctx context.Context) error {
	key := rq.res.key(rq.namespace, rq.name)
	if err := rq.consistent(ctx, rq.query.Get("resourceVersion")); errors.Is(err, errCacheBehind) {
		kv, err := rq.s.config.store.Get(ctx, key, 0)
		if err != nil {
			return err
		}
		obj, err := rq.res.readStored(kv)
		if err != nil {
			return err
		}
		return rq.respond(http.StatusOK, obj)
	} else if err != nil {
		return err
	}
	item, _ := rq.res.cache.Get(key)
	if item == nil {
		return rq.res.missing(key)
	}
	item, err := rq.res.versioned(item)
	if err != nil {
		return err
	}
	data, err := rq.encodeOne(item)
	if err != nil {
		return err
	}
	rq.writeEncoded(http.StatusOK, data)
	return nil
}

// missing is why the cache has no object at key: none is stored, or the one
// stored cannot be read.
func (r *resource) missing(key string) error {
	for _, u := range r.cache.Unreadable(key) {
		if u.Key == key {
			return u.Err
		}
	}
	return storage.ErrNotFound
}

// continueToken is where the next page of a chunked list starts. It travels
// base64-encoded and opaque, as kube-apiserver's.
type continueToken struct {
	APIVersion string `json:"v"`
	Revision   int64  `json:"rv"`
	Start      string `json:"start"` // relative to the list's key prefix
}

func encodeContinue(rev int64, start string) string {
	data, _ := json.Marshal(continueToken{"meta.k8s.io/v1", rev, start})
	return base64.RawURLEncoding.EncodeToString(data)
}

// errContinueExpired is kube-apiserver's answer to a continue token whose
// revision has been compacted away.
func errContinueExpired() error {
	return NewStatusError(http.StatusGone, kapi.StatusReasonExpired,
		"The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter.")
}

func decodeContinue(s string) (continueToken, error) {
	var t continueToken
	data, err := base64.RawURLEncoding.DecodeString(s)
	if err == nil {
		err = json.Unmarshal(data, &t)
	}
	if err != nil || t.APIVersion != "meta.k8s.io/v1" || t.Revision <= 0 || t.Start == "" {
		return t, badRequest("continue key is not valid: the token is malformed; start the list again without it")
	}
	// A start key the server never wrote, one that climbs out of the list's
	// prefix (as kube-apiserver, refuse what path.Clean would change).
	if key := "/" + strings.TrimPrefix(t.Start, "/"); path.Clean(key) != key {
		return t, badRequest("continue key is not valid: %s", t.Start)
	}
	return t, nil
}

func (rq *request) list(ctx context.Context) error {
	q := rq.query
	limit := int64(0)
	if s := q.Get("limit"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return badRequest("limit must be a non-negative integer, not %q", s)
		}
		limit = n
	}
	sel, err := rq.parseSelectors()
	if err != nil {
		return err
	}
	rv, match, token := q.Get("resourceVersion"), q.Get("resourceVersionMatch"), q.Get("continue")
	if errs := validateListOptions(rv, match, token, q.Has("sendInitialEvents")); len(errs) > 0 {
		return listOptionsInvalid(errs...)
	}
	prefix := rq.res.keyPrefix(rq.namespace)
	var items []*watch.Item
	var rev int64
	var lastKey string // where the next page starts after
	var remaining int64
	switch {
	case token != "":
		if rv != "" && rv != "0" {
			return badRequest("specifying resource version is not allowed when using continue")
		}
		t, err := decodeContinue(token)
		if err != nil {
			return err
		}
		if rq.s.hub.ListExpired(t.Revision) {
			return errContinueExpired() // as its revision would be compacted in kube-apiserver
		}
		items, rev, remaining, lastKey, err = rq.listStored(ctx, prefix, t.Revision, prefix+t.Start, limit, sel)
		if errors.Is(err, storage.ErrExpired) {
			return errContinueExpired()
		}
		if err != nil {
			return err
		}
	case match == "Exact" || match == "" && limit > 0 && rv != "" && rv != "0":
		// The list as it was at rv (older clients: a limit and an rv, no match).
		at, err := parseRevision(rv)
		if err != nil {
			return err
		}
		if err := rq.consistent(ctx, rv); err != nil { // a revision ahead of the store is waited for, briefly
			return err
		}
		if items, rev, remaining, lastKey, err = rq.listStored(ctx, prefix, at, prefix, limit, sel); err != nil {
			return err
		}
	default:
		if err := rq.consistent(ctx, rv); errors.Is(err, errCacheBehind) {
			if items, rev, remaining, lastKey, err = rq.listStored(ctx, prefix, 0, prefix, limit, sel); err != nil {
				return err
			}
			break
		} else if err != nil {
			return err
		}
		if bad := rq.res.cache.Unreadable(prefix); len(bad) > 0 {
			return unreadableList(rq.res, bad)
		}
		var n int
		items, rev, n = rq.res.cache.List(prefix, "", int(limit), sel.filter())
		if sel.empty() && limit == 0 && !rq.res.converts() {
			rq.listPrefix, rq.listRev = prefix, rev // a whole collection (see joinedList)
		}
		remaining = int64(n)
		if len(items) > 0 {
			lastKey = items[len(items)-1].Key
		}
		if rq.res.converts() {
			items = append([]*watch.Item(nil), items...) // List's may be shared
			for i, it := range items {
				if items[i], err = rq.res.versioned(it); err != nil {
					return err
				}
			}
		}
	}

	meta := kapi.ListMeta{ResourceVersion: formatRevision(rev)}
	if remaining != 0 && lastKey != "" { // < 0: some, not counted
		meta.Continue = encodeContinue(rev, strings.TrimPrefix(lastKey, prefix)+"\x00")
		rq.s.hub.Listed(rev)
		if sel.empty() && remaining > 0 {
			meta.RemainingItemCount = &remaining
		}
	}
	return rq.writeList(meta, items)
}

// validateListOptions refuses the combinations of list parameters that
// kube-apiserver refuses, with its words.
func validateListOptions(rv, match, token string, sendInitialEvents bool) FieldErrors {
	var errs FieldErrors
	if match != "" {
		if rv == "" {
			errs = append(errs, Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
		}
		if token != "" {
			errs = append(errs, Forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden when continue is provided"))
		}
		if match != "Exact" && match != "NotOlderThan" {
			errs = append(errs, NotSupported("resourceVersionMatch", match, "Exact", "NotOlderThan", ""))
		}
		if match == "Exact" && rv == "0" {
			errs = append(errs, Forbidden("resourceVersionMatch", `resourceVersionMatch "exact" is forbidden for resourceVersion "0"`))
		}
	}
	if sendInitialEvents {
		errs = append(errs, Forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list"))
	}
	return errs
}

// listStored reads one page from the store at revision rev, for reads the
// cache cannot serve: continued pages and exact revisions.
func (rq *request) listStored(ctx context.Context, prefix string, rev int64, start string, limit int64, sel selector) (items []*watch.Item, at, remaining int64, lastKey string, err error) {
	page, err := rq.s.config.store.List(ctx, prefix, storage.ListOptions{Revision: rev, Start: start, Limit: limit})
	if err != nil {
		return nil, 0, 0, "", err
	}
	var bad []watch.Unreadable
	for _, kv := range page.Items {
		obj, err := rq.res.readStored(kv)
		var corrupt *corruptObject
		if errors.As(err, &corrupt) {
			bad = append(bad, watch.Unreadable{Key: kv.Key, Revision: kv.ModRevision, Err: corrupt})
			continue
		}
		if err != nil {
			return nil, 0, 0, "", err
		}
		if sel.matches(obj) {
			items = append(items, watch.NewItem(kv.Key, kv.ModRevision, obj))
		}
	}
	if len(bad) > 0 {
		return nil, 0, 0, "", unreadableList(rq.res, bad)
	}
	if n := len(page.Items); n > 0 {
		lastKey = page.Items[n-1].Key
	}
	return items, page.Revision, page.Remaining, lastKey, nil
}
