module github.com/kapi-dev/kapi/internal/test/aggregation

go 1.26.0

require github.com/kapi-dev/kapi v0.0.0-20261130105000-33eece04ae56

require (
	github.com/evanphx/json-patch/v5 v5.9.11 // indirect
	github.com/go-chi/chi/v5 v5.5.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
