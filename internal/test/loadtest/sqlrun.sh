#!/usr/bin/env bash
# The SQL backends' load run (issue 25), side by side in one run, each
# server against the replayed-bytes ceiling (-serve-ceiling):
#
#   kapi on PostgreSQL   storage/postgres/cmd/widgets-postgres on a throwaway
#                        cluster (loadtest -serve-postgres)
#   PostgreSQL-only      the ceiling storing each write through kapi's
#                        PostgreSQL store first (-ceiling-postgres): the
#                        write workloads measured against it instead
#   kapi on etcd         storage/etcd/cmd/widgets-etcd on one etcd member
#                        built from the module cache (go.etcd.io/etcd/server/v3,
#                        the version internal/test/robustness requires)
#   etcd-only            the ceiling making each request's etcd requests
#                        first (-ceiling-etcd), from a bare etcd client: a
#                        write's transaction as kapi's store makes it, a
#                        GET's read of the store's revision; measured in
#                        the etcd pass's rounds beside kapi (-store-only)
#   kapi on memory       examples/widgets, for the reads (READS, default GET
#                        and LIST 10,000, each also at resourceVersion=0),
#                        which the watch cache serves alike
#   kube on kine         kube-apiserver v1.37.2 on kine v0.17.5 on a database
#                        of its own ("kine") in the same PostgreSQL cluster,
#                        examples/widgets' Widget registered as a CRD
#                        (internal/test/kinebench: build.sh builds both from
#                        the Go module proxy, once, into ~/.cache;
#                        kube-on-kine.sh starts them, for its pass alone)
#
# GET is a GET without resourceVersion: a consistent read (kapi asks the
# store for its revision and waits for its cache to reach it; kube-apiserver
# reads etcd, here kine). get-rv0 and list-large-json-rv0 are the same
# reads at resourceVersion=0, which every server's watch cache answers
# without asking the store.
#
# Server CPU is kapi's (kube-apiserver's); the store's processes (etcd;
# PostgreSQL's postmaster and its backends; kine) are reported apart
# (-store-pid). Results: one JSON file per pass and one table each, in $OUT
# (default a new temporary directory), then summary.md: the rows side by
# side, each against its own ceiling, with the issue's targets; the
# medians and ranges of several runs: sqlsummary.py DIR1 DIR2 ...
#
# ETCD_BIN=BIN uses an etcd already built. ETCD_BEFORE=BIN, a widgets-etcd
# built from another commit, adds a pass etcd-before, just before etcd, on
# the same etcd, ceiling and etcd-only server (its objects under a prefix
# of their own): before and after in one run.
#
# One command, from the repository root, under the machine's lock for heavy
# runs (the first run builds kine and kube-apiserver: about ten minutes):
#
#   flock /tmp/kapi-heavy.lock internal/test/loadtest/sqlrun.sh
#   PASSES=postgres,kine internal/test/loadtest/sqlrun.sh   # some rows only
#   DURATION=3s ROUNDS=2 internal/test/loadtest/sqlrun.sh
#   SCALE=1000000 internal/test/loadtest/sqlrun.sh    # only the scale run
#
# SCALE=N skips the load passes and runs the scale run instead: N widgets
# stored in PostgreSQL (-fill-postgres, as kapi stores them), then kapi on
# PostgreSQL started on them: time until /readyz, RSS, and GET and LIST
# latency after.
set -euo pipefail
cd "$(dirname "$0")/../../.."
OUT=${OUT:-$(mktemp -d /tmp/kapi-sqlrun-XXXXXX)}
DURATION=${DURATION:-3s}
ROUNDS=${ROUNDS:-2}
# The PostgreSQL-only pass judges kapi by the ratio of two rates measured
# in alternated rounds, the best round of each: more rounds than the other
# passes, so that a stall of the shared machine in one round moves neither.
PAIR_ROUNDS=${PAIR_ROUNDS:-4}
WORKLOADS=${WORKLOADS:-get,get-rv0,list-large-json,list-large-json-rv0,create,update,patch,apply,watch,informers-small}
WRITES=${WRITES:-create,update,patch,apply}
BIN=$OUT/bin
mkdir -p "$BIN"
pids=()
cleanup() {
	if declare -F kube_on_kine_stop >/dev/null; then kube_on_kine_stop; fi
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
}
trap cleanup EXIT

echo "building into $BIN"
go build -o "$BIN/loadtest" ./internal/test/loadtest
go build -o "$BIN/widgets-postgres" ./storage/postgres/cmd/widgets-postgres
if [[ -z ${SCALE:-} ]]; then
	go build -o "$BIN/widgets-etcd" ./storage/etcd/cmd/widgets-etcd
	go build -o "$BIN/widgets" ./examples/widgets
	if [[ -x ${ETCD_BIN:-} ]]; then cp "$ETCD_BIN" "$BIN/etcd"; else (cd internal/test/robustness && go build -o "$BIN/etcd" go.etcd.io/etcd/server/v3); fi
fi
PASSES=${PASSES:-postgres,postgres-only,memory,etcd,kine}
if [[ -z ${SCALE:-} && ,$PASSES, == *,kine,* ]]; then
	internal/test/kinebench/build.sh
	source internal/test/kinebench/kube-on-kine.sh
fi

port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
ready() { # URL [tenths of a second]: wait until it answers /readyz 200
	for _ in $(seq "${2:-600}"); do
		if curl -fsS -o /dev/null "$1/readyz" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	echo "$1 not ready" >&2
	return 1
}
up() { # URL: wait until anything answers
	for _ in $(seq 600); do
		if curl -sS -o /dev/null "$1/" 2>/dev/null; then return 0; fi
		sleep 0.1
	done
	return 1
}

"$BIN/loadtest" -serve-postgres "$OUT/pg.info" 2>"$OUT/pg.log" &
pids+=($!)
for _ in $(seq 600); do [[ -s $OUT/pg.info ]] && break; sleep 0.1; done
PGURL=$(sed -n 1p "$OUT/pg.info")
PGPID=$(sed -n 2p "$OUT/pg.info")
echo "PostgreSQL $PGURL (postmaster $PGPID)"

if [[ -n ${SCALE:-} ]]; then
	KP=$(port)
	"$BIN/widgets-postgres" -postgres "$PGURL" -addr 127.0.0.1:$KP 2>"$OUT/kapi-pg.log" &
	kpid=$!
	ready http://127.0.0.1:$KP
	curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' http://127.0.0.1:$KP/api/v1/namespaces \
		-d '{"apiVersion":"v1","kind":"Namespace","metadata":{"name":"scale"}}'
	curl -fsS -o /dev/null -X POST -H 'Content-Type: application/json' http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets \
		-d '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"template","labels":{"app":"scale"}},"spec":{"color":"Red","replicas":1}}'
	kill $kpid; wait $kpid 2>/dev/null || true
	"$BIN/loadtest" -fill-postgres "$PGURL" -fill-objects "$SCALE" 2>&1 | tee "$OUT/fill.log"
	start=$(date +%s.%N)
	"$BIN/widgets-postgres" -postgres "$PGURL" -addr 127.0.0.1:$KP 2>"$OUT/kapi-pg.log" &
	kpid=$!
	pids+=($kpid)
	ready http://127.0.0.1:$KP 6000
	end=$(date +%s.%N)
	rss=$(awk '/VmRSS/ {print $2}' /proc/$kpid/status)
	hwm=$(awk '/VmHWM/ {print $2}' /proc/$kpid/status)
	cpu=$(awk '{print ($14+$15)/100}' /proc/$kpid/stat)
	{
		echo "scale: $SCALE widgets; kapi ready (initial list into the cache) in $(python3 -c "print(round($end-$start,2))") s, CPU $cpu s, RSS $((rss/1024)) MiB (peak $((hwm/1024)) MiB)"
		for i in 1 2 3; do
			curl -fsS -o /dev/null -w "GET one widget: %{time_total} s\n" http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets/fill-0500000
		done
		for i in 1 2 3; do
			curl -fsS -o /dev/null -w "LIST limit=500: %{time_total} s, %{size_download} bytes\n" "http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets?limit=500"
		done
		for i in 1 2; do
			curl -fsS -o /dev/null -w "LIST all $SCALE: %{time_total} s, %{size_download} bytes\n" "http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets"
		done
		for i in 1 2; do
			curl -fsS -o /dev/null -w "LIST labelSelector=app=none: %{time_total} s\n" "http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets?labelSelector=app%3Dnone"
		done
		curl -fsS -o /dev/null -w "CREATE after: %{time_total} s\n" -X POST -H 'Content-Type: application/json' http://127.0.0.1:$KP/apis/example.com/v1/namespaces/scale/widgets \
			-d '{"apiVersion":"example.com/v1","kind":"Widget","metadata":{"name":"after"},"spec":{"color":"Red","replicas":1}}'
		echo "RSS after: $(($(awk '/VmRSS/ {print $2}' /proc/$kpid/status)/1024)) MiB"
	} | tee "$OUT/scale.txt"
	exit 0
fi

EP=$(port) EPP=$(port)
"$BIN/etcd" --data-dir "$OUT/etcd" --listen-client-urls http://127.0.0.1:$EP --advertise-client-urls http://127.0.0.1:$EP \
	--listen-peer-urls http://127.0.0.1:$EPP --initial-advertise-peer-urls http://127.0.0.1:$EPP --initial-cluster default=http://127.0.0.1:$EPP \
	--log-level error 2>"$OUT/etcd.log" &
etcdpid=$!
pids+=($etcdpid)

CP=$(port)
"$BIN/loadtest" -serve-ceiling 127.0.0.1:$CP 2>"$OUT/ceiling.log" &
cpid=$!
pids+=($cpid)
OP=$(port)
# The PostgreSQL-only server's tables hold as many rows as kapi's: the
# harness seeds 500 + 10,000 widgets of ~1 KiB (-small, -large) into the
# kapi it measures (PGONLY_FILL=0: its tables hold only what it writes).
"$BIN/loadtest" -serve-ceiling 127.0.0.1:$OP -ceiling-postgres "$PGURL" -ceiling-postgres-fill "${PGONLY_FILL:-10500}" 2>"$OUT/pg-only.log" &
opid=$!
pids+=($opid)
KP=$(port)
"$BIN/widgets-postgres" -postgres "$PGURL" -addr 127.0.0.1:$KP 2>"$OUT/kapi-pg.log" &
kpgpid=$!
pids+=($kpgpid)
# The PostgreSQL-only pass seeds its own widgets: a kapi of its own, on a
# schema of its own in the same database.
KP2=$(port)
"$BIN/widgets-postgres" -postgres "$PGURL" -schema kapi2 -addr 127.0.0.1:$KP2 2>"$OUT/kapi-pg2.log" &
kpg2pid=$!
pids+=($kpg2pid)
KE=$(port)
"$BIN/widgets-etcd" -etcd http://127.0.0.1:$EP -addr 127.0.0.1:$KE 2>"$OUT/kapi-etcd.log" &
ketcdpid=$!
pids+=($ketcdpid)
EO=$(port)
"$BIN/loadtest" -serve-ceiling 127.0.0.1:$EO -ceiling-etcd http://127.0.0.1:$EP 2>"$OUT/etcd-only.log" &
eopid=$!
pids+=($eopid)
if [[ -n ${ETCD_BEFORE:-} ]]; then
	KB=$(port)
	"$ETCD_BEFORE" -etcd http://127.0.0.1:$EP -prefix /before/ -addr 127.0.0.1:$KB 2>"$OUT/kapi-etcd-before.log" &
	kbpid=$!
	pids+=($kbpid)
	ready http://127.0.0.1:$KB
	PASSES=${PASSES/etcd/etcd-before,etcd}
fi
KM=$(port)
"$BIN/widgets" -addr 127.0.0.1:$KM 2>"$OUT/kapi-memory.log" &
kmpid=$!
pids+=($kmpid)
ready http://127.0.0.1:$KP
ready http://127.0.0.1:$KP2
ready http://127.0.0.1:$KE
ready http://127.0.0.1:$KM
up http://127.0.0.1:$EO
up http://127.0.0.1:$CP
up http://127.0.0.1:$OP

uptime | tee "$OUT/uptime.txt"
common=(-duration "$DURATION" -rounds "$ROUNDS" -watchers 300 -watch-rate 50)
pass() { # name, then the harness's arguments; a pass that fails is logged
	local name=$1
	shift
	echo "== $name"
	"$BIN/loadtest" "${common[@]}" "$@" -json "$OUT/$name.json" 2>"$OUT/$name.log" | tee "$OUT/$name.txt" ||
		echo "pass $name failed: see $OUT/$name.log"
}
kine_pass() {
	# Started for its pass alone, so that kube-apiserver's own background
	# work (leases, compaction, kine's polling) does not run beside the others.
	if kube_on_kine_start "$OUT/kine" "$PGURL"; then
		pass kine -server "$KK_URL" -ca "$KK_CA" -cert "$KK_CERT" -key "$KK_KEY" -server-pid $KK_PID \
			-ceiling http://127.0.0.1:$CP -ceiling-pid $cpid -store-pid $KINE_PID,$PGPID -workloads "$WORKLOADS"
	else
		echo "pass kine failed: see $OUT/kine"
	fi
	kube_on_kine_stop
}
etcdonly=(-store-only http://127.0.0.1:$EO -store-only-pid $eopid)
# In the order PASSES names them.
for p in ${PASSES//,/ }; do
	case $p in
	postgres) pass postgres -server http://127.0.0.1:$KP -server-pid $kpgpid -ceiling http://127.0.0.1:$CP -ceiling-pid $cpid -store-pid $PGPID -workloads "$WORKLOADS" ;;
	postgres-only) pass postgres-only -server http://127.0.0.1:$KP2 -server-pid $kpg2pid -ceiling http://127.0.0.1:$OP -ceiling-pid $opid -store-pid $PGPID -workloads "$WRITES" -rounds "$PAIR_ROUNDS" ;;
	memory) pass memory -server http://127.0.0.1:$KM -server-pid $kmpid -ceiling http://127.0.0.1:$CP -ceiling-pid $cpid -workloads "${READS:-get,get-rv0,list-large-json,list-large-json-rv0}" ;;
	etcd) pass etcd -server http://127.0.0.1:$KE -server-pid $ketcdpid -ceiling http://127.0.0.1:$CP -ceiling-pid $cpid -store-pid $etcdpid "${etcdonly[@]}" -workloads "$WORKLOADS" ;;
	etcd-before) pass etcd-before -server http://127.0.0.1:$KB -server-pid $kbpid -ceiling http://127.0.0.1:$CP -ceiling-pid $cpid -store-pid $etcdpid "${etcdonly[@]}" -workloads "$WORKLOADS" ;;
	kine) kine_pass ;;
	*) echo "no pass $p" >&2 ;;
	esac
done
uptime | tee -a "$OUT/uptime.txt"
python3 internal/test/loadtest/sqlsummary.py "$OUT" | tee "$OUT/summary.md"
echo "results in $OUT"
