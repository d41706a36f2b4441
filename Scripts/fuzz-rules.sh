#!/usr/bin/env bash
# Builds the libFuzzer target for the compiled rules reader, the classifier and the deferral
# response reader (Fuzz/FuzzCompiledRules.swift, compiled with MessageFilterCore's sources under
# -sanitize=fuzzer,address) and runs it.
#
# Usage: Scripts/fuzz-rules.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz-rules.sh 600 -jobs=2
# New inputs go to .build/fuzz-rules/corpus; the committed seeds in Fuzz/corpus-rules are only read.
# A crash leaves its input in .build/fuzz-rules/ (crash-*); replay it with .build/fuzz-rules/rules FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
mkdir -p .build/fuzz-rules/corpus
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name MessageFilterCore -package-name blocklist -I Sources/CZlib \
    Sources/MessageFilterCore/*.swift Fuzz/FuzzCompiledRules.swift -o .build/fuzz-rules/rules
.build/fuzz-rules/rules -max_total_time="$seconds" -max_len=8192 -timeout=10 -artifact_prefix=.build/fuzz-rules/ \
    -print_final_stats=1 "$@" .build/fuzz-rules/corpus Fuzz/corpus-rules
