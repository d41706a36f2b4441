#!/usr/bin/env bash
# Builds one libFuzzer target (Fuzz/*.swift, linked with the package's modules it reaches, each
# built once as a static library under -sanitize=fuzzer,address and shared by every target) and
# runs it.
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
modules=.build/fuzz-modules
mkdir -p "$out/corpus" "$modules"
flags=(-sanitize=fuzzer,address -parse-as-library -O -package-name blocklist -I Sources/CZlib -I Sources/CWindowScan/include
    -I "$modules")

# What each module of the package imports of the others (the C modules are headers alone;
# Crypto is swift-crypto's API over ListImport's SHA-256, Fuzz/CryptoStub.swift).
imports() {
    case $1 in
    LibC | Crypto) ;;
    ByteCodecs) echo LibC ;;
    JSONStream) echo ByteCodecs ;;
    BlocklistCore) echo ByteCodecs LibC ;;
    BlocklistSystem) echo BlocklistCore ;;
    SetStorage) echo BlocklistSystem JSONStream ;;
    ListImport) echo SetStorage ;;
    MessageFilterCore) echo JSONStream ;;
    MessageFilterCompiler) echo MessageFilterCore BlocklistSystem ;;
    UpdateCore) echo BlocklistCore JSONStream Crypto ;;
    HTTPFetch) echo ByteCodecs ;;
    esac
}

# A module of the package as a static library under the fuzzing flags, in .build/fuzz-modules,
# which every target shares: built once, after the modules it imports, and again only when its
# sources or the flags change. A lock per module lets two fuzz.sh runs build side by side.
needed=()
library() { # NAME
    local name=$1 dependency sources stamp lock
    needed+=("$name")
    for dependency in $(imports "$name"); do library "$dependency"; done
    if [[ $name == Crypto ]]; then
        sources=(Fuzz/CryptoStub.swift Sources/ListImport/PortableSHA256.swift)
    else
        mapfile -t sources < <(find "Sources/$name" -name '*.swift' | sort)
    fi
    stamp=$( { echo "${flags[*]}"; cat "${sources[@]}"; } | sha256sum | cut -d' ' -f1)
    exec {lock}>"$modules/$name.lock"
    flock "$lock"
    if [[ ! -e $modules/lib$name.a || $(cat "$modules/$name.stamp" 2>/dev/null) != "$stamp" ]]; then
        rm -f "$modules/$name.stamp"
        swiftc "${flags[@]}" -module-name "$name" -wmo -emit-library -static -emit-module \
            -emit-module-path "$modules/$name.swiftmodule" "${sources[@]}" -o "$modules/lib$name.a"
        echo "$stamp" > "$modules/$name.stamp"
    fi
    exec {lock}>&-
}

# The package's one C source, the message filter's window scan, under the same sanitizers.
window_scan() {
    local lock
    exec {lock}>"$modules/WindowScan.lock"
    flock "$lock"
    if [[ ! -e $modules/WindowScan.o || Sources/CWindowScan/WindowScan.c -nt $modules/WindowScan.o ]]; then
        clang -O2 -fsanitize=fuzzer-no-link,address -I Sources/CWindowScan/include -c Sources/CWindowScan/WindowScan.c \
            -o "$modules/WindowScan.o.new"
        mv "$modules/WindowScan.o.new" "$modules/WindowScan.o"
    fi
    exec {lock}>&-
}

# The target's harness, a module of its own, linked with the libraries of the modules it
# imports (each static library before the ones it uses).
harness() { # FILE MODULE...
    local file=$1 module linked=()
    shift
    for module in "$@"; do library "$module"; done
    window_scan
    for module in MessageFilterCompiler ListImport SetStorage UpdateCore Crypto HTTPFetch MessageFilterCore \
        BlocklistSystem BlocklistCore JSONStream ByteCodecs LibC; do
        [[ " ${needed[*]} " == *" $module "* ]] && linked+=("-l$module")
    done
    swiftc "${flags[@]}" -module-name "Fuzz${target//-/}" "$file" -L "$modules" "${linked[@]}" -lz -lswiftGlibc \
        "$modules/WindowScan.o" -o "$out/$target"
}

case $target in
shard-reader) harness Fuzz/FuzzShardReader.swift BlocklistCore; seeds=Fuzz/corpus max_len=4096 ;;
rules) harness Fuzz/FuzzCompiledRules.swift MessageFilterCore; seeds=Fuzz/corpus-rules max_len=8192 ;;
regex) harness Fuzz/FuzzRegex.swift MessageFilterCompiler; seeds=Fuzz/corpus-regex max_len=512 ;;
rules-json) harness Fuzz/FuzzRulesFile.swift MessageFilterCompiler; seeds=Fuzz/corpus-rules-json max_len=8192 ;;
lists) harness Fuzz/FuzzLists.swift ListImport; seeds=Fuzz/corpus-lists max_len=8192 ;;
update) harness Fuzz/FuzzUpdate.swift UpdateCore; seeds=Fuzz/corpus-update max_len=8192 ;;
http) harness Fuzz/FuzzHTTPResponse.swift HTTPFetch; seeds=Fuzz/corpus-http max_len=4096 ;;
esac

"$out/$target" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -artifact_prefix="$out/" \
    -print_final_stats=1 "$@" "$out/corpus" "$seeds"
