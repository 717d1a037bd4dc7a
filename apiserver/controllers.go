package apiserver

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/kapi-dev/kapi/lifecycle"
)

// controller is a controller of a package of its own that runs inside the
// server (RunController).
type controller struct {
	name  string
	user  User
	run   func(ctx context.Context, objects lifecycle.Objects, ready func())
	ready atomic.Bool
	// userAgent, when set, names the writes in place of name
	// (ControllerUserAgent).
	userAgent string
}

// RunController runs a controller inside the server, as the namespace
// deleter and the garbage collector run: run is called once serving
// starts, in a goroutine of its own, with the server's objects as
// lifecycle.Objects sees them, and must return once ctx ends; Close waits
// for it. Its writes take the path of a request made by user, with name as
// their field manager (see ControllerUserAgent). Until run calls ready,
// /readyz fails its check poststarthook/NAME, as kube-apiserver's does until
// its controllers have synced; two controllers of one name are refused, as
// kube-apiserver refuses two post-start hooks of one name. Like Register,
// it must be called before serving starts.
func (s *Server) RunController(name string, user User, run func(ctx context.Context, objects lifecycle.Objects, ready func()), opts ...ControllerOption) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handler.Load() != nil || s.completed {
		return fmt.Errorf("apiserver: controller %s: too late: RunController must be called before Complete and the first request", name)
	}
	c := &controller{name: name, user: user, run: run}
	if slices.ContainsFunc(s.controllers, func(o *controller) bool { return o.name == name }) {
		return fmt.Errorf("apiserver: controller %s: a controller of that name runs already", name)
	}
	for _, opt := range opts {
		opt(c)
	}
	s.controllers = append(s.controllers, c)
	return nil
}

// A ControllerOption changes how RunController runs a controller.
type ControllerOption func(*controller)

// ControllerUserAgent has a controller's writes carry userAgent and no
// fieldManager: their field manager is then userAgent's part before any
// "/", as a client's is (kube-apiserver's own controllers write as
// kube-apiserver/VERSION: manager kube-apiserver).
func ControllerUserAgent(userAgent string) ControllerOption {
	return func(c *controller) { c.userAgent = userAgent }
}

// startControllers starts the controllers of RunController.
func (s *Server) startControllers() {
	for _, c := range s.controllers {
		o := &objects{s: s, user: c.user, manager: c.userAgent}
		if c.userAgent == "" {
			o.manager, o.fieldManager = c.name, c.name
		}
		s.runBackground(func(ctx context.Context) { c.run(ctx, o, func() { c.ready.Store(true) }) })
	}
}

// controllerChecks are the /readyz checks of the controllers.
func (s *Server) controllerChecks() []healthCheck {
	var checks []healthCheck
	for _, c := range s.controllers {
		checks = append(checks, healthCheck{Name: "poststarthook/" + c.name, Check: func(context.Context) error {
			if !c.ready.Load() {
				return errors.New(c.name + " has not synced yet")
			}
			return nil
		}})
	}
	return checks
}
