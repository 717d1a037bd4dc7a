#!/usr/bin/env bash
# Builds kube-apiserver and etcd once (build-kube-apiserver.sh, cached in
# $KAPI_KUBE_BIN, default ~/.cache/kapi-aggregation/bin) and runs the
# aggregation end-to-end test against them. Needs root (ip netns), iproute2
# and kubectl. Not part of CI: see the README's "Behind kube-apiserver".
set -euo pipefail
cd "$(dirname "$0")"
./build-kube-apiserver.sh
KAPI_AGGREGATION=1 exec go test -count=1 -v -run TestAggregatedByKubeAPIServer "$@" .
