package delegation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/admission"
)

// The paths of the cluster's webhook configurations.
const (
	MutatingWebhookConfigurationsPath   = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
	ValidatingWebhookConfigurationsPath = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations"
)

// webhook is one webhook of a configuration (admissionregistration.k8s.io/v1
// MutatingWebhook or ValidatingWebhook; the fields kapi uses).
type webhook struct {
	Name         string `json:"name"`
	ClientConfig struct {
		URL     *string `json:"url"`
		Service *struct {
			Namespace string  `json:"namespace"`
			Name      string  `json:"name"`
			Path      *string `json:"path"`
			Port      *int32  `json:"port"`
		} `json:"service"`
		CABundle []byte `json:"caBundle"`
	} `json:"clientConfig"`
	Rules                   []rule         `json:"rules"`
	FailurePolicy           *string        `json:"failurePolicy"`
	NamespaceSelector       *labelSelector `json:"namespaceSelector"`
	ObjectSelector          *labelSelector `json:"objectSelector"`
	SideEffects             *string        `json:"sideEffects"`
	TimeoutSeconds          *int32         `json:"timeoutSeconds"`
	AdmissionReviewVersions []string       `json:"admissionReviewVersions"`
}

type rule struct {
	Operations  []string `json:"operations"`
	APIGroups   []string `json:"apiGroups"`
	APIVersions []string `json:"apiVersions"`
	Resources   []string `json:"resources"`
	Scope       *string  `json:"scope"`
}

type labelSelector struct {
	MatchLabels      map[string]string `json:"matchLabels"`
	MatchExpressions []struct {
		Key      string   `json:"key"`
		Operator string   `json:"operator"`
		Values   []string `json:"values"`
	} `json:"matchExpressions"`
}

// empty reports a selector that selects everything.
func (s *labelSelector) empty() bool {
	return s == nil || len(s.MatchLabels) == 0 && len(s.MatchExpressions) == 0
}

// matches reports whether labels satisfy the selector, as metav1's
// LabelSelectorAsSelector reads it; an unknown operator matches nothing.
func (s *labelSelector) matches(labels map[string]string) bool {
	if s == nil {
		return true
	}
	for k, v := range s.MatchLabels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	for _, e := range s.MatchExpressions {
		v, ok := labels[e.Key]
		switch e.Operator {
		case "In":
			if !ok || !slices.Contains(e.Values, v) {
				return false
			}
		case "NotIn":
			if ok && slices.Contains(e.Values, v) {
				return false
			}
		case "Exists":
			if !ok {
				return false
			}
		case "DoesNotExist":
			if ok {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// matches reports whether the rule covers the request, as kube's
// rules.Matcher does: "*" in any list is everything; a resource is
// "plural" or "plural/subresource", where "*" matches every plural but
// no subresource, "*/*" everything, "plural/*" the plural and all its
// subresources, "*/sub" that subresource of every plural.
func (r rule) matches(req *admission.Request) bool {
	has := func(list []string, v string) bool { return slices.Contains(list, "*") || slices.Contains(list, v) }
	if !has(r.Operations, string(req.Operation)) || !has(r.APIGroups, req.Group) || !has(r.APIVersions, req.Version) {
		return false
	}
	resourceOK := false
	for _, res := range r.Resources {
		plural, sub, _ := strings.Cut(res, "/")
		if (plural == "*" || plural == req.Resource) && (sub == "*" || sub == req.Subresource) {
			resourceOK = true
			break
		}
	}
	if !resourceOK {
		return false
	}
	scope := "*"
	if r.Scope != nil {
		scope = *r.Scope
	}
	switch scope {
	case "Cluster":
		return req.Namespace == ""
	case "Namespaced":
		return req.Namespace != ""
	}
	return true
}

// webhookList is the cluster's configurations of one kind, re-listed when
// older than refresh; a failed listing keeps the last good one.
type webhookList struct {
	cluster Cluster
	path    string
	refresh time.Duration
	timeout time.Duration

	mu     sync.Mutex
	hooks  []webhook
	listed time.Time
}

func (l *webhookList) get(ctx context.Context) ([]webhook, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.listed.IsZero() && time.Since(l.listed) < l.refresh {
		return l.hooks, nil
	}
	ctx, cancel := context.WithTimeout(ctx, l.timeout)
	defer cancel()
	hooks, err := l.list(ctx)
	if err != nil {
		if l.listed.IsZero() {
			return nil, err
		}
		return l.hooks, nil // stale beats none, as an informer's cache is
	}
	l.hooks, l.listed = hooks, time.Now()
	return hooks, nil
}

// list reads the configurations, ordered by name as kube calls them.
func (l *webhookList) list(ctx context.Context) ([]webhook, error) {
	code, data, err := l.cluster.get(ctx, l.path)
	if err != nil {
		return nil, err
	}
	if code != http.StatusOK {
		return nil, fmt.Errorf("HTTP %d", code)
	}
	var list struct {
		Items []struct {
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Webhooks []webhook `json:"webhooks"`
		} `json:"items"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("not a webhook configuration list: %w", err)
	}
	sort.SliceStable(list.Items, func(i, j int) bool { return list.Items[i].Metadata.Name < list.Items[j].Metadata.Name })
	var hooks []webhook
	for _, it := range list.Items {
		hooks = append(hooks, it.Webhooks...)
	}
	return hooks, nil
}

// webhookCaller calls webhooks, keeping one transport per CA bundle.
type webhookCaller struct {
	cluster Cluster
	list    *webhookList
	mutate  bool
	mu      sync.Mutex
	clients map[string]*http.Client
}

// MutatingWebhooks calls the cluster's MutatingWebhookConfigurations
// (admissionregistration.k8s.io/v1) for the writes to the server's
// resources, as kube-apiserver's MutatingAdmissionWebhook plugin does, and
// applies the JSONPatch each answers with. Give it to
// apiserver.WithMutatingAdmission. Options: WithTimeout (listing the
// configurations), WithWebhookRefresh.
func MutatingWebhooks(cluster Cluster, opts ...Option) (admission.Func, error) {
	return newWebhooks(cluster, MutatingWebhookConfigurationsPath, true, opts)
}

// ValidatingWebhooks calls the cluster's ValidatingWebhookConfigurations
// (admissionregistration.k8s.io/v1) for the writes to the server's
// resources, as kube-apiserver's ValidatingAdmissionWebhook plugin does
// (one after the other, where kube calls them at once). Give it to
// apiserver.WithValidatingAdmission. Options: WithTimeout, WithWebhookRefresh.
func ValidatingWebhooks(cluster Cluster, opts ...Option) (admission.Func, error) {
	return newWebhooks(cluster, ValidatingWebhookConfigurationsPath, false, opts)
}

// WithWebhookRefresh sets how old the list of the cluster's webhook
// configurations may be before a write lists them again (default 10s).
func WithWebhookRefresh(d time.Duration) Option { return func(c *config) { c.webhookRefresh = d } }

func newWebhooks(cluster Cluster, path string, mutate bool, opts []Option) (admission.Func, error) {
	c, err := newConfig(opts)
	if err == nil {
		err = cluster.check()
	}
	if err != nil {
		return nil, err
	}
	w := &webhookCaller{cluster: cluster, mutate: mutate, clients: map[string]*http.Client{},
		list: &webhookList{cluster: cluster, path: path, refresh: c.webhookRefresh, timeout: c.timeout}}
	return w.admit, nil
}

func (w *webhookCaller) admit(ctx context.Context, req *admission.Request) error {
	hooks, err := w.list.get(ctx)
	if err != nil {
		return internalError(fmt.Errorf("listing admission webhooks: %w", err))
	}
	var nsLabels map[string]string
	nsLooked := false
	for i := range hooks {
		h := &hooks[i]
		if !slices.ContainsFunc(h.Rules, func(r rule) bool { return r.matches(req) }) {
			continue
		}
		if !h.ObjectSelector.empty() && !objectMatches(h.ObjectSelector, req.Object) && !objectMatches(h.ObjectSelector, req.OldObject) {
			continue
		}
		if !h.NamespaceSelector.empty() && req.Namespace != "" {
			if !nsLooked {
				// A namespace the cluster lacks has no labels.
				_, nsLabels, _, err = w.cluster.namespace(ctx, req.Namespace)
				if err != nil {
					return internalError(fmt.Errorf("looking up namespace %q: %w", req.Namespace, err))
				}
				nsLooked = true
			}
			if !h.NamespaceSelector.matches(nsLabels) {
				continue
			}
		}
		if err := w.call(ctx, h, req); err != nil {
			var ce *callError
			if errors.As(err, &ce) {
				if h.FailurePolicy != nil && *h.FailurePolicy == "Ignore" {
					continue
				}
				return internalError(err)
			}
			return err
		}
	}
	return nil
}

// objectMatches reports whether an object's labels satisfy s; no object
// (the old one of a create, the new one of a delete) satisfies none, as in
// kube's object matcher.
func objectMatches(s *labelSelector, o kapi.Object) bool {
	if isNil(o) {
		return false
	}
	return s.matches(o.GetObjectMeta().Labels)
}

func isNil(o kapi.Object) bool {
	return o == nil || reflect.ValueOf(o).Kind() == reflect.Pointer && reflect.ValueOf(o).IsNil()
}
