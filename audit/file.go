package audit

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// RotatingFile is an audit log file that is renamed path.1 (path.1 to
// path.2, and so on, the oldest past maxBackups removed) when the next
// write would take it past maxBytes, as kube-apiserver's --audit-log-maxsize
// and --audit-log-maxbackup do.
type RotatingFile struct {
	path       string
	maxBytes   int64
	maxBackups int

	mu   sync.Mutex
	f    *os.File
	size int64
}

// NewRotatingFile opens (or creates) path for appending.
func NewRotatingFile(path string, maxBytes int64, maxBackups int) (*RotatingFile, error) {
	var errs []error
	if path == "" {
		errs = append(errs, errors.New("no path"))
	}
	if maxBytes <= 0 {
		errs = append(errs, fmt.Errorf("max bytes must be positive, not %d", maxBytes))
	}
	if maxBackups < 0 {
		errs = append(errs, fmt.Errorf("max backups must not be negative, not %d", maxBackups))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("audit: %w", err)
	}
	r := &RotatingFile{path: path, maxBytes: maxBytes, maxBackups: maxBackups}
	if err := r.open(); err != nil {
		return nil, err
	}
	return r, nil
}

func (r *RotatingFile) open() error {
	f, err := os.OpenFile(r.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return fmt.Errorf("audit: %w", err)
	}
	r.f, r.size = f, info.Size()
	return nil
}

// Write appends p, rotating first when it would not fit.
func (r *RotatingFile) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return 0, os.ErrClosed
	}
	if r.size > 0 && r.size+int64(len(p)) > r.maxBytes {
		if err := r.rotate(); err != nil {
			return 0, err
		}
	}
	n, err := r.f.Write(p)
	r.size += int64(n)
	return n, err
}

func (r *RotatingFile) rotate() error {
	if err := r.f.Close(); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	r.f = nil
	if r.maxBackups == 0 {
		if err := os.Remove(r.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("audit: %w", err)
		}
		return r.open()
	}
	for i := r.maxBackups - 1; i >= 1; i-- {
		if err := os.Rename(fmt.Sprintf("%s.%d", r.path, i), fmt.Sprintf("%s.%d", r.path, i+1)); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("audit: %w", err)
		}
	}
	if err := os.Rename(r.path, r.path+".1"); err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	return r.open()
}

// Close closes the file.
func (r *RotatingFile) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	err := r.f.Close()
	r.f = nil
	return err
}
