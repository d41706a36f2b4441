#!/usr/bin/env bash
# Builds one libFuzzer target (Fuzz/*.swift, compiled with the sources it reaches under
# -sanitize=fuzzer,address) and runs it.
#
# Usage: Scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]   e.g. Scripts/fuzz.sh rules 600 -jobs=2
#        Scripts/fuzz.sh --list
#
# Targets (each with its committed seeds, which are only read; new inputs go to
# .build/fuzz-TARGET/corpus, and a crash leaves its input in .build/fuzz-TARGET/ as crash-*;
# replay one with .build/fuzz-TARGET/TARGET FILE):
#   shard-reader  the shard reader and verifier (Fuzz/FuzzShardReader.swift; seeds Fuzz/corpus)
#   rules         compiled rules, the classifier, deferral responses and requests (Fuzz/FuzzCompiledRules.swift)
#   rules-json    the rules file people write, sms compile's JSON: loaded, compiled, read back, classifying
#                 (Fuzz/FuzzRulesFile.swift; seeds Fuzz/corpus-rules-json)
#   lists         every parser of list input: JSON, list files, CSV records, number lines, gzip (Fuzz/FuzzLists.swift)
#   regex         the regex front end and both matchers against a naive reference (Fuzz/FuzzRegex.swift)
#   update        what a phone reads of a publication: deltas, metadata, pushes, bundles (Fuzz/FuzzUpdate.swift),
#                 against BlocklistCore and JSONStream built the same way and a crypto stand-in
#                 (Fuzz/CryptoStub.swift: real SHA-256, signatures and seals easy to pass)
#   http          HTTPFetch's response parser, whole and in random splits (Fuzz/FuzzHTTPResponse.swift)
set -euo pipefail
cd "$(dirname "$0")/.."
targets="shard-reader rules rules-json lists regex update http"
usage() { echo "usage: Scripts/fuzz.sh TARGET [SECONDS] [libFuzzer flags...]; TARGET is one of: $targets" >&2; exit 64; }
[[ $# -ge 1 ]] || usage
target=$1
shift
if [[ $target == --list ]]; then
    tr ' ' '\n' <<<"$targets"
    exit 0
fi
[[ " $targets " == *" $target "* ]] || { echo "fuzz.sh: no target \"$target\"." >&2; usage; }
seconds=${1:-60}
shift || true
out=.build/fuzz-$target
mkdir -p "$out/corpus" "$out/modules"
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name blocklist -I Sources/CZlib -I Sources/CWindowScan/include
    -I "$out/modules")
core=(Sources/BlocklistCore/*.swift Sources/BlocklistCore/Internals/*.swift)

# A module of the package built under the same flags as a static library, for the targets that
# reach several modules.
library() { # NAME SOURCES...
    local name=$1
    shift
    swiftc "${flags[@]}" -module-name "$name" -wmo -emit-library -static -emit-module \
        -emit-module-path "$out/modules/$name.swiftmodule" "$@" -o "$out/modules/lib$name.a"
}

# The C library under one name, which every module imports; the codecs (CRC-32 through zlib) and
# the JSON reader, which the portable modules import.
library LibC Sources/LibC/LibC.swift
library ByteCodecs Sources/ByteCodecs/*.swift
library JSONStream Sources/JSONStream/*.swift
# The message filter's window scan, the package's one C source, under the same sanitizers.
clang -O2 -fsanitize=fuzzer-no-link,address -I Sources/CWindowScan/include -c Sources/CWindowScan/WindowScan.c \
    -o "$out/modules/WindowScan.o"
link=(-L "$out/modules" -lJSONStream -lByteCodecs -lLibC -lz "$out/modules/WindowScan.o")

case $target in
shard-reader)
    swiftc "${flags[@]}" -module-name BlocklistCore "${core[@]}" Fuzz/FuzzShardReader.swift "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus max_len=4096 ;;
rules)
    swiftc "${flags[@]}" -module-name MessageFilterCore Sources/MessageFilterCore/*.swift Fuzz/FuzzCompiledRules.swift \
        "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-rules max_len=8192 ;;
regex)
    # BlocklistCore for the figures of the compiler's sentences (Figures.grouped).
    library BlocklistCore "${core[@]}"
    swiftc "${flags[@]}" -module-name MessageFilterCore Sources/MessageFilterCore/*.swift \
        Sources/MessageFilterCompiler/Regex{Subset,Alphabet,Program+Compile,Property}.swift \
        Sources/MessageFilterCompiler/UnicodeScripts.swift Fuzz/FuzzRegex.swift -L "$out/modules" -lBlocklistCore \
        "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-regex max_len=512 ;;
rules-json)
    library BlocklistCore "${core[@]}"
    mapfile -t sources < <(find Sources/BlocklistSystem -name '*.swift' | sort)
    library BlocklistSystem "${sources[@]}"
    library MessageFilterCore Sources/MessageFilterCore/*.swift
    swiftc "${flags[@]}" -module-name MessageFilterCompiler Sources/MessageFilterCompiler/*.swift Fuzz/FuzzRulesFile.swift \
        -L "$out/modules" -lMessageFilterCore -lBlocklistSystem -lBlocklistCore -lz "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-rules-json max_len=8192 ;;
lists)
    libraries=()
    for module in BlocklistCore BlocklistSystem SetStorage ListImport; do
        mapfile -t sources < <(find "Sources/$module" -name '*.swift' | sort)
        library "$module" "${sources[@]}"
        libraries=("-l$module" "${libraries[@]}")  # a static library before the ones it uses
    done
    swiftc "${flags[@]}" -module-name FuzzLists Fuzz/FuzzLists.swift -L "$out/modules" "${libraries[@]}" -lz "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-lists max_len=8192 ;;
update)
    library BlocklistCore "${core[@]}"
    # ListImport's SHA-256 (PortableSHA256) behind swift-crypto's API.
    library Crypto Fuzz/CryptoStub.swift Sources/ListImport/PortableSHA256.swift
    swiftc "${flags[@]}" -module-name UpdateCore Sources/UpdateCore/*.swift Fuzz/FuzzUpdate.swift \
        -L "$out/modules" -lBlocklistCore -lCrypto "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-update max_len=8192 ;;
http)
    swiftc "${flags[@]}" -module-name HTTPFetch Sources/HTTPFetch/*.swift Fuzz/FuzzHTTPResponse.swift "${link[@]}" -o "$out/$target"
    seeds=Fuzz/corpus-http max_len=4096 ;;
esac

"$out/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -artifact_prefix="$out/" \
    -print_final_stats=1 "$@" "$out/corpus" "$seeds"
