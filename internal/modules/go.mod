module github.com/kapi-dev/kapi/internal/modules

go 1.26.0

require golang.org/x/mod v0.41.0
