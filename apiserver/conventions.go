package apiserver

import "github.com/kapi-dev/kapi/internal/conventions"

// ErrConventions is what Register's error wraps, under
// WithStrictConventions, when the type breaks a Kubernetes API convention.
var ErrConventions = conventions.ErrBroken

// adviseConventions is the seam to package conventions: it logs, as
// warnings, the conventions the resource's type breaks, or refuses the
// type under WithStrictConventions.
func (s *Server) adviseConventions(r *resource) error {
	return conventions.Advise(r.typ, r.gvk(), s.config.strictConventions, s.config.logger)
}
