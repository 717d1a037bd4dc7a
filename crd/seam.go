package crd

import (
	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/kinds"
)

// kindServer is the seam to package kinds: what serves (with opts) and
// stops serving a kind on s.
func kindServer(s *apiserver.Server, opts []kinds.Option) (serve func(kinds.Definition) error, remove func(group, kind string) error) {
	return func(d kinds.Definition) error { return kinds.Register(s, d, opts...) },
		func(group, kind string) error { return kinds.Remove(s, group, kind) }
}
