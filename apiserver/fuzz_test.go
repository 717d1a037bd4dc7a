package apiserver

import (
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
