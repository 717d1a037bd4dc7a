package codec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
)

var cborFuzzSeeds = []string{
	"00", "17", "1818", "1bffffffffffffffff", "3bffffffffffffffff", "20", "f90000", "f98000", "f93c00",
	"fb3ff199999999999a", "f97bff", "fa47c35000", "fa7f7fffff", "fb7e37e43c8800759c", "f90001",
	"fa5f800000", "f4", "f5", "f6", "f7", "f97e00", "f97c00", "40", "4401020304", "60", "62c3bc",
	"80", "8301820203820405", "9819" + "0102030405060708090a0b0c0d0e0f101112131415161718181819",
	"a0", "a26161016162820203", "5f42010243030405ff", "7f657374726561646d696e67ff",
	"9f018202039f0405ffff", "bf61610161629f0203ffff", "bf6346756ef563416d7421ff",
	"d9d9f7a2446b696e6443506f644461726773824161f6", "a14161d9d9f7d9d9f701", "d6426869",
	"d54268ff", "d74268ff", "d5d6426869", "a1d6416101", "a3416101416102616103", "4361ff62",
	"5b7fffffffffffffff", "9b7fffffffffffffff", "bb7fffffffffffffff", "a2ff010203", "bf4161ff",
	"c249010000000000000000", "f818", "1c", "0102", "7f61c361bcff", "a10102", "62c328",
}

// FuzzCBORToJSON: no panic; what decodes is JSON of bounded size, and
// appendCBOR of it decodes back to the same JSON (the same bytes, but for an
// integer below -2^63, which comes back as a float of its value).
func FuzzCBORToJSON(f *testing.F) {
	for _, s := range cborFuzzSeeds {
		b, err := hex.DecodeString(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add(append(bytes.Repeat([]byte{0x81}, maxCBORDepth), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := cborToJSON(data)
		if err != nil {
			var ce *cborError
			if !errors.As(err, &ce) || ce.offset < 0 || ce.offset > len(data) {
				t.Fatalf("cborToJSON(%x): %v: want a *cborError with an offset in the input", data, err)
			}
			return
		}
		if !json.Valid(out) {
			t.Fatalf("cborToJSON(%x) = %s: not JSON", data, out)
		}
		if len(out) > 8*len(data)+2 {
			t.Fatalf("cborToJSON(%x): %d bytes of JSON from %d of CBOR", data, len(out), len(data))
		}
		cbor, err := appendCBOR(nil, out)
		if err != nil {
			t.Fatalf("appendCBOR(%s) of cborToJSON(%x): %v", out, data, err)
		}
		back, err := cborToJSON(cbor)
		if err != nil || normalJSON(t, back) != normalJSON(t, out) {
			t.Fatalf("cborToJSON(%x) = %s\nthen appendCBOR = %x\nthen cborToJSON = %s, %v", data, out, cbor, back, err)
		}
		// Byte for byte, but for integers below -2^63, which come back as floats.
		if !bytes.Equal(back, out) && !hasIntegerBelowMinInt64(t, out) {
			t.Fatalf("cborToJSON(%x) = %s\nthen appendCBOR = %x\nthen cborToJSON = %s", data, out, cbor, back)
		}
		if again, err := appendCBOR(nil, back); err != nil || !bytes.Equal(again, cbor) {
			t.Fatalf("appendCBOR(%s) = %x, %v; want %x", back, again, err, cbor)
		}
	})
}

// FuzzAppendCBOR: no panic; appendCBOR takes exactly the valid JSON (but
// for numbers beyond float64), whitespace does not change the CBOR, and
// the round trip keeps the meaning.
func FuzzAppendCBOR(f *testing.F) {
	for _, s := range []string{
		`0`, `-0`, `1.5`, `1E400`, `-18446744073709551616`, `18446744073709551616`, `[]`, `{}`,
		`{"a":1,"a":[true,false,null]}`, `"\ud800\udd51\ud800x\u00fc\/\b"`, "\"\xff\"", ` [ 1 , 2 ] `,
		`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x","creationTimestamp":null},"data":"aGk="}`,
		`[1,`, `{"a"}`, `"\u12"`, `01`, `1.`, `-`, `nul`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		got, err := appendCBOR(nil, doc)
		if !json.Valid(doc) {
			if err == nil {
				t.Fatalf("appendCBOR(%q) = %x; want an error for invalid JSON", doc, got)
			}
			return
		}
		if err != nil {
			var v any
			if json.Unmarshal(doc, &v) == nil {
				t.Fatalf("appendCBOR(%q): %v", doc, err)
			}
			return // a number beyond float64
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, doc); err != nil {
			t.Fatal(err)
		}
		c, err := appendCBOR(nil, compact.Bytes())
		if err != nil || !bytes.Equal(c, got) {
			t.Fatalf("appendCBOR(%q) = %x, but of its compact form %x, %v", doc, got, c, err)
		}
		back, err := cborToJSON(c)
		if err != nil {
			t.Fatalf("cborToJSON(%x) of appendCBOR(%s): %v", c, compact.Bytes(), err)
		}
		if a, b := normalJSON(t, back), normalJSON(t, compact.Bytes()); a != b {
			t.Fatalf("round trip of %s = %s\nmeaning %s\nnot %s", compact.Bytes(), back, a, b)
		}
	})
}

// hasIntegerBelowMinInt64 reports whether a JSON document holds an integer
// literal below math.MinInt64.
func hasIntegerBelowMinInt64(t *testing.T, doc []byte) bool {
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatal(err)
		}
		if n, ok := tok.(json.Number); ok && !strings.ContainsAny(string(n), ".eE") && n[0] == '-' {
			if _, err := strconv.ParseInt(string(n), 10, 64); err != nil {
				return true
			}
		}
	}
}
