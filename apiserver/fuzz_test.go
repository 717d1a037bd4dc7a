package apiserver

import (
	"strings"
	"testing"
)

func FuzzContinueToken(f *testing.F) {
	f.Add(encodeContinue(5, "default/a\x00"))
	f.Add("")
	f.Add("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoiYSJ9")
	f.Fuzz(func(t *testing.T, token string) {
		tok, err := decodeContinue(token)
		if err != nil {
			return
		}
		if tok.Revision <= 0 || tok.Start == "" {
			t.Fatalf("decodeContinue(%q) accepted %+v", token, tok)
		}
		again, err := decodeContinue(encodeContinue(tok.Revision, tok.Start))
		if err != nil || again != tok {
			t.Fatalf("round trip of %+v = %+v, %v", tok, again, err)
		}
	})
}

func FuzzSelectors(f *testing.F) {
	for _, s := range []string{"a=b", "a==b,c!=d", "env in (prod, dev),!x", "tier notin (a)", "k", "n>3", "a.b/c=d", "a=(", ",", "in in (in)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		reqs, err := parseLabelSelector(s)
		if err == nil {
			for _, r := range reqs {
				if r.key == "" {
					t.Fatalf("parseLabelSelector(%q) accepted an empty key", s)
				}
			}
		}
		_, _ = parseFieldSelector(s)
	})
}

func TestParseLabelSelector(t *testing.T) {
	labels := map[string]string{"env": "prod", "tier": "web", "n": "5"}
	for _, tc := range []struct {
		sel   string
		match bool
	}{
		{"env=prod", true}, {"env==prod", true}, {"env!=prod", false}, {"env=dev", false},
		{"env in (prod,dev)", true}, {"env notin (prod)", false}, {"missing notin (x)", true},
		{"env", true}, {"!env", false}, {"!missing", true}, {"env=prod,tier=web", true},
		{"env=prod,tier=db", false}, {"n>3", true}, {"n<3", false}, {"missing!=x", true},
	} {
		reqs, err := parseLabelSelector(tc.sel)
		if err != nil {
			t.Fatalf("parseLabelSelector(%q): %v", tc.sel, err)
		}
		got := true
		for _, r := range reqs {
			v, ok := labels[r.key]
			got = got && r.matches(v, ok)
		}
		if got != tc.match {
			t.Errorf("%q matches %v = %v, want %v", tc.sel, labels, got, tc.match)
		}
	}
	for _, bad := range []string{"=x", "a=b=c d", "env in prod", "a,,b", "Bad Key=x", "n>x", "a=" + string(make([]byte, 70)),
		strings.Repeat("k", 64) + "=v", strings.Repeat("p", 254) + "/k=v"} {
		if _, err := parseLabelSelector(bad); err == nil {
			t.Errorf("parseLabelSelector(%q) accepted it", bad)
		}
	}
}
