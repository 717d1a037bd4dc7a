// Package admission is the port through which a server asks hooks about
// every write before it is stored, as kube-apiserver asks its admission
// plugins and webhooks. Plugins (package delegation's webhooks and
// namespace lifecycle, a service's own policies) implement Func and import
// nothing else of kapi's server; package apiserver runs them and
// re-declares these names as aliases (apiserver.AdmissionFunc,
// apiserver.AdmissionRequest, apiserver.Operation), so code written
// against those keeps compiling.
//
// # What a hook sees
//
// A Request names the write's Operation (Create, Update, Delete), the
// resource and object it is about, the user who asked, whether it is a dry
// run, and the object as it will be stored (and as it was).
//
// # Mutating and validating
//
// The same Func serves both phases; the server option it is given to says
// which. Mutating hooks run first, in order, and may change the object;
// validating hooks run after the resource's own validation, just before
// the write is stored, and must not change it. The first hook to return an
// error rejects the write.
//
// # What stays in the server
//
// Building the Request from an HTTP request, the order of the phases and
// the Status a rejection is answered with are the server's request path,
// in package apiserver.
package admission
