#!/usr/bin/env bash
# Installs PostgreSQL for storage/postgres's tests, where it is absent. The
# tests start (initdb, pg_ctl) and remove a throwaway cluster of their own,
# as the postgres user when run as root, on 127.0.0.1 and a Unix socket in a
# temporary directory; with CI set they fail, rather than skip, when they
# cannot. Run from .ci/run before the tests.
set -euo pipefail
if compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || command -v initdb >/dev/null; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y postgresql
