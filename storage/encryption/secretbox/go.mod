module github.com/kapi-dev/kapi/storage/encryption/secretbox

go 1.26.0

require (
	github.com/kapi-dev/kapi v0.0.0-20261130105000-33eece04ae56
	golang.org/x/crypto v0.58.0
)

require (
	golang.org/x/sys v0.49.0 // indirect
	gopkg.in/yaml.v3 v3.0.1 // indirect
)
