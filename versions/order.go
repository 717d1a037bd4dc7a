package versions

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
)

var kubeVersion = regexp.MustCompile(`^v([0-9]+)(?:(alpha|beta)([0-9]+))?$`)

// level is GA 2, beta 1, alpha 0.
func parse(v string) (major, level, minor int, ok bool) {
	m := kubeVersion.FindStringSubmatch(v)
	if m == nil {
		return 0, 0, 0, false
	}
	var err error
	if major, err = strconv.Atoi(m[1]); err != nil {
		return 0, 0, 0, false
	}
	switch m[2] {
	case "":
		return major, 2, 0, true
	case "beta":
		level = 1
	}
	if minor, err = strconv.Atoi(m[3]); err != nil {
		return 0, 0, 0, false
	}
	return major, level, minor, true
}

// Compare orders two version names by Kubernetes' priority: positive when a
// comes first (v2 > v1 > v1beta2 > v1beta1 > v1alpha1), negative when b
// does, 0 when equal. Names that are not of the form v<N>[alpha|beta<M>]
// come after those that are, in alphabetical order.
func Compare(a, b string) int {
	if a == b {
		return 0
	}
	amaj, alev, amin, aok := parse(a)
	bmaj, blev, bmin, bok := parse(b)
	switch {
	case !aok && !bok:
		return strings.Compare(b, a)
	case !aok:
		return -1
	case !bok:
		return 1
	case alev != blev:
		return alev - blev
	case amaj != bmaj:
		return amaj - bmaj
	}
	return amin - bmin
}

// Sort orders names by priority, the first first.
func Sort(names []string) {
	slices.SortStableFunc(names, func(a, b string) int { return Compare(b, a) })
}
