package kubecompat_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/server/options/encryptionconfig"
	"k8s.io/apiserver/pkg/storage/value"
	"k8s.io/klog/v2"

	"github.com/kapi-dev/kapi/storage"
	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/encryption/secretbox"
	"github.com/kapi-dev/kapi/storage/memory"
)

const header = "apiVersion: apiserver.config.k8s.io/v1\nkind: EncryptionConfiguration\n"

// Secrets of 32, 16 and 24 bytes, base64.
const (
	s32 = "dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE="
	s16 = "c2VjcmV0IGlzIHNlY3VyZQ=="
	s24 = "dHdlbnR5LWZvdXIgYnl0ZSBzZWNyZXQh"
)

// configs are files both sides read: kube-apiserver's loader and kapi's
// must agree on each, accepting or refusing it.
var configs = []struct{ name, resources string }{
	{"aesgcm", "resources: [{resources: [widgets.example.com], providers: [{aesgcm: {keys: [{name: k1, secret: " + s32 + "}]}}]}]"},
	{"aesgcm sizes", "resources: [{resources: [widgets.example.com], providers: [{aesgcm: {keys: [{name: a, secret: " + s16 + "}, {name: b, secret: " + s24 + "}, {name: c, secret: " + s32 + "}]}}]}]"},
	{"secretbox", "resources: [{resources: [secrets, '*.apps'], providers: [{secretbox: {keys: [{name: box, secret: " + s32 + "}]}}, {identity: {}}]}]"},
	{"identity first", "resources: [{resources: ['*.*'], providers: [{identity: {}}, {aesgcm: {keys: [{name: old, secret: " + s16 + "}]}}]}]"},
	{"rules", "resources: [{resources: [events], providers: [{identity: {}}]}, {resources: [widgets.example.com, secrets], providers: [{aesgcm: {keys: [{name: w, secret: " + s32 + "}]}}]}, {resources: ['*.apps'], providers: [{secretbox: {keys: [{name: apps, secret: " + s32 + "}]}}]}, {resources: ['*.*'], providers: [{aesgcm: {keys: [{name: all, secret: " + s24 + "}]}}]}]"},
	{"same resource twice", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: new, secret: " + s32 + "}]}}]}, {resources: [secrets], providers: [{aesgcm: {keys: [{name: old, secret: " + s16 + "}]}}]}]"},
	{"key name with colon", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: 'a:b', secret: " + s32 + "}, {name: a, secret: " + s16 + "}]}}]}]"},
	{"core wildcard", "resources: [{resources: ['*.'], providers: [{aesgcm: {keys: [{name: core, secret: " + s32 + "}]}}]}]"},
	{"group then resource", "resources: [{resources: [deployments.apps], providers: [{identity: {}}]}, {resources: ['*.apps'], providers: [{aesgcm: {keys: [{name: k, secret: " + s32 + "}]}}]}]"},

	{"no rules", "resources: []"},
	{"no resources", "resources: [{resources: [], providers: [{identity: {}}]}]"},
	{"no providers", "resources: [{resources: [secrets], providers: []}]"},
	{"empty provider", "resources: [{resources: [secrets], providers: [{}]}]"},
	{"two providers in one", "resources: [{resources: [secrets], providers: [{identity: {}, aesgcm: {keys: [{name: k, secret: " + s32 + "}]}}]}]"},
	{"no keys", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: []}}]}]"},
	{"no key name", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{secret: " + s32 + "}]}}]}]"},
	{"no secret", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: k}]}}]}]"},
	{"not base64", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: k, secret: 'no base64!'}]}}]}]"},
	{"aesgcm key size", "resources: [{resources: [secrets], providers: [{aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}}]}]"},
	{"secretbox key size", "resources: [{resources: [secrets], providers: [{secretbox: {keys: [{name: k, secret: " + s16 + "}]}}]}]"},
	{"capitals", "resources: [{resources: [Secrets], providers: [{identity: {}}]}]"},
	{"star", "resources: [{resources: ['*'], providers: [{identity: {}}]}]"},
	{"across groups", "resources: [{resources: ['secrets.*'], providers: [{identity: {}}]}]"},
	{"duplicate", "resources: [{resources: [secrets, secrets], providers: [{identity: {}}]}]"},
	{"overlap", "resources: [{resources: [secrets, '*.'], providers: [{identity: {}}]}]"},
	{"overlap all", "resources: [{resources: ['*.*', secrets], providers: [{identity: {}}]}]"},
	{"masked by group", "resources: [{resources: ['*.apps'], providers: [{identity: {}}]}, {resources: [deployments.apps], providers: [{identity: {}}]}]"},
	{"masked by all", "resources: [{resources: ['*.*'], providers: [{identity: {}}]}, {resources: [secrets], providers: [{identity: {}}]}]"},
	{"unknown field", "resources: [{resources: [secrets], providers: [{identity: {}}], extra: 1}]"},
	{"unknown provider", "resources: [{resources: [secrets], providers: [{aesgmc: {keys: [{name: k, secret: " + s32 + "}]}}]}]"},
}

// kubeLoad is kube-apiserver's reading of a config file.
func kubeLoad(t *testing.T, file string) (*encryptionconfig.EncryptionConfiguration, error) {
	path := filepath.Join(t.TempDir(), "encryption.yaml")
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	return encryptionconfig.LoadEncryptionConfig(t.Context(), path, false, "kapi")
}

func kapiLoad(file string, backend storage.Interface) (storage.Interface, error) {
	c, err := encryption.ParseConfig([]byte(file))
	if err != nil {
		return nil, err
	}
	return encryption.New(backend, c, encryption.WithKeyPrefix("/registry/"), encryption.WithCipher("secretbox", secretbox.New))
}

// resources are those each accepted config is tried on.
var resources = []schema.GroupResource{
	{Group: "example.com", Resource: "widgets"},
	{Group: "", Resource: "secrets"},
	{Group: "", Resource: "events"},
	{Group: "apps", Resource: "deployments"},
	{Group: "other.io", Resource: "gadgets"},
}

// TestConfigsAndValues: for every config, both sides accept it or both
// refuse it; where accepted, for every resource, each side reads what
// the other wrote, and both write under the same prefix.
func TestConfigsAndValues(t *testing.T) {
	ctx := context.Background()
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			file := header + tc.resources
			kube, kubeErr := kubeLoad(t, file)
			m := memory.New()
			defer m.Close()
			kapi, kapiErr := kapiLoad(file, m)
			if (kubeErr == nil) != (kapiErr == nil) {
				t.Fatalf("kube-apiserver: %v\nkapi: %v", kubeErr, kapiErr)
			}
			if kubeErr != nil {
				t.Logf("both refuse it\nkube-apiserver: %v\nkapi: %v", kubeErr, kapiErr)
				return
			}
			transformers := encryptionconfig.StaticTransformers(kube.Transformers)
			for _, gr := range resources {
				kubeT := transformers.TransformerForResource(gr)
				key := "/registry/" + qualified(gr) + "/ns/name"
				dataCtx := value.DefaultContext(key)
				plaintext := []byte(`{"kind":"` + gr.Resource + `","data":"very secret"}`)

				// kapi writes, kube reads.
				if _, err := kapi.Update(ctx, key, plaintext, 0); err != nil {
					if _, err := kapi.Create(ctx, key, plaintext); err != nil {
						t.Fatal(err)
					}
				}
				kapiStored := mustGet(t, m, key)
				got, _, err := kubeT.TransformFromStorage(ctx, kapiStored, dataCtx)
				if err != nil || !bytes.Equal(got, plaintext) {
					t.Errorf("%s: kube-apiserver reads kapi's %.40q as %q, %v", gr, kapiStored, got, err)
				}

				// kube writes, kapi reads.
				kubeStored, err := kubeT.TransformToStorage(ctx, plaintext, dataCtx)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := m.Update(ctx, key, kubeStored, 0); err != nil {
					t.Fatal(err)
				}
				if got := mustGet(t, kapi, key); !bytes.Equal(got, plaintext) {
					t.Errorf("%s: kapi reads kube-apiserver's %.40q as %q", gr, kubeStored, got)
				}
				if p, q := storedPrefix(kapiStored), storedPrefix(kubeStored); p != q || len(kapiStored) != len(kubeStored) {
					t.Errorf("%s: kapi writes %q (%d bytes), kube-apiserver %q (%d bytes)", gr, p, len(kapiStored), q, len(kubeStored))
				}

				// Plaintext: where kube-apiserver cannot read it (no identity
				// provider), kapi hands it on as a value that cannot decode.
				if _, err := m.Update(ctx, key, plaintext, 0); err != nil {
					t.Fatal(err)
				}
				_, _, kubeErr := kubeT.TransformFromStorage(ctx, plaintext, dataCtx)
				if got := mustGet(t, kapi, key); (kubeErr == nil) != bytes.Equal(got, plaintext) {
					t.Errorf("%s: plaintext: kube-apiserver reads it with error %v, kapi reads %q", gr, kubeErr, got)
				}

				// Under another storage key, neither reads an aesgcm value.
				if strings.HasPrefix(string(kubeStored), "k8s:enc:aesgcm:") {
					if _, _, err := kubeT.TransformFromStorage(ctx, kapiStored, value.DefaultContext(key+"x")); err == nil {
						t.Errorf("%s: kube-apiserver reads kapi's value under another key", gr)
					}
				}
			}
		})
	}
}

func TestMain(m *testing.M) {
	// kube-apiserver logs each value it fails to decrypt; the tests make
	// such failures on purpose.
	klog.SetLogger(logr.Discard())
	os.Exit(m.Run())
}

func qualified(gr schema.GroupResource) string {
	if gr.Group == "" {
		return gr.Resource
	}
	return gr.Resource + "." + gr.Group
}

// storedPrefix is "k8s:enc:PROVIDER:v1:KEYNAME:" of a value, or "" if in clear.
func storedPrefix(v []byte) string {
	if !bytes.HasPrefix(v, []byte("k8s:enc:")) {
		return ""
	}
	parts := strings.SplitN(string(v), ":", 6)
	return strings.Join(parts[:5], ":") + ":"
}

func mustGet(t *testing.T, s storage.Interface, key string) []byte {
	t.Helper()
	kv, err := s.Get(context.Background(), key, 0)
	if err != nil {
		t.Fatal(err)
	}
	return kv.Value
}
