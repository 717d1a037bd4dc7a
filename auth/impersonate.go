package auth

import (
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The headers with which a client acts as another user (kubectl --as,
// --as-group, --as-uid, client-go's rest.ImpersonationConfig).
const (
	HeaderImpersonateUser        = "Impersonate-User"
	HeaderImpersonateGroup       = "Impersonate-Group"
	HeaderImpersonateUID         = "Impersonate-Uid"
	HeaderImpersonateExtraPrefix = "Impersonate-Extra-"
)

// ErrImpersonationWithoutUser is the error of impersonation headers that
// name groups, extras or a UID but no user, which kube-apiserver refuses
// with 400.
var ErrImpersonationWithoutUser = errors.New("impersonation without a user")

// Impersonation is what a request's impersonation headers ask it to act
// as.
type Impersonation struct {
	// Checks are what an authorizer must allow, one for each part of the
	// impersonated user, as kube-apiserver asks them: the verb impersonate
	// on users (or serviceaccounts, for a service account's name), groups,
	// userextras (the extra's key as subresource) and uids
	// (authentication.k8s.io), each named by the value impersonated, the
	// requestor as user.
	Checks []Attributes
	// User is who the request acts as once every check is allowed, with the
	// groups kube-apiserver adds: a service account's groups when no
	// group is asked for, system:authenticated unless either of
	// system:authenticated and system:unauthenticated is, and
	// system:unauthenticated to UserAnonymous.
	User User
}

// ReadImpersonation reads the impersonation headers of a request made by
// requestor; ok is false when there are none. Groups, extras or a UID
// without a user are an error matching ErrImpersonationWithoutUser, whose
// message is kube-apiserver's ("requested [group g] without impersonating
// a user"). Whether requestor may impersonate is for the caller to ask
// its authorizers, with imp.Checks.
func ReadImpersonation(requestor User, h http.Header) (imp Impersonation, ok bool, err error) {
	var whats []string // for the message of a malformed request
	ask := func(group, resource, subresource, namespace, name, what string) {
		imp.Checks = append(imp.Checks, Attributes{User: requestor, Verb: "impersonate", ResourceRequest: true, APIGroup: group, APIVersion: "v1",
			Resource: resource, Subresource: subresource, Namespace: namespace, Name: name})
		whats = append(whats, what)
	}
	u := &imp.User
	name := h.Get(HeaderImpersonateUser)
	if name != "" {
		u.Name = name
		if ns, sa, ok := serviceAccountName(name); ok {
			ask("", "serviceaccounts", "", ns, sa, "serviceaccount "+ns+"/"+sa)
		} else {
			ask("", "users", "", "", name, "user "+name)
		}
	}
	groups := h.Values(HeaderImpersonateGroup)
	for _, g := range groups {
		ask("", "groups", "", "", g, "group "+g)
		u.Groups = append(u.Groups, g)
	}
	for header, values := range h {
		if !strings.HasPrefix(header, HeaderImpersonateExtraPrefix) {
			continue
		}
		key := extraKey(header[len(HeaderImpersonateExtraPrefix):])
		for _, v := range values {
			ask("authentication.k8s.io", "userextras", key, "", v, "extra "+key+"="+v)
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[key] = append(u.Extra[key], v)
		}
	}
	if uid := h.Get(HeaderImpersonateUID); uid != "" {
		ask("authentication.k8s.io", "uids", "", "", uid, "uid "+uid)
		u.UID = uid
	}
	switch {
	case len(imp.Checks) == 0:
		return Impersonation{}, false, nil
	case name == "":
		return Impersonation{}, false, withoutUser("requested [" + strings.Join(whats, ", ") + "] without impersonating a user")
	}
	if ns, _, ok := serviceAccountName(name); ok && len(groups) == 0 {
		u.Groups = append(u.Groups, "system:serviceaccounts", "system:serviceaccounts:"+ns)
	}
	if u.Name == UserAnonymous {
		if !slices.Contains(u.Groups, GroupUnauthenticated) {
			u.Groups = append(u.Groups, GroupUnauthenticated)
		}
	} else if !slices.Contains(u.Groups, GroupAuthenticated) && !slices.Contains(u.Groups, GroupUnauthenticated) {
		u.Groups = append(u.Groups, GroupAuthenticated)
	}
	return imp, true, nil
}

// withoutUser is the error of ReadImpersonation with kube-apiserver's
// message, matching ErrImpersonationWithoutUser.
type withoutUser string

func (e withoutUser) Error() string        { return string(e) }
func (e withoutUser) Is(target error) bool { return target == ErrImpersonationWithoutUser }

// StripImpersonation removes the impersonation headers, so that handlers
// and hooks see only the impersonated user, as kube-apiserver does.
func StripImpersonation(h http.Header) {
	h.Del(HeaderImpersonateUser)
	h.Del(HeaderImpersonateGroup)
	h.Del(HeaderImpersonateUID)
	for header := range h {
		if strings.HasPrefix(header, HeaderImpersonateExtraPrefix) {
			delete(h, header)
		}
	}
}

// extraKey is the key of an Impersonate-Extra- header: lower case,
// percent-decoded where it decodes.
func extraKey(encoded string) string {
	encoded = strings.ToLower(encoded)
	if key, err := url.PathUnescape(encoded); err == nil {
		return key
	}
	return encoded
}

// serviceAccountName splits system:serviceaccount:NAMESPACE:NAME.
func serviceAccountName(user string) (namespace, name string, ok bool) {
	rest, ok := strings.CutPrefix(user, "system:serviceaccount:")
	if !ok {
		return "", "", false
	}
	namespace, name, ok = strings.Cut(rest, ":")
	if !ok || namespace == "" || name == "" || strings.Contains(name, ":") {
		return "", "", false
	}
	return namespace, name, true
}
