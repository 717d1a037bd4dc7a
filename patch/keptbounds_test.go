package patch

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

type boundedPort struct {
	Name string `json:"name"`
	Port int32  `json:"port,omitempty"`
}

type boundedObj struct {
	Labels map[string]string `json:"labels,omitempty"`
	Spec   struct {
		Ports []boundedPort `json:"ports,omitempty"`
	} `json:"spec"`
}

// TestDecodedCopiesBounded: configurations read and decoded once each,
// with large lists and label maps, leave nothing in decodedCopies, though
// decodedTwice, by address, says yes for a tree allocated where one
// decoded before was: only trees of the size configTrees keeps are kept,
// by their items (2,000 short ones) and by their bytes (100 long ones,
// ~9 KiB: under maxDecodedCopy items, over maxConfigTree bytes).
func TestDecodedCopiesBounded(t *testing.T) {
	for _, tc := range []struct {
		name  string
		items int
		pad   string
	}{
		{"items", 2000, ""},
		{"bytes", 100, strings.Repeat("x", 80)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for i := range decodedCopies {
				decodedCopies[i].Store(nil)
				decodedSeen[i].Store(0)
			}
			var names []string
			for i := range tc.items {
				names = append(names, fmt.Sprintf(`{"name":"port-%s%d","port":%d}`, tc.pad, i, i))
			}
			ports := strings.Join(names, ",")
			var labels []string
			for i := range tc.items {
				labels = append(labels, fmt.Sprintf(`"label-%d":"value-%s%d"`, i, tc.pad, i))
			}
			for i := range 200 {
				doc := fmt.Sprintf(`{"labels":{%s,"i":"%d"},"spec":{"ports":[%s,{"name":"last","port":%d}]}}`, strings.Join(labels, ","), i, ports, i)
				c, err := ParseConfiguration([]byte(doc))
				if err != nil {
					t.Fatal(err)
				}
				if !c.Decode(new(boundedObj)) {
					t.Fatal("not decoded")
				}
				if i%10 == 0 {
					runtime.GC()
				}
			}
			kept, items := 0, 0
			for i := range decodedCopies {
				if c := decodedCopies[i].Load(); c != nil {
					kept++
					switch tr := c.tree.(type) {
					case []any:
						items += len(tr)
					case map[string]any:
						items += len(tr)
					}
				}
			}
			if kept > 0 {
				t.Errorf("decodedCopies keeps %d trees (%d items/members) no configuration decoded twice", kept, items)
			}
		})
	}
}

// TestConfigTreesShortValue: a kept value shorter than configTreeKey is
// found again though a value that changes at every apply follows it within
// configTreeKey bytes (a pod template's labels before its image tag): its
// set is chosen by its own bytes only, not by what follows it.
func TestConfigTreesShortValue(t *testing.T) {
	doc := func(i int) []byte {
		return fmt.Appendf(nil, `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"template":{"metadata":{"labels":{"app":"web"}},"spec":{"image":"web:%d","name":"web"}}}}`, i)
	}
	var prev map[string]any
	found := 0
	for i := range 50 {
		c, err := ParseConfiguration(doc(100000 + i*7))
		if err != nil {
			t.Fatal(err)
		}
		meta := c.tree["spec"].(map[string]any)["template"].(map[string]any)["metadata"].(map[string]any)
		if prev != nil && sameMap(meta, prev) {
			found++
		}
		prev = meta
	}
	if found < 45 {
		t.Errorf("the template's metadata, the same bytes in 50 configurations, was the tree kept in %d of the last 49", found)
	}
}
