#!/usr/bin/env bash
# Builds the libFuzzer target for what a phone reads of a publication (Fuzz/FuzzUpdate.swift):
# delta files and payloads applied to a base shard, signed metadata, sealed inline pushes, update
# bundles, JSON and state files, base64 and hex. UpdateCore's sources are compiled with the fuzz
# target under -sanitize=fuzzer,address, against BlocklistCore and JSONStream built the same way and
# a crypto stand-in (Fuzz/CryptoStub.swift: real SHA-256, signatures and seals easy to pass).
#
# Usage: Scripts/fuzz-update.sh [SECONDS] [libFuzzer flags...]     e.g. Scripts/fuzz-update.sh 600 -jobs=2
# New inputs go to .build/fuzz-update/corpus; the committed seeds in Fuzz/corpus-update are only read.
# A crash leaves its input in .build/fuzz-update/ (crash-*); replay it with .build/fuzz-update/update FILE.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
out=.build/fuzz-update
mkdir -p "$out/corpus"
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name blocklist -I Sources/CZlib -I "$out")
library() { # NAME SOURCES...
    local name=$1
    shift
    swiftc "${flags[@]}" -module-name "$name" -emit-library -static -emit-module \
        -emit-module-path "$out/$name.swiftmodule" "$@" -o "$out/lib$name.a"
}
library BlocklistCore Sources/BlocklistCore/*.swift Sources/BlocklistCore/Internals/*.swift
library JSONStream Sources/JSONStream/*.swift
# ListImport's SHA-256, renamed, behind swift-crypto's API.
sed 's/SHA256/_SHA256/g' Sources/ListImport/SHA256.swift > "$out/_SHA256.swift"
library Crypto Fuzz/CryptoStub.swift "$out/_SHA256.swift"
swiftc "${flags[@]}" -module-name UpdateCore Sources/UpdateCore/*.swift Fuzz/FuzzUpdate.swift \
    -L "$out" -lBlocklistCore -lJSONStream -lCrypto -lz -o "$out/update"
"$out/update" -max_total_time="$seconds" -max_len=8192 -timeout=10 -artifact_prefix="$out/" \
    -print_final_stats=1 "$@" "$out/corpus" Fuzz/corpus-update
