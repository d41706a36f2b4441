#!/usr/bin/env bash
# Builds the libFuzzer target for the list parsers (Fuzz/FuzzLists.swift): the JSON reader, list
# files, CSV records and number lines, and plain and gzip input (multi-member, truncated). Each
# module it needs is compiled on its own under -sanitize=fuzzer,address, then linked with the target.
#
# Usage: Scripts/fuzz-lists.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz-lists.sh 600 -jobs=2
# New inputs go to .build/fuzz-lists/corpus; the committed seeds in Fuzz/corpus-lists are only read.
# A crash leaves its input in .build/fuzz-lists/ (crash-*); replay it with .build/fuzz-lists/lists FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
out=.build/fuzz-lists
mkdir -p "$out/corpus" "$out/modules"
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name blocklist -I Sources/CZlib -I "$out/modules")
objects=()
for module in BlocklistCore BlocklistSystem JSONStream SetStorage ListImport; do
    sources=$(find "Sources/$module" -name '*.swift' | sort)
    # shellcheck disable=SC2086
    swiftc "${flags[@]}" -module-name "$module" -wmo -c $sources -o "$out/modules/$module.o" \
        -emit-module -emit-module-path "$out/modules/$module.swiftmodule"
    objects+=("$out/modules/$module.o")
done
swiftc "${flags[@]}" -module-name FuzzLists Fuzz/FuzzLists.swift "${objects[@]}" -lz -o "$out/lists"
"$out/lists" -max_total_time="$seconds" -max_len=8192 -timeout=10 -artifact_prefix="$out/" \
    -print_final_stats=1 "$@" "$out/corpus" Fuzz/corpus-lists
