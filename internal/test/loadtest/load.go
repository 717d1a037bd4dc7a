package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// target is one server the harness drives.
type target struct {
	Name string // "kapi" or "ceiling"
	URL  string // base URL, no trailing slash
	PID  int    // the server's process, when it is local; 0 if unknown
	// TLS is the client's TLS configuration for an https URL.
	TLS *tls.Config
	// StorePIDs are the processes of the store the server uses (etcd),
	// whose CPU is reported apart from the server's; nil: -store-pid's.
	StorePIDs []int
}

// tlsConfig builds the client's TLS configuration from PEM files: the CA
// that signed the server's certificate and, optionally, a client
// certificate and key. All empty: nil.
func tlsConfig(caFile, certFile, keyFile string) (*tls.Config, error) {
	if caFile == "" && certFile == "" && keyFile == "" {
		return nil, nil
	}
	c := &tls.Config{MinVersion: tls.VersionTLS12}
	if caFile != "" {
		pem, err := os.ReadFile(caFile)
		if err != nil {
			return nil, err
		}
		c.RootCAs = x509.NewCertPool()
		if !c.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%s: no certificate", caFile)
		}
	}
	if certFile != "" || keyFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, err
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// client is an HTTP/1.1 client with at most conns keep-alive connections
// to the target. It asks for no compression, so that kapi and the ceiling
// send the same bytes and the client spends nothing on inflating.
func (t *target) client(conns int) *http.Client {
	tr := &http.Transport{
		MaxConnsPerHost:     conns,
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		DisableCompression:  true,
		TLSClientConfig:     t.TLS,
		IdleConnTimeout:     time.Minute,
	}
	return &http.Client{Transport: tr}
}

// op is one request of a workload, sent by worker with the request's
// sequence number; it returns how many response bytes it read.
type op func(ctx context.Context, c *http.Client, worker int, seq int64) (int64, error)

// loadSpec says how to drive a target.
type loadSpec struct {
	Conns    int
	Duration time.Duration
	Rate     float64 // requests/s offered in all; 0: as fast as the connections go
}

// runLoad sends op over spec.Conns connections for spec.Duration and
// measures. With a rate, requests are scheduled at fixed times and latency
// counts from the scheduled time, so a stalled server is not hidden by the
// client waiting for it (coordinated omission).
func runLoad(ctx context.Context, t *target, spec loadSpec, do op) *Result {
	c := t.client(spec.Conns)
	defer c.CloseIdleConnections()
	r := &Result{Server: t.Name, Conns: spec.Conns, Rate: spec.Rate}
	// Requests under way at the deadline finish and count: every worker
	// completes at least one, and no work is thrown away.
	deadline := time.Now().Add(spec.Duration)

	var seq, bytesRead, errs atomic.Int64
	var firstErr atomic.Value
	lat := make([][]time.Duration, spec.Conns)
	var schedule chan time.Time
	if spec.Rate > 0 {
		schedule = make(chan time.Time, 1<<16)
		go func() {
			defer close(schedule)
			start := time.Now()
			interval := time.Duration(float64(time.Second) / spec.Rate)
			for i := 0; ; i++ {
				at := start.Add(time.Duration(i) * interval)
				if !at.Before(deadline) || ctx.Err() != nil {
					return
				}
				time.Sleep(time.Until(at))
				schedule <- at
			}
		}()
	}
	p := watchTarget(t)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range spec.Conns {
		wg.Go(func() {
			for first := true; first || time.Now().Before(deadline); first = false {
				if ctx.Err() != nil {
					return
				}
				began := time.Now()
				if schedule != nil {
					var ok bool
					if began, ok = <-schedule; !ok {
						return
					}
				}
				n, err := do(ctx, c, w, seq.Add(1))
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, err.Error())
					continue
				}
				bytesRead.Add(n)
				lat[w] = append(lat[w], time.Since(began))
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := slices.Concat(lat...)
	r.Requests = int64(len(all))
	p.stop(r)
	r.DurationSec = elapsed.Seconds()
	r.Errors = errs.Load()
	if e, ok := firstErr.Load().(string); ok {
		r.FirstError = e
	}
	r.RequestsPerSec = float64(r.Requests) / elapsed.Seconds()
	r.BytesPerSec = float64(bytesRead.Load()) / elapsed.Seconds()
	r.setLatency(all)
	return r
}

// setLatency fills the percentiles from samples (which it sorts).
func (r *Result) setLatency(samples []time.Duration) {
	if len(samples) == 0 {
		return
	}
	slices.Sort(samples)
	q := func(f float64) float64 {
		i := int(f * float64(len(samples)))
		i = min(i, len(samples)-1)
		return float64(samples[i]) / float64(time.Millisecond)
	}
	r.P50ms, r.P99ms, r.P999ms = q(0.50), q(0.99), q(0.999)
}

// httpError is a response with an unexpected status.
type httpError struct {
	Method, URL string
	Code        int
	Body        string
}

func (e *httpError) Error() string {
	return fmt.Sprintf("%s %s: HTTP %d: %.300s", e.Method, e.URL, e.Code, e.Body)
}

// send sends one request and reads the whole response; it fails on a status
// other than 2xx. If keep is set, the body is returned too.
func send(ctx context.Context, c *http.Client, method, url string, header http.Header, body []byte, keep bool) (int64, []byte, *http.Response, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	var n int64
	var data []byte
	if keep || resp.StatusCode/100 != 2 {
		data, err = io.ReadAll(resp.Body)
		n = int64(len(data))
	} else {
		n, err = io.Copy(io.Discard, resp.Body)
	}
	if err != nil {
		return n, nil, resp, err
	}
	if resp.StatusCode/100 != 2 {
		return n, nil, resp, &httpError{method, url, resp.StatusCode, string(data)}
	}
	return n, data, resp, nil
}
