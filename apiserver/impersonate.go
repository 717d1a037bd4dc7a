package apiserver

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// The headers with which a client acts as another user (kubectl --as,
// --as-group, --as-uid, client-go's rest.ImpersonationConfig).
const (
	headerImpersonateUser        = "Impersonate-User"
	headerImpersonateGroup       = "Impersonate-Group"
	headerImpersonateUID         = "Impersonate-Uid"
	headerImpersonateExtraPrefix = "Impersonate-Extra-"
)

// impersonation is one thing a request asks to act as, and the attributes
// of the impersonate verb that must allow it, as kube-apiserver's
// impersonation filter asks them.
type impersonation struct {
	attrs Attributes
	what  string // for the message of a malformed request
}

// impersonationRequests reads the impersonation headers: none when there
// are none; groups, extras or a UID without a user are 400.
func impersonationRequests(requestor User, h http.Header) (reqs []impersonation, err error) {
	on := func(group, resource, subresource, namespace, name string) Attributes {
		return Attributes{User: requestor, Verb: "impersonate", ResourceRequest: true, APIGroup: group, APIVersion: "v1",
			Resource: resource, Subresource: subresource, Namespace: namespace, Name: name}
	}
	name := h.Get(headerImpersonateUser)
	if name != "" {
		if ns, sa, ok := serviceAccountName(name); ok {
			reqs = append(reqs, impersonation{on("", "serviceaccounts", "", ns, sa), "serviceaccount " + ns + "/" + sa})
		} else {
			reqs = append(reqs, impersonation{on("", "users", "", "", name), "user " + name})
		}
	}
	for _, g := range h.Values(headerImpersonateGroup) {
		reqs = append(reqs, impersonation{on("", "groups", "", "", g), "group " + g})
	}
	for header, values := range h {
		if !strings.HasPrefix(header, headerImpersonateExtraPrefix) {
			continue
		}
		key := extraKey(header[len(headerImpersonateExtraPrefix):])
		for _, v := range values {
			reqs = append(reqs, impersonation{on("authentication.k8s.io", "userextras", key, "", v), "extra " + key + "=" + v})
		}
	}
	if uid := h.Get(headerImpersonateUID); uid != "" {
		reqs = append(reqs, impersonation{on("authentication.k8s.io", "uids", "", "", uid), "uid " + uid})
	}
	if name == "" && len(reqs) > 0 {
		whats := make([]string, len(reqs))
		for i, r := range reqs {
			whats[i] = r.what
		}
		return nil, badRequest("requested [%s] without impersonating a user", strings.Join(whats, ", "))
	}
	return reqs, nil
}

// extraKey is the key of an Impersonate-Extra- header (or X-Remote-Extra-
// of a front proxy): lower case, percent-decoded where it decodes.
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

// impersonate returns the user a request acts as: requestor, or the one
// its impersonation headers name when the authorizers allow requestor to
// impersonate each part of it (the impersonate verb on users or
// serviceaccounts, groups, userextras/KEY and uids, as kube-apiserver
// asks). A part not allowed is 403 with kube-apiserver's message.
// impersonating says whether the headers named anyone.
func impersonate(ctx context.Context, authorizers []Authorizer, requestor User, h http.Header) (u User, impersonating bool, err error) {
	reqs, err := impersonationRequests(requestor, h)
	if err != nil || len(reqs) == 0 {
		return requestor, false, err
	}
	groupsGiven := len(h.Values(headerImpersonateGroup)) > 0
	for _, rq := range reqs {
		a := rq.attrs
		if len(authorizers) > 0 {
			if d, reason, _ := authorize(ctx, authorizers, a); d != DecisionAllow {
				return User{}, false, forbidden(a, reason)
			}
		}
		switch a.Resource {
		case "users":
			u.Name = a.Name
		case "serviceaccounts":
			u.Name = "system:serviceaccount:" + a.Namespace + ":" + a.Name
			if !groupsGiven {
				u.Groups = append(u.Groups, "system:serviceaccounts", "system:serviceaccounts:"+a.Namespace)
			}
		case "groups":
			u.Groups = append(u.Groups, a.Name)
		case "userextras":
			if u.Extra == nil {
				u.Extra = map[string][]string{}
			}
			u.Extra[a.Subresource] = append(u.Extra[a.Subresource], a.Name)
		case "uids":
			u.UID = a.Name
		}
	}
	// The groups kube-apiserver adds: system:authenticated unless either
	// group was asked for; system:unauthenticated to the anonymous user.
	if u.Name == UserAnonymous {
		if !slices.Contains(u.Groups, GroupUnauthenticated) {
			u.Groups = append(u.Groups, GroupUnauthenticated)
		}
	} else if !slices.Contains(u.Groups, GroupAuthenticated) && !slices.Contains(u.Groups, GroupUnauthenticated) {
		u.Groups = append(u.Groups, GroupAuthenticated)
	}
	return u, true, nil
}

// withoutImpersonation removes the impersonation headers, so that handlers
// and hooks see only the impersonated user, as kube-apiserver does.
func withoutImpersonation(h http.Header) {
	h.Del(headerImpersonateUser)
	h.Del(headerImpersonateGroup)
	h.Del(headerImpersonateUID)
	for header := range h {
		if strings.HasPrefix(header, headerImpersonateExtraPrefix) {
			delete(h, header)
		}
	}
}
