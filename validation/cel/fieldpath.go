package cel

import "github.com/kapi-dev/kapi/schema"

// ratchet follows kube-apiserver's CEL ratcheting: an error of a rule that
// reads no oldSelf is dropped when the value it is about is unchanged by
// the update, judged by the nearest value that has an old counterpart.
type ratchet struct {
	current, parent *schema.Correlation
}

func (r ratchet) unchanged() bool {
	if r.current != nil {
		return r.current.Unchanged()
	}
	return r.parent.Unchanged()
}

func (r ratchet) key(name string) ratchet {
	if r.current == nil {
		return r
	}
	if r.parent == nil && (name == "apiVersion" || name == "kind") {
		return ratchet{}
	}
	return ratchet{current: r.current.Key(name), parent: r.current}
}

func (r ratchet) index(i int) ratchet {
	if r.current == nil {
		return r
	}
	return ratchet{current: r.current.Index(i), parent: r.current}
}
