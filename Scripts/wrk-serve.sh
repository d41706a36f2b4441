#!/usr/bin/env bash
# Loads the deferral server with wrk on loopback: starts BINARY serve --port 0 with the example
# server rules, runs `wrk -t2 -c64 -dSECONDS --latency -s Scripts/post.lua URL`, stops the server.
#
# Usage: Scripts/wrk-serve.sh [BINARY=.build/release/blocklist-sms] [SECONDS=10]
set -euo pipefail
cd "$(dirname "$0")/.."
binary=${1:-.build/release/blocklist-sms}
seconds=${2:-10}
log=$(mktemp)
"$binary" serve --rules docs/examples/sms-server-rules.json --port 0 >"$log" 2>&1 &
server=$!
trap 'kill -TERM $server 2>/dev/null || true; wait $server 2>/dev/null || true; rm -f "$log"' EXIT
for _ in $(seq 1 300); do grep -q '^listening on ' "$log" && break; sleep 0.1; done
wrk -t2 -c64 -d"${seconds}s" --latency -s Scripts/post.lua "$(sed -n 's/^listening on //p' "$log")"
