package codec

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// seq is "01 02 ... n" in hex: n small unsigned integers, as in RFC 8949's
// 25-element array.
func seq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%x", appendCBORHead(nil, cborUint, uint64(i)))
	}
	return b.String()
}

func jsonSeq(n int) string {
	s := make([]string, n)
	for i := range s {
		s[i] = strconv.Itoa(i + 1)
	}
	return "[" + strings.Join(s, ",") + "]"
}

// The examples of RFC 8949 Appendix A, with strings as byte strings, as
// Kubernetes writes them, and more.
func TestAppendCBOR(t *testing.T) {
	for _, tc := range []struct {
		name, json, cbor string
	}{
		{"0", `0`, "00"},
		{"1", `1`, "01"},
		{"10", `10`, "0a"},
		{"23", `23`, "17"},
		{"24", `24`, "1818"},
		{"25", `25`, "1819"},
		{"100", `100`, "1864"},
		{"1000", `1000`, "1903e8"},
		{"1000000", `1000000`, "1a000f4240"},
		{"1000000000000", `1000000000000`, "1b000000e8d4a51000"},
		{"max int64", `9223372036854775807`, "1b7fffffffffffffff"},
		{"max uint64", `18446744073709551615`, "1bffffffffffffffff"},
		{"min int64", `-9223372036854775808`, "3b7fffffffffffffff"},
		{"-2^64 is a float", `-18446744073709551616`, "fadf800000"},
		{"below min int64 is a float", `-9223372036854775809`, "fadf000000"},
		{"-1", `-1`, "20"},
		{"-10", `-10`, "29"},
		{"-100", `-100`, "3863"},
		{"-1000", `-1000`, "3903e7"},
		{"-0 is the integer 0", `-0`, "00"},
		{"0.0", `0.0`, "f90000"},
		{"-0.0", `-0.0`, "f98000"},
		{"1.0", `1.0`, "f93c00"},
		{"1.1", `1.1`, "fb3ff199999999999a"},
		{"1.5", `1.5`, "f93e00"},
		{"65504.0", `65504.0`, "f97bff"},
		{"100000.0", `100000.0`, "fa47c35000"},
		{"max float32", `3.4028234663852886e+38`, "fa7f7fffff"},
		{"1.0e+300", `1.0e+300`, "fb7e37e43c8800759c"},
		{"smallest float16 subnormal", `5.960464477539063e-8`, "f90001"},
		{"smallest float16 normal", `0.00006103515625`, "f90400"},
		{"-4.0", `-4.0`, "f9c400"},
		{"-4.1", `-4.1`, "fbc010666666666666"},
		{"exponent makes a float", `1E2`, "f95640"},
		{"2^64 is a float", `18446744073709551616`, "fa5f800000"},
		{"below -2^64", `-18446744073709551617`, "fadf800000"},
		{"float32 subnormal", `1.401298464324817e-45`, "fa00000001"},
		{"closest float64 to 1e-45", `1e-45`, "fb3696d601ad376ab9"},
		{"float16 inexact", `65505.0`, "fa477fe100"},
		{"integer literal beyond float16", `65505`, "19ffe1"},
		{"false", `false`, "f4"},
		{"true", `true`, "f5"},
		{"null", `null`, "f6"},
		{"empty string", `""`, "40"},
		{"a", `"a"`, "4161"},
		{"IETF", `"IETF"`, "4449455446"},
		{"escaped quote and backslash", `"\"\\"`, "42225c"},
		{"u umlaut", `"ü"`, "42c3bc"},
		{"u umlaut escaped", `"\u00fc"`, "42c3bc"},
		{"water", `"水"`, "43e6b0b4"},
		{"surrogate pair", `"\ud800\udd51"`, "44f0908591"},
		{"surrogate pair, upper case hex", `"\uD800\uDD51"`, "44f0908591"},
		{"lone high surrogate", `"\ud800"`, "43efbfbd"},
		{"lone high surrogate then letter", `"\ud800x"`, "44efbfbd78"},
		{"high surrogate then escaped letter", `"\ud800\u0041"`, "44efbfbd41"},
		{"low then high surrogate", `"\udd51\ud800"`, "46efbfbdefbfbd"},
		{"short escapes", `"\/\b\f\n\r\t"`, "462f080c0a0d09"},
		{"html escapes", `"\u003c\u003e\u0026"`, "433c3e26"},
		{"line separator", `"\u2028"`, "43e280a8"},
		{"invalid UTF-8", "\"a\xffb\"", "4561efbfbd62"},
		{"truncated UTF-8", "\"\xe6\xb0\"", "46efbfbdefbfbd"},
		{"24-byte string", `"` + strings.Repeat("x", 24) + `"`, "5818" + strings.Repeat("78", 24)},
		{"256-byte string", `"` + strings.Repeat("x", 256) + `"`, "590100" + strings.Repeat("78", 256)},
		{"empty array", `[]`, "80"},
		{"[1,2,3]", `[1,2,3]`, "83010203"},
		{"nested arrays", `[1,[2,3],[4,5]]`, "8301820203820405"},
		{"23 elements", jsonSeq(23), "97" + seq(23)},
		{"24 elements", jsonSeq(24), "9818" + seq(24)},
		{"25 elements", jsonSeq(25), "9819" + seq(25)},
		{"256 elements", jsonSeq(256), "990100" + seq(256)},
		{"long heads nested", "[" + jsonSeq(24) + "," + jsonSeq(300) + "]", "82" + "9818" + seq(24) + "99012c" + seq(300)},
		{"long head inside a short one", `{"a":` + jsonSeq(30) + `,"b":1}`, "a24161981e" + seq(30) + "416201"},
		{"empty object", `{}`, "a0"},
		{"object", `{"a":1,"b":[2,3]}`, "a24161014162820203"},
		{"array with object", `["a",{"b":"c"}]`, "824161a141624163"},
		{"five members", `{"a":"A","b":"B","c":"C","d":"D","e":"E"}`, "a54161414141624142416341434164414441654145"},
		{"key order kept", `{"b":1,"a":2}`, "a2416201416102"},
		{"duplicates kept", `{"a":1,"a":2}`, "a2416101416102"},
		{"whitespace", " \t\n{ \"a\" : [ 1 , true ] , \"b\" : { } }\r\n", "a241618201f54162a0"},
		{"empty containers", `[[],{},[{}]]`, "8380a081a0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := appendCBOR(nil, []byte(tc.json))
			if err != nil {
				t.Fatalf("appendCBOR(%s): %v", tc.json, err)
			}
			if want := mustHex(t, tc.cbor); !bytes.Equal(got, want) {
				t.Fatalf("appendCBOR(%s)\n got %x\nwant %x", tc.json, got, want)
			}
			// It appends.
			prefix := []byte{1, 2, 3}
			got2, err := appendCBOR(prefix, []byte(tc.json))
			if err != nil || !bytes.Equal(got2[:3], prefix) || !bytes.Equal(got2[3:], got) {
				t.Fatalf("appendCBOR(prefix, %s) = %x, %v", tc.json, got2, err)
			}
		})
	}
}

func TestAppendCBORErrors(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		offset     int
	}{
		{"empty", ``, 0},
		{"space", `  `, 2},
		{"number out of range", `[1e400]`, 1},
		{"negative number out of range", `-1e400`, 0},
		{"trailing", `1 2`, 2},
		{"trailing comma", `[1,]`, 3},
		{"unclosed array", `[1`, 2},
		{"unclosed object", `{"a":1`, 6},
		{"mismatched", `[1}`, 2},
		{"missing colon", `{"a" 1}`, 5},
		{"non-string key", `{1:2}`, 1},
		{"unterminated string", `"abc`, 4},
		{"control character", "\"a\nb\"", 2},
		{"bad escape", `"\x"`, 1},
		{"short unicode escape", `"\u12"`, 1},
		{"bad unicode escape", `"\u12g4"`, 1},
		{"bad literal", `tru`, 0},
		{"bad literal 2", `nul!`, 0},
		{"leading plus", `+1`, 0},
		{"leading zero", `01`, 1},
		{"dot without digits", `1.`, 2},
		{"exponent without digits", `1e+`, 3},
		{"minus alone", `-`, 1},
		{"deep", strings.Repeat("[", maxCBORDepth+1) + strings.Repeat("]", maxCBORDepth+1), maxCBORDepth},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dst := []byte{9}
			got, err := appendCBOR(dst, []byte(tc.json))
			var ce *cborError
			if !errors.As(err, &ce) {
				t.Fatalf("appendCBOR(%q) = %x, %v; want a *cborError", tc.json, got, err)
			}
			if ce.offset != tc.offset {
				t.Errorf("appendCBOR(%q): %v; want offset %d", tc.json, err, tc.offset)
			}
			if !bytes.Equal(got, dst) {
				t.Errorf("appendCBOR(%q) returned %x on error; want dst as it was", tc.json, got)
			}
		})
	}
	// As deep as allowed.
	doc := strings.Repeat("[", maxCBORDepth) + strings.Repeat("]", maxCBORDepth)
	if _, err := appendCBOR(nil, []byte(doc)); err != nil {
		t.Fatalf("nesting %d deep: %v", maxCBORDepth, err)
	}
}

func TestCBORToJSON(t *testing.T) {
	for _, tc := range []struct {
		name, cbor, json string
	}{
		// RFC 8949 Appendix A.
		{"0", "00", `0`},
		{"1", "01", `1`},
		{"10", "0a", `10`},
		{"23", "17", `23`},
		{"24", "1818", `24`},
		{"25", "1819", `25`},
		{"100", "1864", `100`},
		{"1000", "1903e8", `1000`},
		{"1000000", "1a000f4240", `1000000`},
		{"1000000000000", "1b000000e8d4a51000", `1000000000000`},
		{"max uint64", "1bffffffffffffffff", `18446744073709551615`},
		{"-2^64", "3bffffffffffffffff", `-18446744073709551616`},
		{"min int64", "3b7fffffffffffffff", `-9223372036854775808`},
		{"-1", "20", `-1`},
		{"-10", "29", `-10`},
		{"-100", "3863", `-100`},
		{"-1000", "3903e7", `-1000`},
		{"0.0", "f90000", `0.0`},
		{"-0.0", "f98000", `-0.0`},
		{"1.0", "f93c00", `1.0`},
		{"1.1", "fb3ff199999999999a", `1.1`},
		{"1.5", "f93e00", `1.5`},
		{"65504.0", "f97bff", `65504.0`},
		{"100000.0", "fa47c35000", `100000.0`},
		{"max float32", "fa7f7fffff", `3.4028234663852886e+38`},
		{"1.0e+300", "fb7e37e43c8800759c", `1e+300`},
		{"smallest float16 subnormal", "f90001", `5.960464477539063e-8`},
		{"smallest float16 normal", "f90400", `0.00006103515625`},
		{"-4.0", "f9c400", `-4.0`},
		{"-4.1", "fbc010666666666666", `-4.1`},
		{"float32 0.1", "fa3dcccccd", `0.10000000149011612`},
		{"2^64 float needs no .0 to stay a float", "fa5f800000", `18446744073709552000`},
		{"-2^64 float needs no .0 to stay a float", "fadf800000", `-18446744073709552000`},
		{"-2^63 float", "fadf000000", `-9223372036854776000.0`},
		{"largest float below 2^64", "fb43efffffffffffff", `18446744073709550000.0`},
		{"1e20 float", "fb4415af1d78b58c40", `100000000000000000000`},
		{"1e21 float", "fb444b1ae4d6e2ef50", `1e+21`},
		{"false", "f4", `false`},
		{"true", "f5", `true`},
		{"null", "f6", `null`},
		{"expected base16", "d74401020304", `"01020304"`},
		{"empty byte string", "40", `""`},
		{"byte string with control characters", "4401020304", `"\u0001\u0002\u0003\u0004"`},
		{"empty text", "60", `""`},
		{"a", "6161", `"a"`},
		{"IETF", "6449455446", `"IETF"`},
		{"quote and backslash", "62225c", `"\"\\"`},
		{"u umlaut", "62c3bc", `"ü"`},
		{"water", "63e6b0b4", `"水"`},
		{"astral", "64f0908591", `"𐅑"`},
		{"empty array", "80", `[]`},
		{"[1,2,3]", "83010203", `[1,2,3]`},
		{"nested arrays", "8301820203820405", `[1,[2,3],[4,5]]`},
		{"25 elements", "9819" + seq(25), jsonSeq(25)},
		{"empty map", "a0", `{}`},
		{"map", "a26161016162820203", `{"a":1,"b":[2,3]}`},
		{"array with map", "826161a161626163", `["a",{"b":"c"}]`},
		{"five members", "a56161614161626142616361436164614461656145", `{"a":"A","b":"B","c":"C","d":"D","e":"E"}`},
		{"indefinite byte string", "5f42010243030405ff", `"\u0001\u0002\u0003\u0004\u0005"`},
		{"indefinite text string", "7f657374726561646d696e67ff", `"streaming"`},
		{"indefinite empty array", "9fff", `[]`},
		{"indefinite arrays 1", "9f018202039f0405ffff", `[1,[2,3],[4,5]]`},
		{"indefinite arrays 2", "9f01820203820405ff", `[1,[2,3],[4,5]]`},
		{"indefinite arrays 3", "83018202039f0405ff", `[1,[2,3],[4,5]]`},
		{"indefinite arrays 4", "83019f0203ff820405", `[1,[2,3],[4,5]]`},
		{"indefinite 25 elements", "9f" + seq(25) + "ff", jsonSeq(25)},
		{"indefinite map", "bf61610161629f0203ffff", `{"a":1,"b":[2,3]}`},
		{"indefinite map in array", "826161bf61626163ff", `["a",{"b":"c"}]`},
		{"Fun", "bf6346756ef563416d7421ff", `{"Fun":true,"Amt":-2}`},
		// What Kubernetes writes.
		{"byte string keys and values", "a2446b696e6443506f644461726773824161f6", `{"kind":"Pod","args":["a",null]}`},
		{"self-described", "d9d9f7a14161f5", `{"a":true}`},
		{"self-described inside", "a14161d9d9f7d9d9f701", `{"a":1}`},
		{"base64 []byte", "d6426869", `"aGk="`},
		{"base64 []byte of 10", "d64a0102030405060708090a", `"AQIDBAUGBwgJCg=="`},
		{"base64url", "d54268ff", `"aP8"`},
		{"base16", "d74268ff", `"68ff"`},
		{"innermost expected encoding wins", "d5d6426869", `"aGk="`},
		{"expected encoding of an integer is dropped", "d60f", `15`},
		{"expected encoding of a text string is dropped", "d6626869", `"hi"`},
		{"expected encoding of an indefinite byte string", "d65f41684169ff", `"aGk="`},
		{"tagged key", "a1d6416101", `{"YQ==":1}`},
		{"text key", "a1616101", `{"a":1}`},
		{"duplicate keys kept", "a3416101416102616103", `{"a":1,"a":2,"a":3}`},
		{"invalid UTF-8 in a byte string", "4361ff62", `"a�b"`},
		{"html and separators escaped as encoding/json does", "4b3c3e26e280a8e280a90a7f", `"\u003c\u003e\u0026\u2028\u2029\n` + "\x7f" + `"`},
		{"non-shortest head", "1800", `0`},
		{"non-shortest head 2", "1b0000000000000001", `1`},
		{"non-shortest length", "5800", `""`},
		{"indefinite string of no chunks", "5fff", `""`},
		{"indefinite string with empty chunks", "7f6060ff", `""`},
		{"indefinite map with long chunks", "bf5f41614162ff01ff", `{"ab":1}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cborToJSON(mustHex(t, tc.cbor))
			if err != nil {
				t.Fatalf("cborToJSON(%s): %v", tc.cbor, err)
			}
			if string(got) != tc.json {
				t.Fatalf("cborToJSON(%s)\n got %s\nwant %s", tc.cbor, got, tc.json)
			}
			if !json.Valid(got) {
				t.Fatalf("cborToJSON(%s) = %s: not valid JSON", tc.cbor, got)
			}
		})
	}
}

func TestCBORToJSONErrors(t *testing.T) {
	deep := func(n int, open string, end string) string {
		return strings.Repeat(open, n) + end
	}
	for _, tc := range []struct {
		name, cbor string
		offset     int
		msg        string
	}{
		{"empty", "", 0, "unexpected end"},
		{"self-described alone", "d9d9f7", 3, "unexpected end"},
		{"truncated head", "19 01", 0, "unexpected end of CBOR data in a head"},
		{"truncated 8-byte head", "1b 0000", 0, "in a head"},
		{"truncated string", "43 6161", 0, "3 bytes declared, with 2 bytes left"},
		{"truncated array", "83 0102", 0, "array of 3 items declared, with 2 bytes left"},
		{"truncated array 2", "83 01 02 5b00000000", 3, "unexpected end of CBOR data in a head"},
		{"truncated map", "a2 4161 01 4162", 6, "unexpected end"},
		{"truncated indefinite array", "9f 01", 2, "unexpected end"},
		{"truncated indefinite string", "5f 4161", 3, "unexpected end"},
		{"huge string", "5b ffffffffffffffff", 0, "byte string of 18446744073709551615 bytes declared"},
		{"huge text", "7a ffffffff 00", 0, "text string of 4294967295 bytes declared, with 1 bytes left"},
		{"huge array", "9b 7fffffffffffffff 00", 0, "array of 9223372036854775807 items declared"},
		{"huge map", "bb ffffffffffffffff", 0, "map of 18446744073709551615 items declared"},
		{"map longer than the bytes left", "a2 01 02 03", 0, "map of 2 items declared, with 3 bytes left"},
		{"huge chunk", "5f 5b ffffffffffffffff", 1, "chunk of 18446744073709551615 bytes"},
		{"array deeper than the limit", deep(maxCBORDepth+1, "81", "01"), maxCBORDepth, "nesting deeper than 10000"},
		{"map deeper than the limit", deep(maxCBORDepth+1, "a1 4161", "01"), maxCBORDepth * 3, "nesting deeper than 10000"},
		{"indefinite deeper than the limit", deep(maxCBORDepth+1, "9f", ""), maxCBORDepth, "nesting deeper than 10000"},
		{"integer key", "a1 01 02", 1, "map key is a CBOR unsigned integer, not a string"},
		{"negative key", "a1 20 02", 1, "map key is a CBOR negative integer"},
		{"array key", "a1 80 02", 1, "map key is a CBOR array"},
		{"map key", "a1 a0 02", 1, "map key is a CBOR map"},
		{"null key", "a1 f6 02", 1, "map key is a CBOR simple value or float"},
		{"float key", "a1 f93c00 02", 1, "map key is a CBOR simple value or float"},
		{"break as key of a definite map", "a2 ff 01 02 03", 1, "break code where a map key is expected"},
		{"invalid UTF-8 text", "62 c328", 0, "invalid UTF-8 in a text string"},
		{"invalid UTF-8 text key", "a1 61 ff 01", 1, "invalid UTF-8"},
		{"UTF-8 surrogate", "63 eda080", 0, "invalid UTF-8"},
		{"UTF-8 split across chunks", "7f 61c3 61bc ff", 1, "invalid UTF-8 in a text string chunk"},
		{"half NaN", "f9 7e00", 0, "NaN"},
		{"half infinity", "f9 7c00", 0, "infinity"},
		{"half -infinity", "f9 fc00", 0, "infinity"},
		{"single NaN", "fa 7fc00000", 0, "NaN"},
		{"single infinity", "fa 7f800000", 0, "infinity"},
		{"double NaN", "fb 7ff8000000000000", 0, "NaN"},
		{"double -infinity", "fb fff0000000000000", 0, "infinity"},
		{"NaN in a map", "a1 4161 f97e00", 3, "NaN"},
		{"undefined", "f7", 0, "undefined"},
		{"simple 16", "f0", 0, "simple value 16"},
		{"simple 0", "e0", 0, "simple value 0"},
		{"simple 255", "f8 ff", 0, "simple value 255"},
		{"simple 24 in two bytes", "f8 18", 0, "not well-formed"},
		{"reserved additional information", "1c", 0, "reserved additional information 28"},
		{"reserved float width", "fe", 0, "reserved additional information 30"},
		{"tag 0 (date/time)", "c0 74 323031332d30332d32315432303a30343a30305a", 0, "tag 0 is not supported"},
		{"tag 1 (epoch)", "c1 1a514b67b0", 0, "tag 1 is not supported"},
		{"bignum", "c2 49 010000000000000000", 0, "tag 2 is not supported"},
		{"negative bignum", "c3 49 010000000000000000", 0, "tag 3 is not supported"},
		{"tag 24", "d818 456449455446", 0, "tag 24 is not supported"},
		{"tag 32", "d820 76687474703a2f2f7777772e6578616d706c652e636f6d", 0, "tag 32 is not supported"},
		{"tag in a map", "a1 4161 d9 0102 01", 3, "tag 258 is not supported"},
		{"indefinite tag", "df 01", 0, "indefinite length for a CBOR tag"},
		{"indefinite integer", "1f", 0, "indefinite length for a CBOR unsigned integer"},
		{"indefinite negative integer", "3f", 0, "indefinite length for a CBOR negative integer"},
		{"trailing bytes", "01 02", 1, "1 bytes after the data item"},
		{"trailing break", "80 ff", 1, "1 bytes after the data item"},
		{"two self-described items", "d9d9f7 01 d9d9f7 01", 4, "4 bytes after"},
		{"break at top level", "ff", 0, "unexpected break code"},
		{"break in a definite array", "82 01 ff", 2, "unexpected break code"},
		{"break after a key", "bf 4161 ff", 3, "break code after a map key"},
		{"break as a value of a definite map", "a1 4161 ff", 3, "unexpected break code"},
		{"text chunk in a byte string", "5f 6161 ff", 1, "chunk of an indefinite-length byte string must be a definite-length byte string"},
		{"byte chunk in a text string", "7f 4161 ff", 1, "chunk of an indefinite-length text string"},
		{"nested indefinite chunk", "5f 5f ff ff", 1, "definite-length"},
		{"integer chunk", "5f 01 ff", 1, "definite-length"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cborToJSON(mustHex(t, tc.cbor))
			var ce *cborError
			if !errors.As(err, &ce) {
				t.Fatalf("cborToJSON(%s) = %s, %v; want a *cborError", tc.cbor, got, err)
			}
			if got != nil {
				t.Errorf("cborToJSON(%s) returned %q with its error", tc.cbor, got)
			}
			if ce.offset != tc.offset || !strings.Contains(ce.msg, tc.msg) {
				t.Errorf("cborToJSON(%s): %v\nwant %q at byte offset %d", tc.cbor, err, tc.msg, tc.offset)
			}
		})
	}
	// As deep as allowed.
	for _, open := range []string{"\x81", "\x9f", "\xa1\x41a"} {
		doc := []byte(strings.Repeat(open, maxCBORDepth) + "\x01")
		if open == "\x9f" {
			doc = append(doc, bytes.Repeat([]byte{cborBreak}, maxCBORDepth)...)
		}
		if _, err := cborToJSON(doc); err != nil {
			t.Errorf("%x nested %d deep: %v", open, maxCBORDepth, err)
		}
	}
}

// Huge declared lengths are refused before anything is allocated for them.
func TestCBORToJSONNoAllocationFromDeclaredLength(t *testing.T) {
	for _, h := range []string{"5b7fffffffffffffff", "9b7fffffffffffffff", "bb7fffffffffffffff", "5f5a7fffffff", "9f9b7fffffffffffffff"} {
		doc := mustHex(t, h)
		// The least of five rounds of ten: whatever else the process
		// allocates meanwhile only adds to a round (other goroutines, and
		// sync.Pool dropping entries at random under the race detector).
		least := uint64(math.MaxUint64)
		for range 5 {
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			for range 10 {
				if _, err := cborToJSON(doc); err == nil {
					t.Fatalf("cborToJSON(%s) succeeded", h)
				}
			}
			runtime.ReadMemStats(&after)
			least = min(least, after.TotalAlloc-before.TotalAlloc)
		}
		// The output buffer and the error, ten times: about 2.2 KiB.
		if least > 10<<10 {
			t.Errorf("cborToJSON(%s): %d bytes allocated in 10 runs", h, least)
		}
	}
}

// Every float16 value decodes as fxamacker/cbor (and IEEE 754) reads it,
// and is written back as the same float16.
func TestCBORFloat16(t *testing.T) {
	for h := range 1 << 16 {
		f := float16Value(uint16(h))
		if math.IsNaN(f) || math.IsInf(f, 0) {
			if exp := h >> 10 & 0x1f; exp != 0x1f {
				t.Fatalf("%04x: %v", h, f)
			}
			continue
		}
		got := appendCBORFloat(nil, f)
		if want := []byte{cborFloat16, byte(h >> 8), byte(h)}; !bytes.Equal(got, want) {
			t.Fatalf("appendCBORFloat(%v) = %x; want %x", f, got, want)
		}
	}
	for h, want := range map[uint16]float64{
		0x0001: 0x1p-24, 0x03ff: 0x3ffp-24, 0x0400: 0x1p-14, 0x3c00: 1, 0x3c01: 1 + 0x1p-10,
		0x7bff: 65504, 0xc400: -4, 0x8000: math.Copysign(0, -1), 0x3555: 0x555p-12,
	} {
		if got := float16Value(h); got != want || math.Signbit(got) != math.Signbit(want) {
			t.Errorf("float16Value(%04x) = %v; want %v", h, got, want)
		}
	}
}

func TestAppendCBORFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float64
		cbor string
	}{
		{0x1p-25, "fa33000000"},    // below float16's subnormals
		{0x3p-25, "fa33c00000"},    // not a multiple of 2^-24
		{0x1p-24 * 1023, "f903ff"}, // largest float16 subnormal
		{65520, "fa477ff000"},      // rounds to infinity in float16
		{0x1p15 * (1 + 0x3ffp-10), "f97bff"},
		{0x1p-126, "fa00800000"},         // smallest float32 normal
		{0x1p-149, "fa00000001"},         // smallest float32 subnormal
		{0x1p-150, "fb3690000000000000"}, // below float32
		{math.MaxFloat64, "fb7fefffffffffffff"},
		{1 + 0x1p-23, "fa3f800001"},
		{1 + 0x1p-24, "fb3ff0000010000000"},
	} {
		if got := appendCBORFloat(nil, tc.f); !bytes.Equal(got, mustHex(t, tc.cbor)) {
			t.Errorf("appendCBORFloat(%v) = %x; want %s", tc.f, got, tc.cbor)
		}
	}
}

// A Kubernetes-like object, as kapi stores it.
type cborTestObject struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Metadata   cborTestMeta       `json:"metadata"`
	Spec       cborTestSpec       `json:"spec"`
	Status     *cborTestStatus    `json:"status,omitempty"`
	Data       map[string][]byte  `json:"data,omitempty"`
	Extra      map[string]any     `json:"extra,omitempty"`
	Managed    []cborTestManaged  `json:"managedFields,omitempty"`
	Ratios     map[string]float64 `json:"ratios,omitempty"`
}

type cborTestMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid"`
	ResourceVersion   string            `json:"resourceVersion"`
	Generation        int64             `json:"generation"`
	CreationTimestamp time.Time         `json:"creationTimestamp"`
	DeletionTimestamp *time.Time        `json:"deletionTimestamp"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

type cborTestSpec struct {
	Replicas   int32             `json:"replicas"`
	Image      string            `json:"image"`
	Args       []string          `json:"args"`
	Ports      []cborTestPort    `json:"ports"`
	Weight     float64           `json:"weight"`
	Limit      float32           `json:"limit"`
	Big        uint64            `json:"big"`
	Negative   int64             `json:"negative"`
	Enabled    bool              `json:"enabled"`
	Env        map[string]string `json:"env"`
	Payload    []byte            `json:"payload"`
	NilPayload []byte            `json:"nilPayload"`
	Empty      []string          `json:"empty"`
	Nil        []string          `json:"nil"`
}

type cborTestPort struct {
	Name     string `json:"name"`
	Port     int    `json:"port"`
	Protocol string `json:"protocol"`
}

type cborTestStatus struct {
	Phase      string              `json:"phase"`
	Conditions []cborTestCondition `json:"conditions"`
}

type cborTestCondition struct {
	Type               string    `json:"type"`
	Status             string    `json:"status"`
	LastTransitionTime time.Time `json:"lastTransitionTime"`
	Reason             string    `json:"reason"`
	Message            string    `json:"message"`
}

type cborTestManaged struct {
	Manager   string          `json:"manager"`
	Operation string          `json:"operation"`
	FieldsV1  json.RawMessage `json:"fieldsV1"`
}

func newCBORTestObject(i int) *cborTestObject {
	created := time.Date(2024, 5, 17, 10, 11, 12, 0, time.UTC)
	return &cborTestObject{
		APIVersion: "example.com/v1",
		Kind:       "Widget",
		Metadata: cborTestMeta{
			Name:              fmt.Sprintf("widget-%05d", i),
			Namespace:         "default",
			UID:               "5f0c9b7e-6a52-4c1b-9d8e-3a8b7c6d5e4f",
			ResourceVersion:   strconv.Itoa(100000 + i),
			Generation:        3,
			CreationTimestamp: created,
			Labels:            map[string]string{"app": "widget", "tier": "backend", "version": "v1.2.3"},
			Annotations:       map[string]string{"kapi.dev/note": "a <note> & \"quotes\"\n\u2028ü水𐅑"},
			Finalizers:        []string{"example.com/cleanup"},
		},
		Spec: cborTestSpec{
			Replicas: 3,
			Image:    "registry.example.com/widget:1.2.3",
			Args:     []string{"--verbose", "--port=8080", "--name=" + strconv.Itoa(i)},
			Ports:    []cborTestPort{{"http", 8080, "TCP"}, {"metrics", 9090, "TCP"}},
			Weight:   0.75,
			Limit:    0.1,
			Big:      math.MaxUint64,
			Negative: math.MinInt64,
			Enabled:  true,
			Env:      map[string]string{"LOG_LEVEL": "debug", "REGION": "eu-west-1"},
			Payload:  []byte("\x00\x01binary\xff"),
			Empty:    []string{},
		},
		Status: &cborTestStatus{
			Phase: "Running",
			Conditions: []cborTestCondition{
				{"Ready", "True", created.Add(time.Minute), "AllGood", "all replicas are ready"},
				{"Progressing", "False", created.Add(2 * time.Minute), "Done", ""},
			},
		},
		Data:    map[string][]byte{"key": []byte("secret value")},
		Extra:   map[string]any{"float": 1.0, "big": 1e21, "tiny": 1e-7, "nested": map[string]any{"list": []any{1, "two", 3.5, nil, false}}},
		Managed: []cborTestManaged{{"kubectl", "Update", json.RawMessage(`{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{}}}`)}},
		Ratios:  map[string]float64{"integral": 2, "half": 0.5, "huge": 1e20},
	}
}

// What json.Marshal writes comes back from CBOR byte for byte.
func TestCBORRoundTripOfEncodingJSON(t *testing.T) {
	values := []any{
		newCBORTestObject(7),
		map[string]any{},
		[]any{},
		"",
		0,
		-1.5,
		math.MaxInt64,
		[]float64{0, 1, -1, 0.1, 1e20, 1e21, 1e-6, 1e-7, math.MaxFloat64, math.SmallestNonzeroFloat64, 123456789.125},
		[]float32{0.1, 1e20, 3.4e38},
		"\x00\x1f<>&\u2028\u2029\ufffd",
	}
	for i, v := range values {
		doc, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		cbor, err := appendCBOR(nil, doc)
		if err != nil {
			t.Fatalf("%d: appendCBOR(%s): %v", i, doc, err)
		}
		back, err := cborToJSON(cbor)
		if err != nil {
			t.Fatalf("%d: cborToJSON(%x): %v", i, cbor, err)
		}
		if !bytes.Equal(back, doc) {
			t.Errorf("%d: round trip\n got %s\nwant %s", i, back, doc)
		}
	}
}

// A float written by cborToJSON decodes into a Go float64 with its value,
// and is refused by an integer, as Kubernetes refuses a CBOR float there.
func TestCBORFloatsIntoGoFields(t *testing.T) {
	for _, f := range []float64{1, -1, 0, 100, 1e20, 0x1p64, -0x1p64, 1.5} {
		doc, err := cborToJSON(appendCBORFloat(nil, f))
		if err != nil {
			t.Fatal(err)
		}
		var got float64
		if err := json.Unmarshal(doc, &got); err != nil || got != f {
			t.Errorf("float %v: JSON %s into float64 = %v, %v", f, doc, got, err)
		}
		var i int64
		if err := json.Unmarshal(doc, &i); err == nil {
			t.Errorf("float %v: JSON %s into int64 = %v; want an error", f, doc, i)
		}
		// And it stays a float.
		again, err := appendCBOR(nil, doc)
		if err != nil || again[0]&0xe0 != cborSimple {
			t.Errorf("float %v: JSON %s back to CBOR = %x, %v; want a float", f, doc, again, err)
		}
	}
}

// normalJSON rewrites a JSON document so that two documents with the same
// meaning to appendCBOR compare equal: strings unescaped and quoted one way,
// integer literals that appendCBOR makes integers (those that fit int64 or
// uint64) as exact decimals, every other number as its float64. Objects keep their order and duplicates.
func normalJSON(t testing.TB, doc []byte) string {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(doc))
	d.UseNumber()
	var b strings.Builder
	min := new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), 63))
	max := new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 64), big.NewInt(1))
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String()
		}
		if err != nil {
			t.Fatalf("normalJSON(%s): %v", doc, err)
		}
		switch tok := tok.(type) {
		case json.Delim:
			b.WriteString(tok.String())
		case string:
			fmt.Fprintf(&b, "%q ", tok)
		case json.Number:
			s := tok.String()
			if !strings.ContainsAny(s, ".eE") {
				if n, ok := new(big.Int).SetString(s, 10); ok && n.Cmp(min) >= 0 && n.Cmp(max) <= 0 {
					fmt.Fprintf(&b, "i%s ", n)
					continue
				}
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("normalJSON(%s): %v", doc, err)
			}
			fmt.Fprintf(&b, "f%s ", strconv.FormatFloat(f, 'g', -1, 64))
		default:
			fmt.Fprintf(&b, "%v ", tok)
		}
	}
}

func TestCBORRoundTripNormalized(t *testing.T) {
	for _, doc := range []string{
		`{"a":1.0,"b":1E2,"c":-0,"d":-0.0,"e":1.50,"f":100000000000000000000,"g":-18446744073709551617,"h":-9223372036854775809}`,
		`["\u0041\/\ud83d\ude00","\ud800",{"a":{"a":[]}},{"x":1,"x":2}]`,
		` [ 1 , { "a" : null } ] `,
	} {
		cbor, err := appendCBOR(nil, []byte(doc))
		if err != nil {
			t.Fatalf("appendCBOR(%s): %v", doc, err)
		}
		back, err := cborToJSON(cbor)
		if err != nil {
			t.Fatalf("cborToJSON(%x): %v", cbor, err)
		}
		if got, want := normalJSON(t, back), normalJSON(t, []byte(doc)); got != want {
			t.Errorf("round trip of %s = %s\n got %s\nwant %s", doc, back, got, want)
		}
	}
}

// randomJSON makes a document of random shape, with containers long enough
// to need long heads, of about 64 KiB at most.
func randomJSON(r *rand.Rand, b *bytes.Buffer, depth int) {
	switch k := r.IntN(10); {
	case k < 2 && depth < 6:
		b.WriteByte('[')
		n := r.IntN(4)
		if r.IntN(4) == 0 {
			n = 20 + r.IntN(300)
		}
		for i := range n {
			if b.Len() > 64<<10 {
				break
			}
			if i > 0 {
				b.WriteByte(',')
			}
			randomJSON(r, b, depth+1)
		}
		b.WriteByte(']')
	case k < 4 && depth < 6:
		b.WriteByte('{')
		n := r.IntN(4)
		if r.IntN(4) == 0 {
			n = 20 + r.IntN(70)
		}
		for i := range n {
			if b.Len() > 64<<10 {
				break
			}
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(b, `"k%d":`, r.IntN(30))
			randomJSON(r, b, depth+1)
		}
		b.WriteByte('}')
	case k < 6:
		s := make([]byte, r.IntN(40))
		for i := range s {
			s[i] = "ab\"\\<\n\x01é"[r.IntN(8)]
		}
		q, _ := json.Marshal(string(s))
		b.Write(q)
	case k < 7:
		fmt.Fprint(b, r.Int64()>>r.IntN(64))
	case k < 8:
		q, _ := json.Marshal(r.NormFloat64() * math.Pow(10, float64(r.IntN(40)-20)))
		b.Write(q)
	default:
		b.WriteString([]string{"true", "false", "null", "-1", "0.5"}[r.IntN(5)])
	}
}

// appendCBOR agrees with a plain recursive encoder, long heads included.
func TestAppendCBORLongHeads(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		var b bytes.Buffer
		randomJSON(r, &b, 0)
		got, err := appendCBOR(nil, b.Bytes())
		if err != nil {
			t.Fatalf("%d: appendCBOR(%s): %v", i, b.Bytes(), err)
		}
		d := json.NewDecoder(bytes.NewReader(b.Bytes()))
		d.UseNumber()
		want := referenceCBOR(t, d)
		if !bytes.Equal(got, want) {
			at := 0
			for at < len(got) && at < len(want) && got[at] == want[at] {
				at++
			}
			t.Fatalf("%d: appendCBOR(%.200s...) differs from byte %d:\n got %.60x\nwant %.60x", i, b.Bytes(), at, got[at:], want[at:])
		}
		back, err := cborToJSON(got)
		if err != nil || normalJSON(t, back) != normalJSON(t, b.Bytes()) {
			t.Fatalf("%d: round trip of %s = %s, %v", i, b.Bytes(), back, err)
		}
	}
}

// referenceCBOR encodes the next value of d recursively, counting each
// container before writing it.
func referenceCBOR(t *testing.T, d *json.Decoder) []byte {
	tok, err := d.Token()
	if err != nil {
		t.Fatal(err)
	}
	switch tok := tok.(type) {
	case json.Delim:
		var items [][]byte
		for d.More() {
			if tok == '{' {
				key, _ := d.Token()
				items = append(items, appendCBORHead(nil, cborBytes, uint64(len(key.(string))))) // keys are ASCII here
				items[len(items)-1] = append(items[len(items)-1], key.(string)...)
			}
			items = append(items, referenceCBOR(t, d))
		}
		d.Token() // the closing delimiter
		var out []byte
		if tok == '{' {
			out = appendCBORHead(nil, cborMap, uint64(len(items)/2))
		} else {
			out = appendCBORHead(nil, cborArray, uint64(len(items)))
		}
		return append(out, bytes.Join(items, nil)...)
	case string:
		return append(appendCBORHead(nil, cborBytes, uint64(len(tok))), tok...)
	case json.Number:
		if u, err := strconv.ParseUint(tok.String(), 10, 64); err == nil {
			return appendCBORHead(nil, cborUint, u)
		}
		if s, ok := strings.CutPrefix(tok.String(), "-"); ok {
			if u, err := strconv.ParseUint(s, 10, 64); err == nil && u > 0 && u <= 1<<63 {
				return appendCBORHead(nil, cborNegint, u-1)
			}
		}
		f, _ := tok.Float64()
		return appendCBORFloat(nil, f)
	case bool:
		if tok {
			return []byte{cborTrue}
		}
		return []byte{cborFalse}
	case nil:
		return []byte{cborNil}
	}
	t.Fatalf("token %v", tok)
	return nil
}

func benchmarkObjects(b *testing.B) (object any, list any) {
	items := make([]*cborTestObject, 500)
	for i := range items {
		items[i] = newCBORTestObject(i)
		items[i].Metadata.Annotations = nil // keep items near 1 KiB
	}
	return items[0], map[string]any{
		"apiVersion": "example.com/v1", "kind": "WidgetList",
		"metadata": map[string]any{"resourceVersion": "123456"}, "items": items,
	}
}

func BenchmarkCBOR(b *testing.B) {
	object, list := benchmarkObjects(b)
	for _, bc := range []struct {
		name  string
		value any
	}{{"object", object}, {"list", list}} {
		doc, err := json.Marshal(bc.value)
		if err != nil {
			b.Fatal(err)
		}
		cbor, err := appendCBOR(nil, doc)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("%s: %d bytes of JSON, %d of CBOR", bc.name, len(doc), len(cbor))
		b.Run(bc.name+"/json.Marshal", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := json.Marshal(bc.value); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/appendCBOR", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := appendCBOR(nil, doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/appendCBOR-reused-buffer", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			buf := make([]byte, 0, len(doc))
			for b.Loop() {
				if _, err := appendCBOR(buf[:0], doc); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(bc.name+"/cborToJSON", func(b *testing.B) {
			b.SetBytes(int64(len(doc)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cborToJSON(cbor); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// Every kind of byte a string scan stops at, at every offset of strings of
// up to 40 bytes, both ways (the scans go eight bytes at a time).
func TestCBORStringsAtEveryOffset(t *testing.T) {
	for _, special := range []string{`"`, `\`, "\x01", "\x1f", "<", ">", "&", "é", "\u2028", "\xff", "\x7f", " "} {
		for n := range 40 {
			for at := 0; at <= n; at++ {
				s := strings.Repeat("a", at) + special + strings.Repeat("b", n-at)
				doc, err := json.Marshal(s)
				if err != nil {
					t.Fatal(err)
				}
				valid := strings.ToValidUTF8(s, "\ufffd")
				want := append(appendCBORHead(nil, cborBytes, uint64(len(valid))), valid...)
				got, err := appendCBOR(nil, doc)
				if err != nil || !bytes.Equal(got, want) {
					t.Fatalf("appendCBOR(%s) = %x, %v; want %x", doc, got, err, want)
				}
				back, err := cborToJSON(append(appendCBORHead(nil, cborBytes, uint64(len(s))), s...))
				if err != nil {
					t.Fatal(err)
				}
				if valid == s && !bytes.Equal(back, doc) {
					t.Fatalf("cborToJSON of %q = %s; want %s", s, back, doc)
				}
				var round string
				if err := json.Unmarshal(back, &round); err != nil || round != valid {
					t.Fatalf("cborToJSON of %q = %s, which decodes to %q, %v", s, back, round, err)
				}
				// The same as a text string, which must be valid UTF-8.
				_, err = cborToJSON(append(appendCBORHead(nil, cborText, uint64(len(s))), s...))
				if (err == nil) != (valid == s) {
					t.Fatalf("cborToJSON of text %q: %v", s, err)
				}
				// The scan of raw JSON (no escapes) too.
				raw := append(append([]byte{'"'}, s...), '"')
				got, err = appendCBOR(nil, raw)
				switch {
				case special == `"` || special == `\` || special[0] < 0x20:
					if err == nil && special != `\` {
						t.Fatalf("appendCBOR(%q) = %x; want an error", raw, got)
					}
				case err != nil || !bytes.Equal(got, want):
					t.Fatalf("appendCBOR(%q) = %x, %v; want %x", raw, got, err, want)
				}
			}
		}
	}
}
