package apiserver

import "context"

// User is who made a request, as the authenticator found: what the
// authorizer and admission see.
type User struct {
	Name   string
	UID    string
	Groups []string
	Extra  map[string][]string
}

type userKey struct{}

// WithUser returns a context carrying user, for handlers and hooks that run
// under it.
func WithUser(ctx context.Context, user User) context.Context {
	if rec := recordFrom(ctx); rec != nil {
		rec.noteUser(user)
	}
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom returns the user a request runs as: the one an authenticator
// found, or system:anonymous under WithAnonymous; ok is false when the
// server authenticates nobody (no WithAuthentication).
func UserFrom(ctx context.Context) (user User, ok bool) {
	user, ok = ctx.Value(userKey{}).(User)
	return user, ok
}
