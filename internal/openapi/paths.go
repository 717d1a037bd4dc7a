package openapi

import (
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/kapi-dev/kapi"
)

// Paths and operations.

// addPaths adds the operations kube-apiserver lists for a custom resource:
// list, create and deletecollection on the collection (and list across
// namespaces for a namespaced resource), get, replace, patch and delete on an
// item, and get, replace and patch on its status.
func (b *openAPIBuilder) addPaths(r Resource, name, listName string, gvk oapiGVK) error {
	prefix := "/apis/" + r.Group + "/" + r.Version
	if r.Group == "" {
		prefix = "/api/" + r.Version
	}
	group := oapiOperationID(oapiGroupName(r.Group), true)
	op := func(verb, rest, subresource, action, description string, params []*oapiParameter) *oapiOperation {
		id := verb + group + oapiOperationID(r.Version, true) + oapiOperationID(rest, true) + oapiOperationID(subresource, true)
		return &oapiOperation{
			Tags:        []string{oapiTag(r.Group, r.Version)},
			Description: description,
			OperationID: id,
			Parameters:  params,
			Responses:   map[string]*oapiResponse{"401": {Description: "Unauthorized"}},
			Action:      action,
			GVK:         gvk,
		}
	}
	respond := func(o *oapiOperation, code, description, schemaName string) *oapiOperation {
		o.Responses[code] = &oapiResponse{Description: description, Content: oapiContent(schemaName, "application/json", "application/yaml")}
		return o
	}
	withBody := func(o *oapiOperation, schemaName string, required bool, mediaTypes ...string) *oapiOperation {
		o.RequestBody = &oapiRequestBody{Content: oapiContent(schemaName, mediaTypes...), Required: required}
		return o
	}

	status := oapiMetaPrefix + "Status"
	deleteOptions := oapiMetaPrefix + "DeleteOptions"
	patch := oapiMetaPrefix + "Patch"
	if _, err := b.metaRef(reflect.TypeFor[kapi.Status]()); err != nil {
		return err
	}
	b.schemas[deleteOptions] = oapiDeleteOptionsSchema()
	b.schemas[oapiMetaPrefix+"Preconditions"] = oapiPreconditionsSchema()
	b.schemas[patch] = &oapiSchema{
		Description: "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
		Type:        "object",
	}

	scope, namespaced := "", ""
	pathParams := []*oapiParameter{}
	if r.Namespaced {
		scope, namespaced = "/namespaces/{namespace}", "Namespaced"
		pathParams = append(pathParams, &oapiParameter{
			Name: "namespace", In: "path", Required: true,
			Description: "object name and auth scope, such as for teams and projects",
			Schema:      &oapiSchema{Type: "string"},
		})
		b.paths[prefix+"/"+r.Plural] = &oapiPathItem{
			Get: respond(op("list", r.Kind+"ForAllNamespaces", "", "list", "list objects of kind "+r.Kind, oapiListParams()),
				"200", "OK", listName),
			Parameters: []*oapiParameter{oapiPrettyParam()},
		}
	}
	collection := prefix + scope + "/" + r.Plural
	b.paths[collection] = &oapiPathItem{
		Get: respond(op("list", namespaced+r.Kind, "", "list", "list objects of kind "+r.Kind, oapiListParams()),
			"200", "OK", listName),
		Post: withBody(
			respond(respond(respond(op("create", namespaced+r.Kind, "", "post", "create "+oapiArticle(r.Kind)+r.Kind, oapiWriteParams(false)),
				"200", "OK", name), "201", "Created", name), "202", "Accepted", name),
			name, true, "application/json", "application/yaml"),
		Delete: withBody(
			respond(op("delete", "Collection"+namespaced+r.Kind, "", "deletecollection", "delete collection of "+r.Kind, oapiDeleteCollectionParams()),
				"200", "OK", status),
			deleteOptions, false, "application/json", "application/yaml"),
		Parameters: append(slices.Clone(pathParams), oapiPrettyParam()),
	}

	nameParam := &oapiParameter{
		Name: "name", In: "path", Required: true,
		Description: "name of the " + r.Kind,
		Schema:      &oapiSchema{Type: "string"},
	}
	itemParams := append([]*oapiParameter{nameParam}, pathParams...)
	itemParams = append(itemParams, oapiPrettyParam())
	// The item and its subresources have the same operations but for delete.
	itemOps := func(subresource string, withDelete bool) *oapiPathItem {
		of := ""
		if subresource != "" {
			of = " " + subresource + " of"
		}
		item := &oapiPathItem{
			Get: respond(op("read", namespaced+r.Kind, subresource, "get", "read"+of+" the specified "+r.Kind, oapiGetParams()),
				"200", "OK", name),
			Put: withBody(
				respond(respond(op("replace", namespaced+r.Kind, subresource, "put", "replace"+of+" the specified "+r.Kind, oapiWriteParams(false)),
					"200", "OK", name), "201", "Created", name),
				name, true, "application/json", "application/yaml"),
			Patch: withBody(
				respond(op("patch", namespaced+r.Kind, subresource, "patch", "partially update"+of+" the specified "+r.Kind, oapiWriteParams(true)),
					"200", "OK", name),
				patch, true, oapiPatchMediaTypes...),
			Parameters: slices.Clone(itemParams),
		}
		if withDelete {
			item.Delete = withBody(
				respond(respond(op("delete", namespaced+r.Kind, subresource, "delete", "delete "+oapiArticle(r.Kind)+r.Kind, oapiDeleteParams()),
					"200", "OK", status), "202", "Accepted", status),
				deleteOptions, false, "application/json", "application/yaml")
		}
		return item
	}
	b.paths[collection+"/{name}"] = itemOps("", true)
	if r.Status {
		b.paths[collection+"/{name}/status"] = itemOps("status", false)
	}
	return nil
}

// oapiPatchMediaTypes are the patch types kapi accepts for every resource.
// kubectl's client-side apply sends a strategic merge patch when the
// document lists it, computed from the patch extensions of the schema.
var oapiPatchMediaTypes = []string{
	"application/apply-patch+yaml",
	"application/json-patch+json",
	"application/merge-patch+json",
	"application/strategic-merge-patch+json",
}

func oapiContent(schemaName string, mediaTypes ...string) map[string]*oapiMediaType {
	content := make(map[string]*oapiMediaType, len(mediaTypes))
	for _, mt := range mediaTypes {
		content[mt] = &oapiMediaType{Schema: oapiRef(schemaName)}
	}
	return content
}

// oapiOperationID makes a word of an operation id the way kube-apiserver
// does: letters, digits and underscores kept, the letter after anything else
// capitalised, and the first one if upper (example.com → ExampleCom).
func oapiOperationID(s string, upper bool) string {
	var sb strings.Builder
	for i, c := range s {
		if unicode.IsLetter(c) || c == '_' || (i != 0 && unicode.IsDigit(c)) {
			if upper {
				c = unicode.ToUpper(c)
				upper = false
			}
			sb.WriteRune(c)
		} else {
			upper = true
		}
	}
	return sb.String()
}

// oapiTag is kube-apiserver's tag of a group version: exampleCom_v1, core_v1.
func oapiTag(group, version string) string {
	return oapiOperationID(oapiGroupName(group), false) + "_" + oapiOperationID(version, false)
}

// oapiGroupName is how kube-apiserver names a group in tags and operation
// ids: without ".k8s.io", and "core" for the core group.
func oapiGroupName(group string) string {
	if g := strings.TrimSuffix(group, ".k8s.io"); g != "" {
		return g
	}
	return "core"
}

// oapiArticle is "a " or "an " before a kind, "" before a plural-looking one.
func oapiArticle(kind string) string {
	switch {
	case strings.HasSuffix(kind, "s") && !strings.HasSuffix(kind, "ss"):
		return ""
	case strings.ContainsRune("aeiouAEIOU", rune(kind[0])):
		return "an "
	}
	return "a "
}

// Query parameters, each list sorted by name as kube-apiserver lists them.

func oapiQueryParam(name, typ, description string) *oapiParameter {
	return &oapiParameter{Name: name, In: "query", Description: description, Schema: &oapiSchema{Type: typ}}
}

func oapiPrettyParam() *oapiParameter {
	return oapiQueryParam("pretty", "string", "If 'true', then the output is pretty printed. Defaults to 'false' unless the user-agent indicates a browser or command-line HTTP tool (curl and wget).")
}

const (
	oapiDryRunDescription            = "When present, indicates that modifications should not be persisted. An invalid or unrecognized dryRun directive will result in an error response and no further processing of the request. Valid values are: - All: all dry run stages will be processed"
	oapiGracePeriodDescription       = "The duration in seconds before the object should be deleted. Value must be non-negative integer. The value zero indicates delete immediately. If this value is nil, the default grace period for the specified type will be used."
	oapiOrphanDependentsDescription  = "Deprecated: please use the PropagationPolicy, this field will be deprecated in 1.7. Should the dependent objects be orphaned. If true/false, the \"orphan\" finalizer will be added to/removed from the object's finalizers list. Either this field or PropagationPolicy may be set, but not both."
	oapiPropagationPolicyDescription = "Whether and how garbage collection will be performed. Either this field or OrphanDependents may be set, but not both. Acceptable values are: 'Orphan' - orphan the dependents; 'Background' - allow the garbage collector to delete the dependents in the background; 'Foreground' - a cascading policy that deletes all dependents in the foreground."
	oapiResourceVersionDescription   = "resourceVersion sets a constraint on what resource versions a request may be served from. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"
	oapiRVMatchDescription           = "resourceVersionMatch determines how resourceVersion is applied to list calls. It is highly recommended that resourceVersionMatch be set for list calls where resourceVersion is set. See https://kubernetes.io/docs/reference/using-api/api-concepts/#resource-versions for details.\n\nDefaults to unset"
)

func oapiGetParams() []*oapiParameter {
	return []*oapiParameter{oapiQueryParam("resourceVersion", "string", oapiResourceVersionDescription)}
}

// oapiWriteParams are the parameters of create, replace and patch. kubectl
// sends fieldValidation only to operations that list it.
func oapiWriteParams(patch bool) []*oapiParameter {
	params := []*oapiParameter{
		oapiQueryParam("dryRun", "string", oapiDryRunDescription),
		oapiQueryParam("fieldManager", "string", "fieldManager is a name associated with the actor or entity that is making these changes. The value must be less than or 128 characters long, and only contain printable characters, as defined by https://golang.org/pkg/unicode/#IsPrint. It is required for apply requests (application/apply-patch) and optional for the other patch types."),
		oapiQueryParam("fieldValidation", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore: unknown fields are silently dropped and the last of duplicate fields wins. - Warn (the default): a warning is sent for each unknown and each duplicate field; the request still succeeds. - Strict: the request fails with a BadRequest error listing every unknown and duplicate field."),
	}
	if patch {
		params = append(params, oapiQueryParam("force", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people. Force flag must be unset for non-apply patch requests."))
	}
	return params
}

func oapiDeleteParams() []*oapiParameter {
	return []*oapiParameter{
		oapiQueryParam("dryRun", "string", oapiDryRunDescription),
		oapiQueryParam("gracePeriodSeconds", "integer", oapiGracePeriodDescription),
		oapiQueryParam("ignoreStoreReadErrorWithClusterBreakingPotential", "boolean", oapiIgnoreStoreReadErrorDescription),
		oapiQueryParam("orphanDependents", "boolean", oapiOrphanDependentsDescription),
		oapiQueryParam("propagationPolicy", "string", oapiPropagationPolicyDescription),
	}
}

func oapiListParams() []*oapiParameter {
	return []*oapiParameter{
		oapiQueryParam("allowWatchBookmarks", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\". Servers that do not implement bookmarks may ignore this flag and bookmarks are sent at the server's discretion. Clients should not assume bookmarks are returned at any specific interval, nor may they assume the server will send any BOOKMARK event during a session. If this is not a watch, this field is ignored."),
		oapiQueryParam("continue", "string", "The continue option should be set when retrieving more results from the server. Since this value is server defined, clients may only use the continue value from a previous query result with identical query parameters (except for the value of continue). If the continue value is no longer valid, the server responds with 410 ResourceExpired.\n\nThis field is not supported when watch is true. Clients may start a watch from the last resourceVersion value returned by the server and not miss any modifications."),
		oapiQueryParam("fieldSelector", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything."),
		oapiQueryParam("labelSelector", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything."),
		oapiQueryParam("limit", "integer", "limit is a maximum number of responses to return for a list call. If more items exist, the server will set the `continue` field on the list metadata to a value that can be used with the same initial query to retrieve the next set of results. This field is not supported if watch is true."),
		oapiQueryParam("resourceVersion", "string", oapiResourceVersionDescription),
		oapiQueryParam("resourceVersionMatch", "string", oapiRVMatchDescription),
		oapiQueryParam("sendInitialEvents", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`. In that case, the watch stream will begin with synthetic events to produce the current state of objects in the collection. Once all such events have been sent, a synthetic \"Bookmark\" event will be sent, marked with the `\"k8s.io/initial-events-end\": \"true\"` annotation. Afterwards, the watch stream will proceed as usual. It requires `resourceVersionMatch=NotOlderThan`."),
		oapiQueryParam("timeoutSeconds", "integer", "Timeout for the list/watch call. This limits the duration of the call, regardless of any activity or inactivity."),
		oapiQueryParam("watch", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications. Specify resourceVersion."),
	}
}

// oapiDeleteCollectionParams are those of a list that is not a watch, and
// those of a delete.
func oapiDeleteCollectionParams() []*oapiParameter {
	params := slices.DeleteFunc(oapiListParams(), func(p *oapiParameter) bool {
		return p.Name == "watch" || p.Name == "allowWatchBookmarks"
	})
	params = append(params, oapiDeleteParams()...)
	slices.SortStableFunc(params, func(a, b *oapiParameter) int { return strings.Compare(a.Name, b.Name) })
	return params
}
