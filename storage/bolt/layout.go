package bolt

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	bbolt "go.etcd.io/bbolt"
)

// The file holds three buckets:
//
//	meta     "format" → 1; "rev", "compacted", "held" → 8-byte big-endian
//	history  escape(key) 0x00 0x01 rev → record: every version of every key
//	         that reads at a revision in the window may see, in key order,
//	         then revision order
//	log      rev → key: which key each revision in the window wrote
//
// A version's record is a flags byte (tombstone or not), the key's
// CreateRevision (8 bytes) and the value. A deletion is a tombstone version,
// so a read at a revision finds the newest version at or below it and the
// key is absent there if that version is a tombstone. The event of revision
// r is rebuilt from log[r] and the history: the version written at r, and the
// one before it for Prev.
//
// The escaping (0x00 → 0x00 0xFF, then the terminator 0x00 0x01) keeps the
// history in key order and makes every key's versions one contiguous run:
// no key's encoding is a prefix of another's, and escape(prefix) is a prefix
// of escape(key) exactly when prefix is a prefix of key.
var (
	metaBucket    = []byte("meta")
	historyBucket = []byte("history")
	logBucket     = []byte("log")

	formatKey    = []byte("format")
	revKey       = []byte("rev")
	compactedKey = []byte("compacted")
	heldKey      = []byte("held")
)

// format is the layout's version, stored in meta; Open refuses others.
const format = 1

const (
	recordHeader = 9 // flags byte, CreateRevision
	tombstone    = 1 // flag: the key was deleted at this version's revision
	revLen       = 8
)

// maxKeyLen keeps every history key under bbolt's limit: escaping can
// double a key, and the terminator and revision add ten bytes.
const maxKeyLen = (bbolt.MaxKeySize - 2 - revLen) / 2

// errCorrupt reports a file whose buckets disagree with each other.
var errCorrupt = errors.New("bolt: the file is inconsistent")

// meta is the store's bookkeeping, read and written inside transactions.
type meta struct {
	rev       int64 // revision of the last write
	compacted int64 // oldest revision reads may ask for
	held      int64 // bytes of the values kept only for history
}

func readMeta(tx *bbolt.Tx) (meta, error) {
	b := tx.Bucket(metaBucket)
	if b == nil || tx.Bucket(historyBucket) == nil || tx.Bucket(logBucket) == nil {
		return meta{}, fmt.Errorf("%w: a bucket is missing", errCorrupt)
	}
	var m meta
	for _, f := range []struct {
		key []byte
		dst *int64
	}{{revKey, &m.rev}, {compactedKey, &m.compacted}, {heldKey, &m.held}} {
		v := b.Get(f.key)
		if len(v) != 8 {
			return meta{}, fmt.Errorf("%w: meta %q is %d bytes", errCorrupt, f.key, len(v))
		}
		*f.dst = unbe64(v)
	}
	return m, nil
}

func writeMeta(tx *bbolt.Tx, m meta) error {
	b := tx.Bucket(metaBucket)
	return errors.Join(
		b.Put(revKey, be64(m.rev)),
		b.Put(compactedKey, be64(m.compacted)),
		b.Put(heldKey, be64(m.held)),
	)
}

func be64(n int64) []byte { return binary.BigEndian.AppendUint64(nil, uint64(n)) }

// unbe64 decodes be64; v must be 8 bytes.
func unbe64(v []byte) int64 { return int64(binary.BigEndian.Uint64(v)) }

// escapeKey appends the escaped key, without the terminator.
func escapeKey(dst []byte, key string) []byte {
	for i := 0; i < len(key); i++ {
		if key[i] == 0 {
			dst = append(dst, 0, 0xFF)
		} else {
			dst = append(dst, key[i])
		}
	}
	return dst
}

// keyPrefix is the part of a history key shared by every version of key.
func keyPrefix(key string) []byte {
	return append(escapeKey(make([]byte, 0, len(key)+2+revLen), key), 0, 1)
}

// versionKey is the history key of key's version at rev.
func versionKey(key string, rev int64) []byte {
	return binary.BigEndian.AppendUint64(keyPrefix(key), uint64(rev))
}

// splitVersionKey returns the key-prefix part of a history key and its
// revision.
func splitVersionKey(k []byte) ([]byte, int64) {
	n := len(k) - revLen
	return k[:n], int64(binary.BigEndian.Uint64(k[n:]))
}

// unescapeKey decodes the key-prefix part of a history key.
func unescapeKey(p []byte) string {
	p = p[:len(p)-2] // the terminator
	if bytes.IndexByte(p, 0) < 0 {
		return string(p)
	}
	b := make([]byte, 0, len(p))
	for i := 0; i < len(p); i++ {
		b = append(b, p[i])
		if p[i] == 0 {
			i++ // the 0xFF after it
		}
	}
	return string(b)
}

func encodeRecord(create int64, value []byte, deleted bool) []byte {
	rec := make([]byte, recordHeader, recordHeader+len(value))
	if deleted {
		rec[0] = tombstone
	}
	binary.BigEndian.PutUint64(rec[1:], uint64(create))
	return append(rec, value...)
}

// record is a decoded version. Its value points into the transaction's
// memory until copied.
type record struct {
	rev     int64
	create  int64
	value   []byte
	deleted bool
}

func decodeRecord(rev int64, v []byte) (record, error) {
	if len(v) < recordHeader {
		return record{}, fmt.Errorf("%w: the version at %d is %d bytes", errCorrupt, rev, len(v))
	}
	return record{
		rev:     rev,
		create:  int64(binary.BigEndian.Uint64(v[1:])),
		value:   v[recordHeader:],
		deleted: v[0]&tombstone != 0,
	}, nil
}

// versionAt positions c on the newest version of the key with the given
// key prefix at or below rev, and returns it; ok is false if the key has no
// version that old.
func versionAt(c *bbolt.Cursor, prefix []byte, rev int64) (record, bool, error) {
	seek := binary.BigEndian.AppendUint64(append(make([]byte, 0, len(prefix)+revLen), prefix...), uint64(rev)+1)
	k, _ := c.Seek(seek)
	var v []byte
	if k == nil {
		k, v = c.Last()
	} else {
		k, v = c.Prev()
	}
	if k == nil || !bytes.HasPrefix(k, prefix) {
		return record{}, false, nil
	}
	_, r := splitVersionKey(k)
	rec, err := decodeRecord(r, v)
	return rec, err == nil, err
}

// latest returns key's newest version, if it has one.
func latest(c *bbolt.Cursor, key string) (record, bool, error) {
	return versionAt(c, keyPrefix(key), math.MaxInt64-1)
}
