package schemadiff_test

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// crdModules are Go modules that ship CustomResourceDefinitions, at
// versions the module proxy serves, and where in them the CRDs are.
var crdModules = []struct{ module, dir string }{
	{"github.com/cert-manager/cert-manager@v1.21.2", "deploy/crds"},
	{"sigs.k8s.io/gateway-api@v1.6.3", "config/crd/experimental"},
}

// moduleDir downloads a module (or finds it in the module cache) and
// returns its directory.
func moduleDir(t testing.TB, module string) string {
	t.Helper()
	cmd := exec.Command("go", "mod", "download", "-json", module)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go mod download %s: %v\n%s", module, err, out)
	}
	var info struct{ Dir, Error string }
	if err := json.Unmarshal(out, &info); err != nil || info.Dir == "" {
		t.Fatalf("go mod download %s: %s %v", module, info.Error, err)
	}
	return info.Dir
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
	if testing.Short() || raceEnabled {
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
