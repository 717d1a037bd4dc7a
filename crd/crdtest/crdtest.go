package crdtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/kapi-dev/kapi/apiserver"
	"github.com/kapi-dev/kapi/crd"
	"github.com/kapi-dev/kapi/kinds"
)

// Environment is a kapi server serving namespaces, leases, events and the
// CustomResourceDefinitions found in some directories: what
// controller-runtime's envtest.Environment starts with etcd and
// kube-apiserver, in the test's own process.
type Environment struct {
	// CRDDirectoryPaths are directories (or files) of definitions, YAML
	// (several documents to a file) or JSON, as envtest's: a kubebuilder
	// project's config/crd/bases. Documents of other kinds are skipped.
	CRDDirectoryPaths []string
	// ErrorIfCRDPathMissing fails Start when a path does not exist, as
	// envtest's option does; otherwise it is skipped.
	ErrorIfCRDPathMissing bool
	// Options are given to apiserver.New, after the options that serve
	// namespaces, leases and events.
	Options []apiserver.Option
	// Register registers resources of Go types beside the definitions.
	Register func(*apiserver.Server) error
	// KindOptions are given to kinds.Register for each definition's kind
	// (kinds.WithRules, to have x-kubernetes-validations rules evaluated).
	KindOptions []kinds.Option
	// CRDInstallTimeout bounds the wait for the definitions to be
	// established (10 seconds if zero).
	CRDInstallTimeout time.Duration

	// API is the server, once started.
	API *apiserver.Server
	// URL is where it listens (http://127.0.0.1:port): client-go's
	// rest.Config{Host: URL}, kubectl's --server.
	URL string

	http *http.Server
	done chan error
}

// ErrNotEstablished is the error of Start when a definition has not been
// established in time (its names conflict, or its kind cannot be served).
var ErrNotEstablished = errors.New("crdtest: definition not established")

// Start starts the server on a free loopback port, creates the
// definitions and waits until each is established, and returns the URL
// clients connect to.
func (e *Environment) Start() (string, error) {
	docs, err := e.definitions()
	if err != nil {
		return "", err
	}
	opts := append([]apiserver.Option{apiserver.WithNamespaces(), apiserver.WithLeases(), apiserver.WithEvents()}, e.Options...)
	api, err := apiserver.New(opts...)
	if err != nil {
		return "", err
	}
	if err := crd.ServeWith(e.KindOptions...)(api); err != nil {
		return "", err
	}
	if e.Register != nil {
		if err := e.Register(api); err != nil {
			return "", err
		}
	}
	if err := api.Complete(); err != nil {
		return "", err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	e.API, e.URL = api, "http://"+l.Addr().String()
	e.http = &http.Server{Handler: api, ReadHeaderTimeout: 10 * time.Second}
	e.done = make(chan error, 1)
	go func() { e.done <- e.http.Serve(l) }()
	if err := e.install(docs); err != nil {
		_ = e.Stop()
		return "", err
	}
	return e.URL, nil
}

// Stop stops the server: its watches end, its listener closes.
func (e *Environment) Stop() error {
	if e.API == nil {
		return nil
	}
	_ = e.API.Close() // first: it ends the watches Shutdown would wait for
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := e.http.Shutdown(ctx)
	<-e.done
	e.API = nil
	return err
}

// definitions reads the definitions of CRDDirectoryPaths, as JSON.
func (e *Environment) definitions() ([][]byte, error) {
	var docs [][]byte
	for _, path := range e.CRDDirectoryPaths {
		info, err := os.Stat(path)
		if errors.Is(err, fs.ErrNotExist) && !e.ErrorIfCRDPathMissing {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("crdtest: %w", err)
		}
		files := []string{path}
		if info.IsDir() {
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil, fmt.Errorf("crdtest: %w", err)
			}
			files = files[:0]
			for _, entry := range entries {
				switch filepath.Ext(entry.Name()) {
				case ".yaml", ".yml", ".json":
					files = append(files, filepath.Join(path, entry.Name()))
				}
			}
		}
		for _, file := range files {
			more, err := readDefinitions(file)
			if err != nil {
				return nil, err
			}
			docs = append(docs, more...)
		}
	}
	return docs, nil
}

// readDefinitions reads the definitions of one file (YAML documents, of
// which JSON is one kind) as JSON.
func readDefinitions(file string) ([][]byte, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("crdtest: %w", err)
	}
	var docs [][]byte
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var doc any
		err := dec.Decode(&doc)
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("crdtest: %s: %w", file, err)
		}
		m, ok := doc.(map[string]any)
		if !ok || m["kind"] != "CustomResourceDefinition" || m["apiVersion"] != crd.Group+"/"+crd.Version {
			continue
		}
		j, err := json.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("crdtest: %s: %w", file, err)
		}
		docs = append(docs, j)
	}
}

// install creates the definitions and waits until each is established.
func (e *Environment) install(docs [][]byte) error {
	const path = "/apis/" + crd.Group + "/" + crd.Version + "/customresourcedefinitions"
	var names []string
	for _, doc := range docs {
		resp, err := http.Post(e.URL+path, "application/json", bytes.NewReader(doc))
		if err != nil {
			return fmt.Errorf("crdtest: %w", err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("crdtest: create a definition: HTTP %d: %s", resp.StatusCode, body)
		}
		var c crd.CustomResourceDefinition
		if err := json.Unmarshal(body, &c); err != nil {
			return fmt.Errorf("crdtest: %w", err)
		}
		names = append(names, c.Name)
	}
	timeout := e.CRDInstallTimeout
	if timeout == 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	for len(names) > 0 {
		resp, err := http.Get(e.URL + path)
		if err != nil {
			return fmt.Errorf("crdtest: %w", err)
		}
		var list struct {
			Items []crd.CustomResourceDefinition
		}
		err = json.NewDecoder(resp.Body).Decode(&list)
		resp.Body.Close()
		if err != nil {
			return fmt.Errorf("crdtest: %w", err)
		}
		for _, c := range list.Items {
			for _, cond := range c.Status.Conditions {
				if cond.Type == crd.Established && cond.Status == "True" {
					names = slices.DeleteFunc(names, func(n string) bool { return n == c.Name })
				}
			}
		}
		if len(names) == 0 {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%w after %v: %s", ErrNotEstablished, timeout, strings.Join(names, ", "))
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}
