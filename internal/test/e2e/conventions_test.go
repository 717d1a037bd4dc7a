package e2e

import (
	"strings"
	"testing"
)

// TestExamplesFollowConventions: the examples' types break none of the API
// conventions Register advises on, so that starting an example logs no
// warning (kapi's advice is for the user's types, and the examples are
// what users copy: Widget's colors were red, green and blue, not CamelCase).
// The server is healthy only after every registration, so its log holds
// every warning by then.
func TestExamplesFollowConventions(t *testing.T) {
	for name, start := range map[string]func(t *testing.T) *server{
		"examples/widgets": startServer,
		"examples/widgets v1beta1": func(t *testing.T) *server {
			return startProgram(t, program{name: "examples/widgets", bin: widgetsBin, buildErr: widgetsBuildErr, args: []string{"-storage-version", "v1beta1"}})
		},
		"examples/secured": func(t *testing.T) *server { return startSecured(t).server },
		"examples/controlplane": func(t *testing.T) *server {
			return startProgram(t, program{name: "examples/controlplane", bin: controlplaneBin, buildErr: controlplaneBuildErr})
		},
	} {
		t.Run(name, func(t *testing.T) {
			log := start(t).log.String()
			for _, line := range strings.Split(log, "\n") {
				if strings.Contains(line, "WARN") || strings.Contains(line, "convention") {
					t.Errorf("%s logs %s", name, line)
				}
			}
		})
	}
}
