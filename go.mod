module github.com/kapi-dev/kapi

go 1.26

require (
	github.com/evanphx/json-patch/v5 v5.9.11
	github.com/fxamacker/cbor/v2 v2.9.1
	github.com/go-chi/chi/v5 v5.5.0
	github.com/go-json-experiment/json v1.27.2
	go.etcd.io/bbolt v1.5.0
	google.golang.org/protobuf v1.36.12
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/x448/float16 v0.8.4 // indirect
	golang.org/x/sys v0.45.0 // indirect
)
