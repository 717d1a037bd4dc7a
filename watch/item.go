package watch

import "sync"

// Item is one version of one object. It is shared by every reader and must be
// treated as read-only.
type Item struct {
	Key string
	// Revision is the revision of the write that produced this version; for
	// the item of a DELETED event, the deletion's revision.
	Revision int64
	// Object is the decoded object, with its resourceVersion set.
	Object any

	mu        sync.Mutex
	encodings []encoding
}

type encoding struct {
	format string
	data   []byte
}

// Encoded returns the item's encoding in format, calling encode the first
// time it is asked for and sharing the bytes with every later caller. The
// returned bytes must not be modified.
func (it *Item) Encoded(format string, encode func(obj any) ([]byte, error)) ([]byte, error) {
	it.mu.Lock()
	defer it.mu.Unlock()
	for _, e := range it.encodings {
		if e.format == format {
			return e.data, nil
		}
	}
	data, err := encode(it.Object)
	if err != nil {
		return nil, err
	}
	it.encodings = append(it.encodings, encoding{format, data})
	return data, nil
}
