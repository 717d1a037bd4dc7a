//go:build !unix

package sqlite

import "os"

// lockFile creates the lock file but, on this system, does not lock it:
// two stores on one file are not refused here, and must not be opened.
func lockFile(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
}
