package apiserver

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/httpbody"
)

// Reading a request's body and decoding it into an object of the
// resource's kind: the body limit, Content-Type, fieldValidation's unknown
// and duplicate fields (as errors or warnings), the kind and version.

// body reads the request body, up to the server's limit. A body that ends
// before its Content-Length or has broken chunks is the client's fault:
// 400, where kube-apiserver answers 500.
func (rq *request) body() ([]byte, error) {
	limit := rq.s.config.maxBodyBytes
	data, err := httpbody.Read(http.MaxBytesReader(rq.w, rq.r.Body, limit), min(rq.r.ContentLength, limit))
	if err != nil && !errors.As(err, new(*http.MaxBytesError)) { // new: only a failed read allocates it
		return nil, badRequest("the request body could not be read: %v", err)
	}
	// kube-apiserver ignores Content-Encoding and so reads a compressed
	// body as garbage, or a body that claims a coding it lacks as plain:
	// neither is what the client meant.
	if enc := rq.r.Header.Get("Content-Encoding"); err == nil && len(data) > 0 && enc != "" && !strings.EqualFold(enc, "identity") {
		return nil, NewStatusError(http.StatusUnsupportedMediaType, kapi.StatusReasonUnsupportedMediaType,
			fmt.Sprintf("the request body has Content-Encoding %q: only uncompressed bodies are accepted", enc))
	}
	return data, err
}

// decodeBody reads and decodes the request body into a new object. A body
// without Content-Type is read as JSON, as kube-apiserver does.
func (rq *request) decodeBody() (kapi.Object, error) {
	in := codec.JSON()
	if ct := rq.r.Header.Get("Content-Type"); ct != "" {
		var err error
		if in, err = codec.ForContentType(ct, rq.objType.protobuf); err != nil {
			return nil, err
		}
	}
	data, err := rq.body()
	if err != nil {
		return nil, err
	}
	return rq.decode(in, data)
}

// decode reads data into a new object and checks its kind and version.
// Unknown and duplicate fields are handled as fieldValidation says: Strict
// refuses them, Warn (the default) answers a warning for each, Ignore says
// nothing; both drop unknown fields, and the last duplicate wins.
func (rq *request) decode(in *codec.Format, data []byte) (kapi.Object, error) {
	obj, _, err := rq.decodeCleaned(in, data)
	return obj, err
}

// decodeCleaned is decode, also returning the JSON that was decoded: the
// body in JSON without its unknown fields (nil for protobuf).
func (rq *request) decodeCleaned(in *codec.Format, data []byte) (kapi.Object, []byte, error) {
	validation, err := rq.fieldValidation()
	if err != nil {
		return nil, nil, err
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, nil, rq.undecodable("the request body is empty")
	}
	jsonData, text, err := in.ToJSON(data)
	if err != nil {
		return nil, nil, rq.undecodable(err.Error())
	}
	if !text { // protobuf: decoded as is; unknown fields are skipped, as Kubernetes does
		obj := rq.objType.newObject()
		if err := in.Unmarshal(data, obj); err != nil {
			return nil, nil, rq.undecodable(err.Error())
		}
		obj, err := rq.checkType(obj)
		return obj, nil, err
	}
	data = jsonData
	if string(bytes.TrimSpace(data)) == "null" {
		return nil, nil, rq.undecodable("the request body is null, not an object")
	}
	// A document with nothing to check is decoded once; any other is
	// checked, and decoded again into a new object.
	if obj := rq.objType.newObject(); codec.UnmarshalKnownJSON(data, obj) == nil {
		return rq.checkPruned(obj, data, validation, nil)
	}
	// A document that is not JSON fails the check; decoding it below says why.
	report, cleaned, checkErr := codec.CheckJSONFields(data, rq.objType.typ)
	if checkErr == nil && cleaned != nil { // nil when only duplicates: encoding/json keeps the last, as kube
		data = cleaned
	}
	obj := rq.objType.newObject()
	if err := codec.UnmarshalJSON(data, obj); err != nil {
		// A fatal error is the only answer, whatever fieldValidation
		// says, as kube-apiserver's decoder returns its strict errors
		// only when decoding succeeded.
		return nil, nil, rq.undecodable(err.Error())
	}
	var problems []string
	if checkErr == nil {
		for _, f := range report.Duplicates {
			problems = append(problems, fmt.Sprintf("duplicate field %q", f))
		}
		for _, f := range report.Unknown {
			problems = append(problems, fmt.Sprintf("unknown field %q", f))
		}
	}
	return rq.checkPruned(obj, data, validation, problems)
}

// checkPruned is checkType of an object decoded from data, pruned first
// when its resource's Shape says what its fields are. problems (what the
// decoder found) and the unknown fields pruning drops are refused together
// or warned of, as fieldValidation says: kube-apiserver's strict decoding
// error lists its decoder's findings, then its coercer's. The JSON returned
// is the pruned object's, so that apply merges what was kept.
func (rq *request) checkPruned(obj kapi.Object, data []byte, validation string, problems []string) (kapi.Object, []byte, error) {
	if shape := rq.res.shape; shape != nil && rq.objType == &rq.res.objType {
		unknown := shape.Prune(obj)
		for _, f := range unknown {
			problems = append(problems, fmt.Sprintf("unknown field %q", f))
		}
		if len(unknown) > 0 && validation != "Strict" {
			pruned, err := json.Marshal(obj)
			if err != nil {
				return nil, nil, rq.undecodable(err.Error())
			}
			data = pruned
		}
	}
	switch {
	case len(problems) > 0 && validation == "Strict":
		return nil, nil, rq.undecodable("strict decoding error: " + strings.Join(problems, ", "))
	case validation == "" || validation == "Warn":
		for _, p := range problems {
			rq.warn(p)
		}
	}
	checked, err := rq.checkType(obj)
	return checked, data, err
}

// fieldValidation is the request's fieldValidation: Ignore, Warn or
// Strict, or "" (Warn).
func (rq *request) fieldValidation() (string, error) {
	switch validation := rq.query.Get("fieldValidation"); validation {
	case "", "Warn", "Ignore", "Strict":
		return validation, nil
	default:
		return "", badRequest("fieldValidation must be one of Ignore, Warn or Strict, not %q", validation)
	}
}

// checkDuplicateFields finds the duplicate fields of a merge patch, which
// merging would hide from decode: Strict refuses them, Warn warns of each,
// as kube-apiserver. A patch that is not JSON is left for the merge to
// refuse; one the Merger finds mergeable names no field twice.
func (rq *request) checkDuplicateFields(data []byte, strategic bool) error {
	validation := rq.query.Get("fieldValidation")
	if m := rq.objType.merger; validation == "Ignore" || m != nil && m.Mergeable(data, strategic) {
		return nil
	}
	report, _, err := codec.CheckJSONFields(data, rq.res.typ)
	if err != nil || len(report.Duplicates) == 0 {
		return nil
	}
	var problems []string
	for _, f := range report.Duplicates {
		problems = append(problems, fmt.Sprintf("duplicate field %q", f))
	}
	if validation == "Strict" {
		return rq.undecodable("strict decoding error: " + strings.Join(problems, ", "))
	}
	for _, p := range problems {
		rq.warn(p)
	}
	return nil
}

// checkType refuses an object of another kind or version, and sets the
// resource's on one that names none.
func (rq *request) checkType(obj kapi.Object) (kapi.Object, error) {
	tm, b := obj.GetTypeMeta(), rq.objType
	if tm.APIVersion != "" && tm.APIVersion != b.apiVersion() {
		return nil, badRequest("the API version in the data (%s) does not match the expected API version (%s)", tm.APIVersion, b.apiVersion())
	}
	// A custom resource (a Shape's) of another kind is its validation's to refuse: kube-apiserver's 422.
	if tm.Kind != "" && tm.Kind != b.kind && (rq.res.shape == nil || b != &rq.res.objType) {
		return nil, badRequest("the kind in the data (%s) does not match the expected kind (%s)", tm.Kind, b.kind)
	}
	tm.APIVersion, tm.Kind = b.apiVersion(), cmp.Or(tm.Kind, b.kind)
	return obj, nil
}

// Warning headers are bounded as kube-apiserver bounds them: 4 Ki runes in
// all; past that, each is cut to 256 runes, and none is added once the
// total is spent.
const (
	warningRunes     = 4 << 10
	warningItemRunes = 256
)

// warn adds a Warning header, once per text however often the body is
// decoded (an apply decodes its configuration and the merged object, a
// retried patch decodes again).
func (rq *request) warn(text string) {
	if rq.warned[text] || rq.warnedRunes >= warningRunes {
		return
	}
	if rq.warned == nil {
		rq.warned = map[string]bool{}
	}
	rq.warned[text] = true
	n := utf8.RuneCountInString(text)
	if rq.warnedRunes+n > warningRunes && n > warningItemRunes {
		text, n = string([]rune(text)[:warningItemRunes]), warningItemRunes
	}
	rq.warnedRunes += n
	rq.w.Header().Add("Warning", "299 - "+strconv.Quote(text))
}

// undecodable is kube-apiserver's 400 for a body that is not an object of
// the resource's kind.
func (rq *request) undecodable(reason string) error {
	b := rq.objType
	return badRequest("%s in version %q cannot be handled as a %s: %s", b.kind, b.version, b.kind, reason)
}
