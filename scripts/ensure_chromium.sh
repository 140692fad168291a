#!/bin/sh
# Install Debian's chromium for the timeline's browser test (tests/test_timeline.py), only
# when no chromium is on the PATH: a machine that has one is left alone, and nothing is
# downloaded on the second run. Needs root (or sudo) and apt-get the first time only.
set -eu
if command -v chromium >/dev/null 2>&1; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "ensure_chromium: no chromium on PATH and no apt-get; install Chromium by hand" >&2
    exit 1
fi
as_root=""
if [ "$(id -u)" -ne 0 ]; then
    as_root="sudo"
fi
echo "ensure_chromium: installing Debian's chromium (once)"
$as_root apt-get update -q
DEBIAN_FRONTEND=noninteractive $as_root apt-get install -y -q --no-install-recommends chromium
