package apiservertest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Collect runs f with a testing.TB that records what f reports instead of
// failing a test, and returns it as one error (nil when f reported
// nothing): Errorf and Error are recorded and f goes on; Fatalf, Fatal,
// FailNow and a panic end f. It lets the helpers of this package, which
// take a testing.TB, run off the test goroutine (in a watch reader, a load
// generator's client) or judge a response without failing the test.
func Collect(f func(t testing.TB)) (err error) {
	c := &collector{}
	defer func() {
		if p := recover(); p != nil && p != errFatal {
			c.Errorf("%v", p)
		}
		err = c.err()
	}()
	f(c)
	return nil
}

// errFatal is what collector's Fatal methods panic with, to end f.
var errFatal = errors.New("apiservertest: fatal")

// collector is the testing.TB of Collect. Methods it does not define
// belong to the nil embedded TB and panic, which Collect reports.
type collector struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (c *collector) Helper() {}

func (c *collector) Errorf(format string, args ...any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *collector) Error(args ...any) { c.Errorf("%s", fmt.Sprint(args...)) }

func (c *collector) Fatalf(format string, args ...any) {
	c.Errorf(format, args...)
	panic(errFatal)
}

func (c *collector) Fatal(args ...any) {
	c.Error(args...)
	panic(errFatal)
}

func (c *collector) FailNow() {
	c.Errorf("FailNow")
	panic(errFatal)
}

func (c *collector) err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(c.errs, "; "))
}
