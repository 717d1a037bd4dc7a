package patch

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/kapi-dev/kapi"
)

type rvTag string

type rvZeroPtr struct{ N int }

func (z *rvZeroPtr) IsZero() bool { return z.N == 7 }

type rvZeroVal struct{ N int }

func (z rvZeroVal) IsZero() bool { return z.N == 7 }

type rvInner struct {
	A string `json:"a,omitempty"`
}

type rvPtrMarshal struct{ X int }

func (p *rvPtrMarshal) MarshalJSON() ([]byte, error) { return []byte(`"custom"`), nil }

type rvEmbedA struct {
	Dup  string `json:"dup"`
	Only string `json:"onlyA"`
}
type rvEmbedB struct {
	Dup string `json:"dup"`
}

type rvLabels map[string]string

type rvSample struct {
	kapi.TypeMeta   `json:",inline"`
	kapi.ObjectMeta `json:"metadata,omitempty"`
	rvTag
	rvEmbedA
	*rvEmbedB
	Inline rvInner `json:",inline"`
	BadTag string  `json:"a b!"`
	//lint:ignore SA5008 a field named "-" is the case tested
	Dash       string               `json:"-,"`
	Skip       string               `json:"-"`
	EmptyPtr   *struct{}            `json:"emptyPtr,omitempty"`
	EmptyStr   struct{}             `json:"emptyStr,omitempty"`
	ZeroPtrRcv rvZeroPtr            `json:"zeroPtrRcv,omitzero"`
	ZeroVal    *rvZeroVal           `json:"zeroVal,omitzero"`
	TimeOE     kapi.Time            `json:"timeOE,omitempty"`
	TimePtr    *kapi.Time           `json:"timePtr,omitzero"`
	Micro      kapi.MicroTime       `json:"micro"`
	Big        int64                `json:"big"`
	Max        int64                `json:"max"`
	Min        int64                `json:"min"`
	UMax       uint64               `json:"umax"`
	Nil        []string             `json:"nil"`
	Empty      []string             `json:"empty"`
	NilOE      map[string]int       `json:"nilOE,omitempty"`
	EmptyOE    map[string]int       `json:"emptyOE,omitempty"`
	Labels     rvLabels             `json:"labels"`
	ByTag      map[rvTag]string     `json:"byTag"`
	PtrMarsh   []rvPtrMarshal       `json:"ptrMarsh,omitempty"`
	MapInner   map[string]rvInner   `json:"mapInner"`
	Iface      any                  `json:"iface"`
	Nested     *[]*map[string]*bool `json:"nested"`
	unexported string
}

// TestTypedTreeReview holds typedTree to the reader of json.Marshal on
// shapes TestTypedTreeRandom does not fill.
func TestTypedTreeReview(t *testing.T) {
	tr := true
	m := map[string]*bool{"x": &tr, "y": nil}
	nested := []*map[string]*bool{&m, nil}
	loc := time.FixedZone("X", -5*3600)
	for name, v := range map[string]*rvSample{
		"zero": {},
		"full": {
			TypeMeta: kapi.TypeMeta{Kind: "K", APIVersion: "g/v1"}, ObjectMeta: kapi.ObjectMeta{Name: "<&>\u2028", Labels: map[string]string{"a": "b"}},
			rvTag: "t", rvEmbedA: rvEmbedA{Dup: "a", Only: "o"}, rvEmbedB: &rvEmbedB{Dup: "b"},
			Inline: rvInner{A: "in"}, BadTag: "bt", Dash: "d", Skip: "s", EmptyPtr: &struct{}{},
			ZeroPtrRcv: rvZeroPtr{N: 7}, ZeroVal: &rvZeroVal{N: 7},
			TimeOE: kapi.Time{Time: time.Date(2026, 1, 2, 3, 4, 5, 999, loc)}, TimePtr: &kapi.Time{},
			Micro: kapi.MicroTime{Time: time.Date(12000, 1, 2, 3, 4, 5, 123456789, loc)},
			Big:   1<<53 + 1, Max: math.MaxInt64, Min: math.MinInt64, UMax: math.MaxUint64,
			Empty: []string{}, EmptyOE: map[string]int{}, Labels: rvLabels{"k": "v\x00"}, ByTag: map[rvTag]string{"t": "v"},
			MapInner: map[string]rvInner{"m": {A: "x"}, "n": {}}, Nested: &nested, unexported: "u",
		},
		"zero ptr rcv not zero": {ZeroPtrRcv: rvZeroPtr{N: 1}, ZeroVal: &rvZeroVal{N: 1}},
		"ptr marshal":           {PtrMarsh: []rvPtrMarshal{{X: 1}}},
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want, err := decodeUnmanaged(b)
		if err != nil {
			t.Fatalf("%s: %s: %v", name, b, err)
		}
		got, _, ok := typedTree(v, nil)
		if !ok {
			t.Logf("%s: gave up", name)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: JSON %s\nread  %#v\nbuilt %#v", name, b, want, got)
		}
	}
}
