#!/usr/bin/env bash
# Regenerates Sources/blocklist/hot-functions.order (and the three extension hosts', below): the functions the blocklist CLI runs, in the
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

# The Notification Service Extension's host: an inline push, then a push with a URL (the
# publication served on loopback), each applying a delta to a 20,000-number shard.
swift build -c release --product blocklist-notification-service
nse=$work/nse
mkdir -p "$nse"
python3 -c "
import random
r = random.Random(18)
print('\n'.join('+8270%08d' % r.randrange(10**8) for _ in range(20000)))" > "$nse/numbers.txt"
"$bin" keys create "$nse/keys" >/dev/null
"$bin" generate --numbers "$nse/numbers.txt" --layout packed --output "$nse/set" --no-sync >/dev/null 2>&1
"$bin" publish "$nse/set" --key "$nse/keys/signing.key" --to "$nse/pub" >/dev/null
"$bin" update --from "$nse/pub" --trust "$nse/keys/root.json" --app-group "$nse/app" >/dev/null
rm -f "$work"/cg.*
# valgrind cannot read BoringSSL's DWARF 5: profile a copy without debug information (the symbol
# names the order needs stay).
cp .build/release/blocklist-notification-service "$work/nse-host"
strip --strip-debug "$work/nse-host"
for step in inline url; do
    python3 -c "
import random
print('\n'.join('+8270%08d' % random.randrange(10**8) for _ in range(100)))" >> "$nse/numbers.txt"
    "$bin" generate --numbers "$nse/numbers.txt" --layout packed --output "$nse/set" --no-sync >/dev/null 2>&1
    "$bin" publish "$nse/set" --key "$nse/keys/signing.key" --to "$nse/pub" >/dev/null
    # A push names an http(s) URL only: the publication is served on loopback by the static host.
    mkfifo "$work/stdin-$step"
    python3 Scripts/static-host.py "$nse/pub" < "$work/stdin-$step" > "$work/port-$step" 2>/dev/null &
    host=$!
    exec 5> "$work/stdin-$step"
    for _ in $(seq 1 100); do [ -s "$work/port-$step" ] && break; sleep 0.1; done
    url="http://127.0.0.1:$(head -1 "$work/port-$step")/"
    if [ "$step" = inline ]; then flags=(); else flags=(--no-inline); fi
    "$bin" push payload --from "$nse/pub" --key "$nse/keys/signing.key" --url "$url" "${flags[@]}" > "$nse/push.json" 2>/dev/null
    valgrind --tool=callgrind --callgrind-out-file="$work/cg.nse-$step" --compress-strings=no --compress-pos=no \
        "$work/nse-host" "$nse/push.json" --app-group "$nse/app" --trust "$nse/keys/root.json" \
        >/dev/null 2>&1 || true
    exec 5>&-
    wait "$host" || true
done
cat "$work"/cg.* | sed -nE 's/^c?fn=//p' | grep -v '^0x' | awk '!seen[$0]++' > Sources/blocklist-notification-service/hot-functions.order
wc -l Sources/blocklist-notification-service/hot-functions.order
