package main

import (
	"context"
	"fmt"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

var widgetsGVR = schema.GroupVersionResource{Group: "example.com", Version: "v1", Resource: "widgets"}

// restConfig is client-go's configuration for t, without client-side rate
// limits (the harness is the only client).
func restConfig(t *target) *rest.Config {
	cfg := &rest.Config{Host: t.URL, QPS: -1}
	if t.TLS != nil {
		cfg.Transport = nil
		cfg.WrapTransport = nil
		// client-go builds its TLS from files or bytes; the harness has a
		// ready tls.Config, so it hands client-go a transport instead.
		cfg.Transport = t.client(1).Transport
	}
	return cfg
}

// runInformers starts sz.Informers dynamic informers on the widgets of
// nsLarge at once, each with its own client and connection, as client-go
// starts them by default (a streaming list: a watch with
// sendInitialEvents=true), and measures the time until all have synced.
// Each informer keeps only its objects' metadata, so that the harness's
// own memory stays small; it still decodes every object.
func runInformers(ctx context.Context, t *target, sz sizes, objects int) (*Result, error) {
	r := &Result{Workload: "informers", Server: t.Name, Informers: sz.Informers, Objects: objects}
	ictx, cancel := context.WithCancel(ctx)
	defer cancel()
	var informers []cache.SharedIndexInformer
	var factories []dynamicinformer.DynamicSharedInformerFactory
	for range sz.Informers {
		client, err := dynamic.NewForConfig(restConfig(t))
		if err != nil {
			return nil, err
		}
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(client, 0, nsLarge, nil)
		inf := f.ForResource(widgetsGVR).Informer()
		if err := inf.SetTransform(metadataOnly); err != nil {
			return nil, err
		}
		informers = append(informers, inf)
		factories = append(factories, f)
	}
	defer func() {
		cancel()
		for _, f := range factories {
			f.Shutdown()
		}
	}()
	p := watchProc(t.PID)
	start := time.Now()
	for _, f := range factories {
		f.Start(ictx.Done())
	}
	timeout := sz.InformerExpiry
	sctx, scancel := context.WithTimeout(ictx, timeout)
	defer scancel()
	var wg sync.WaitGroup
	synced := make([]bool, len(informers))
	for i, inf := range informers {
		wg.Go(func() { synced[i] = cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) })
	}
	wg.Wait()
	r.SyncSeconds = time.Since(start).Seconds()
	p.stop(r)
	for i, ok := range synced {
		if !ok {
			return r, fmt.Errorf("informer %d did not sync within %v", i, timeout)
		}
		if n := len(informers[i].GetStore().ListKeys()); n != objects {
			return r, fmt.Errorf("informer %d synced with %d objects, want %d", i, n, objects)
		}
	}
	return r, nil
}

// metadataOnly keeps name, namespace and resourceVersion of an object.
func metadataOnly(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	small := &unstructured.Unstructured{Object: map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind()}}
	small.SetName(u.GetName())
	small.SetNamespace(u.GetNamespace())
	small.SetResourceVersion(u.GetResourceVersion())
	return small, nil
}
