package openapi

import (
	"maps"
	"reflect"
	"slices"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/actions"
)

// endpointOps are kube-apiserver's words for each verb: the operation id's
// and the x-kubernetes-action.
var endpointOps = map[string][2]string{"get": {"read", "get"}, "create": {"create", "post"}, "update": {"replace", "put"}}

// addEndpoint adds the path of e, with rs the document's resources: an
// answered kind's collection takes POST alone, as kube-apiserver's
// tokenreviews; a subresource takes its verbs, as pods/eviction (post)
// and pods/log (get, answered in text).
func (b *openAPIBuilder) addEndpoint(e actions.Endpoint, rs []Resource) error {
	path := "/apis/" + b.group + "/" + b.version
	if b.group == "" {
		path = "/api/" + b.version
	}
	var params []*oapiParameter
	namespaced, kind := "", e.Kind
	i := slices.IndexFunc(rs, func(r Resource) bool { return r.Plural == e.Resource })
	if e.Subresource != "" {
		if i < 0 {
			return nil // not served in this version
		}
		e.Namespaced, kind = rs[i].Namespaced, rs[i].Kind
	}
	if e.Namespaced {
		path, namespaced = path+"/namespaces/{namespace}", "Namespaced"
		params = append(params, &oapiParameter{Name: "namespace", In: "path", Required: true,
			Description: "object name and auth scope, such as for teams and projects", Schema: &oapiSchema{Type: "string"}})
	}
	path += "/" + e.Resource
	if e.Subresource != "" {
		path += "/{name}/" + e.Subresource
		params = append([]*oapiParameter{{Name: "name", In: "path", Required: true, Description: "name of the " + kind,
			Schema: &oapiSchema{Type: "string"}}}, params...)
	}
	item := &oapiPathItem{Parameters: append(params, oapiPrettyParam())}
	for _, verb := range slices.Sorted(maps.Keys(e.Verbs)) {
		v, words := e.Verbs[verb], endpointOps[verb]
		in, err := b.endpointType(v.In)
		if err != nil {
			return err
		}
		out, err := b.endpointType(v.Out)
		if err != nil {
			return err
		}
		gvk := oapiGVK{Group: b.group, Version: b.version, Kind: kind}
		if t := v.In; t != nil || verb == "get" && v.Out != nil {
			if t == nil {
				t = v.Out
			}
			gvk.Group, gvk.Version, gvk.Kind = actions.KindOf(t, b.group, b.version)
		}
		of := ""
		if e.Subresource != "" {
			of = " " + e.Subresource + " of"
		}
		o := &oapiOperation{
			Tags:        []string{oapiTag(b.group, b.version)},
			Description: words[0] + of + " " + oapiArticle(kind) + kind,
			OperationID: words[0] + oapiOperationID(oapiGroupName(b.group), true) + oapiOperationID(b.version, true) + namespaced + kind + oapiOperationID(e.Subresource, true),
			Responses:   map[string]*oapiResponse{"401": {Description: "Unauthorized"}},
			Action:      words[1],
			GVK:         gvk,
		}
		if in != "" {
			o.Parameters = oapiWriteParams(false)
			o.RequestBody = &oapiRequestBody{Content: oapiContent(in, "application/json", "application/yaml"), Required: true}
		}
		codes := []string{"200"}
		if verb == "create" {
			codes = append(codes, "201", "202")
		}
		for _, code := range codes {
			r := &oapiResponse{Description: map[string]string{"200": "OK", "201": "Created", "202": "Accepted"}[code]}
			if v.Stream != nil {
				r.Content = map[string]*oapiMediaType{v.ContentType: {Schema: &oapiSchema{Type: "string"}}}
			} else {
				r.Content = oapiContent(out, "application/json", "application/yaml")
			}
			o.Responses[code] = r
		}
		switch verb {
		case "get":
			item.Get = o
		case "create":
			item.Post = o
		case "update":
			item.Put = o
		}
	}
	b.paths[path] = item
	return nil
}

// endpointType is the name of the component of obj's type, made if the
// document has none: "" for no type.
func (b *openAPIBuilder) endpointType(obj kapi.Object) (string, error) {
	if obj == nil {
		return "", nil
	}
	t := reflect.TypeOf(obj).Elem()
	if name, ok := b.named[t]; ok && b.schemas[name] != nil {
		return name, nil
	}
	var gvk oapiGVK
	gvk.Group, gvk.Version, gvk.Kind = actions.KindOf(obj, b.group, b.version)
	name := modelNameOf(gvk.Group, gvk.Version, gvk.Kind)
	if b.taken[name] {
		name = b.componentName(t) // another type of that kind's name
	}
	b.named[t], b.taken[name] = name, true
	s, err := b.objectSchema(t, nil, gvk)
	if err != nil {
		return "", err
	}
	b.schemas[name] = s
	return name, nil
}
