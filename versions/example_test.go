package versions_test

import (
	"context"
	"fmt"
	"reflect"

	"github.com/kapi-dev/kapi"
	"github.com/kapi-dev/kapi/storage/memory"
	"github.com/kapi-dev/kapi/versions"
)

func ExampleSort() {
	names := []string{"v1alpha1", "v1beta1", "v2", "v1"}
	versions.Sort(names)
	fmt.Println(names)
	// Output: [v2 v1 v1beta1 v1alpha1]
}

// A kind in two versions: v1 is the hub and the storage version; v1beta1
// converts through it.
func ExampleNewSet() {
	type (
		ThingV1 struct {
			kapi.TypeMeta   `json:",inline"`
			kapi.ObjectMeta `json:"metadata,omitempty"`
			Size            int `json:"size"`
		}
		ThingV1beta1 struct {
			kapi.TypeMeta   `json:",inline"`
			kapi.ObjectMeta `json:"metadata,omitempty"`
			Length          int `json:"length"`
		}
	)
	set, err := versions.NewSet("example.com", "Thing", []versions.Version{
		{Name: "v1", Type: reflect.TypeFor[ThingV1](), Served: true, Storage: true},
		{Name: "v1beta1", Type: reflect.TypeFor[ThingV1beta1](), Served: true, Deprecated: true, Conversion: versions.Via(
			func(from *ThingV1beta1, to *ThingV1) error { to.Size = from.Length; return nil },
			func(from *ThingV1, to *ThingV1beta1) error { to.Length = from.Size; return nil },
		)},
	})
	if err != nil {
		panic(err)
	}
	old, _ := set.Convert(&ThingV1{ObjectMeta: kapi.ObjectMeta{Name: "a"}, Size: 3}, "v1", "v1beta1")
	fmt.Printf("%s %s length=%d\n", old.GetTypeMeta().APIVersion, old.GetObjectMeta().Name, old.(*ThingV1beta1).Length)
	fmt.Println(set.Warning("v1beta1"))
	// Output:
	// example.com/v1beta1 a length=3
	// example.com/v1beta1 Thing is deprecated; use example.com/v1 Thing
}

func ExampleMigrate() {
	ctx := context.Background()
	store := memory.New()
	store.Create(ctx, "/things/a", []byte(`old`))
	store.Create(ctx, "/things/b", []byte(`new`))
	p, err := versions.Migrate(ctx, store, "/things/", func(key string, value []byte) ([]byte, bool, error) {
		return []byte("new"), string(value) != "new", nil
	}, versions.MigrateOptions{})
	fmt.Println(p.Seen, p.Rewritten, p.Key, err)
	// Output: 2 1 /things/b <nil>
}
