#!/usr/bin/env bash
# Builds what the kine benchmark row runs, once each (cached):
#
#   kine            github.com/k3s-io/kine at the version this module requires
#                   (v0.17.5), with kine's own dependency versions, cgo off
#                   (kine's -nocgo build: its PostgreSQL driver is pure Go),
#                   into $KAPI_KINE_BIN (default ~/.cache/kapi-kinebench/bin)
#   kube-apiserver  and etcd, by internal/test/aggregation/build-kube-apiserver.sh
#                   into $KAPI_KUBE_BIN (default ~/.cache/kapi-aggregation/bin)
#
# This module is not in go.work, as storage/encryption/internal/kubecompat
# is not: kine's requirements (grpc, etcd, the k8s.io modules) would move
# the versions every workspace module is built with.
set -euo pipefail
cd "$(dirname "$0")"
BIN=${KAPI_KINE_BIN:-$HOME/.cache/kapi-kinebench/bin}
mkdir -p "$BIN"
if [[ ! -x $BIN/kine ]]; then
	GOWORK=off CGO_ENABLED=0 go build -trimpath -o "$BIN/kine.tmp" github.com/k3s-io/kine
	mv "$BIN/kine.tmp" "$BIN/kine"
fi
../aggregation/build-kube-apiserver.sh
