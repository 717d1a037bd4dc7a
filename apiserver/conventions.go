package apiserver

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kapi-dev/kapi/internal/conventions"
)

// ErrConventions is what Register's error wraps, under
// WithStrictConventions, when the type breaks a Kubernetes API convention
// (see WithStrictConventions).
var ErrConventions = errors.New("the type breaks Kubernetes API conventions")

// adviseConventions is the seam to package conventions: it logs once, as
// warnings, the conventions the resource's type breaks, or refuses the
// type with them under WithStrictConventions.
func (s *Server) adviseConventions(r *resource) error {
	findings := conventions.Check(r.typ)
	if len(findings) == 0 {
		return nil
	}
	if s.config.strictConventions {
		list := make([]string, len(findings))
		for i, f := range findings {
			list[i] = f.String()
		}
		return fmt.Errorf("%w: %s", ErrConventions, strings.Join(list, "; "))
	}
	for _, f := range findings {
		s.config.logger.Warn("kapi: the type breaks a Kubernetes API convention", "kind", r.gvk(), "type", r.typ.String(),
			"field", f.Field, "rule", f.Rule, "advice", f.Advice)
	}
	return nil
}
