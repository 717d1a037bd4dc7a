package delegation

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strconv"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/admission"
	"github.com/kapi-dev/kapi/apiserver"
)

// callError is a failure to call a webhook, which its failurePolicy
// decides on; its message is kube's ErrCallingWebhook's.
type callError struct {
	name   string
	reason error
}

func (e *callError) Error() string {
	return fmt.Sprintf("failed calling webhook %q: %v", e.name, e.reason)
}
func (e *callError) Unwrap() error { return e.reason }

func internalError(err error) error {
	return apiserver.NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError,
		"Internal error occurred: "+err.Error())
}

// AdmissionReview is an admission.k8s.io/v1 AdmissionReview.
type admissionReview struct {
	APIVersion string             `json:"apiVersion"`
	Kind       string             `json:"kind"`
	Request    *admissionRequest  `json:"request,omitempty"`
	Response   *admissionResponse `json:"response,omitempty"`
}

type gvk struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind,omitempty"`
}

type gvr struct {
	Group    string `json:"group"`
	Version  string `json:"version"`
	Resource string `json:"resource"`
}

type admissionRequest struct {
	UID                string          `json:"uid"`
	Kind               gvk             `json:"kind"`
	Resource           gvr             `json:"resource"`
	SubResource        string          `json:"subResource,omitempty"`
	RequestKind        *gvk            `json:"requestKind,omitempty"`
	RequestResource    *gvr            `json:"requestResource,omitempty"`
	RequestSubResource string          `json:"requestSubResource,omitempty"`
	Name               string          `json:"name,omitempty"`
	Namespace          string          `json:"namespace,omitempty"`
	Operation          string          `json:"operation"`
	UserInfo           userInfo        `json:"userInfo"`
	Object             json.RawMessage `json:"object"`
	OldObject          json.RawMessage `json:"oldObject"`
	DryRun             *bool           `json:"dryRun,omitempty"`
	Options            json.RawMessage `json:"options,omitempty"`
}

type admissionResponse struct {
	UID       string       `json:"uid"`
	Allowed   bool         `json:"allowed"`
	Result    *kapi.Status `json:"status,omitempty"`
	Patch     []byte       `json:"patch,omitempty"`
	PatchType *string      `json:"patchType,omitempty"`
	Warnings  []string     `json:"warnings,omitempty"`
}

// parseAdmissionResponse reads a webhook's answer to the review uid, with
// kube's checks (VerifyAdmissionResponse): an AdmissionReview of
// admission.k8s.io/v1 with a response for that uid, and a patch only with
// patchType JSONPatch.
func parseAdmissionResponse(uid string, data []byte) (*admissionResponse, error) {
	var r admissionReview
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, err
	}
	if r.APIVersion != "admission.k8s.io/v1" || r.Kind != "AdmissionReview" {
		return nil, fmt.Errorf("expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got %s, Kind=%s", r.APIVersion, r.Kind)
	}
	if r.Response == nil {
		return nil, errors.New("webhook response was absent")
	}
	if r.Response.UID != uid {
		return nil, fmt.Errorf("expected response.uid=%q, got %q", uid, r.Response.UID)
	}
	if len(r.Response.Patch) > 0 && (r.Response.PatchType == nil || *r.Response.PatchType != "JSONPatch") {
		return nil, errors.New(`webhook returned response.patch but not response.patchType="JSONPatch"`)
	}
	return r.Response, nil
}

// call asks one webhook about req: nil is allowed (and, for a mutating
// webhook, req.Object patched); a *callError is a failure to ask; any other
// error is the answer to give.
func (w *webhookCaller) call(ctx context.Context, h *webhook, req *admission.Request) error {
	if req.DryRun {
		if h.SideEffects == nil {
			//lint:ignore ST1005 kube-apiserver's webhook dispatchers answer with this text, capital and all
			return &callError{h.Name, errors.New("Webhook SideEffects is nil")}
		}
		if se := *h.SideEffects; se != "None" && se != "NoneOnDryRun" {
			return apiserver.NewStatusError(http.StatusBadRequest, kapi.StatusReasonBadRequest,
				fmt.Sprintf("admission webhook %q does not support dry run", h.Name))
		}
	}
	if !slices.Contains(h.AdmissionReviewVersions, "v1") {
		return &callError{h.Name, fmt.Errorf("webhook does not accept v1 AdmissionReview (only %v)", h.AdmissionReviewVersions)}
	}
	review, err := newAdmissionReview(req)
	if err != nil {
		return &callError{h.Name, fmt.Errorf("could not create admission objects: %w", err)}
	}
	body, _ := json.Marshal(review) // plain data: it marshals
	target, client, err := w.target(h)
	if err != nil {
		return &callError{h.Name, fmt.Errorf("could not get REST client: %w", err)}
	}
	timeout := 10 * time.Second
	if h.TimeoutSeconds != nil && *h.TimeoutSeconds > 0 {
		timeout = time.Duration(*h.TimeoutSeconds) * time.Second
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	hreq, err := http.NewRequestWithContext(cctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return &callError{h.Name, fmt.Errorf("could not get REST client: %w", err)}
	}
	hreq.Header.Set("Content-Type", "application/json")
	hreq.Header.Set("Accept", "application/json")
	resp, err := client.Do(hreq)
	if err != nil {
		return &callError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, 3<<20))
	resp.Body.Close()
	if err != nil {
		return &callError{h.Name, fmt.Errorf("failed to call webhook: %w", err)}
	}
	if resp.StatusCode != http.StatusOK {
		return &callError{h.Name, fmt.Errorf("failed to call webhook: an error on the server (%q) has prevented the request from succeeding (HTTP %d)", truncate(data), resp.StatusCode)}
	}
	result, err := parseAdmissionResponse(review.Request.UID, data)
	if err != nil {
		return &callError{h.Name, fmt.Errorf("received invalid webhook response: %w", err)}
	}
	if !result.Allowed {
		return denied(h.Name, result.Result)
	}
	if len(result.Patch) == 0 || !w.mutate {
		return nil
	}
	if isNil(req.Object) {
		return internalError(fmt.Errorf("admission webhook %q attempted to modify the object, which is not supported for this operation", h.Name))
	}
	p, err := jsonpatch.DecodePatch(result.Patch)
	if err != nil {
		return &callError{h.Name, fmt.Errorf("received undecodable patch in webhook response: %w", err)}
	}
	patched, err := p.Apply(review.Request.Object)
	if err != nil {
		return internalError(err)
	}
	if err := replaceObject(req.Object, patched); err != nil {
		return internalError(fmt.Errorf("admission webhook %q: the patched object: %w", h.Name, err))
	}
	return nil
}

// denied is kube's error for a webhook's denial (webhook/errors.ToStatusErr):
// the webhook's status, its code at least 400, its message prefixed.
func denied(name string, result *kapi.Status) error {
	st := kapi.Status{}
	if result != nil {
		st = *result
	}
	code := int(st.Code)
	if code < http.StatusBadRequest {
		code = http.StatusBadRequest
	}
	by := fmt.Sprintf("admission webhook %q denied the request", name)
	msg := by + " without explanation"
	switch {
	case st.Message != "":
		msg = by + ": " + st.Message
	case st.Reason != "":
		msg = by + ": " + string(st.Reason)
	}
	e := apiserver.NewStatusError(code, st.Reason, msg)
	e.Status.Details = st.Details
	return e
}

func truncate(b []byte) string {
	if len(b) > 256 {
		b = b[:256]
	}
	return string(b)
}

// replaceObject sets obj to what data says, dropping the fields it lacks.
func replaceObject(obj kapi.Object, data []byte) error {
	v := reflect.ValueOf(obj)
	if v.Kind() != reflect.Pointer {
		return fmt.Errorf("%T is not a pointer", obj)
	}
	fresh := reflect.New(v.Elem().Type())
	if err := json.Unmarshal(data, fresh.Interface()); err != nil {
		return err
	}
	v.Elem().Set(fresh.Elem())
	return nil
}

// newAdmissionReview writes req as kube's CreateAdmissionObjects does.
func newAdmissionReview(req *admission.Request) (*admissionReview, error) {
	var uid [16]byte
	_, _ = rand.Read(uid[:])
	u := hex.EncodeToString(uid[:])
	u = u[:8] + "-" + u[8:12] + "-" + u[12:16] + "-" + u[16:20] + "-" + u[20:]
	kind := gvk{req.Group, req.Version, req.Kind}
	res := gvr{req.Group, req.Version, req.Resource}
	dry := req.DryRun
	r := &admissionRequest{
		UID: u, Kind: kind, Resource: res, SubResource: req.Subresource,
		RequestKind: &kind, RequestResource: &res, RequestSubResource: req.Subresource,
		Name: req.Name, Namespace: req.Namespace, Operation: string(req.Operation),
		UserInfo: userInfo{Username: req.User.Name, UID: req.User.UID, Groups: req.User.Groups, Extra: req.User.Extra},
		DryRun:   &dry,
	}
	var err error
	if r.Object, err = objectJSON(req.Object, req); err != nil {
		return nil, err
	}
	if r.OldObject, err = objectJSON(req.OldObject, req); err != nil {
		return nil, err
	}
	optionsKind := map[admission.Operation]string{admission.Create: "CreateOptions",
		admission.Update: "UpdateOptions", admission.Delete: "DeleteOptions"}[req.Operation]
	if optionsKind != "" {
		opts := map[string]any{"apiVersion": "meta.k8s.io/v1", "kind": optionsKind}
		if dry {
			opts["dryRun"] = []string{"All"}
		}
		r.Options, _ = json.Marshal(opts)
	}
	return &admissionReview{APIVersion: "admission.k8s.io/v1", Kind: "AdmissionReview", Request: r}, nil
}

// objectJSON encodes an object with its apiVersion and kind set.
func objectJSON(o kapi.Object, req *admission.Request) (json.RawMessage, error) {
	if isNil(o) {
		return nil, nil
	}
	data, err := json.Marshal(o)
	if err != nil {
		return nil, err
	}
	tm := o.GetTypeMeta()
	if tm.Kind != "" && tm.APIVersion != "" {
		return data, nil
	}
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	apiVersion := req.Version
	if req.Group != "" {
		apiVersion = req.Group + "/" + req.Version
	}
	m["apiVersion"], m["kind"] = apiVersion, req.Kind
	return json.Marshal(m)
}

// target is where to call a webhook and the client trusting its CA bundle
// (the system's roots when it has none).
func (w *webhookCaller) target(h *webhook) (string, *http.Client, error) {
	var target string
	cc := h.ClientConfig
	switch {
	case cc.URL != nil:
		u, err := url.Parse(*cc.URL)
		if err != nil {
			return "", nil, err
		}
		if u.Scheme != "https" {
			return "", nil, fmt.Errorf("webhook URL %q: want https", *cc.URL)
		}
		target = *cc.URL
	case cc.Service != nil:
		port := int32(443)
		if cc.Service.Port != nil {
			port = *cc.Service.Port
		}
		path := ""
		if cc.Service.Path != nil {
			path = *cc.Service.Path
		}
		target = "https://" + cc.Service.Name + "." + cc.Service.Namespace + ".svc:" + strconv.Itoa(int(port)) + path
	default:
		return "", nil, errors.New("webhook clientConfig has neither url nor service")
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	key := string(cc.CABundle)
	if c, ok := w.clients[key]; ok {
		return target, c, nil
	}
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if len(cc.CABundle) > 0 {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(cc.CABundle) {
			return "", nil, errors.New("caBundle holds no PEM certificate")
		}
		tlsConfig.RootCAs = pool
	}
	c := &http.Client{Transport: &http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyFromEnvironment,
		MaxIdleConnsPerHost: 16, IdleConnTimeout: 90 * time.Second}}
	w.clients[key] = c
	return target, c, nil
}
