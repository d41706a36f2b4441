#!/usr/bin/env bash
# Builds the libFuzzer target for the message filter's regex compiler and matchers
# (Fuzz/FuzzRegex.swift, compiled with MessageFilterCore's sources and the compiler's regex sources
# under -sanitize=fuzzer,address) and runs it. Each input is a flags byte (bit 0: ignore case), a
# pattern, a 0 byte and a text; the lazy DFA, the NFA simulation, the complete DFA the compiler
# ships and a naive reference over the syntax tree must agree.
#
# Usage: Scripts/fuzz-regex.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz-regex.sh 600 -jobs=2
# New inputs go to .build/fuzz-regex/corpus; the committed seeds in Fuzz/corpus-regex are only read.
# A crash leaves its input in .build/fuzz-regex/ (crash-*); replay it with .build/fuzz-regex/regex FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
mkdir -p .build/fuzz-regex/corpus
swiftc -sanitize=fuzzer,address -parse-as-library -O -module-name MessageFilterCore -package-name blocklist -I Sources/CZlib \
    Sources/MessageFilterCore/*.swift Sources/MessageFilterCompiler/Regex{Subset,Alphabet,Program+Compile}.swift \
    Fuzz/FuzzRegex.swift -o .build/fuzz-regex/regex
.build/fuzz-regex/regex -max_total_time="$seconds" -max_len=512 -timeout=10 -artifact_prefix=.build/fuzz-regex/ \
    -print_final_stats=1 "$@" .build/fuzz-regex/corpus Fuzz/corpus-regex
