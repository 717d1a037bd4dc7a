package robustness

import (
	"fmt"

	"github.com/anishathalye/porcupine"
)

// The model: each key (a widget's name) is a register holding whether the
// widget exists, its value (an annotation every write sets to a value of
// its own) and its resourceVersion. A write whose outcome the client could
// not learn may or may not have happened, at any time after it was sent:
// the model branches, and a later read settles it.

type opKind int

const (
	opCreate opKind = iota
	opGet
	opUpdate // conditional on precondition
	opDelete // conditional on precondition
)

func (k opKind) String() string { return [...]string{"create", "get", "update", "delete"}[k] }

type input struct {
	kind         opKind
	key          string
	value        string // create, update
	precondition string // update, delete: the resourceVersion expected
}

type outcome int

const (
	ok outcome = iota
	exists
	notFound
	conflict
	unknown // the write may or may not have happened
)

func (o outcome) String() string {
	return [...]string{"ok", "AlreadyExists", "NotFound", "Conflict", "unknown"}[o]
}

type output struct {
	outcome outcome
	value   string // get
	rv      string // get, and every write that succeeded
}

// keyState is a key's state; rv "?" is one not known yet (the write that
// set it has an unknown outcome) and matches what a read then returns.
type keyState struct {
	exists bool
	value  string
	rv     string
}

const rvUnknown = "?"

func rvMatches(state, rv string) bool { return state == rvUnknown || state == rv }

func step(s keyState, in input, out output) []keyState {
	switch in.kind {
	case opGet:
		switch {
		case out.outcome == ok && s.exists && s.value == out.value && rvMatches(s.rv, out.rv):
			return []keyState{{true, out.value, out.rv}}
		case out.outcome == notFound && !s.exists:
			return []keyState{s}
		}
		return nil
	case opCreate:
		switch out.outcome {
		case ok:
			if !s.exists {
				return []keyState{{true, in.value, out.rv}}
			}
		case exists:
			if s.exists {
				return []keyState{s}
			}
		case unknown:
			if !s.exists {
				return []keyState{s, {true, in.value, rvUnknown}}
			}
			return []keyState{s}
		}
		return nil
	}
	// Update and delete, with their precondition.
	applies := s.exists && rvMatches(s.rv, in.precondition)
	after := keyState{true, in.value, out.rv}
	if in.kind == opDelete {
		after = keyState{}
	}
	switch out.outcome {
	case ok:
		if applies {
			return []keyState{after}
		}
	case conflict:
		if s.exists && (s.rv == rvUnknown || s.rv != in.precondition) {
			return []keyState{s}
		}
	case notFound:
		if !s.exists {
			return []keyState{s}
		}
	case unknown:
		if applies {
			after.rv = rvUnknown
			if in.kind == opDelete {
				after.rv = ""
			}
			return []keyState{s, after}
		}
		return []keyState{s}
	}
	return nil
}

var model = porcupine.NondeterministicModel{
	Partition: func(history []porcupine.Operation) [][]porcupine.Operation {
		byKey := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range history {
			k := op.Input.(input).key
			if _, ok := byKey[k]; !ok {
				keys = append(keys, k)
			}
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() []any { return []any{keyState{}} },
	Step: func(state, in, out any) []any {
		var next []any
		for _, s := range step(state.(keyState), in.(input), out.(output)) {
			next = append(next, s)
		}
		return next
	},
	DescribeOperation: func(in, out any) string {
		i, o := in.(input), out.(output)
		s := fmt.Sprintf("%s(%s", i.kind, i.key)
		if i.value != "" {
			s += "=" + i.value
		}
		if i.precondition != "" {
			s += " if rv " + i.precondition
		}
		s += ") → " + o.outcome.String()
		if o.value != "" {
			s += " " + o.value
		}
		if o.rv != "" {
			s += " rv " + o.rv
		}
		return s
	},
	DescribeState: func(state any) string {
		s := state.(keyState)
		if !s.exists {
			return "absent"
		}
		return s.value + " rv " + s.rv
	},
}
