package apiserver

import (
	"context"
	"errors"
	"fmt"
	"path"
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
}

// RunController runs a controller inside the server, as the namespace
// deleter and the garbage collector run: run is called once serving
// starts, in a goroutine of its own, with the server's objects as
// lifecycle.Objects sees them, and must return once ctx ends; Close waits
// for it. Its writes take the path of a request made by user, with name as
// their User-Agent (its part before any "/" their field manager). Until run
// calls ready, /readyz fails its check poststarthook/BASE (name's last part)
// as kube-apiserver's does until its controllers have synced. Like Register,
// it must be called before serving starts.
func (s *Server) RunController(name string, user User, run func(ctx context.Context, objects lifecycle.Objects, ready func())) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.handler.Load() != nil || s.completed {
		return fmt.Errorf("apiserver: controller %s: too late: RunController must be called before Complete and the first request", name)
	}
	s.controllers = append(s.controllers, &controller{name: name, user: user, run: run})
	return nil
}

// startControllers starts the controllers of RunController.
func (s *Server) startControllers() {
	for _, c := range s.controllers {
		o := &objects{s: s, user: c.user, manager: c.name}
		s.runBackground(func(ctx context.Context) { c.run(ctx, o, func() { c.ready.Store(true) }) })
	}
}

// controllerChecks are the /readyz checks of the controllers.
func (s *Server) controllerChecks() []healthCheck {
	var checks []healthCheck
	for _, c := range s.controllers {
		checks = append(checks, healthCheck{Name: "poststarthook/" + path.Base(c.name), Check: func(context.Context) error {
			if !c.ready.Load() {
				return errors.New(c.name + " has not synced yet")
			}
			return nil
		}})
	}
	return checks
}
