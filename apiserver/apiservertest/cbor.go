package apiservertest

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"

	"gopkg.in/yaml.v3"
)

// cborSelfDescribed is CBOR's tag 55799, with which kube-apiserver begins
// every CBOR document.
var cborSelfDescribed = []byte{0xd9, 0xd9, 0xf7}

// CBORPairs is a CBOR map written in this order, duplicates kept: key,
// value, key, value...
type CBORPairs []any

// CBORRaw is written as it is: an item a test makes by hand.
type CBORRaw []byte

// CBOROptions say how a client writes strings: Kubernetes' clients write
// every Go string, keys too, as a byte string (ByteStrings); other clients
// write text strings.
type CBOROptions struct{ ByteStrings bool }

// CBORBody is a whole CBOR request body: tag 55799, then v (see
// CBOROptions.Append).
func CBORBody(v any, o CBOROptions) []byte {
	return o.Append(append([]byte(nil), cborSelfDescribed...), v)
}

func cborHead(b []byte, major byte, n uint64) []byte {
	switch {
	case n < 24:
		return append(b, major<<5|byte(n))
	case n <= math.MaxUint8:
		return append(b, major<<5|24, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, major<<5|25), uint16(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, major<<5|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, major<<5|27), n)
}

// Append writes v in CBOR: nil, bool, string, int, int64, float64,
// json.Number, []any, map[string]any (keys sorted), CBORPairs or CBORRaw.
// It panics on any other type: the test's mistake.
func (o CBOROptions) Append(b []byte, v any) []byte {
	switch v := v.(type) {
	case nil:
		return append(b, 0xf6)
	case bool:
		if v {
			return append(b, 0xf5)
		}
		return append(b, 0xf4)
	case string:
		major := byte(3)
		if o.ByteStrings {
			major = 2
		}
		return append(cborHead(b, major, uint64(len(v))), v...)
	case int:
		return o.Append(b, int64(v))
	case int64:
		if v < 0 {
			return cborHead(b, 1, uint64(-1-v))
		}
		return cborHead(b, 0, uint64(v))
	case float64:
		return binary.BigEndian.AppendUint64(append(b, 0xfb), math.Float64bits(v))
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return o.Append(b, n)
		}
		f, _ := v.Float64()
		return o.Append(b, f)
	case []any:
		b = cborHead(b, 4, uint64(len(v)))
		for _, e := range v {
			b = o.Append(b, e)
		}
		return b
	case map[string]any:
		b = cborHead(b, 5, uint64(len(v)))
		for _, k := range sortedKeys(v) {
			b = o.Append(o.Append(b, k), v[k])
		}
		return b
	case CBORPairs:
		b = cborHead(b, 5, uint64(len(v)/2))
		for _, e := range v {
			b = o.Append(b, e)
		}
		return b
	case CBORRaw:
		return append(b, v...)
	}
	panic(fmt.Sprintf("cbor: cannot write %T", v))
}

// ReadCBORItem reads one whole data item of a CBOR sequence (a watch in
// CBOR), as its bytes.
func ReadCBORItem(r *bufio.Reader) ([]byte, error) {
	var item []byte
	err := cborItem(r, &item, 0)
	return item, err
}

func cborItem(r *bufio.Reader, item *[]byte, depth int) error {
	if depth > 20000 {
		return errors.New("cbor: nested too deeply")
	}
	first, err := r.ReadByte()
	if err != nil {
		return err
	}
	*item = append(*item, first)
	major, info := first>>5, first&0x1f
	var n uint64
	switch {
	case info < 24:
		n = uint64(info)
	case info <= 27:
		size := 1 << (info - 24)
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return io.ErrUnexpectedEOF
		}
		*item = append(*item, buf...)
		for _, c := range buf {
			n = n<<8 | uint64(c)
		}
	case info == 31:
		if major == 7 {
			return errors.New("cbor: unexpected break")
		}
		// Indefinite length: items (chunks) until the break.
		for {
			c, err := r.ReadByte()
			if err != nil {
				return io.ErrUnexpectedEOF
			}
			if c == 0xff {
				*item = append(*item, c)
				return nil
			}
			if err := r.UnreadByte(); err != nil {
				return err
			}
			count := 1
			if major == 5 {
				count = 2
			}
			for range count {
				if err := cborItem(r, item, depth+1); err != nil {
					return err
				}
			}
		}
	default:
		return fmt.Errorf("cbor: reserved additional information %d", info)
	}
	switch major {
	case 2, 3:
		buf := make([]byte, n)
		if _, err := io.ReadFull(r, buf); err != nil {
			return io.ErrUnexpectedEOF
		}
		*item = append(*item, buf...)
	case 4, 5:
		if major == 5 {
			n *= 2
		}
		for range n {
			if err := cborItem(r, item, depth+1); err != nil {
				return err
			}
		}
	case 6:
		return cborItem(r, item, depth+1)
	}
	return nil
}

// YAML writes v, a document decoded from JSON with json.Decoder.UseNumber,
// in YAML: its numbers as numbers, not strings.
func YAML(v any) ([]byte, error) { return yaml.Marshal(yamlNumbers(v)) }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
