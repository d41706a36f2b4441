#!/usr/bin/env bash
# Builds the libFuzzer target for HTTPFetch's response parser (Fuzz/FuzzHTTPResponse.swift,
# compiled with the module's sources under -sanitize=fuzzer,address) and runs it.
#
# Usage: Scripts/fuzz-http.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz-http.sh 600 -jobs=2
# New inputs go to .build/fuzz-http/corpus; the committed seeds in Fuzz/corpus-http are only read.
# A crash leaves its input in .build/fuzz-http/ (crash-*); replay it with .build/fuzz-http/http-response FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
out=.build/fuzz-http
mkdir -p "$out/corpus"
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name HTTPFetch -package-name blocklist \
    Sources/HTTPFetch/*.swift Fuzz/FuzzHTTPResponse.swift -o "$out/http-response"
"$out/http-response" -max_total_time="$seconds" -max_len=4096 -timeout=10 -artifact_prefix="$out/" \
    -print_final_stats=1 "$@" "$out/corpus" Fuzz/corpus-http
