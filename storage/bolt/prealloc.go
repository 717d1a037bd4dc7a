package bolt

import (
	"os"
)

// bbolt grows its file by extending it, which leaves holes: a commit that
// writes pages past the last ones ever written has the filesystem allocate
// blocks, and its fdatasync then commits the filesystem's journal too (on
// ext4, a fifth more per fsync on the machine measured, and a wait for
// every other process's metadata in that journal commit). So the committer
// keeps the next pages written ahead of bbolt's high-water mark, with
// zeros, between transactions: bbolt never reads or writes past that mark
// outside a write transaction, and only the committer makes those.
const preallocAhead = 4 << 20

// prealloc writes zeros past the high-water mark.
type prealloc struct {
	f      *os.File // the store's file, opened again for writing
	filled int64    // written up to here, as far as prealloc knows
	zeros  []byte
}

// openPrealloc opens path for prealloc; nil if it cannot.
func openPrealloc(path string, hwm int64) *prealloc {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return nil
	}
	return &prealloc{f: f, filled: hwm}
}

// ensure keeps at least half of preallocAhead written past hwm, the
// high-water mark, filling up to all of it at a time. It reports false if
// the file refused, for the caller to stop preallocating.
func (p *prealloc) ensure(hwm int64) bool {
	if p.filled >= hwm+preallocAhead/2 {
		return true
	}
	if p.zeros == nil {
		p.zeros = make([]byte, 256<<10)
	}
	off, end := max(p.filled, hwm), hwm+preallocAhead
	for off < end {
		n, err := p.f.WriteAt(p.zeros[:min(int64(len(p.zeros)), end-off)], off)
		if err != nil {
			return false
		}
		off += int64(n)
	}
	if p.f.Sync() != nil {
		return false
	}
	p.filled = end
	return true
}

func (p *prealloc) close() { p.f.Close() }
