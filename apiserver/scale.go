package apiserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/internal/jsonfields"
	"github.com/kapi-dev/kapi/patch"
)

// ScalePaths map the scale subresource (autoscaling/v1 Scale, what kubectl
// scale and autoscalers use) onto fields of a resource, as a custom
// resource definition's scale subresource does. Paths are JSON paths with a
// leading dot.
type ScalePaths struct {
	// SpecReplicas is the desired number of replicas, an integer field
	// (or pointer to one) under spec: ".spec.replicas".
	SpecReplicas string
	// StatusReplicas is the observed number, an integer field under
	// status: ".status.replicas".
	StatusReplicas string
	// LabelSelector, optional, is a string field under status holding the
	// serialized label selector of what is scaled: ".status.selector".
	LabelSelector string
}

// Scale is autoscaling/v1 Scale, with Kubernetes' protobuf field numbers.
type Scale struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty" protobuf:"bytes,1,opt,name=metadata"`
	Spec            ScaleSpec   `json:"spec,omitempty" protobuf:"bytes,2,opt,name=spec"`
	Status          ScaleStatus `json:"status,omitempty" protobuf:"bytes,3,opt,name=status"`
}

// ScaleSpec is the desired scale.
type ScaleSpec struct {
	Replicas int32 `json:"replicas,omitempty" protobuf:"varint,1,opt,name=replicas"`
}

// ScaleStatus is the observed scale.
type ScaleStatus struct {
	Replicas int32  `json:"replicas" protobuf:"varint,1,opt,name=replicas"`
	Selector string `json:"selector,omitempty" protobuf:"bytes,2,opt,name=selector"`
}

// scaleType is what requests to /scale read and write.
var scaleType = mustObjectType[Scale]("autoscaling", "v1", "Scale")

// scaleFields are the resolved ScalePaths of a resource.
type scaleFields struct {
	paths                  ScalePaths
	spec, status, selector []int // field indexes from the object; selector nil when absent
	// read and set stand for the indexes when a Shape says where the
	// fields are (see Shape).
	read func(kapi.Object) (spec, status int32, selector string)
	set  func(kapi.Object, int32)
}

// shapeScaler is the Shape of a resource with the scale subresource.
type shapeScaler interface {
	Scale(ScalePaths) (read func(kapi.Object) (spec, status int32, selector string), set func(kapi.Object, int32), err error)
}

// resolveScale checks the paths against t.
func resolveScale(t reflect.Type, p ScalePaths) (*scaleFields, error) {
	var errs []string
	resolve := func(path, under string, kinds ...reflect.Kind) []int {
		if !strings.HasPrefix(path, "."+under+".") {
			errs = append(errs, fmt.Sprintf("scale path %q must start with .%s.", path, under))
			return nil
		}
		index, leaf, err := jsonfields.FieldIndex(t, path[1:])
		if err != nil {
			errs = append(errs, fmt.Sprintf("scale path %q: %v", path, err))
			return nil
		}
		leaf, _ = jsonfields.Deref(leaf, nil)
		for _, k := range kinds {
			if leaf.Kind() == k {
				return index
			}
		}
		errs = append(errs, fmt.Sprintf("scale path %q is a %s, not a %s", path, leaf, kinds[0]))
		return nil
	}
	integers := []reflect.Kind{reflect.Int32, reflect.Int, reflect.Int64}
	f := &scaleFields{paths: p}
	f.spec = resolve(p.SpecReplicas, "spec", integers...)
	f.status = resolve(p.StatusReplicas, "status", integers...)
	if p.LabelSelector != "" {
		f.selector = resolve(p.LabelSelector, "status", reflect.String)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return f, nil
}

func (f *scaleFields) replicas(obj kapi.Object, index []int) int32 {
	v := jsonfields.FieldValue(reflect.ValueOf(obj).Elem(), index, false)
	if v.IsValid() && v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	if !v.IsValid() {
		return 0
	}
	return int32(v.Int())
}

// scaleOf is the Scale of obj.
func (f *scaleFields) scaleOf(obj kapi.Object) *Scale {
	if f.read != nil {
		s := f.shapedScale(obj)
		s.Spec.Replicas, s.Status.Replicas, s.Status.Selector = f.read(obj)
		return s
	}
	s := f.shapedScale(obj)
	s.Spec.Replicas, s.Status.Replicas = f.replicas(obj, f.spec), f.replicas(obj, f.status)
	if f.selector != nil {
		if v := jsonfields.FieldValue(reflect.ValueOf(obj).Elem(), f.selector, false); v.IsValid() {
			if v.Kind() == reflect.Pointer {
				v = v.Elem()
			}
			if v.IsValid() {
				s.Status.Selector = v.String()
			}
		}
	}
	return s
}

// shapedScale is the Scale of obj without its numbers.
func (f *scaleFields) shapedScale(obj kapi.Object) *Scale {
	m := obj.GetObjectMeta()
	s := &Scale{
		TypeMeta: kapi.TypeMeta{Kind: "Scale", APIVersion: "autoscaling/v1"},
		ObjectMeta: kapi.ObjectMeta{
			Name: m.Name, Namespace: m.Namespace, UID: m.UID,
			ResourceVersion: m.ResourceVersion, CreationTimestamp: m.CreationTimestamp,
		},
	}
	return s
}

// setReplicas sets the desired replicas of obj.
func (f *scaleFields) setReplicas(obj kapi.Object, n int32) {
	if f.set != nil {
		f.set(obj, n)
		return
	}
	v := jsonfields.FieldValue(reflect.ValueOf(obj).Elem(), f.spec, true)
	if v.Kind() == reflect.Pointer {
		v.Set(reflect.New(v.Type().Elem())) // never the original's
		v = v.Elem()
	}
	v.SetInt(int64(n))
}

// getScale serves GET /scale.
func (rq *request) getScale(ctx context.Context) error {
	kv, err := rq.s.config.store.Get(ctx, rq.res.key(rq.namespace, rq.name), 0)
	if err != nil {
		return err
	}
	obj, err := rq.res.readStored(kv)
	if err != nil {
		return err
	}
	return rq.respond(http.StatusOK, rq.res.scale.scaleOf(obj))
}

// updateScale serves PUT /scale.
func (rq *request) updateScale(ctx context.Context) error {
	obj, err := rq.decodeBody()
	if err != nil {
		return err
	}
	return rq.writeScale(ctx, func(kapi.Object) (*Scale, error) { return obj.(*Scale), nil })
}

// patchScale serves PATCH /scale: the patch applies to the Scale.
func (rq *request) patchScale(ctx context.Context, typ patch.Type, doc []byte) error {
	return rq.writeScale(ctx, func(cur kapi.Object) (*Scale, error) {
		original, err := json.Marshal(rq.res.scale.scaleOf(cur))
		if err != nil {
			return nil, err
		}
		patched, err := scaleType.schema.Patch(typ, original, doc)
		if err != nil {
			return nil, err
		}
		obj, err := rq.decode(codec.JSON(), patched)
		if err != nil {
			return nil, err
		}
		return obj.(*Scale), nil
	})
}

// writeScale changes the desired replicas of the object to what desired
// asks, and answers the object's Scale.
func (rq *request) writeScale(ctx context.Context, desired func(cur kapi.Object) (*Scale, error)) error {
	f := rq.res.scale
	out, _, err := rq.write(ctx, func(cur kapi.Object, _ []byte) (kapi.Object, error) {
		s, err := desired(cur)
		if err != nil {
			return nil, err
		}
		if s.Name != "" && s.Name != rq.name {
			return nil, badRequest("the name of the object (%s) does not match the name on the URL (%s)", s.Name, rq.name)
		}
		if s.Spec.Replicas < 0 && f.read == nil { // a custom resource's Shape: validated as the resource, as kube's CR ScaleREST
			e := invalid(target{res: rq.res, name: rq.name}, FieldErrors{Invalid("spec.replicas", s.Spec.Replicas, "must be greater than or equal to 0")})
			e.Status.Details.Group, e.Status.Details.Kind = "autoscaling", "Scale"
			e.Status.Message = strings.Replace(e.Status.Message, rq.res.Kind+"."+rq.res.Group, "Scale.autoscaling", 1)
			return nil, e
		}
		next := shallowCopy(cur)
		f.setReplicas(next, s.Spec.Replicas)
		next.GetObjectMeta().ResourceVersion = s.ResourceVersion // a precondition when set
		return next, nil
	}, recordAnUpdate)
	if err != nil {
		return err
	}
	return rq.respond(http.StatusOK, f.scaleOf(out))
}
