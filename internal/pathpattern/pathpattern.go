package pathpattern

import (
	"fmt"
	"strings"
)

// Check accepts a path, or a path prefix ending in "*"; it refuses a
// pattern that does not start with "/" (except "*") and a "*" before the
// end.
func Check(pattern string) error {
	if !strings.HasPrefix(pattern, "/") && pattern != "*" {
		return fmt.Errorf("%q must start with '/'", pattern)
	}
	if i := strings.IndexByte(pattern, '*'); i >= 0 && i != len(pattern)-1 {
		return fmt.Errorf("%q: '*' is only allowed at the end", pattern)
	}
	return nil
}

// Match says whether path is pattern, or starts with the prefix before a
// pattern's trailing "*".
func Match(pattern, path string) bool {
	if prefix, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(path, prefix)
	}
	return path == pattern
}
