package crd

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kapi-dev/kapi"
)

// acceptNames sets a definition's accepted names and its NamesAccepted
// condition as kube-apiserver's naming controller does: a name another
// definition of the group has accepted already stays unaccepted, and the
// one accepted before is kept. others are the accepted names of the other
// definitions of the group. It says whether the status changed.
func acceptNames(crd *CustomResourceDefinition, others []Names) bool {
	resources, kinds := map[string]bool{}, map[string]bool{}
	for _, n := range others {
		resources[n.Plural], resources[n.Singular] = true, true
		for _, s := range n.ShortNames {
			resources[s] = true
		}
		kinds[n.Kind], kinds[n.ListKind] = true, true
	}
	delete(resources, "")
	delete(kinds, "")
	want, have := crd.Spec.Names, crd.Status.AcceptedNames
	next := have
	cond := Condition{Type: NamesAccepted, Status: kapi.ConditionTrue, Reason: "NoConflicts", Message: "no conflicts found"}
	conflict := func(reason, name string) {
		cond.Status, cond.Reason, cond.Message = kapi.ConditionFalse, reason, fmt.Sprintf("%q is already in use", name)
	}
	free := func(name, accepted string, used map[string]bool) bool { return name == accepted || !used[name] }
	if free(want.Plural, have.Plural, resources) {
		next.Plural = want.Plural
	} else {
		conflict("PluralConflict", want.Plural)
	}
	if free(want.Singular, have.Singular, resources) {
		next.Singular = want.Singular
	} else {
		conflict("SingularConflict", want.Singular)
	}
	if !slices.Equal(want.ShortNames, have.ShortNames) {
		var taken []string
		for _, s := range want.ShortNames {
			if !slices.Contains(have.ShortNames, s) && resources[s] {
				taken = append(taken, fmt.Sprintf("%q is already in use", s))
			}
		}
		if len(taken) == 0 {
			next.ShortNames = want.ShortNames
		} else {
			cond.Status, cond.Reason, cond.Message = kapi.ConditionFalse, "ShortNamesConflict", aggregate(taken)
		}
	}
	if free(want.Kind, have.Kind, kinds) {
		next.Kind = want.Kind
	} else {
		conflict("KindConflict", want.Kind)
	}
	if free(want.ListKind, have.ListKind, kinds) {
		next.ListKind = want.ListKind
	} else {
		conflict("ListKindConflict", want.ListKind)
	}
	next.Categories = want.Categories
	changed := !sameNames(next, have)
	crd.Status.AcceptedNames = next
	changed = setCondition(crd, cond) || changed
	if est := condition(crd, Established); est == nil || est.Status != kapi.ConditionTrue {
		e := Condition{Type: Established, Status: kapi.ConditionFalse, Reason: "NotAccepted", Message: "not all names are accepted"}
		if cond.Status == kapi.ConditionTrue {
			e.Reason, e.Message = "Installing", "the initial names have been accepted"
		}
		changed = setCondition(crd, e) || changed
	}
	return changed
}

// aggregate words several errors as apimachinery's aggregate does.
func aggregate(msgs []string) string {
	if len(msgs) == 1 {
		return msgs[0]
	}
	return "[" + strings.Join(msgs, ", ") + "]"
}

func sameNames(a, b Names) bool {
	return a.Plural == b.Plural && a.Singular == b.Singular && a.Kind == b.Kind && a.ListKind == b.ListKind &&
		slices.Equal(a.ShortNames, b.ShortNames) && slices.Equal(a.Categories, b.Categories)
}
