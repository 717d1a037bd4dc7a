// Package applyset tells kubectl which kinds may be ApplySet parents, so
// that `kubectl apply --prune --applyset=widgets.example.com/NAME` prunes
// with a kapi object as the set's parent.
//
// # What kubectl asks
//
// kubectl (1.27 on, with KUBECTL_APPLYSET=true) accepts Secrets and
// ConfigMaps as parents, and custom kinds whose CustomResourceDefinition
// carries the label applyset.kubernetes.io/is-parent-type=true: it lists
// /apis/apiextensions.k8s.io/v1/customresourcedefinitions with the label
// selector applyset.kubernetes.io/is-parent-type and takes each item's
// name (plural.group) as a permitted parent resource. Without an answer it
// refuses every custom parent ("identifying allowed custom resource parent
// types: the server could not find the requested resource").
//
// A server that does not serve CustomResourceDefinitions answers that
// list with a CRD of each kind registered as a parent type: its name,
// names, scope, versions and the label. Nothing else of
// apiextensions.k8s.io is served. A server that serves CRDs (crd.Serve)
// lists its own, those with the label among them, and WithParentTypes
// adds the kinds registered as parent types after them, so that both
// kinds of parent are accepted side by side.
//
// The rest of ApplySet needs nothing of the server that kapi does not do
// already: the parent is written by server-side apply with the labels
// applyset.kubernetes.io/id and the annotations
// applyset.kubernetes.io/tooling and contains-group-kinds, members are
// labelled applyset.kubernetes.io/part-of, and pruning lists them by
// that label and deletes those no longer applied.
package applyset
