package apiserver

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/codec"
	"github.com/kapi-dev/kapi/patch"
	"github.com/kapi-dev/kapi/storage"
)

// apply is server-side apply: a PATCH whose body is an apply configuration.
// It creates the object when absent.
func (rq *request) apply(ctx context.Context, typ patch.Type, doc []byte) error {
	if rq.query.Get("fieldManager") == "" {
		return badRequest("PATCH requests with the apply content type must have a fieldManager")
	}
	format := codec.ByMediaType(codec.MediaTypeYAML)
	if typ == patch.ApplyCBOR {
		format = codec.ByMediaType(codec.MediaTypeCBOR)
	}
	config, _, err := format.ToJSON(doc)
	if err != nil {
		return rq.undecodable(err.Error())
	}
	applied, err := rq.decode(codec.JSON(), config) // checks fields and kind
	if err != nil {
		return err
	}
	if err := rq.setNamespace(applied.GetObjectMeta()); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		out, err := rq.write(ctx, func(cur kapi.Object) (kapi.Object, error) {
			original, err := json.Marshal(cur)
			if err != nil {
				return nil, err
			}
			patched, err := patch.Apply(patch.MergePatch, original, config)
			if err != nil {
				return nil, err
			}
			return rq.decodePatched(patched)
		})
		if rq.subresource != "" || !errors.Is(err, storage.ErrNotFound) || attempt == 3 {
			if err != nil {
				return err
			}
			return rq.respond(http.StatusOK, out)
		}
		// Absent: apply creates it, unless another request did meanwhile;
		// then the configuration is applied to that.
		if err := rq.createObject(ctx, shallowCopy(applied)); !errors.Is(err, storage.ErrExists) {
			return err
		}
	}
}
