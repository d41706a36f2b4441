#!/usr/bin/env bash
# Regenerates Sources/blocklist/hot-functions.order (and the two extension hosts', below): the functions the blocklist CLI runs, in the
# order it first runs them, as callgrind sees them. The linker puts them together (Package.swift,
# hotFunctionsFirst), which keeps the static binary's resident memory low. Rerun after changes
# that add code to the hot commands; a stale list only costs memory, never correctness.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v valgrind >/dev/null || { echo "valgrind is needed: apt-get install valgrind" >&2; exit 1; }
swift build -c release --product blocklist
bin=.build/release/blocklist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
run() { valgrind --tool=callgrind --callgrind-out-file="$work/cg.$1" --compress-strings=no --compress-pos=no "$bin" "${@:2}" >/dev/null 2>&1 || true; }
run 1 --help
run 2 generate --no-sync --output "$work/out"
run 3 verify "$work/out"
shard=$(ls "$work"/out/set-*/shard-01.blk)
run 4 inspect "$shard"
run 5 cat "$shard"
run 6 generate --help
run 7 generate --pattern +1## --output "$work/out"
cat "$work"/cg.* | sed -nE 's/^c?fn=//p' | grep -v '^0x' | awk '!seen[$0]++' > Sources/blocklist/hot-functions.order
wc -l Sources/blocklist/hot-functions.order

# The message filter extension host: `blocklist bench`'s 10,000 rules and 2,000 of its messages.
swift build -c release --product blocklist-message-filter
rm -f "$work"/cg.*
"$bin" bench-workload sms-frames "$work" 2000 >/dev/null
valgrind --tool=callgrind --callgrind-out-file="$work/cg.sms" --compress-strings=no --compress-pos=no \
    .build/release/blocklist-message-filter "$work/sms-10k/rules.blsms" <"$work/frames.bin" >/dev/null 2>&1 || true
cat "$work"/cg.* | sed -nE 's/^c?fn=//p' | grep -v '^0x' | awk '!seen[$0]++' > Sources/blocklist-message-filter/hot-functions.order
wc -l Sources/blocklist-message-filter/hot-functions.order

# The Call Directory extension's host: streaming the largest default shard (extension 50).
swift build -c release --product blocklist-extension
"$bin" generate --no-sync --output "$work/ext" >/dev/null
rm -f "$work"/cg.*
valgrind --tool=callgrind --callgrind-out-file="$work/cg.ext" --compress-strings=no --compress-pos=no \
    .build/release/blocklist-extension "$(ls "$work"/ext/set-*/shard-50.blk)" </dev/null >/dev/null 2>&1 || true
cat "$work"/cg.* | sed -nE 's/^c?fn=//p' | grep -v '^0x' | awk '!seen[$0]++' > Sources/blocklist-extension/hot-functions.order
wc -l Sources/blocklist-extension/hot-functions.order
