package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync/atomic"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/examples/widgets/widgetapi"
)

// encodesPath is where a server that counts its encodes says how many it
// has made. kapi does not expose such a counter; the harness's own kapi
// server (-serve-kapi) does, with a widget type that counts.
const encodesPath = "/loadtest/encodes"

// countedWidget is the example's Widget with the same fields, tags and
// wire form, whose JSON encoding is counted. kapi encodes objects with
// encoding/json, which calls MarshalJSON; so every JSON encode of a widget
// anywhere in kapi (storage, the write's response, GET, LIST, watchers) is
// one count. Protobuf encodes are not counted: they take the same cache,
// keyed by media type, in apiserver's element.
type countedWidget widgetapi.Widget

var widgetEncodes atomic.Int64

func (w *countedWidget) MarshalJSON() ([]byte, error) {
	widgetEncodes.Add(1)
	return json.Marshal((*widgetapi.Widget)(w))
}

// newCountingKapi is a kapi server on the memory backend serving
// example.com/v1 widgets as countedWidget, with the encode counter at
// encodesPath. It has no defaulting or validation, unlike the example.
func newCountingKapi() (http.Handler, func() error, error) {
	api, err := apiserver.New()
	if err != nil {
		return nil, nil, err
	}
	err = apiserver.Register(api, apiserver.Resource[countedWidget]{
		Group: "example.com", Version: "v1", Kind: "Widget", Plural: "widgets",
		Namespaced: true, ShortNames: []string{"wd"}, Status: true,
	})
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", api)
	mux.HandleFunc("GET "+encodesPath, func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write(strconv.AppendInt(nil, widgetEncodes.Load(), 10))
	})
	return mux, api.Close, nil
}
