// Package kapi is the object model shared by every layer of kapi, an embeddable
// library for building Kubernetes-style resource APIs.
//
// # Objects
//
// A resource type is a Go struct that embeds [TypeMeta] inline and [ObjectMeta]
// under "metadata", the way Kubernetes' own types do:
//
//	type Widget struct {
//		kapi.TypeMeta   `json:",inline"`
//		kapi.ObjectMeta `json:"metadata,omitempty"`
//		Spec   WidgetSpec   `json:"spec,omitempty"`
//		Status WidgetStatus `json:"status,omitempty"`
//	}
//
// A pointer to such a struct satisfies [Object] through the embedded fields.
// The JSON names and omitempty behaviour of every type here match Kubernetes'
// meta/v1, so any Kubernetes client reads and writes them unchanged.
//
// # Errors on the wire
//
// Every failed request is answered with a [Status] whose Reason and Code follow
// the Kubernetes API Conventions. Package apiserver builds them; the types and
// the reason constants live here so that clients of kapi can decode them too.
//
// # Where the rest lives
//
// Package apiserver serves registered types over HTTP; storage, watch, codec and
// patch hold the layers beneath it.
package kapi
