package splice

import "sync"

// pieceSlices are reused for lists' pieces (their items' elements, or the
// parts of them): a LIST of 10,000 objects then allocates nothing in
// proportion to its length but its items.
var pieceSlices = sync.Pool{New: func() any { return new([][]byte) }}

// pooledPiecesMax is the longest slice of pieces the pool keeps: three
// pieces of each of 10,000 objects.
const pooledPiecesMax = 3 * 10_000

// Pieces returns an empty slice with room for n pieces, for a list to
// append its pieces to and give back with [Release]. It has the room up
// front: grown by append, the slice of a list of 100,000 objects made
// five times its size in garbage (append grows a large slice by a quarter),
// 36 MB for one LIST, which raised the RSS of a server holding them by
// half their JSON.
func Pieces(n int) *[][]byte {
	p := pieceSlices.Get().(*[][]byte)
	if cap(*p) < n {
		*p = make([][]byte, 0, n)
	}
	return p
}

// Release gives back p, from [Pieces], holding what a list appended to it.
// The pool keeps no slice longer than pooledPiecesMax, nor the bytes
// of the old versions its pieces point into.
func Release(p *[][]byte) {
	if cap(*p) > pooledPiecesMax {
		return
	}
	clear(*p)
	*p = (*p)[:0]
	pieceSlices.Put(p)
}
