package schemadiff_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/kapi-dev/kapi/internal/test/race"
	"github.com/kapi-dev/kapi/schema"
)

// crdModules are Go modules that ship CustomResourceDefinitions, at
// versions the module proxy serves (the newest this toolchain can
// download: Argo CD 3.6 and provider-kubernetes 1.4 require a newer Go),
// and where in them the CRDs are. refused names the files whose
// definition kube-apiserver refuses as shipped.
var crdModules = []struct {
	module, dir string
	refused     []string
}{
	{module: "github.com/cert-manager/cert-manager@v1.21.2", dir: "deploy/crds"},
	{module: "sigs.k8s.io/gateway-api@v1.6.3", dir: "config/crd/experimental"},
	// Its schemas are among the largest there are (alertmanagerconfigs'
	// is 700 KB).
	{module: "github.com/prometheus-operator/prometheus-operator@v0.85.0", dir: "example/prometheus-operator-crd"},
	{module: "github.com/argoproj/argo-cd/v3@v3.5.7", dir: "manifests/crds"},
	// Its cluster-scoped Object asks for webhook conversion through a
	// service without a name or namespace, which Crossplane's package
	// manager fills in when it installs the provider.
	{module: "github.com/crossplane-contrib/provider-kubernetes@v1.3.1", dir: "package/crds",
		refused: []string{"kubernetes.crossplane.io_objects.yaml"}},
}

// moduleDir downloads a module (or finds it in the module cache) and
// returns its directory.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	dir, err := downloadModule(module)
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

func downloadModule(module string) (string, error) {
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %v\n%s", module, err, out)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s %v", module, info.Error, err)
	}
	return info.Dir, nil
}

// crdSchema is one version's schema of a CRD file.
type crdSchema struct {
	name   string // file:version
	schema []byte
}

func crdSchemas(t testing.TB, dir string) []crdSchema {
	t.Helper()
	var out []crdSchema
	for _, d := range crdDocs(t, dir) {
		var crd struct {
			Spec struct {
				Versions []struct {
					Name   string
					Schema struct {
						OpenAPIV3Schema json.RawMessage
					}
				}
			}
		}
		if err := json.Unmarshal(d.json, &crd); err != nil {
			t.Fatalf("%s: %v", d.file, err)
		}
		for _, v := range crd.Spec.Versions {
			out = append(out, crdSchema{name: d.file + ":" + v.Name, schema: v.Schema.OpenAPIV3Schema})
		}
	}
	return out
}

// crdDoc is one CustomResourceDefinition of a file, as JSON.
type crdDoc struct {
	file string
	json []byte
}

// crdDocs reads the CustomResourceDefinitions of a directory's YAML files.
func crdDocs(t testing.TB, dir string) []crdDoc {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no CRDs in %s: %v", dir, err)
	}
	var out []crdDoc
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, doc := range bytes.Split(data, []byte("\n---")) {
			j, err := yaml.YAMLToJSON(doc)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			var head struct{ Kind string }
			if json.Unmarshal(j, &head) == nil && head.Kind == "CustomResourceDefinition" {
				out = append(out, crdDoc{file: filepath.Base(file), json: j})
			}
		}
	}
	return out
}

func TestRealCRDs(t *testing.T) {
	objects := 40
	if testing.Short() || race.Enabled {
		objects = 5
	}
	for _, m := range crdModules {
		dir := filepath.Join(moduleDir(t, m.module), m.dir)
		for i, c := range crdSchemas(t, dir) {
			t.Run(strings.Split(m.module, "@")[0]+"/"+c.name, func(t *testing.T) {
				var root map[string]any
				if err := json.Unmarshal(c.schema, &root); err != nil {
					t.Fatal(err)
				}
				src := randSource{rand.New(rand.NewPCG(uint64(i), 7))}
				var list [][]byte
				for j := range objects {
					if j%2 == 0 {
						list = append(list, genObject(conforming{src}, root))
					} else {
						list = append(list, genObject(src, root))
					}
				}
				if !compareSchema(t, c.schema, list) {
					t.Errorf("%s is refused", c.name)
				}
			})
		}
	}
}

// realSchema is one version's schema of a real CRD, with both engines
// made once, for FuzzEngines.
type realSchema struct {
	name   string
	schema []byte
	root   map[string]any
	once   sync.Once
	kube   *kubeEngine
	ours   *ourEngine
}

func (r *realSchema) engines(t testing.TB) (*kubeEngine, *ourEngine) {
	r.once.Do(func() { r.kube, r.ours = newKubeEngine(t, r.schema), newOurEngine(t, r.schema) })
	return r.kube, r.ours
}

// realSchemas are the schemas of crdModules' CRDs that pass Check
// (TestRealCRDs holds it to kube-apiserver's on each), or none when the
// modules cannot be had.
var realSchemas = sync.OnceValue(func() []*realSchema {
	var out []*realSchema
	for _, m := range crdModules {
		dir, err := downloadModule(m.module)
		if err != nil {
			return nil
		}
		var tb noFatal
		for _, c := range crdSchemas(&tb, filepath.Join(dir, m.dir)) {
			var root map[string]any
			ours, err := schema.Parse(c.schema)
			if err != nil || json.Unmarshal(c.schema, &root) != nil || len(ours.Check(schemaPath)) > 0 {
				continue
			}
			out = append(out, &realSchema{name: c.name, schema: c.schema, root: root})
		}
	}
	// Made before the inputs too: kube's engine for Argo CD's
	// ApplicationSet takes a second.
	var tb noFatal
	for _, r := range out {
		r.engines(&tb)
	}
	return out
})

// noFatal is a testing.TB for the loading of realSchemas outside a test.
type noFatal struct{ testing.TB }

func (n *noFatal) Helper()                      {}
func (n *noFatal) Fatal(args ...any)            { panic(fmt.Sprint(args...)) }
func (n *noFatal) Fatalf(f string, args ...any) { panic(fmt.Sprintf(f, args...)) }

// thinning is a fuzz source for a large real schema: once its bytes are
// spent it declines every chance, so an object of a 700 KB schema stays
// small.
type thinning struct{ bytesSource }

func (s *thinning) intn(n int) int {
	if len(s.b) == 0 && n > 1 {
		return n - 1
	}
	return s.bytesSource.intn(n)
}

// compareReal compares the engines on objects made from src for one of
// the real CRDs' schemas, and on updates between them.
func compareReal(t *testing.T, src source, objects int) {
	rs := realSchemas()
	if len(rs) == 0 {
		t.Skip("the modules of the real CRDs cannot be had")
	}
	r := rs[(src.intn(256)*256+src.intn(256))%len(rs)]
	k, o := r.engines(t)
	var stored []any
	for i := range objects {
		s := src
		if i%2 == 0 {
			s = conforming{src}
		}
		stored = append(stored, compareObject(t, k, o, []byte(r.name), decode(t, genObject(s, r.root))))
	}
	for i, old := range stored {
		compareUpdate(t, k, o, []byte(r.name), old, stored[(i+1)%len(stored)])
		compareUpdate(t, k, o, []byte(r.name), old, mix(old, stored[(i+1)%len(stored)]))
	}
}
