package guard

import (
	"sync/atomic"
	"time"
)

// runners are the goroutines that serve requests with a deadline, kept for
// the next request when they are done. A new goroutine's stack starts small
// and grows, copied each time, several times over while one request is
// routed and answered; that copying was a fifth of a GET's time. A runner's
// stack has grown already (the GC shrinks an idle one by half at most per
// cycle). Up to maxIdleRunners wait for work, each for one to two
// runnerIdle at most; they end sooner when the server's context does. A
// server without requests holds none.
type runners struct {
	work chan *deadlinedRequest // unbuffered: a send succeeds only when a runner waits
	idle atomic.Int64
	done <-chan struct{}
}

const (
	// maxIdleRunners bounds the runners kept waiting: more than the
	// requests a server of a few cores serves at once, few enough to
	// cost little memory.
	maxIdleRunners = 64
	// runnerIdle is about how long a runner waits for another request
	// (see loop): far longer than between the requests of a busy server.
	runnerIdle = time.Second
)

func newRunners(done <-chan struct{}) *runners {
	return &runners{work: make(chan *deadlinedRequest), done: done}
}

// run serves d in a waiting runner, or else in a new one.
func (p *runners) run(d *deadlinedRequest) {
	select {
	case p.work <- d:
	default:
		go p.loop(d)
	}
}

func (p *runners) loop(d *deadlinedRequest) {
	// The timer ticks every runnerIdle while the runner lives, not reset
	// per request: the runner ends at a tick that finds it idle since the
	// one before, between one and two runnerIdle after its last request.
	var tick *time.Timer
	defer func() {
		if tick != nil {
			tick.Stop()
		}
	}()
	for {
		d.serve()
		if p.idle.Add(1) > maxIdleRunners {
			p.idle.Add(-1)
			return
		}
		if tick == nil {
			tick = time.NewTimer(runnerIdle)
		}
		served := true // since the last tick
	wait:
		for {
			select {
			case d = <-p.work:
				p.idle.Add(-1)
				break wait
			case <-tick.C:
				if !served {
					p.idle.Add(-1)
					return
				}
				served = false
				tick.Reset(runnerIdle)
			case <-p.done:
				p.idle.Add(-1)
				return
			}
		}
	}
}
