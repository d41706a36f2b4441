#!/usr/bin/env bash
# Builds the libFuzzer target for the shard reader and verifier (Fuzz/FuzzShardReader.swift,
# compiled with the core's sources under -sanitize=fuzzer,address) and runs it.
#
# Usage: Scripts/fuzz.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz.sh 600 -jobs=2
# New inputs go to .build/fuzz/corpus; the committed seeds in Fuzz/corpus are only read. A crash
# leaves its input in .build/fuzz/ (crash-*); replay it with .build/fuzz/shard-reader FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
mkdir -p .build/fuzz/corpus
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name BlocklistCore -package-name blocklist -I Sources/CZlib \
    Sources/BlocklistCore/*.swift Sources/BlocklistCore/Internals/*.swift Fuzz/FuzzShardReader.swift \
    -o .build/fuzz/shard-reader
.build/fuzz/shard-reader -max_total_time="$seconds" -max_len=4096 -timeout=10 -artifact_prefix=.build/fuzz/ \
    -print_final_stats=1 "$@" .build/fuzz/corpus Fuzz/corpus
