package auth_test

import (
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"testing"

	"github.com/kapi-dev/kapi/auth"
)

func TestReadImpersonation(t *testing.T) {
	alice := auth.User{Name: "alice", Groups: []string{auth.GroupAuthenticated}}
	check := func(group, resource, subresource, namespace, name string) auth.Attributes {
		return auth.Attributes{User: alice, Verb: "impersonate", ResourceRequest: true, APIGroup: group, APIVersion: "v1",
			Resource: resource, Subresource: subresource, Namespace: namespace, Name: name}
	}
	for _, tc := range []struct {
		name    string
		headers map[string][]string
		want    auth.Impersonation
		ok      bool
	}{
		{name: "none", headers: map[string][]string{"Authorization": {"Bearer t"}}},
		{name: "user", headers: map[string][]string{"Impersonate-User": {"bob"}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "users", "", "", "bob")},
			User:   auth.User{Name: "bob", Groups: []string{auth.GroupAuthenticated}}}},
		{name: "everything", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {"dev", "ops"},
			"Impersonate-Extra-Scopes%2Fa": {"x"}, "Impersonate-Uid": {"42"}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "users", "", "", "bob"), check("", "groups", "", "", "dev"), check("", "groups", "", "", "ops"),
				check("authentication.k8s.io", "userextras", "scopes/a", "", "x"), check("authentication.k8s.io", "uids", "", "", "42")},
			User: auth.User{Name: "bob", UID: "42", Groups: []string{"dev", "ops", auth.GroupAuthenticated}, Extra: map[string][]string{"scopes/a": {"x"}}}}},
		{name: "service account", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns:sa"}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "serviceaccounts", "", "ns", "sa")},
			User: auth.User{Name: "system:serviceaccount:ns:sa",
				Groups: []string{"system:serviceaccounts", "system:serviceaccounts:ns", auth.GroupAuthenticated}}}},
		{name: "service account with groups", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns:sa"}, "Impersonate-Group": {"g"}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "serviceaccounts", "", "ns", "sa"), check("", "groups", "", "", "g")},
			User:   auth.User{Name: "system:serviceaccount:ns:sa", Groups: []string{"g", auth.GroupAuthenticated}}}},
		{name: "not a service account", headers: map[string][]string{"Impersonate-User": {"system:serviceaccount:ns:a:b"}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "users", "", "", "system:serviceaccount:ns:a:b")},
			User:   auth.User{Name: "system:serviceaccount:ns:a:b", Groups: []string{auth.GroupAuthenticated}}}},
		{name: "anonymous", headers: map[string][]string{"Impersonate-User": {auth.UserAnonymous}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "users", "", "", auth.UserAnonymous)},
			User:   auth.User{Name: auth.UserAnonymous, Groups: []string{auth.GroupUnauthenticated}}}},
		{name: "unauthenticated asked", headers: map[string][]string{"Impersonate-User": {"bob"}, "Impersonate-Group": {auth.GroupUnauthenticated}}, ok: true, want: auth.Impersonation{
			Checks: []auth.Attributes{check("", "users", "", "", "bob"), check("", "groups", "", "", auth.GroupUnauthenticated)},
			User:   auth.User{Name: "bob", Groups: []string{auth.GroupUnauthenticated}}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			imp, ok, err := auth.ReadImpersonation(alice, http.Header(tc.headers))
			if err != nil || ok != tc.ok || !reflect.DeepEqual(imp, tc.want) {
				t.Fatalf("ReadImpersonation = %+v, %v, %v; want %+v, %v", imp, ok, err, tc.want, tc.ok)
			}
		})
	}
}

func TestReadImpersonationWithoutUser(t *testing.T) {
	h := http.Header{"Impersonate-Group": {"dev"}, "Impersonate-Uid": {"42"}}
	_, ok, err := auth.ReadImpersonation(auth.User{Name: "alice"}, h)
	if ok || !errors.Is(err, auth.ErrImpersonationWithoutUser) {
		t.Fatalf("ReadImpersonation = %v, %v; want ErrImpersonationWithoutUser", ok, err)
	}
	if want := "requested [group dev, uid 42] without impersonating a user"; err.Error() != want {
		t.Fatalf("message %q, want kube-apiserver's %q", err, want)
	}
}

func TestStripImpersonation(t *testing.T) {
	h := http.Header{"Impersonate-User": {"bob"}, "Impersonate-Group": {"g"}, "Impersonate-Uid": {"1"},
		"Impersonate-Extra-A": {"x"}, "Authorization": {"Bearer t"}}
	auth.StripImpersonation(h)
	if want := (http.Header{"Authorization": {"Bearer t"}}); !reflect.DeepEqual(h, want) {
		t.Fatalf("headers left %v, want %v", h, want)
	}
}

func ExampleReadImpersonation() {
	requestor := auth.User{Name: "admin", Groups: []string{auth.GroupAuthenticated}}
	h := http.Header{}
	h.Set(auth.HeaderImpersonateUser, "system:serviceaccount:default:builder")
	imp, ok, err := auth.ReadImpersonation(requestor, h)
	if err != nil || !ok {
		fmt.Println(ok, err)
		return
	}
	for _, a := range imp.Checks { // each must be allowed to admin
		fmt.Println(a.Verb, a.Resource, a.Namespace, a.Name)
	}
	fmt.Println(imp.User.Name, imp.User.Groups)
	// Output:
	// impersonate serviceaccounts default builder
	// system:serviceaccount:default:builder [system:serviceaccounts system:serviceaccounts:default system:authenticated]
}
