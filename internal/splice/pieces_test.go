package splice

import "testing"

// A list's slice has room for its pieces up front, and goes back to the
// pool holding none of them (they point into old versions' bytes).
func TestPiecesRoomAndRelease(t *testing.T) {
	for _, n := range []int{0, 3, 3 * 10_000, 3*10_000 + 1} {
		p := Pieces(n)
		if len(*p) != 0 || cap(*p) < n {
			t.Fatalf("Pieces(%d): len %d cap %d, want 0 and at least %d", n, len(*p), cap(*p), n)
		}
		value := []byte("x")
		*p = append(*p, value, value, value)
		kept := (*p)[:3]
		Release(p)
		if n <= pooledPiecesMax && (len(*p) != 0 || kept[0] != nil || kept[2] != nil) {
			t.Fatalf("Release(%d): the slice holds %d pieces, %q first: the pool would keep their bytes", n, len(*p), kept[0])
		}
	}
}
