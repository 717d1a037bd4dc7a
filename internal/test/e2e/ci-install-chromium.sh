#!/usr/bin/env bash
# Installs Debian's chromium for internal/test/e2e's browser tests
# (browser_test.go), where it is absent: they load a web console in
# headless Chromium against examples/widgets. With CI set they fail, rather
# than skip, when it is missing. Run from .ci/run before the tests.
set -euo pipefail
if command -v chromium >/dev/null || command -v chromium-browser >/dev/null; then
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y chromium
