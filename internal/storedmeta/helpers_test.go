package storedmeta

import (
	"bytes"
	"io"
	"strings"
)

func bytesReader(b []byte) io.Reader { return bytes.NewReader(b) }

// folds says whether key is not one of the names Meta reads but is matched
// to one by a case-insensitive decoder.
func folds(key string) bool {
	for _, f := range []string{"metadata", "name", "namespace", "uid", "ownerReferences", "finalizers", "deletionTimestamp"} {
		if key != f && strings.EqualFold(key, f) {
			return true
		}
	}
	return false
}
