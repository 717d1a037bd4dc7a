package encryption_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/kapi-dev/kapi/storage/encryption"
	"github.com/kapi-dev/kapi/storage/memory"
)

// kubeExample is the example of kube-apiserver's EncryptionConfiguration
// documentation (k8s.io/apiserver/pkg/apis/apiserver/v1), aescbc replaced
// by aesgcm, a secretbox provider, and key3 of a valid size (the
// documentation's is 25 bytes, which kube-apiserver refuses too).
const kubeExample = `
kind: EncryptionConfiguration
apiVersion: apiserver.config.k8s.io/v1
resources:
- resources:
  - events
  providers:
  - identity: {}  # do not encrypt events even though *.* is specified below
- resources:
  - secrets
  - configmaps
  - pandas.awesome.bears.example
  providers:
  - aesgcm:
      keys:
      - name: key1
        secret: c2VjcmV0IGlzIHNlY3VyZQ==
- resources:
  - '*.apps'
  providers:
  - secretbox:
      keys:
      - name: key2
        secret: YWJjZGVmZ2hpamtsbW5vcHFyc3R1dnd4eXoxMjM0NTY=
- resources:
  - '*.*'
  providers:
  - aesgcm:
      keys:
      - name: key3
        secret: dGhpcnR5LXR3byBieXRlcyBvZiBzZWNyZXQga2V5ISE=
      - name: key4
        secret: c2VjcmV0IGlzIHNlY3VyZQ==
  - identity: {}
`

func TestParseKubeExample(t *testing.T) {
	c, err := encryption.ParseConfig([]byte(kubeExample))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Resources) != 4 || c.Resources[2].Providers[0].Secretbox == nil || len(c.Resources[3].Providers[0].AESGCM.Keys) != 2 {
		t.Fatalf("parsed %+v", c)
	}
	m := memory.New()
	defer m.Close()
	_, err = encryption.New(m, c)
	if err == nil || !strings.Contains(err.Error(), `resources[2].providers[0]: secretbox: no cipher for it: pass one with encryption.WithCipher("secretbox", ...)`) {
		t.Errorf("New without a secretbox cipher: %v", err)
	}
	if _, err := encryption.New(m, c, encryption.WithCipher("secretbox", encryption.NewAESGCM)); err != nil {
		t.Errorf("New: %v", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, file, want string }{
		{"empty", "  \n", "the configuration is empty"},
		{"not yaml", "{", "did not find expected node content"},
		{"kind", "kind: Other\napiVersion: apiserver.config.k8s.io/v1\nresources: []", `kind "Other"`},
		{"apiVersion", "kind: EncryptionConfiguration\napiVersion: v1\nresources: []", `apiVersion "v1"`},
		{"unknown field", "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nresource: []", "field resource not found"},
		{"unknown provider", "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nresources: [{resources: [a], providers: [{aesgmc: {}}]}]", "field aesgmc not found"},
		{"repeated field", "kind: EncryptionConfiguration\nkind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1", `mapping key "kind" already defined`},
		{"two documents", "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n---\nkind: x", "more than one YAML document"},
		{"wrong type", "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\nresources: {}", "cannot unmarshal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := encryption.ParseConfig([]byte(tc.file))
			if !errors.Is(err, encryption.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("ParseConfig: %v, want ErrConfig with %q", err, tc.want)
			}
		})
	}
}

// TestConfigErrors: what kube-apiserver refuses, refused with its
// message and the place in the file.
func TestConfigErrors(t *testing.T) {
	const header = "kind: EncryptionConfiguration\napiVersion: apiserver.config.k8s.io/v1\n"
	const good = "{aesgcm: {keys: [{name: k, secret: c2VjcmV0IGlzIHNlY3VyZQ==}]}}"
	for _, tc := range []struct{ name, resources, want string }{
		{"no rules", "resources: []", "resources: at least one rule is required"},
		{"no resources", "resources: [{resources: [], providers: [" + good + "]}]", "resources[0].resources: at least one resource is required"},
		{"no providers", "resources: [{resources: [a], providers: []}]", "resources[0].providers: at least one provider is required"},
		{"empty provider", "resources: [{resources: [a], providers: [{}]}]", "resources[0].providers[0]: provider does not contain any of the expected providers"},
		{"two in one", "resources: [{resources: [a], providers: [{identity: {}, aesgcm: {keys: []}}]}]", "more than one provider (aesgcm, identity) specified in a single element"},
		{"no keys", "resources: [{resources: [a], providers: [{aesgcm: {keys: []}}]}]", "aesgcm.keys: at least one key is required"},
		{"no name", "resources: [{resources: [a], providers: [{aesgcm: {keys: [{secret: c2VjcmV0IGlzIHNlY3VyZQ==}]}}]}]", "aesgcm.keys[0].name: name is a mandatory field for a key"},
		{"no secret", "resources: [{resources: [a], providers: [{aesgcm: {keys: [{name: k}]}}]}]", "aesgcm.keys[0].secret: secret is a mandatory field for a key"},
		{"not base64", "resources: [{resources: [a], providers: [{aesgcm: {keys: [{name: k, secret: 'not base64!'}]}}]}]", "aesgcm.keys[0].secret: secrets must be base64 encoded"},
		{"key size", "resources: [{resources: [a], providers: [{aesgcm: {keys: [{name: k, secret: c2hvcnQ=}]}}]}]", "secret is not of the expected length, got 5, expected one of [16 24 32]"},
		{"same name", "resources: [{resources: [a], providers: [{aesgcm: {keys: [{name: k, secret: c2VjcmV0IGlzIHNlY3VyZQ==}, {name: k, secret: c2VjcmV0IGlzIHNlY3VyZQ==}]}}]}]", `aesgcm.keys[1].name: "k": a key name is used once per provider`},
		{"kms", "resources: [{resources: [a], providers: [{kms: {name: x, endpoint: 'unix:///kms.sock'}}]}]", "kms: kapi has no KMS plugin client"},
		{"aescbc", "resources: [{resources: [a], providers: [{aescbc: {keys: [{name: k, secret: c2VjcmV0IGlzIHNlY3VyZQ==}]}}]}]", `aescbc: no cipher for it`},
		{"capitals", "resources: [{resources: [Widgets.example.com], providers: [" + good + "]}]", "resource name should not contain capital letters"},
		{"star", "resources: [{resources: ['*'], providers: [" + good + "]}]", "use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources"},
		{"across groups", "resources: [{resources: ['widgets.*'], providers: [" + good + "]}]", "encrypting the same resource across groups is not supported"},
		{"duplicate", "resources: [{resources: [a, a], providers: [" + good + "]}]", "the same resource cannot be specified multiple times"},
		{"overlap", "resources: [{resources: [secrets, '*.'], providers: [" + good + "]}]", "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed"},
		{"overlap all", "resources: [{resources: ['*.*', widgets.example.com], providers: [" + good + "]}]", "using overlapping resources"},
		{"masked by group", "resources: [{resources: ['*.apps'], providers: [" + good + "]}, {resources: [deployments.apps], providers: [" + good + "]}]", `resources[1].resources: resource "deployments.apps" is masked by earlier rule "*.apps"`},
		{"masked by all", "resources: [{resources: ['*.*'], providers: [" + good + "]}, {resources: [secrets], providers: [" + good + "]}]", `resource "secrets" is masked by earlier rule "*.*"`},
		{"masked core", "resources: [{resources: ['*.'], providers: [" + good + "]}, {resources: [secrets], providers: [" + good + "]}]", `resource "secrets" is masked by earlier rule "*."`},
		{"slash", "resources: [{resources: [a/b], providers: [" + good + "]}]", "a resource name cannot contain '/'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := encryption.ParseConfig([]byte(header + tc.resources))
			if err != nil {
				t.Fatalf("ParseConfig: %v", err)
			}
			m := memory.New()
			defer m.Close()
			_, err = encryption.New(m, c)
			if !errors.Is(err, encryption.ErrConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("New: %v\nwant ErrConfig with %q", err, tc.want)
			}
			if err != nil && strings.Contains(err.Error(), "c2VjcmV0") {
				t.Errorf("the error shows a secret: %v", err)
			}
		})
	}
}

// TestConfigEveryError: every problem is reported at once, not the first.
func TestConfigEveryError(t *testing.T) {
	c, err := encryption.ParseConfig([]byte(`kind: EncryptionConfiguration
apiVersion: apiserver.config.k8s.io/v1
resources:
- resources: [A]
  providers: [{aesgcm: {keys: [{name: k}]}}]
- resources: []
  providers: [{identity: {}}]
`))
	if err != nil {
		t.Fatal(err)
	}
	m := memory.New()
	defer m.Close()
	_, err = encryption.New(m, c)
	for _, want := range []string{"resources[0].providers[0]: aesgcm.keys[0].secret", "resources[0].resources[0]", "resources[1].resources"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("New: %v\nwant a mention of %s", err, want)
		}
	}
}

// TestSameResourceInTwoRules: a resource named by two rules reads with the
// providers of both, the earlier's first, as in kube-apiserver.
func TestSameResourceInTwoRules(t *testing.T) {
	ctx := t.Context()
	m := memory.New()
	defer m.Close()
	first := mustNew(t, m, config([]string{"secrets"}, aesgcm(key("old", secret1))))
	if _, err := first.Create(ctx, "/secrets/ns/a", []byte("v")); err != nil {
		t.Fatal(err)
	}
	c := config([]string{"secrets"}, aesgcm(key("new", secret3)))
	c.Resources = append(c.Resources, encryption.ResourceConfig{Resources: []string{"secrets"}, Providers: []encryption.ProviderConfig{aesgcm(key("old", secret1))}})
	s := mustNew(t, m, c)
	if got := mustGet(t, s, "/secrets/ns/a"); string(got) != "v" {
		t.Errorf("read %q", got)
	}
	if _, err := s.Update(ctx, "/secrets/ns/a", []byte("w"), 0); err != nil {
		t.Fatal(err)
	}
	if raw := mustGet(t, m, "/secrets/ns/a"); !strings.HasPrefix(string(raw), "k8s:enc:aesgcm:v1:new:") {
		t.Errorf("written %.30q, want under the first rule's key", raw)
	}
}
