module github.com/kapi-dev/kapi/storage/encryption/secretbox

go 1.26.0

require (
	github.com/kapi-dev/kapi v0.0.0-20261128204329-8b33d65823a9
	golang.org/x/crypto v0.58.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
