package encryption

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/kapi-dev/kapi/storage"
)

// Option configures [New].
type Option func(*options)

type options struct {
	keyPrefix string
	ciphers   map[string]NewCipherFunc
}

// WithKeyPrefix is the prefix under which the server keeps its objects
// (apiserver.WithKeyPrefix; "/" by default): the resource of a key is the
// path segment that follows it, "/widgets.example.com/ns/name" being a
// widgets.example.com. Keys elsewhere are read and written as a resource
// no rule names.
func WithKeyPrefix(prefix string) Option { return func(o *options) { o.keyPrefix = prefix } }

// WithCipher provides the cipher of a provider that is not built in:
// "secretbox" (github.com/kapi-dev/kapi/storage/encryption/secretbox.New)
// or "aescbc". "aesgcm" is built in ([NewAESGCM]); passing it replaces it.
func WithCipher(provider string, newCipher NewCipherFunc) Option {
	return func(o *options) { o.ciphers[provider] = newCipher }
}

// New wraps backend so that values are encrypted as config says before they
// reach it and decrypted when read back, by Get, List and Watch alike. The
// result keeps the optional methods of backend that need no decryption:
// Close (io.Closer) and Compact(ctx, rev). A config that does not hold is
// an error ([ErrConfig]) naming every problem.
func New(backend storage.Interface, config Config, opts ...Option) (storage.Interface, error) {
	o := options{keyPrefix: "/", ciphers: map[string]NewCipherFunc{"aesgcm": NewAESGCM}}
	for _, opt := range opts {
		opt(&o)
	}
	if backend == nil {
		return nil, fmt.Errorf("%w: no store to wrap", ErrConfig)
	}
	if !strings.HasPrefix(o.keyPrefix, "/") || !strings.HasSuffix(o.keyPrefix, "/") {
		return nil, fmt.Errorf("%w: key prefix %q: it must begin and end with '/'", ErrConfig, o.keyPrefix)
	}
	for name, newCipher := range o.ciphers {
		switch {
		case name != "aesgcm" && name != "secretbox" && name != "aescbc":
			return nil, fmt.Errorf("%w: WithCipher(%q): the providers with keys are aesgcm, secretbox and aescbc", ErrConfig, name)
		case newCipher == nil:
			return nil, fmt.Errorf("%w: WithCipher(%q, nil)", ErrConfig, name)
		}
	}
	rules, err := config.compile(o.ciphers)
	if err != nil {
		return nil, err
	}
	s := &store{inner: backend, rules: rules, keyPrefix: o.keyPrefix}
	c, canCompact := backend.(compactor)
	closer, canClose := backend.(io.Closer)
	switch {
	case canCompact && canClose:
		return struct {
			*store
			compactor
			io.Closer
		}{s, c, closer}, nil
	case canCompact:
		return struct {
			*store
			compactor
		}{s, c}, nil
	case canClose:
		return struct {
			*store
			io.Closer
		}{s, closer}, nil
	}
	return s, nil
}

// compactor is the optional method of the backends that compact on demand.
type compactor interface {
	Compact(ctx context.Context, rev int64) error
}

// store is the wrapper New returns.
type store struct {
	inner     storage.Interface
	rules     *rules
	keyPrefix string
}

var _ storage.Interface = (*store)(nil)

// encryptionStore lets Rewrite find the store inside what New returned.
func (s *store) encryptionStore() *store { return s }

// chainFor is the providers of the resource key belongs to.
func (s *store) chainFor(key string) *chain {
	rest, ok := strings.CutPrefix(key, s.keyPrefix)
	if !ok {
		return identityChain
	}
	resource, _, _ := strings.Cut(rest, "/")
	return s.rules.lookup(resource)
}

// read turns a stored value into what readers get. A value that does not
// open — encrypted under a key no longer configured, altered, or plaintext
// where the resource's providers do not include identity — is what
// Kubernetes calls a corrupt object: readers get it so that it cannot
// decode (the stored bytes if encrypted, which begin "k8s:enc:", and an
// empty value otherwise), and it can still be deleted.
func (s *store) read(key string, value []byte) []byte {
	plaintext, _, ok := s.chainFor(key).open(value, key)
	if ok {
		return plaintext
	}
	if bytes.HasPrefix(value, []byte(encryptedPrefix)) {
		return value
	}
	return []byte{}
}

func (s *store) readKV(kv storage.KeyValue) storage.KeyValue {
	kv.Value = s.read(kv.Key, kv.Value)
	return kv
}

// Get implements [storage.Reader].
func (s *store) Get(ctx context.Context, key string, rev int64) (storage.KeyValue, error) {
	kv, err := s.inner.Get(ctx, key, rev)
	if err != nil {
		return kv, err
	}
	return s.readKV(kv), nil
}

// List implements [storage.Reader].
func (s *store) List(ctx context.Context, prefix string, opts storage.ListOptions) (storage.ListResult, error) {
	res, err := s.inner.List(ctx, prefix, opts)
	if err != nil {
		return res, err
	}
	// A new slice: the backend's may be shared with other readers.
	items := make([]storage.KeyValue, len(res.Items))
	for i, kv := range res.Items {
		items[i] = s.readKV(kv)
	}
	res.Items = items
	return res, nil
}

// Revision implements [storage.Reader].
func (s *store) Revision(ctx context.Context) (int64, error) { return s.inner.Revision(ctx) }

// Create implements [storage.Writer].
func (s *store) Create(ctx context.Context, key string, value []byte) (int64, error) {
	sealed, err := s.chainFor(key).seal(value, key)
	if err != nil {
		return 0, fmt.Errorf("encryption: %s: %w", key, err)
	}
	return s.inner.Create(ctx, key, sealed)
}

// Update implements [storage.Writer].
func (s *store) Update(ctx context.Context, key string, value []byte, expect int64) (int64, error) {
	sealed, err := s.chainFor(key).seal(value, key)
	if err != nil {
		return 0, fmt.Errorf("encryption: %s: %w", key, err)
	}
	return s.inner.Update(ctx, key, sealed, expect)
}

// Delete implements [storage.Writer]. It reads nothing first, so a value
// that no longer decrypts can be deleted.
func (s *store) Delete(ctx context.Context, key string, expect int64) (storage.KeyValue, error) {
	kv, err := s.inner.Delete(ctx, key, expect)
	if err != nil {
		return kv, err
	}
	return s.readKV(kv), nil
}

// Watch implements [storage.Watcher]: one goroutine per watch decrypts
// the backend's events in order and hands them on. It blocks while the
// caller does not read, so a slow caller is as slow to the backend as it
// would be unwrapped, and the backend deals with it as usual.
func (s *store) Watch(ctx context.Context, prefix string, rev int64) (<-chan storage.Event, error) {
	in, err := s.inner.Watch(ctx, prefix, rev)
	if err != nil {
		return nil, err
	}
	out := make(chan storage.Event)
	go func() {
		defer close(out)
		for ev := range in {
			if ev.Err == nil {
				ev.Value = s.read(ev.Key, ev.Value)
				if ev.Prev != nil {
					ev.Prev = s.read(ev.Key, ev.Prev)
				}
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				// The backend closes in now that ctx has ended.
				for range in {
				}
				return
			}
		}
	}()
	return out, nil
}
