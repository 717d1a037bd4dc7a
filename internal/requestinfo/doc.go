// Package requestinfo reads what a request asks for from its method, path
// and query alone, as kube-apiserver's RequestInfoFactory does: the verb
// (get, list, watch, create, update, patch, delete, deletecollection, or
// the lower-case method of a non-resource request), API group and version,
// resource, subresource, namespace, name, and the label and field
// selectors, as the auth.Attributes an authorizer decides on. apiserver
// reads them before routing (authorization, in-flight limits, observers)
// and routes on the same split of the path (RoutedPath).
//
// # Invariant
//
// A request is authorized for exactly what the handler then does: the path
// is split where the router splits it (the path a parent chi router left,
// else the escaped path, so that an escaped "/" stays inside its segment),
// a list or watch is authorized for a name only when its field selector
// restricts it to that name (metadata.name=NAME, a valid path segment), and
// a boolean query parameter is read here as the handler reads it
// (BoolQuery).
//
// # The slow, obviously correct path
//
// RoutedPath splits into a caller's array rather than a new slice; its
// test holds it to strings.SplitN. apiserver's authorization tests and
// FuzzAuthorizedRequests hold the attributes to what the server then does.
package requestinfo
