#!/usr/bin/env bash
# Builds kube-apiserver (k8s.io/kubernetes/cmd/kube-apiserver) and etcd from the
# Go module proxy in a throwaway module, once, into $KAPI_KUBE_BIN (default
# ~/.cache/kapi-aggregation/bin). k8s.io/kubernetes needs replace lines for its
# staging modules at the matching v0.x version.
set -euo pipefail
KUBE_VERSION=${KUBE_VERSION:-v1.37.2}
STAGING=v0${KUBE_VERSION#v1}
BIN=${KAPI_KUBE_BIN:-$HOME/.cache/kapi-aggregation/bin}
ETCD_VERSION=${ETCD_VERSION:-}
mkdir -p "$BIN"
if [[ -x $BIN/kube-apiserver && -x $BIN/etcd ]]; then exit 0; fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
export GOWORK=off GOFLAGS=-mod=mod
go mod init kapi.local/kubebuild >/dev/null 2>&1
go mod edit -require=k8s.io/kubernetes@$KUBE_VERSION
modfile=$(go env GOMODCACHE)/cache/download/k8s.io/kubernetes/@v/$KUBE_VERSION.mod
go mod download k8s.io/kubernetes@$KUBE_VERSION
for m in $(sed -n 's#^\tk8s.io/\([a-z0-9-]*\) => ./staging/.*#\1#p' "$modfile"); do
	go mod edit -replace=k8s.io/$m=k8s.io/$m@$STAGING
done
cat > tools.go <<'GO'
//go:build tools

package tools

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
GO
if [[ ! -x $BIN/kube-apiserver ]]; then
	go get k8s.io/kubernetes/cmd/kube-apiserver@$KUBE_VERSION
	CGO_ENABLED=0 go build -trimpath -o "$BIN/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
fi
if [[ ! -x $BIN/etcd ]]; then
	ev=${ETCD_VERSION:-$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)}
	go get go.etcd.io/etcd/server/v3@$ev
	CGO_ENABLED=0 go build -trimpath -o "$BIN/etcd" go.etcd.io/etcd/server/v3
fi
