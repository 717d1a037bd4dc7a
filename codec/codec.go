package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"strconv"
	"strings"
)

// Sentinel errors of negotiation.
var (
	ErrNotAcceptable        = errors.New("codec: no acceptable media type")
	ErrUnsupportedMediaType = errors.New("codec: unsupported media type")
)

// Format is one row of the media-type table.
type Format struct {
	// MediaType is what Content-Type says of a body in this format.
	MediaType string
	// Encode writes v; Decode reads data into v.
	Encode func(v any) ([]byte, error)
	Decode func(data []byte, v any) error
	// StreamMediaType is the Content-Type of a watch stream in this format;
	// empty if the format cannot carry one.
	StreamMediaType string
}

// jsonFormat is the default format.
var jsonFormat = &Format{
	MediaType:       "application/json",
	Encode:          json.Marshal,
	Decode:          decodeJSON,
	StreamMediaType: "application/json",
}

// JSON is the JSON format: the default, and what kapi stores.
func JSON() *Format { return jsonFormat }

func decodeJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	if err := d.Decode(v); err != nil {
		return err
	}
	if _, err := d.Token(); err == nil {
		return errors.New("unexpected data after the JSON document")
	}
	return nil
}

// table is every format kapi serves, in order of preference.
var table = []*Format{jsonFormat}

// Negotiate picks the format for a response from an Accept header. An empty
// header accepts anything. Media ranges with parameters other than q (such as
// as=Table) only match a format that serves them.
func Negotiate(accept string) (*Format, error) {
	if strings.TrimSpace(accept) == "" {
		return table[0], nil
	}
	var best *Format
	bestQ := 0.0
	for _, r := range strings.Split(accept, ",") {
		mediaType, params, err := mime.ParseMediaType(strings.TrimSpace(r))
		if err != nil {
			continue
		}
		q := 1.0
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil || q < 0 || q > 1 {
				continue
			}
			delete(params, "q")
		}
		delete(params, "charset")
		if q == 0 || q <= bestQ || len(params) > 0 {
			continue
		}
		for _, f := range table {
			if matches(mediaType, f.MediaType) {
				best, bestQ = f, q
				break
			}
		}
	}
	if best == nil {
		return nil, fmt.Errorf("%w: only the following media types are supported: %s", ErrNotAcceptable, supported())
	}
	return best, nil
}

// ForContentType picks the decoder for a request body.
func ForContentType(contentType string) (*Format, error) {
	mediaType, _, err := mime.ParseMediaType(contentType)
	if err == nil {
		for _, f := range table {
			if f.MediaType == mediaType {
				return f, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: the body of the request was in an unknown format - accepted media types include: %s", ErrUnsupportedMediaType, supported())
}

func matches(mediaRange, mediaType string) bool {
	if mediaRange == "*/*" || mediaRange == mediaType {
		return true
	}
	prefix, ok := strings.CutSuffix(mediaRange, "/*")
	return ok && strings.HasPrefix(mediaType, prefix+"/")
}

func supported() string {
	names := make([]string, len(table))
	for i, f := range table {
		names[i] = f.MediaType
	}
	return strings.Join(names, ", ")
}
