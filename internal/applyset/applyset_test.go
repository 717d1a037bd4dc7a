package applyset_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/internal/applyset"
)

func TestParentTypes(t *testing.T) {
	kinds := []applyset.Kind{
		{Group: "example.com", Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true,
			Versions: []applyset.Version{{Name: "v1", Storage: true}, {Name: "v1beta1"}}},
		{Group: "example.com", Kind: "WidgetClass", Plural: "widgetclasses", Singular: "widgetclass"},
	}
	for _, tc := range []struct {
		selector string
		names    []string
	}{
		{"applyset.kubernetes.io/is-parent-type", []string{"widgets.example.com", "widgetclasses.example.com"}}, // kubectl's
		{"applyset.kubernetes.io/is-parent-type=true", []string{"widgets.example.com", "widgetclasses.example.com"}},
		{"", []string{"widgets.example.com", "widgetclasses.example.com"}},
		{"applyset.kubernetes.io/is-parent-type=false", nil},
		{"!applyset.kubernetes.io/is-parent-type", nil},
		{"app=x", nil},
	} {
		body, err := applyset.ParentTypes(kinds, tc.selector)
		if err != nil {
			t.Fatalf("%q: %v", tc.selector, err)
		}
		var list struct {
			Kind  string
			Items []struct {
				Metadata struct {
					Name   string
					Labels map[string]string
				}
				Spec struct {
					Scope    string
					Names    struct{ Kind, ListKind string }
					Versions []struct {
						Name            string
						Served, Storage bool
					}
				}
			}
		}
		if err := json.Unmarshal(body, &list); err != nil || list.Kind != "CustomResourceDefinitionList" || list.Items == nil {
			t.Fatalf("%q: %s %v", tc.selector, body, err)
		}
		var names []string
		for _, it := range list.Items {
			names = append(names, it.Metadata.Name)
			if it.Metadata.Labels[applyset.ParentTypeLabel] != "true" {
				t.Errorf("%s lacks the label", it.Metadata.Name)
			}
		}
		if len(names) != len(tc.names) || len(names) > 0 && (names[0] != tc.names[0] || names[1] != tc.names[1]) {
			t.Errorf("%q: %v, want %v", tc.selector, names, tc.names)
		}
		if len(list.Items) == 2 {
			w, c := list.Items[0].Spec, list.Items[1].Spec
			if w.Scope != "Namespaced" || c.Scope != "Cluster" || w.Names.ListKind != "WidgetList" ||
				len(w.Versions) != 2 || !w.Versions[0].Storage || w.Versions[1].Storage || !w.Versions[1].Served {
				t.Errorf("specs %+v %+v", w, c)
			}
		}
	}
	if _, err := applyset.ParentTypes(kinds, "a in (b"); !errors.Is(err, applyset.ErrSelector) {
		t.Errorf("a bad selector: %v", err)
	}
}

func TestHandler(t *testing.T) {
	var failed string
	h := applyset.Handler([]applyset.Kind{{Group: "example.com", Kind: "Widget", Plural: "widgets"}}, func(w http.ResponseWriter, r *http.Request, message string) {
		failed = message
		w.WriteHeader(http.StatusBadRequest)
	})
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, applyset.Path+"?labelSelector=applyset.kubernetes.io%2Fis-parent-type", nil))
	if w.Code != http.StatusOK || w.Header().Get("Content-Type") != "application/json" || !strings.Contains(w.Body.String(), `"name":"widgets.example.com"`) {
		t.Errorf("%d %v %s", w.Code, w.Header(), w.Body)
	}
	w = httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, applyset.Path+"?labelSelector=a+in+(b", nil))
	if w.Code != http.StatusBadRequest || !strings.HasPrefix(failed, "unable to parse requirement: ") {
		t.Errorf("a bad selector: %d %q", w.Code, failed)
	}
}

// TestWithParentTypes: on a server that lists its own CRDs, kubectl's
// question gets that list with the registered parent types after its
// items (one already listed is not repeated); other lists, other answers
// and other media types are the server's own, byte for byte.
func TestWithParentTypes(t *testing.T) {
	kinds := []applyset.Kind{
		{Group: "example.com", Kind: "Widget", Plural: "widgets", Singular: "widget", Namespaced: true, Versions: []applyset.Version{{Name: "v1", Storage: true}}},
		{Group: "example.org", Kind: "Bundle", Plural: "bundles", Singular: "bundle"},
	}
	const own = `{"apiVersion":"apiextensions.k8s.io/v1","kind":"CustomResourceDefinitionList","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"bundles.example.org","uid":"u1"}}]}`
	var encoding string // what the server was asked for
	api := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("as") {
		case "table":
			w.Header().Set("Content-Type", "application/json;as=Table;v=v1;g=meta.k8s.io")
		case "gone":
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusGone)
		default:
			w.Header().Set("Content-Type", "application/json")
		}
		encoding = r.Header.Get("Accept-Encoding")
		_, _ = w.Write([]byte(own))
	})
	h := applyset.WithParentTypes(api, kinds)
	get := func(query string) (int, string) {
		req := httptest.NewRequest(http.MethodGet, applyset.Path+query, nil)
		req.Header.Set("Accept-Encoding", "gzip")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String()
	}
	code, body := get("?labelSelector=applyset.kubernetes.io%2Fis-parent-type")
	var list struct {
		Metadata struct{ ResourceVersion string }
		Items    []struct{ Metadata struct{ Name, UID string } }
	}
	if err := json.Unmarshal([]byte(body), &list); err != nil || code != http.StatusOK {
		t.Fatalf("HTTP %d %s: %v", code, body, err)
	}
	var names []string
	for _, it := range list.Items {
		names = append(names, it.Metadata.Name+"/"+it.Metadata.UID)
	}
	if strings.Join(names, " ") != "bundles.example.org/u1 widgets.example.com/" || list.Metadata.ResourceVersion != "7" {
		t.Errorf("merged list %s", body)
	}
	if encoding != "" {
		t.Errorf("the list to merge was asked for with Accept-Encoding %q", encoding)
	}
	for _, q := range []string{"", "?labelSelector=app%3Dx", "?labelSelector=applyset.kubernetes.io%2Fis-parent-type&as=table",
		"?labelSelector=applyset.kubernetes.io%2Fis-parent-type&as=gone", "?labelSelector=applyset.kubernetes.io%2Fis-parent-type&watch=true",
		"?labelSelector=applyset.kubernetes.io%2Fis-parent-type=false"} {
		if _, body := get(q); body != own {
			t.Errorf("%q: %s, want the server's own answer", q, body)
		}
	}
}
