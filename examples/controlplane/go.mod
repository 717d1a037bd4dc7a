module github.com/kapi-dev/kapi/examples/controlplane

go 1.26.0

require (
	github.com/kapi-dev/kapi v0.0.0-20261128204329-8b33d65823a9
	github.com/kapi-dev/kapi/validation/cel v0.0.0-20261128204329-8b33d65823a9
)
