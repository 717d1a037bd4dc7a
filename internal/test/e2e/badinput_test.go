package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

const widgetsPath = "/apis/example.com/v1/namespaces/default/widgets"

// TestBadInput sends malformed requests over plain HTTP. Each gets a JSON
// Status with the right code and reason, never a 500, and what was stored
// before is unchanged.
func TestBadInput(t *testing.T) {
	srv := startServer(t)
	client := &http.Client{Timeout: 30 * time.Second}

	for _, name := range []string{"keep-1", "keep-2"} {
		body := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"` + name + `"},"spec":{"color":"Red"}}`
		resp := do(t, client, "POST", srv.URL+widgetsPath, "application/json", strings.NewReader(body))
		if resp.code != http.StatusCreated {
			t.Fatalf("creating %s: %d %s", name, resp.code, resp.body)
		}
	}
	before := listAll(t, client, srv)

	tooBig := `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"big"},"spec":{"color":"` +
		strings.Repeat("r", 3<<20) + `"}}`

	cases := []struct {
		name        string
		method      string
		path        string
		body        string
		code        int
		reason      string
		wantMessage string // a substring of the Status message, if set
		wantCause   string // a field that must be named in details.causes, if set
	}{
		{name: "malformed-json", method: "POST", path: widgetsPath,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"`,
			code: 400, reason: "BadRequest"},
		{name: "wrong-field-type", method: "POST", path: widgetsPath,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"x"},"spec":{"color":"Red","replicas":"three"}}`,
			code: 400, reason: "BadRequest"},
		{name: "wrong-field-type-put", method: "PUT", path: widgetsPath + "/keep-1",
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"keep-1"},"spec":{"color":"Red","replicas":"three"}}`,
			code: 400, reason: "BadRequest"},
		{name: "body-over-3MiB", method: "POST", path: widgetsPath, body: tooBig,
			code: 413, reason: "RequestEntityTooLarge", wantMessage: "limit is 3145728"},
		{name: "invalid-name", method: "POST", path: widgetsPath,
			body: `{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"Bad_Name"},"spec":{"color":"Red"}}`,
			code: 422, reason: "Invalid", wantCause: "metadata.name"},
		{name: "unknown-resource", method: "GET", path: "/apis/example.com/v1/namespaces/default/gizmos",
			code: 404, reason: "NotFound"},
		{name: "unknown-group", method: "GET", path: "/apis/gizmos.example.com/v1/gizmos",
			code: 404, reason: "NotFound"},
		{name: "patch-collection", method: "PATCH", path: widgetsPath,
			body: `{"metadata":{"labels":{"a":"b"}}}`,
			code: 405, reason: "MethodNotAllowed"},
		{name: "delete-apis", method: "DELETE", path: "/apis",
			code: 405, reason: "MethodNotAllowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			contentType := ""
			var body io.Reader
			if tc.body != "" {
				contentType = "application/json"
				if tc.method == "PATCH" {
					contentType = "application/merge-patch+json"
				}
				body = strings.NewReader(tc.body)
			}
			resp := do(t, client, tc.method, srv.URL+tc.path, contentType, body)
			if resp.code != tc.code {
				t.Errorf("%s %s: status %d, want %d; body: %.600s", tc.method, tc.path, resp.code, tc.code, resp.body)
			}
			if ct := resp.header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q, want application/json", ct)
			}
			var st struct {
				Kind       string `json:"kind"`
				APIVersion string `json:"apiVersion"`
				Status     string `json:"status"`
				Message    string `json:"message"`
				Reason     string `json:"reason"`
				Code       int    `json:"code"`
				Details    *struct {
					Causes []struct {
						Type    string `json:"reason"`
						Message string `json:"message"`
						Field   string `json:"field"`
					} `json:"causes"`
				} `json:"details"`
			}
			if err := json.Unmarshal(resp.body, &st); err != nil {
				t.Fatalf("the body is not a JSON Status: %v; body: %.600s", err, resp.body)
			}
			if st.Kind != "Status" || st.APIVersion != "v1" || st.Status != "Failure" || st.Code != tc.code || st.Reason != tc.reason {
				t.Errorf("Status {kind %q apiVersion %q status %q code %d reason %q}, want {Status v1 Failure %d %s}; body: %.600s",
					st.Kind, st.APIVersion, st.Status, st.Code, st.Reason, tc.code, tc.reason, resp.body)
			}
			if st.Message == "" {
				t.Errorf("Status has no message; body: %.600s", resp.body)
			}
			if tc.wantMessage != "" && !strings.Contains(st.Message, tc.wantMessage) {
				t.Errorf("message %q does not contain %q", st.Message, tc.wantMessage)
			}
			if tc.wantCause != "" {
				found := false
				if st.Details != nil {
					for _, c := range st.Details.Causes {
						found = found || c.Field == tc.wantCause
					}
				}
				if !found {
					t.Errorf("details.causes do not name %s; body: %.600s", tc.wantCause, resp.body)
				}
			}
			if err := srv.alive(); err != nil {
				t.Fatal(err)
			}
		})
	}

	after := listAll(t, client, srv)
	if !bytes.Equal(before, after) {
		t.Errorf("the stored widgets changed:\nbefore: %s\nafter:  %s", before, after)
	}
}

type httpResult struct {
	code   int
	header http.Header
	body   []byte
}

func do(t *testing.T, client *http.Client, method, url, contentType string, body io.Reader) httpResult {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, body)
	if err != nil {
		t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", method, url, err)
	}
	return httpResult{code: resp.StatusCode, header: resp.Header, body: b}
}

// listAll returns the widget list (items and list resourceVersion) as JSON.
func listAll(t *testing.T, client *http.Client, srv *server) []byte {
	t.Helper()
	resp := do(t, client, "GET", srv.URL+widgetsPath, "", nil)
	if resp.code != http.StatusOK {
		t.Fatalf("list: %d %s", resp.code, resp.body)
	}
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
		Items []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(resp.body, &list); err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(list.Items) != 2 {
		t.Errorf("list has %d items, want the 2 created", len(list.Items))
	}
	out, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
