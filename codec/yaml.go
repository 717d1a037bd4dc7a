package codec

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json/jsontext"
	"gopkg.in/yaml.v3"
)

// YAML bodies are read by turning them into the JSON document they mean, so
// that one path decodes and validates every textual format. Scalars keep
// their literal text where JSON can carry it (numbers exactly as written,
// timestamps as strings), and duplicate keys stay duplicates, for the field
// check to name.

// maxYAMLDepth bounds nesting as encoding/json does.
const maxYAMLDepth = 10000

// YAMLToJSON converts one YAML document to JSON. JSON is YAML, so a JSON
// body passes through with the same values: a body that is plainly JSON
// (see plainJSON) is returned as it is, data itself, without being read
// as YAML. Aliases are expanded, within a budget: a document whose aliases
// would expand past it (a "billion laughs") is an error.
func YAMLToJSON(data []byte) ([]byte, error) {
	if plainJSON(data) {
		return data, nil
	}
	return yamlToJSON(data)
}

// plainJSON says whether data is JSON that the YAML reader would take for
// the same document, so that reading it as YAML can be skipped: kubectl
// sends every apply as JSON labelled application/apply-patch+yaml, and
// yaml.v3 costs most of the bytes such a request allocates. YAML 1.2 is a
// superset of JSON, except where the YAML reader is stricter or reads a
// value otherwise; such a body is left to the YAML path, which answers as
// it always has:
//   - characters outside YAML's printable set, YAML's line separators
//     U+2028 and U+2029 (folded like line breaks in a quoted scalar), or
//     escapes of UTF-16 surrogates (\uD800-\uDFFF, which YAML rejects
//     even in pairs);
//   - characters outside the Basic Multilingual Plane, kept off the fast
//     path for want of proof that every YAML context takes them;
//   - numbers a float64 cannot hold (YAML reads 1e400 as a string);
//   - nesting deeper than 1000, far below both readers' limits.
//
// Duplicate keys stay in the JSON as the YAML path keeps them, for the
// field check to name; numbers keep their text on both paths.
// FuzzYAMLToJSONFastPath checks the two paths against each other.
func plainJSON(data []byte) bool {
	// json/v2's check, a third of encoding/json's cost; stricter only
	// where the scan below says no anyway (invalid UTF-8, surrogates).
	return jsontext.Value(data).IsValid(jsontext.AllowDuplicateNames(true)) && readAlike(data)
}

// YAMLToJSONOfJSON is YAMLToJSON of data that a JSON reader took whole as
// one valid JSON value (duplicate names allowed; encoding/json's reader,
// or one that agrees with it): plainJSON's check that it is valid JSON,
// most of its cost, is not made again. A server reads an apply
// configuration's JSON anyway, and kubectl sends it labelled as YAML.
func YAMLToJSONOfJSON(data []byte) ([]byte, error) {
	if readAlike(data) {
		return data, nil
	}
	return yamlToJSON(data)
}

// readAlike is plainJSON of data known to be valid JSON: whether the YAML
// reader takes it for the same document. encoding/json takes invalid UTF-8
// and escapes of lone surrogates where json/v2 does not; the scan says no
// to both. It reads every apply's body, so the bytes most of a body is
// (a string's plain ASCII, a number's digits) are passed over by table.
func readAlike(data []byte) bool {
	depth := 0
	for i := 0; i < len(data); {
		switch c := data[i]; {
		case c == '"': // valid JSON: the string is closed, escapes complete
			start := i
			for i++; ; {
				for alikeInString[data[i]] {
					i++
				}
				c := data[i]
				if c == '"' {
					break
				}
				switch {
				case c == '\\':
					if data[i+1] == '/' || data[i+1] == 'u' && data[i+2]|0x20 == 'd' && data[i+3] >= '8' {
						return false // \/, or \uD800-\uDFFF (digits 8, 9 and every letter are >= '8')
					}
					i += 2
				case c < utf8.RuneSelf:
					if c == 0x7f {
						return false // JSON lets DEL through raw, YAML does not
					}
					i++
				default:
					r, n := utf8.DecodeRune(data[i:])
					if n == 1 || !(r >= 0xa0 && r <= 0xd7ff || r >= 0xe000 && r <= 0xfffd && r != 0xfeff) ||
						r == 0x2028 || r == 0x2029 { // YAML's line separators: folded in a quoted scalar
						return false
					}
					i += n
				}
			}
			i++
			// A key: YAML wants it no longer than 1024 characters and on
			// the line of its colon.
			j, lines := i, false
			for ; j < len(data) && isJSONSpace(data[j]); j++ {
				lines = lines || data[j] == '\n' || data[j] == '\r'
			}
			if j < len(data) && data[j] == ':' && (lines || i-start > 1000) {
				return false
			}
		case c == '\t' && depth == 0:
			return false // YAML takes no tab before or after the document's first line
		case c == '{' || c == '[':
			if depth++; depth > 1000 {
				return false
			}
			i++
		case c == '}' || c == ']':
			depth--
			i++
		case c == '-' || c >= '0' && c <= '9':
			j, float := i, false
			for ; j < len(data) && alikeInNumber[data[j]]; j++ {
				float = float || data[j]|0x20 == 'e'
			}
			if float || j-i > 15 {
				if _, err := strconv.ParseFloat(string(data[i:j]), 64); err != nil {
					return false
				}
			}
			i = j
		default: // whitespace, punctuation, true, false, null
			i++
		}
	}
	return true
}

// alikeInString are the bytes readAlike passes over in a valid JSON
// string: printable ASCII but the quote, the backslash and DEL;
// alikeInNumber, those of a number.
var alikeInString, alikeInNumber = func() (s, n [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		s[c] = c != '"' && c != '\\'
	}
	for _, c := range "+-.eE0123456789" {
		n[c] = true
	}
	return s, n
}()

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func yamlToJSON(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return []byte("null"), nil
		}
		return nil, err
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		if err != nil {
			return nil, err
		}
		return nil, errors.New("the body holds more than one YAML document")
	}
	c := yamlConverter{budget: 64<<10 + 16*len(data)}
	if err := c.node(&doc, 0); err != nil {
		return nil, err
	}
	return c.out, nil
}

type yamlConverter struct {
	out    []byte
	budget int // nodes that may still be written, aliases included
}

func (c *yamlConverter) node(n *yaml.Node, depth int) error {
	if depth > maxYAMLDepth {
		return fmt.Errorf("line %d: the YAML document is nested too deeply", n.Line)
	}
	if c.budget--; c.budget < 0 {
		return fmt.Errorf("line %d: the YAML document expands to too many values (aliases)", n.Line)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			c.out = append(c.out, "null"...)
			return nil
		}
		return c.node(n.Content[0], depth)
	case yaml.AliasNode:
		return c.node(n.Alias, depth+1)
	case yaml.MappingNode:
		c.out = append(c.out, '{')
		first := true
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.ScalarNode && k.Tag == "!!merge" {
				return fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			for k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode || k.ShortTag() == "!!null" {
				return fmt.Errorf("line %d: map key %q is not a string", k.Line, k.Value)
			}
			// Other scalar keys (1, true, 2024-01-01) are their text, as
			// Kubernetes' YAML reader makes them.
			if !first {
				c.out = append(c.out, ',')
			}
			first = false
			c.out = appendQuoted(c.out, k.Value)
			c.out = append(c.out, ':')
			if err := c.node(v, depth+1); err != nil {
				return err
			}
		}
		c.out = append(c.out, '}')
		return nil
	case yaml.SequenceNode:
		c.out = append(c.out, '[')
		for i, e := range n.Content {
			if i > 0 {
				c.out = append(c.out, ',')
			}
			if err := c.node(e, depth+1); err != nil {
				return err
			}
		}
		c.out = append(c.out, ']')
		return nil
	case yaml.ScalarNode:
		return c.scalar(n)
	}
	return fmt.Errorf("line %d: unexpected YAML node", n.Line)
}

func (c *yamlConverter) scalar(n *yaml.Node) error {
	switch n.ShortTag() {
	case "!!null":
		c.out = append(c.out, "null"...)
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return err
		}
		c.out = strconv.AppendBool(c.out, b)
	case "!!int":
		text := strings.ReplaceAll(n.Value, "_", "")
		if isJSONInteger(text) {
			c.out = append(c.out, strings.TrimPrefix(text, "+")...)
			return nil
		}
		i, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			u, uerr := strconv.ParseUint(text, 0, 64)
			if uerr != nil {
				return fmt.Errorf("line %d: invalid integer %q", n.Line, n.Value)
			}
			c.out = strconv.AppendUint(c.out, u, 10)
			return nil
		}
		c.out = strconv.AppendInt(c.out, i, 10)
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return err
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("line %d: %s is not a number JSON can carry", n.Line, n.Value)
		}
		if json.Valid([]byte(n.Value)) {
			c.out = append(c.out, n.Value...) // exactly as written
		} else {
			c.out = strconv.AppendFloat(c.out, f, 'g', -1, 64)
		}
	case "!!binary":
		if _, err := base64.StdEncoding.DecodeString(strings.Join(strings.Fields(n.Value), "")); err != nil {
			return fmt.Errorf("line %d: invalid !!binary value", n.Line)
		}
		c.out = appendQuoted(c.out, strings.Join(strings.Fields(n.Value), ""))
	default: // !!str, !!timestamp and other tags travel as their text
		c.out = appendQuoted(c.out, n.Value)
	}
	return nil
}

// isJSONInteger says whether s is a decimal integer JSON can carry as is
// (an optional sign, no leading zeros).
func isJSONInteger(s string) bool {
	if len(s) > 0 && (s[0] == '-' || s[0] == '+') {
		s = s[1:]
	}
	if s == "" || len(s) > 1 && s[0] == '0' {
		return false
	}
	for i := range len(s) {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func appendQuoted(dst []byte, s string) []byte {
	b, _ := json.Marshal(s) // cannot fail for a string
	return append(dst, b...)
}

// appendYAML writes a JSON document as YAML in the style kubectl prints:
// map keys sorted, two-space indentation with list items at their key's
// column, numbers exactly as in the JSON. A string is written plain only
// when every YAML reader (1.1 and 1.2) reads it back as that string;
// otherwise it is double-quoted with JSON's escapes, which YAML shares.
func appendYAML(dst, jsonDoc []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(jsonDoc))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	switch v := v.(type) {
	case map[string]any:
		if len(v) > 0 {
			return appendYAMLMap(dst, v, 0, false), nil
		}
	case []any:
		if len(v) > 0 {
			return appendYAMLSeq(dst, v, 0, false), nil
		}
	}
	return append(appendYAMLScalar(dst, v), '\n'), nil
}

func appendYAMLMap(dst []byte, m map[string]any, indent int, inline bool) []byte {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for i, k := range keys {
		if i > 0 || !inline {
			dst = appendIndent(dst, indent)
		}
		dst = appendYAMLString(dst, k)
		dst = append(dst, ':')
		switch v := m[k].(type) {
		case map[string]any:
			if len(v) > 0 {
				dst = appendYAMLMap(append(dst, '\n'), v, indent+2, false)
				continue
			}
		case []any:
			if len(v) > 0 {
				dst = appendYAMLSeq(append(dst, '\n'), v, indent, false)
				continue
			}
		}
		dst = append(appendYAMLScalar(append(dst, ' '), m[k]), '\n')
	}
	return dst
}

func appendYAMLSeq(dst []byte, seq []any, indent int, inline bool) []byte {
	for i, e := range seq {
		if i > 0 || !inline {
			dst = appendIndent(dst, indent)
		}
		dst = append(dst, "- "...)
		switch v := e.(type) {
		case map[string]any:
			if len(v) > 0 {
				dst = appendYAMLMap(dst, v, indent+2, true)
				continue
			}
		case []any:
			if len(v) > 0 {
				dst = appendYAMLSeq(dst, v, indent+2, true)
				continue
			}
		}
		dst = append(appendYAMLScalar(dst, e), '\n')
	}
	return dst
}

func appendIndent(dst []byte, n int) []byte {
	for range n {
		dst = append(dst, ' ')
	}
	return dst
}

// appendYAMLScalar writes a scalar, or an empty map or list, inline.
func appendYAMLScalar(dst []byte, v any) []byte {
	switch v := v.(type) {
	case string:
		return appendYAMLString(dst, v)
	case json.Number:
		return append(dst, v...)
	case bool:
		return strconv.AppendBool(dst, v)
	case map[string]any:
		return append(dst, "{}"...)
	case []any:
		return append(dst, "[]"...)
	}
	return append(dst, "null"...)
}

func appendYAMLString(dst []byte, s string) []byte {
	if plainYAML(s) {
		return append(dst, s...)
	}
	// Double-quoted, escaping what YAML does not allow raw: quotes,
	// backslashes and every character outside its printable set.
	dst = append(dst, '"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			dst = append(dst, '\\', byte(r))
		case r == '\n':
			dst = append(dst, `\n`...)
		case r == '\t':
			dst = append(dst, `\t`...)
		case r >= 0x20 && r <= 0x7e, r >= 0xa0 && r <= 0xd7ff, r >= 0xe000 && r <= 0xfffd && r != 0xfeff, r >= 0x10000 && r <= 0x10ffff:
			dst = utf8.AppendRune(dst, r)
		case r < 0x10000:
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = fmt.Appendf(dst, `\U%08x`, r)
		}
	}
	return append(dst, '"')
}

// plainYAML says whether s can be written unquoted: it starts with a letter,
// '_' or '/', holds only letters, digits and _ . / -, and is not a word
// some YAML reader takes for a boolean or null.
func plainYAML(s string) bool {
	if s == "" || yamlWords[strings.ToLower(s)] {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_', c == '/':
		case i > 0 && (c >= '0' && c <= '9' || c == '.' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// yamlWords are read as booleans or null by YAML 1.1 (go-yaml v2, under
// kubectl) or 1.2 readers, in any case.
var yamlWords = map[string]bool{
	"y": true, "yes": true, "n": true, "no": true, "on": true, "off": true,
	"true": true, "false": true, "null": true,
}
