// Package actions serves what a service's API does besides storing
// objects: custom subresources with handlers of their own, as
// kube-apiserver's pods/log and pods/eviction, and kinds that are
// answered and never stored, as TokenReview and SubjectAccessReview.
//
// # Subresources
//
// AddSubresource serves a subresource of a registered resource, one
// handler per verb: Read answers a GET with an object, Stream answers it
// with a stream written as it comes (a log, followed or not), Write reads
// a body and answers with an object (create is POST, update is PUT).
// Bodies are read and answers written in every media type the server
// speaks (JSON, YAML, CBOR; protobuf when the type has the tags), the
// body's fields checked as fieldValidation says. The object the
// subresource belongs to is read first: a subresource of an object that
// does not exist is 404 NotFound, and the handler gets the object.
//
//	kubectl create --raw /apis/example.com/v1/namespaces/default/widgets/w1/restart -f restart.json
//	kubectl get --raw '/apis/example.com/v1/namespaces/default/widgets/w1/log?follow=true'
//
// # Answered kinds
//
// AddReview serves a kind whose objects are created and answered, never
// stored: POST to its collection runs Answer on the object (which fills
// in its status) and answers it, 201 Created; GET, LIST, WATCH and every
// other method are 405 MethodNotAllowed, an object's path 404 whatever
// the method, and discovery lists the verb create alone, as
// kube-apiserver does for its reviews. kubectl create -f review.yaml works on it. Its kind and plural
// are its own in its group: a registered resource cannot share them.
//
// # The path of a request
//
// Both take the path every request takes: authentication, then
// authorization on the attributes of the path (verb create on
// widgets/restart, get on widgets/log, create on widgetreviews), the
// request's limits and deadline (a Stream is long-running, whatever its
// name: held by the watches' cap, never cut at the request timeout, ended
// by Shutdown and Close as watches are; kube-apiserver decides by name,
// log, exec, attach, portforward or proxy, which are long-running here
// too), admission of a body (a CREATE or UPDATE of the subresource, with
// the body as its object), audit, metrics and traces; errors are Status
// objects with kube-apiserver's codes: an unknown subresource is 404, a
// verb it does not serve 405, a body that is not its kind 400. They appear in
// discovery (widgets/restart with its verbs, in both forms) and in
// OpenAPI v3, where kubectl and client generators find them.
//
// # The seam
//
// apiserver.Server.AddEndpoint is the seam: it serves an Endpoint
// through the request path, whose handlers this package makes typed.
package actions
