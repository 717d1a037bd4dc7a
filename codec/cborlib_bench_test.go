package codec_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/fxamacker/cbor/v2"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
)

// The CBOR decision (README, "CBOR"): kapi's own transcoder against
// github.com/fxamacker/cbor/v2 configured as Kubernetes configures it
// (apimachinery pkg/runtime/serializer/cbor/internal/modes), on kapi's own
// workloads, side by side in one run:
//
//	go test -run='^$' -bench=CBORLibrary -count=10 ./codec | benchstat -col /impl -
//
// The library rows do what a replacement would have to do, as Kubernetes
// does it: JSON to CBOR through a Go value (modes.TranscodeFromJSON), CBOR to
// JSON through one (modes.TranscodeToJSON). The "typed" rows are the option
// that skips JSON: encode from, and decode into, the Go type itself.

// libEncOptions is Kubernetes' modes.Encode, but for the JSON transcoder
// (set in libEncMode) and the sort order, which the callers choose.
func libEncOptions() cbor.EncOptions {
	return cbor.EncOptions{
		Sort:                 cbor.SortBytewiseLexical,
		ShortestFloat:        cbor.ShortestFloat16,
		NaNConvert:           cbor.NaNConvertReject,
		InfConvert:           cbor.InfConvertReject,
		BigIntConvert:        cbor.BigIntConvertReject,
		Time:                 cbor.TimeRFC3339Nano,
		TimeTag:              cbor.EncTagNone,
		IndefLength:          cbor.IndefLengthForbidden,
		NilContainers:        cbor.NilContainerAsNull,
		TagsMd:               cbor.TagsAllowed,
		OmitEmpty:            cbor.OmitEmptyGoValue,
		String:               cbor.StringToByteString,
		FieldName:            cbor.FieldNameToByteString,
		ByteArray:            cbor.ByteArrayToArray,
		ByteSliceLaterFormat: cbor.ByteSliceLaterFormatBase64,
		BinaryMarshaler:      cbor.BinaryMarshalerNone,
		TextMarshaler:        cbor.TextMarshalerTextString,
	}
}

// libDecOptions is Kubernetes' modes.Decode but for its simple value
// registry (false, true and null are all kapi's JSON has) and the JSON
// transcoder.
func libDecOptions() cbor.DecOptions {
	return cbor.DecOptions{
		DupMapKey:                cbor.DupMapKeyEnforcedAPF,
		TimeTag:                  cbor.DecTagOptional,
		MaxNestedLevels:          10000,
		MaxArrayElements:         2147483647,
		MaxMapPairs:              2097152,
		IndefLength:              cbor.IndefLengthAllowed,
		TagsMd:                   cbor.TagsAllowed,
		IntDec:                   cbor.IntDecConvertSignedOrFail,
		MapKeyByteString:         cbor.MapKeyByteStringForbidden,
		ExtraReturnErrors:        cbor.ExtraDecErrorUnknownField,
		DefaultMapType:           reflect.TypeOf(map[string]any(nil)),
		UTF8:                     cbor.UTF8RejectInvalid,
		FieldNameMatching:        cbor.FieldNameMatchingCaseSensitive,
		DefaultByteStringType:    reflect.TypeOf(""),
		ByteStringToString:       cbor.ByteStringToStringAllowedWithExpectedLaterEncoding,
		FieldNameByteString:      cbor.FieldNameByteStringAllowed,
		UnrecognizedTagToAny:     cbor.UnrecognizedTagContentToAny,
		TimeTagToAny:             cbor.TimeTagToRFC3339Nano,
		ByteStringToTime:         cbor.ByteStringToTimeAllowed,
		NaN:                      cbor.NaNDecodeForbidden,
		Inf:                      cbor.InfDecodeForbidden,
		ByteStringExpectedFormat: cbor.ByteStringExpectedBase64,
		BignumTag:                cbor.BignumTagForbidden,
		BinaryUnmarshaler:        cbor.BinaryUnmarshalerNone,
		TextUnmarshaler:          cbor.TextUnmarshalerTextString,
	}
}

// transcoder adapts a function of a whole document to cbor.Transcoder.
type transcoder func([]byte) ([]byte, error)

func (f transcoder) Transcode(dst io.Writer, src io.Reader) error {
	data, err := io.ReadAll(src)
	if err != nil {
		return err
	}
	out, err := f(data)
	if err != nil {
		return err
	}
	_, err = dst.Write(out)
	return err
}

// libEnc writes as Kubernetes' deterministic modes.Encode; libEncUnsorted
// keeps Go's field order, the option that saves the sort
// (EncodeNondeterministic shuffles instead). libDec reads as modes.Decode.
var libEnc, libEncUnsorted, libDec = libModes()

func libModes() (sorted, unsorted cbor.EncMode, dec cbor.DecMode) {
	must := func(err error) {
		if err != nil {
			panic(err)
		}
	}
	o := libEncOptions()
	base, err := o.EncMode()
	must(err)
	// kapi.Time has MarshalJSON: Kubernetes transcodes such a value
	// (modes.TranscodeFromJSON), here with the same base mode.
	o.JSONMarshalerTranscoder = transcoder(func(data []byte) ([]byte, error) { return libJSONToCBOR(base, data) })
	sorted, err = o.EncMode()
	must(err)
	o.Sort = cbor.SortNone
	unsorted, err = o.EncMode()
	must(err)
	d := libDecOptions()
	d.JSONUnmarshalerTranscoder = transcoder(func(data []byte) ([]byte, error) {
		var v any
		if err := dec.Unmarshal(data, &v); err != nil {
			return nil, err
		}
		return json.Marshal(v)
	})
	dec, err = d.DecMode()
	must(err)
	return sorted, unsorted, dec
}

// libValueOfJSON decodes a JSON document into a Go value with integers kept
// as int64 (uint64 beyond), as Kubernetes' TranscodeFromJSON does with
// sigs.k8s.io/json's PreserveInts.
func libValueOfJSON(data []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(data))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return libNumbers(v)
}

func libNumbers(v any) (any, error) {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			n, err := libNumbers(e)
			if err != nil {
				return nil, err
			}
			v[k] = n
		}
	case []any:
		for i, e := range v {
			n, err := libNumbers(e)
			if err != nil {
				return nil, err
			}
			v[i] = n
		}
	case json.Number:
		s := string(v)
		if !strings.ContainsAny(s, ".eE") {
			if i, err := strconv.ParseInt(s, 10, 64); err == nil {
				return i, nil
			}
			if u, err := strconv.ParseUint(s, 10, 64); err == nil {
				return u, nil
			}
		}
		return strconv.ParseFloat(s, 64)
	}
	return v, nil
}

// libJSONToCBOR is a JSON element made CBOR through a Go value.
func libJSONToCBOR(em cbor.EncMode, jsonElement []byte) ([]byte, error) {
	v, err := libValueOfJSON(jsonElement)
	if err != nil {
		return nil, err
	}
	return em.Marshal(v)
}

// libCBORToJSON is a CBOR body made JSON through a Go value, as
// modes.TranscodeToJSON.
func libCBORToJSON(body []byte) ([]byte, error) {
	var v any
	if err := libDec.Unmarshal(body, &v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

// libEvent is a watch event of an application/cbor-seq stream.
type libEvent struct {
	Type   string          `json:"type"`
	Object cbor.RawMessage `json:"object"`
}

var selfDescribed = []byte{0xd9, 0xd9, 0xf7}

func BenchmarkCBORLibrary(b *testing.B) {
	cborFormat := codec.ByMediaType(codec.MediaTypeCBOR)
	w := newBenchWidget(0)
	jsonElement, err := codec.JSON().Marshal(w)
	if err != nil {
		b.Fatal(err)
	}
	ownElement, err := cborFormat.Transcode(jsonElement)
	if err != nil {
		b.Fatal(err)
	}
	body := append(bytes.Clone(selfDescribed), ownElement...)
	tm := kapi.TypeMeta{Kind: "Widget", APIVersion: "example.com/v1"}

	run := func(name string, f func() error) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := f(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}

	// Encode once per object version: the element from the stored JSON.
	run("encode-element/impl=own", func() error { _, err := cborFormat.Transcode(jsonElement); return err })
	run("encode-element/impl=fxamacker", func() error { _, err := libJSONToCBOR(libEnc, jsonElement); return err })
	run("encode-element/impl=fxamacker-unsorted", func() error { _, err := libJSONToCBOR(libEncUnsorted, jsonElement); return err })
	// The option without JSON: from the Go object.
	run("encode-typed/impl=own", func() error { _, err := cborFormat.Marshal(w); return err })
	run("encode-typed/impl=fxamacker", func() error { _, err := libEnc.Marshal(w); return err })
	run("encode-typed/impl=fxamacker-unsorted", func() error { _, err := libEncUnsorted.Marshal(w); return err })

	// A request body: to the JSON that field validation and decoding read.
	run("decode-to-json/impl=own", func() error { _, _, err := cborFormat.ToJSON(body); return err })
	run("decode-to-json/impl=fxamacker", func() error { _, err := libCBORToJSON(body); return err })
	// The option without JSON: straight into the Go type (and no field
	// validation by JSON path then).
	run("decode-typed/impl=own", func() error { var got benchWidget; return decodeBody(cborFormat, body, &got) })
	run("decode-typed/impl=fxamacker", func() error { var got benchWidget; return libDec.Unmarshal(body, &got) })

	// A watch event around a cached element.
	buf := make([]byte, 0, 4096)
	run("watch-event/impl=own", func() error {
		_, err := cborFormat.AppendEvent(buf[:0], "MODIFIED", tm, ownElement)
		return err
	})
	run("watch-event/impl=fxamacker", func() error {
		object := append(append(buf[:0], selfDescribed...), ownElement...)
		out, err := libEnc.Marshal(libEvent{Type: "MODIFIED", Object: object})
		if err == nil {
			_ = append(append(buf[:0], selfDescribed...), out...)
		}
		return err
	})
}

// TestCBORLibraryBenchmarkData shows that the benchmark's two sides write
// and read the same documents, so that it compares like with like.
func TestCBORLibraryBenchmarkData(t *testing.T) {
	cborFormat := codec.ByMediaType(codec.MediaTypeCBOR)
	w := newBenchWidget(3)
	jsonElement := mustJSON(t, w)
	own, err := cborFormat.Transcode(jsonElement)
	if err != nil {
		t.Fatal(err)
	}
	for name, lib := range map[string]func() ([]byte, error){
		"element":          func() ([]byte, error) { return libJSONToCBOR(libEnc, jsonElement) },
		"element unsorted": func() ([]byte, error) { return libJSONToCBOR(libEncUnsorted, jsonElement) },
		"typed":            func() ([]byte, error) { return libEnc.Marshal(w) },
	} {
		libElement, err := lib()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		// Each side reads the other's element as the same document.
		fromLib, _, err := cborFormat.ToJSON(libElement)
		if err != nil {
			t.Fatalf("%s: own reading the library's: %v", name, err)
		}
		fromOwn, err := libCBORToJSON(own)
		if err != nil {
			t.Fatalf("%s: the library reading own: %v", name, err)
		}
		if !jsonEqual(t, fromLib, jsonElement) || !jsonEqual(t, fromOwn, jsonElement) {
			t.Errorf("%s:\n library's %s\n own       %s\n want      %s", name, fromLib, fromOwn, jsonElement)
		}
	}
	var typed benchWidget
	if err := libDec.Unmarshal(append(bytes.Clone(selfDescribed), own...), &typed); err != nil {
		t.Fatal(err)
	}
	if got := mustJSON(t, &typed); !jsonEqual(t, got, jsonElement) {
		t.Errorf("typed decode %s, want %s", got, jsonElement)
	}
	// The event the library writes is the one kapi writes, but for order.
	event, err := cborFormat.AppendEvent(nil, "ADDED", w.TypeMeta, own)
	if err != nil {
		t.Fatal(err)
	}
	libOut, err := libEnc.Marshal(libEvent{Type: "ADDED", Object: append(bytes.Clone(selfDescribed), own...)})
	if err != nil {
		t.Fatal(err)
	}
	a, _, errA := cborFormat.ToJSON(event)
	b, _, errB := cborFormat.ToJSON(libOut)
	if err := errors.Join(errA, errB); err != nil || !jsonEqual(t, a, b) {
		t.Errorf("events differ: %s / %s (%v)", a, b, err)
	}
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("%v in %s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("%v in %s", err, b)
	}
	return fmt.Sprint(x) == fmt.Sprint(y) && reflect.DeepEqual(x, y)
}
