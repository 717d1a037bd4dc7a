package names

import (
	"errors"
	"fmt"
	"strings"
)

// Resource is how a resource is named where it is registered: its group,
// version and kind, and the names URLs and kubectl use for it.
type Resource struct {
	Group, Version, Kind string
	Plural, Singular     string
	ShortNames           []string
}

// CheckResource returns one error for each name of r that cannot be
// served: a version that is not a DNS-1123 label, a group that is not a
// DNS-1123 subdomain, an empty kind or one holding '/', '.' or ' ', and a
// plural, singular or short name that is not a lower-case DNS-1123 label
// (the plural is required). The messages say which name and what to do.
func CheckResource(r Resource) []error {
	var errs []error
	if r.Version == "" || !MatchesDNS1123Label(r.Version) {
		errs = append(errs, fmt.Errorf("version %q is not a DNS-1123 label", r.Version))
	}
	if r.Group != "" && len(IsDNS1123Subdomain(r.Group)) > 0 {
		errs = append(errs, fmt.Errorf("group %q is not a DNS-1123 subdomain", r.Group))
	}
	if r.Kind == "" || strings.ContainsAny(r.Kind, "/. ") {
		errs = append(errs, fmt.Errorf("kind %q is empty or holds one of '/', '.', ' '", r.Kind))
	}
	if r.Plural == "" {
		errs = append(errs, errors.New("Resource.Plural is required: the resource's name in URLs, as widgets in /apis/example.com/v1/widgets"))
	} else if !MatchesDNS1123Label(r.Plural) {
		errs = append(errs, fmt.Errorf("plural %q is not a lower-case DNS-1123 label", r.Plural))
	}
	if !MatchesDNS1123Label(r.Singular) {
		errs = append(errs, fmt.Errorf("singular %q is not a lower-case DNS-1123 label", r.Singular))
	}
	for _, n := range r.ShortNames {
		if !MatchesDNS1123Label(n) {
			errs = append(errs, fmt.Errorf("short name %q is not a lower-case DNS-1123 label", n))
		}
	}
	return errs
}
