package delegation

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/admission"
	"github.com/kapi-dev/kapi/apiserver"
)

// NamespaceLifecycle is kube's NamespaceLifecycle admission for a server
// that serves no namespaces of its own: an object may only be created in a
// namespace the cluster has (else 404, namespaces "NAME" not found) and
// that is not being terminated (else 403 with the NamespaceTerminating
// cause, as kube-apiserver answers). Updates and deletes pass, as in kube.
// Namespaces found active are remembered for the success TTL
// (WithCacheTTL); others are looked up again each time. Give it to
// apiserver.WithValidatingAdmission. Options: WithTimeout, WithCacheTTL.
func NamespaceLifecycle(cluster Cluster, opts ...Option) (admission.Func, error) {
	c, err := newConfig(opts)
	if err == nil {
		err = cluster.check()
	}
	if err != nil {
		return nil, err
	}
	active := newCache[bool](c.maxCached, c.now)
	return func(ctx context.Context, req *admission.Request) error {
		if req.Operation != admission.Create || req.Namespace == "" {
			return nil
		}
		key := sha256.Sum256([]byte(req.Namespace))
		if _, ok := active.get(key); ok {
			return nil
		}
		ctx, cancel := context.WithTimeout(ctx, c.timeout)
		defer cancel()
		phase, _, found, err := cluster.namespace(ctx, req.Namespace)
		switch {
		case err != nil:
			return apiserver.NewStatusError(http.StatusInternalServerError, kapi.StatusReasonInternalError,
				fmt.Sprintf("Internal error occurred: looking up namespace %q: %v", req.Namespace, err))
		case !found:
			e := apiserver.NewStatusError(http.StatusNotFound, kapi.StatusReasonNotFound, fmt.Sprintf("namespaces %q not found", req.Namespace))
			e.Status.Details = &kapi.StatusDetails{Name: req.Namespace, Kind: "namespaces"}
			return e
		case phase == "Terminating":
			qualified := req.Resource
			if req.Group != "" {
				qualified += "." + req.Group
			}
			e := apiserver.NewStatusError(http.StatusForbidden, kapi.StatusReasonForbidden,
				fmt.Sprintf("%s %q is forbidden: unable to create new content in namespace %s because it is being terminated", qualified, req.Name, req.Namespace))
			e.Status.Details = &kapi.StatusDetails{Name: req.Name, Group: req.Group, Kind: req.Resource, Causes: []kapi.StatusCause{{
				Type: "NamespaceTerminating", Message: fmt.Sprintf("namespace %s is being terminated", req.Namespace), Field: "metadata.namespace"}}}
			return e
		}
		active.put(key, true, c.successTTL)
		return nil
	}, nil
}

// namespace reads a namespace's status.phase and labels from the cluster.
func (c Cluster) namespace(ctx context.Context, name string) (phase string, labels map[string]string, found bool, err error) {
	code, data, err := c.get(ctx, "/api/v1/namespaces/"+url.PathEscape(name))
	switch {
	case err != nil:
		return "", nil, false, err
	case code == http.StatusNotFound:
		return "", nil, false, nil
	case code != http.StatusOK:
		return "", nil, false, fmt.Errorf("HTTP %d", code)
	}
	var ns struct {
		Metadata struct {
			Labels map[string]string `json:"labels"`
		} `json:"metadata"`
		Status struct{ Phase string } `json:"status"`
	}
	if err := json.Unmarshal(data, &ns); err != nil {
		return "", nil, false, fmt.Errorf("not a Namespace: %w", err)
	}
	return ns.Status.Phase, ns.Metadata.Labels, true, nil
}
