package encryption

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// The kind and version a configuration file declares, as kube-apiserver's
// --encryption-provider-config file does.
const (
	ConfigKind       = "EncryptionConfiguration"
	ConfigAPIVersion = "apiserver.config.k8s.io/v1"
)

// Config says which resources are encrypted and how: kube-apiserver's
// EncryptionConfiguration (apiserver.config.k8s.io/v1), field for field, so
// that its files can be reused. Build one in Go or read one with
// [ParseConfig]; [New] checks it.
type Config struct {
	Kind       string `yaml:"kind" json:"kind"`
	APIVersion string `yaml:"apiVersion" json:"apiVersion"`
	// Resources are the rules, the first matching a resource winning.
	Resources []ResourceConfig `yaml:"resources" json:"resources"`
}

// ResourceConfig is one rule: which resources, and their providers.
type ResourceConfig struct {
	// Resources are qualified resource names ("widgets.example.com"; a name
	// without a dot is in the core group, "secrets") or wildcards: "*.group"
	// is every resource of a group, "*." every resource of the core group,
	// "*.*" every resource.
	Resources []string `yaml:"resources" json:"resources"`
	// Providers in order: the first writes; every one reads what it wrote.
	Providers []ProviderConfig `yaml:"providers" json:"providers"`
}

// ProviderConfig is one provider: exactly one field is set.
type ProviderConfig struct {
	// AESGCM encrypts with AES-GCM (16, 24 or 32-byte keys), built in.
	AESGCM *KeysConfig `yaml:"aesgcm,omitempty" json:"aesgcm,omitempty"`
	// Secretbox encrypts with XSalsa20-Poly1305 (32-byte keys): the
	// cipher comes from the module github.com/kapi-dev/kapi/storage/encryption/secretbox,
	// passed to [New] with [WithCipher].
	Secretbox *KeysConfig `yaml:"secretbox,omitempty" json:"secretbox,omitempty"`
	// AESCBC is accepted only with a cipher passed with [WithCipher]:
	// Kubernetes deprecates it (it does not authenticate what it decrypts).
	AESCBC *KeysConfig `yaml:"aescbc,omitempty" json:"aescbc,omitempty"`
	// Identity stores values as they are, and reads values not encrypted.
	Identity *IdentityConfig `yaml:"identity,omitempty" json:"identity,omitempty"`
	// KMS is parsed so that a kube file reads, but refused: kapi has no
	// KMS plugin client.
	KMS *KMSConfig `yaml:"kms,omitempty" json:"kms,omitempty"`
}

// KeysConfig lists a provider's keys: the first encrypts, all decrypt.
type KeysConfig struct {
	Keys []Key `yaml:"keys" json:"keys"`
}

// Key is a named secret. The name is written in clear before each value
// it encrypts, so that the value finds its key again after a rotation.
type Key struct {
	Name string `yaml:"name" json:"name"`
	// Secret is the key, base64-encoded (standard encoding, padded).
	Secret string `yaml:"secret" json:"secret"`
}

// IdentityConfig has no settings.
type IdentityConfig struct{}

// KMSConfig holds the fields of a kube KMS provider; see ProviderConfig.KMS.
type KMSConfig struct {
	APIVersion string `yaml:"apiVersion,omitempty" json:"apiVersion,omitempty"`
	Name       string `yaml:"name" json:"name"`
	CacheSize  *int32 `yaml:"cachesize,omitempty" json:"cachesize,omitempty"`
	Endpoint   string `yaml:"endpoint" json:"endpoint"`
	Timeout    string `yaml:"timeout,omitempty" json:"timeout,omitempty"`
}

// ParseConfig reads an EncryptionConfiguration in YAML or JSON (a JSON
// document is YAML), strictly as kube-apiserver does: an unknown or
// repeated field, or another kind or apiVersion, is an error. The result
// is checked by [New], not here.
func ParseConfig(data []byte) (Config, error) {
	var c Config
	if len(bytes.TrimSpace(data)) == 0 {
		return c, fmt.Errorf("%w: the configuration is empty", ErrConfig)
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("%w: %v", ErrConfig, err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); err == nil {
		return Config{}, fmt.Errorf("%w: more than one YAML document", ErrConfig)
	}
	if c.Kind != ConfigKind || c.APIVersion != ConfigAPIVersion {
		return Config{}, fmt.Errorf("%w: kind %q, apiVersion %q: want kind %s, apiVersion %s",
			ErrConfig, c.Kind, c.APIVersion, ConfigKind, ConfigAPIVersion)
	}
	return c, nil
}

// groupResource is a parsed entry of ResourceConfig.Resources.
type groupResource struct{ group, resource string }

// parseGroupResource splits at the first dot, as Kubernetes'
// schema.ParseGroupResource: "widgets.example.com" is resource "widgets"
// of group "example.com", "secrets" is in the core group "".
func parseGroupResource(s string) groupResource {
	resource, group, _ := strings.Cut(s, ".")
	return groupResource{group: group, resource: resource}
}

func (gr groupResource) String() string {
	if gr.group == "" && gr.resource == "*" {
		return "*."
	}
	if gr.group == "" {
		return gr.resource
	}
	return gr.resource + "." + gr.group
}

// compile checks c as kube-apiserver's validation does and turns it into
// the rules the store applies. Every problem found is reported, each with
// its place in the file.
func (c *Config) compile(ciphers map[string]NewCipherFunc) (*rules, error) {
	var errs []error
	fail := func(path, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: "+format, append([]any{path}, args...)...))
	}
	if len(c.Resources) == 0 {
		fail("resources", "at least one rule is required")
	}
	r := &rules{exact: map[groupResource]*chain{}, group: map[string]*chain{}}
	for i, rc := range c.Resources {
		path := fmt.Sprintf("resources[%d]", i)
		if len(rc.Resources) == 0 {
			fail(path+".resources", "at least one resource is required")
		}
		if len(rc.Providers) == 0 {
			fail(path+".providers", "at least one provider is required")
		}
		ch := &chain{}
		for j, pc := range rc.Providers {
			p, err := compileProvider(pc, ciphers)
			if err != nil {
				fail(fmt.Sprintf("%s.providers[%d]", path, j), "%v", err)
				continue
			}
			ch.providers = append(ch.providers, p)
		}
		seen := map[groupResource]bool{}
		var parsed []groupResource
		for j, name := range rc.Resources {
			rpath := fmt.Sprintf("%s.resources[%d]", path, j)
			gr, err := checkResourceName(name)
			if err != nil {
				fail(rpath, "%q: %v", name, err)
				continue
			}
			if seen[gr] {
				fail(rpath, "%q: the same resource cannot be specified multiple times", name)
				continue
			}
			seen[gr] = true
			parsed = append(parsed, gr)
		}
		if overlap(parsed) {
			fail(path+".resources", "using overlapping resources such as 'secrets' and '*.' in the same resource list is not allowed as they will be masked")
			continue
		}
		for _, gr := range parsed {
			if err := r.add(gr, ch); err != nil {
				fail(path+".resources", "%v", err)
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	return r, nil
}

// checkResourceName refuses what kube-apiserver refuses of a resource
// entry, where it applies to kapi.
func checkResourceName(name string) (groupResource, error) {
	gr := parseGroupResource(name)
	switch {
	case name == "":
		return gr, errors.New("a resource name is required")
	case strings.ToLower(name) != name:
		return gr, errors.New("resource name should not contain capital letters")
	case name == "*":
		return gr, errors.New("use '*.' to encrypt all the resources from core API group or *.* to encrypt all resources")
	case gr.group == "*" && gr.resource != "*":
		return gr, errors.New("encrypting the same resource across groups is not supported")
	case strings.Contains(name, "/"):
		return gr, errors.New("a resource name cannot contain '/'")
	}
	return gr, nil
}

// rules map a resource to its chain of providers.
type rules struct {
	exact map[groupResource]*chain
	group map[string]*chain // "*.group"; "" is "*."
	all   *chain            // "*.*"
}

// add records gr, refusing a rule an earlier wildcard masks, as
// kube-apiserver does (it would never apply).
func (r *rules) add(gr groupResource, ch *chain) error {
	if r.all != nil {
		return fmt.Errorf("resource %q is masked by earlier rule %q", gr, "*.*")
	}
	if _, ok := r.group[gr.group]; ok {
		return fmt.Errorf("resource %q is masked by earlier rule %q", gr, groupResource{gr.group, "*"})
	}
	switch {
	case gr.group == "*":
		r.all = ch
	case gr.resource == "*":
		r.group[gr.group] = ch
	case r.exact[gr] != nil:
		// Named again by a later rule: that rule's providers follow the
		// earlier's, as in kube-apiserver.
		r.exact[gr] = &chain{providers: slices.Concat(r.exact[gr].providers, ch.providers)}
	default:
		r.exact[gr] = ch
	}
	return nil
}

// overlap is kube-apiserver's check within one rule: a wildcard beside a
// resource it covers would mask it.
func overlap(rule []groupResource) bool {
	for i, a := range rule {
		for j, b := range rule {
			if i != j && (a.group == "*" || a.group == b.group && a.resource == "*") {
				return true
			}
		}
	}
	return false
}

// identityChain is what a resource no rule names gets, as in kube-apiserver:
// values are written as they are, and an encrypted one is unreadable.
var identityChain = &chain{providers: []provider{identityProvider{}}}

// lookup finds the chain of a qualified resource ("widgets.example.com"):
// its own rule, else its group's, else "*.*", else identity.
func (r *rules) lookup(qualified string) *chain {
	resource, group, _ := strings.Cut(qualified, ".")
	if ch, ok := r.exact[groupResource{group: group, resource: resource}]; ok {
		return ch
	}
	if ch, ok := r.group[group]; ok {
		return ch
	}
	if r.all != nil {
		return r.all
	}
	return identityChain
}

func compileProvider(pc ProviderConfig, ciphers map[string]NewCipherFunc) (provider, error) {
	type candidate struct {
		name string
		keys *KeysConfig
	}
	var set []string
	var keyed *candidate
	for _, c := range []candidate{{"aesgcm", pc.AESGCM}, {"secretbox", pc.Secretbox}, {"aescbc", pc.AESCBC}} {
		if c.keys != nil {
			set = append(set, c.name)
			keyed = &c
		}
	}
	if pc.Identity != nil {
		set = append(set, "identity")
	}
	if pc.KMS != nil {
		set = append(set, "kms")
	}
	switch {
	case len(set) == 0:
		return nil, errors.New("provider does not contain any of the expected providers: aesgcm, secretbox, identity")
	case len(set) > 1:
		return nil, fmt.Errorf("more than one provider (%s) specified in a single element, should split into different list elements", strings.Join(set, ", "))
	case pc.Identity != nil:
		return identityProvider{}, nil
	case pc.KMS != nil:
		return nil, errors.New("kms: kapi has no KMS plugin client; use aesgcm or secretbox")
	}
	newCipher, ok := ciphers[keyed.name]
	if !ok {
		return nil, fmt.Errorf("%s: no cipher for it: pass one with encryption.WithCipher(%q, ...)", keyed.name, keyed.name)
	}
	return compileKeys(keyed.name, keyed.keys.Keys, newCipher)
}

func compileKeys(name string, keys []Key, newCipher NewCipherFunc) (provider, error) {
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s.keys: at least one key is required", name)
	}
	p := &keyedProvider{prefix: "k8s:enc:" + name + ":v1:"}
	var errs []error
	for i, k := range keys {
		path := fmt.Sprintf("%s.keys[%d]", name, i)
		if k.Name == "" {
			errs = append(errs, fmt.Errorf("%s.name: name is a mandatory field for a key", path))
		}
		if slices.ContainsFunc(p.keys, func(other namedCipher) bool { return other.prefix == k.Name+":" }) {
			errs = append(errs, fmt.Errorf("%s.name: %q: a key name is used once per provider", path, k.Name))
		}
		if k.Secret == "" {
			errs = append(errs, fmt.Errorf("%s.secret: secret is a mandatory field for a key", path))
			continue
		}
		secret, err := base64.StdEncoding.DecodeString(k.Secret)
		if err != nil {
			// The secret itself stays out of error messages.
			errs = append(errs, fmt.Errorf("%s.secret: secrets must be base64 encoded", path))
			continue
		}
		c, err := newCipher(secret)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s.secret: %v", path, err))
			continue
		}
		p.keys = append(p.keys, namedCipher{prefix: k.Name + ":", cipher: c})
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}
