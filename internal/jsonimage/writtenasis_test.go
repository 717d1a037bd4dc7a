package jsonimage_test

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/kapi-dev/kapi/internal/jsonimage"
	"github.com/kapi-dev/kapi/internal/test/race"
)

// rawWrittenAsIsByByte is RawWrittenAsIs as it was written first, one
// byte at a time: the oracle of the word-at-a-time version.
func rawWrittenAsIsByByte(raw []byte) bool {
	for _, b := range raw {
		if b <= ' ' || b > '~' || b == '<' || b == '>' || b == '&' {
			return false
		}
	}
	return true
}

// Every byte value, at every place of inputs of every length up to three
// words, among bytes written as they are: each is found wherever it is,
// whatever the bytes beside it (the largest and smallest written as they
// are, where a borrow or a carry would show).
func TestRawWrittenAsIsEveryByte(t *testing.T) {
	for _, fill := range []byte{'!', '~', 'f', '=', '?', '%', '\''} {
		for n := 1; n <= 24; n++ {
			raw := bytes.Repeat([]byte{fill}, n)
			if !jsonimage.RawWrittenAsIs(raw) {
				t.Fatalf("%q: not written as it is", raw)
			}
			for at := range n {
				for b := range 256 {
					raw[at] = byte(b)
					if got, want := jsonimage.RawWrittenAsIs(raw), rawWrittenAsIsByByte(raw); got != want {
						t.Fatalf("%q: %v, want %v", raw, got, want)
					}
				}
				raw[at] = fill
			}
		}
	}
}

// Random inputs, mostly of bytes near the bounds, agree with the oracle.
func TestRawWrittenAsIsRandom(t *testing.T) {
	near := []byte{0, 1, ' ' - 1, ' ', '!', '"', '%', '&', '\'', ';', '<', '=', '>', '?', '}', '~', 0x7f, 0x80, 0x81, 0xfe, 0xff, 'a', '{', ':'}
	r := rand.New(rand.NewPCG(25, 1))
	for range race.Cases(200000) {
		raw := make([]byte, r.IntN(40))
		for i := range raw {
			if r.IntN(4) == 0 {
				raw[i] = byte(r.IntN(256))
			} else {
				raw[i] = near[r.IntN(len(near))]
			}
		}
		// Most inputs are written as they are but for a byte or two.
		if r.IntN(2) == 0 {
			for i := range raw {
				if !rawWrittenAsIsByByte(raw[i : i+1]) {
					raw[i] = 'x'
				}
			}
			if len(raw) > 0 && r.IntN(2) == 0 {
				raw[r.IntN(len(raw))] = near[r.IntN(len(near))]
			}
		}
		if got, want := jsonimage.RawWrittenAsIs(raw), rawWrittenAsIsByByte(raw); got != want {
			t.Fatalf("%q: %v, want %v", raw, got, want)
		}
	}
}

func FuzzRawWrittenAsIs(f *testing.F) {
	f.Add([]byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}}}`))
	f.Add([]byte("{\"f:a\": {}}"))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if got, want := jsonimage.RawWrittenAsIs(raw), rawWrittenAsIsByByte(raw); got != want {
			t.Fatalf("%q: %v, want %v", raw, got, want)
		}
	})
}

// BenchmarkRawWrittenAsIs is the check of a create's field set (about
// 560 bytes), which every write recording managedFields makes of each.
func BenchmarkRawWrittenAsIs(b *testing.B) {
	set := []byte(`{"f:metadata":{"f:labels":{".":{},"f:app":{},"f:shard":{},"f:team":{},"f:tier":{}}},"f:spec":{".":{},"f:color":{},"f:ports":{".":{},"k:{\"name\":\"http\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}},"k:{\"name\":\"metrics\"}":{".":{},"f:name":{},"f:port":{},"f:protocol":{}}},"f:replicas":{},"f:selector":{".":{},"f:app":{},"f:tier":{}},"f:size":{}}}`)
	set = append(set, set...)
	b.SetBytes(int64(len(set)))
	for b.Loop() {
		if !jsonimage.RawWrittenAsIs(set) {
			b.Fatal("not written as it is")
		}
	}
}
