package auth

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
// under it. A server sets it once it has authenticated a request; a test
// sets it to call a hook as some user.
func WithUser(ctx context.Context, user User) context.Context {
	return context.WithValue(ctx, userKey{}, user)
}

// UserFrom returns the user a request runs as: the one an authenticator
// found, or system:anonymous when a server lets anonymous requests in; ok
// is false when the context carries no user, as in a server that
// authenticates nobody.
func UserFrom(ctx context.Context) (user User, ok bool) {
	user, ok = ctx.Value(userKey{}).(User)
	return user, ok
}
