# Sourced by internal/test/loadtest/sqlrun.sh (bash): kube-apiserver on kine
# on PostgreSQL, the row issue 25 compares kapi on PostgreSQL with.
#
#   kube_on_kine_start DIR PGURL   start kine on database "kine" of PGURL's
#                                  cluster (kine creates it), then
#                                  kube-apiserver on kine's etcd endpoint,
#                                  and register examples/widgets' Widget as a
#                                  CRD (widgets-crd.yaml); sets KK_URL,
#                                  KK_PID, KINE_PID, KK_CA, KK_CERT, KK_KEY
#   kube_on_kine_stop              stop both
#
# Binaries from build.sh: $KAPI_KINE_BIN/kine, $KAPI_KUBE_BIN/kube-apiserver.
# Everything listens on 127.0.0.1. kube-apiserver serves only TLS: the
# harness connects with a client certificate of group system:masters (APF's
# exempt priority level: no queueing), over HTTP/1.1 keep-alive connections
# as it does to kapi; authorization is AlwaysAllow, kapi's example having
# none; no controller-manager runs, and no endpoint reconciler (its address
# is loopback).
KINEBENCH_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
KAPI_KINE_BIN=${KAPI_KINE_BIN:-$HOME/.cache/kapi-kinebench/bin}
KAPI_KUBE_BIN=${KAPI_KUBE_BIN:-$HOME/.cache/kapi-aggregation/bin}

kk_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# kk_certs DIR: a CA, kube-apiserver's serving certificate for 127.0.0.1,
# the harness's client certificate (system:masters) and the service
# account signing key.
kk_certs() {
	local d=$1
	mkdir -p "$d"
	(
		cd "$d"
		openssl ecparam -name prime256v1 -genkey -noout -out ca.key
		openssl req -x509 -new -key ca.key -out ca.crt -days 2 -subj /CN=kapi-loadtest-ca
		openssl ecparam -name prime256v1 -genkey -noout -out server.key
		openssl req -new -key server.key -out server.csr -subj /CN=kube-apiserver
		printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n' >server.ext
		openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 -extfile server.ext
		openssl ecparam -name prime256v1 -genkey -noout -out client.key
		openssl req -new -key client.key -out client.csr -subj "/O=system:masters/CN=loadtest"
		printf 'extendedKeyUsage=clientAuth\n' >client.ext
		openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2 -extfile client.ext
		openssl ecparam -name prime256v1 -genkey -noout -out sa.key
		openssl ec -in sa.key -pubout -out sa.pub
	) >/dev/null 2>&1
}

kk_curl() { curl -fsS --cacert "$KK_CA" --cert "$KK_CERT" --key "$KK_KEY" "$@"; }

kube_on_kine_start() {
	local dir=$1 pgurl=$2
	mkdir -p "$dir"
	kk_certs "$dir/pki"
	KK_CA=$dir/pki/ca.crt KK_CERT=$dir/pki/client.crt KK_KEY=$dir/pki/client.key
	local kineport metricsport kport
	kineport=$(kk_port) metricsport=$(kk_port) kport=$(kk_port)
	# The same cluster, a database of its own.
	local kineurl=${pgurl/\/postgres\?/\/kine?}
	"$KAPI_KINE_BIN/kine" --endpoint "$kineurl" --listen-address 127.0.0.1:$kineport \
		--metrics-bind-address 127.0.0.1:$metricsport 2>"$dir/kine.log" &
	KINE_PID=$!
	for _ in $(seq 600); do
		if grep -q "Kine available" "$dir/kine.log" 2>/dev/null || (exec 3<>/dev/tcp/127.0.0.1/$kineport) 2>/dev/null; then break; fi
		sleep 0.1
	done
	"$KAPI_KUBE_BIN/kube-apiserver" \
		--etcd-servers http://127.0.0.1:$kineport \
		--bind-address 127.0.0.1 --advertise-address 127.0.0.1 --secure-port $kport \
		--tls-cert-file "$dir/pki/server.crt" --tls-private-key-file "$dir/pki/server.key" \
		--client-ca-file "$KK_CA" \
		--service-account-key-file "$dir/pki/sa.pub" --service-account-signing-key-file "$dir/pki/sa.key" \
		--service-account-issuer https://kubernetes.default.svc \
		--service-cluster-ip-range 10.96.0.0/16 --authorization-mode AlwaysAllow \
		--endpoint-reconciler-type none --cert-dir "$dir/certs" --profiling=false 2>"$dir/kube-apiserver.log" &
	KK_PID=$!
	KK_URL=https://127.0.0.1:$kport
	local ok=
	for _ in $(seq 1200); do
		if kk_curl -o /dev/null "$KK_URL/readyz" 2>/dev/null; then ok=1 && break; fi
		if ! kill -0 $KK_PID 2>/dev/null; then break; fi
		sleep 0.1
	done
	if [[ -z $ok ]]; then
		echo "kube-apiserver on kine not ready: see $dir/kube-apiserver.log and $dir/kine.log" >&2
		return 1
	fi
	kubectl --server "$KK_URL" --certificate-authority "$KK_CA" --client-certificate "$KK_CERT" --client-key "$KK_KEY" \
		apply -f "$KINEBENCH_DIR/widgets-crd.yaml" >/dev/null || return 1
	kubectl --server "$KK_URL" --certificate-authority "$KK_CA" --client-certificate "$KK_CERT" --client-key "$KK_KEY" \
		wait --for condition=Established --timeout 60s crd/widgets.example.com >/dev/null || return 1
	for _ in $(seq 600); do
		if kk_curl -o /dev/null "$KK_URL/apis/example.com/v1/namespaces/default/widgets" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "kube-apiserver on kine: widgets not served: see $dir/kube-apiserver.log" >&2
	return 1
}

kube_on_kine_stop() {
	[[ -n ${KK_PID:-} ]] && kill $KK_PID 2>/dev/null && wait $KK_PID 2>/dev/null
	[[ -n ${KINE_PID:-} ]] && kill $KINE_PID 2>/dev/null && wait $KINE_PID 2>/dev/null
	KK_PID= KINE_PID=
	return 0
}
