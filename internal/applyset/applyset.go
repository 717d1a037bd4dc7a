package applyset

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/kapi-dev/kapi/internal/selector"
)

// Path is the list kubectl asks for parent types.
const Path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"

// ParentTypeLabel marks a CustomResourceDefinition whose kind may be an
// ApplySet parent.
const ParentTypeLabel = "applyset.kubernetes.io/is-parent-type"

// ErrSelector is a label selector that does not parse.
var ErrSelector = errors.New("applyset: bad label selector")

// Kind is a kind registered as a parent type, in its served versions.
type Kind struct {
	Group, Kind, Plural, Singular string
	Namespaced                    bool
	Versions                      []Version
}

// Version is one served version of a Kind.
type Version struct {
	Name    string
	Storage bool
}

// crd is as much of a CustomResourceDefinition as says what kind it
// defines.
type crd struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name   string            `json:"name"`
		Labels map[string]string `json:"labels"`
	} `json:"metadata"`
	Spec struct {
		Group string `json:"group"`
		Names struct {
			Plural   string `json:"plural"`
			Singular string `json:"singular"`
			Kind     string `json:"kind"`
			ListKind string `json:"listKind"`
		} `json:"names"`
		Scope    string       `json:"scope"`
		Versions []crdVersion `json:"versions"`
	} `json:"spec"`
}

type crdVersion struct {
	Name    string `json:"name"`
	Served  bool   `json:"served"`
	Storage bool   `json:"storage"`
}

// ParentTypes is the CustomResourceDefinitionList of the kinds whose CRD
// the label selector selects: each carries ParentTypeLabel=true.
func ParentTypes(kinds []Kind, labelSelector string) ([]byte, error) {
	items, _, err := selected(kinds, labelSelector)
	if err != nil {
		return nil, err
	}
	return json.Marshal(struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Metadata   struct{} `json:"metadata"`
		Items      []crd    `json:"items"`
	}{"apiextensions.k8s.io/v1", "CustomResourceDefinitionList", struct{}{}, items})
}

// selected makes the CRDs of kinds that the label selector selects, and
// says whether the selector asks about ParentTypeLabel.
func selected(kinds []Kind, labelSelector string) (items []crd, asks bool, err error) {
	reqs, err := selector.ParseLabels(labelSelector)
	if err != nil {
		return nil, false, fmt.Errorf("%w: unable to parse requirement: %v", ErrSelector, err)
	}
	labels := map[string]string{ParentTypeLabel: "true"}
	items = []crd{}
	for _, r := range reqs {
		asks = asks || r.Key == ParentTypeLabel
		if v, ok := labels[r.Key]; !r.Matches(v, ok) {
			kinds = nil // the label is the CRDs' only one: none is selected
		}
	}
	for _, k := range kinds {
		var c crd
		c.APIVersion, c.Kind = "apiextensions.k8s.io/v1", "CustomResourceDefinition"
		c.Metadata.Name, c.Metadata.Labels = k.Plural+"."+k.Group, labels
		c.Spec.Group = k.Group
		c.Spec.Names.Plural, c.Spec.Names.Singular, c.Spec.Names.Kind, c.Spec.Names.ListKind = k.Plural, k.Singular, k.Kind, k.Kind+"List"
		c.Spec.Scope = "Cluster"
		if k.Namespaced {
			c.Spec.Scope = "Namespaced"
		}
		for _, v := range k.Versions {
			c.Spec.Versions = append(c.Spec.Versions, crdVersion{Name: v.Name, Served: true, Storage: v.Storage})
		}
		items = append(items, c)
	}
	return items, asks, nil
}

// Handler answers GET Path with ParentTypes; a bad label selector goes to
// fail with its message, to be answered as the server answers bad
// requests.
func Handler(kinds []Kind, fail func(w http.ResponseWriter, r *http.Request, message string)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := ParentTypes(kinds, r.URL.Query().Get("labelSelector"))
		if err != nil {
			fail(w, r, strings.TrimPrefix(err.Error(), ErrSelector.Error()+": "))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
