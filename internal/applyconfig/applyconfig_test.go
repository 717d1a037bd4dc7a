package applyconfig_test

import (
	"bytes"
	"testing"

	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/applyconfig"
	"github.com/kapi-dev/kapi/patch"
)

// read is what Read stands for: the body made JSON by its format, then read
// for patch.
func read(doc []byte, cbor bool) ([]byte, *patch.Configuration, error) {
	mt := codec.MediaTypeYAML
	if cbor {
		mt = codec.MediaTypeCBOR
	}
	config, _, err := codec.ByMediaType(mt).ToJSON(doc)
	if err != nil {
		return nil, nil, err
	}
	parsed, _ := patch.ParseConfiguration(config)
	return config, parsed, nil
}

var seeds = []string{
	`{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"size":12,"ports":[{"name":"http","port":80}]}}`,
	"apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
	`{"a":1,"a":2}`, `{"a":"\ud83d\ude00"}`, `{"a":"\uD800"}`, `{"a":"\/"}`, "{\"a\"\n:1}", "\t{}", "{}\n\t", "{\"a\":\"\x7f\"}",
	"{\"a\":\"\xff\"}", `{"a":1e400}`, `{"a":123456789012345678901234567890}`, `[1]`, `"x"`, `null`, ``, `{`, `{"a":b}`,
	`{a: 1}`, "{\"a\":\"\u2028\"}", `{"a":{"b":[{"c":null}]}}`, `{"metadata":{"managedFields":[{"manager":"x"}]}}`,
}

// check holds Read to what reading the body as JSON and then for patch
// gives: the same JSON, a configuration where one was read (of the same
// bytes), and an error where one was made.
func check(t *testing.T, doc []byte, cbor bool) {
	wantConfig, wantParsed, wantErr := read(doc, cbor)
	config, parsed, err := applyconfig.Read(doc, cbor)
	if (err != nil) != (wantErr != nil) || !bytes.Equal(config, wantConfig) {
		t.Fatalf("Read(%q) = %q, %v; want %q, %v", doc, config, err, wantConfig, wantErr)
	}
	if (parsed == nil) != (wantParsed == nil) { // read from the same bytes, when not nil
		t.Fatalf("Read(%q): parsed %v, want %v", doc, parsed != nil, wantParsed != nil)
	}
}

func TestRead(t *testing.T) {
	for _, s := range seeds {
		check(t, []byte(s), false)
	}
	cbor := []byte{0xa1, 0x61, 'a', 0x01} // {"a":1}
	check(t, cbor, true)
	check(t, []byte{0xff}, true)
}

// FuzzRead holds Read to what it stands for on any body.
func FuzzRead(f *testing.F) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) { check(t, doc, false) })
}
