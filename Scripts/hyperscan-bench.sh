#!/usr/bin/env bash
# The message filter's offline classification beside Hyperscan, on the same rules and messages,
# in the same run (issue 29, item 7). Builds Benchmarks/Hyperscan/hs-bench.c against Debian's
# libhyperscan-dev (installed when missing), writes the bench corpus with
# `blocklist bench-workload sms-corpus`, then runs `sms-compiled` and hs-bench in turn, ROUNDS
# times each (default 3), over MESSAGES messages (default 2,000,000), both single-threaded.
# Each run must decide the same number of messages. Prints each run's rate and the best of each,
# and Hyperscan's rate on the bodies joined into one buffer (bytes a second; no decisions).
#
# With --rules FILE --messages FILE, your own rules (JSON) and messages (JSON Lines) instead:
# `blocklist sms bench` classifies them and writes them for hs-bench (--corpus), each round, and
# hs-bench runs over as many messages; Hyperscan reads the raw text (no normalization), so where
# that matters the two may decide different numbers of messages, which is shown, not refused.
#
# Usage: Scripts/hyperscan-bench.sh [ROUNDS] [MESSAGES]   (after swift build -c release)
#        Scripts/hyperscan-bench.sh --rules FILE --messages FILE [ROUNDS]
set -euo pipefail
user_rules="" user_messages=""
if [ "${1:-}" = --rules ]; then
    [ $# -ge 4 ] && [ "$3" = --messages ] || { echo "usage: Scripts/hyperscan-bench.sh --rules FILE --messages FILE [ROUNDS]" >&2; exit 64; }
    user_rules=$(realpath "$2") user_messages=$(realpath "$4")
    shift 4
fi
cd "$(dirname "$0")/.."
rounds=${1:-3}
messages=${2:-2000000}
blocklist=.build/release/blocklist
[ -x "$blocklist" ] || { echo "build first: swift build -c release" >&2; exit 1; }
if ! pkg-config --exists libhs; then
    apt-get update -qq && apt-get install -y -qq libhyperscan-dev >/dev/null
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Wall -Wextra -Werror -o "$out/hs-bench" Benchmarks/Hyperscan/hs-bench.c $(pkg-config --cflags --libs libhs)
if [ -n "$user_rules" ]; then
    for round in $(seq "$rounds"); do
        "$blocklist" sms bench --rules "$user_rules" --messages "$user_messages" --rounds 1 --corpus "$out/$round" --json > "$out/ours.json"
        read -r classified rate none <<<"$(python3 -c 'import json, sys; r = json.load(open(sys.argv[1])); print(r["classified"], int(r["messagesPerSecond"]), r["decided"].get("none", 0) * (r["classified"] // r["messages"]))' "$out/ours.json")"
        "$out/hs-bench" "$out/$round/sms-corpus" "$classified" > "$out/hs"
        hs=$(awk -v n="$(sed -n 's/^entries //p' "$out/hs")" -v s="$(sed -n 's/^seconds //p' "$out/hs")" 'BEGIN { printf "%d", n / s }')
        buffer=$(awk -v n="$(sed -n 's/^bufferBytes //p' "$out/hs")" -v s="$(sed -n 's/^bufferSeconds //p' "$out/hs")" 'BEGIN { printf "%.1f", n / s / 1e6 }')
        echo "round $round: blocklist $rate messages/s ($((classified - none)) of $classified decided), Hyperscan $(pkg-config --modversion libhs) $hs messages/s ($(sed -n 's/^bytes //p' "$out/hs") decided), and $buffer MB/s on the bodies as one buffer"
    done
    exit 0
fi
"$blocklist" bench-workload sms-corpus "$out" "$messages" > /dev/null
field() { sed -n "s/^$1 //p" "$2"; }
best_ours=0
best_hs=0
decided=""
for round in $(seq "$rounds"); do
    "$blocklist" bench-workload sms-compiled "$out" "$messages" > "$out/ours"
    "$out/hs-bench" "$out/sms-corpus" "$messages" > "$out/hs"
    for who in ours hs; do
        count=$(field bytes "$out/$who")
        [ -z "$decided" ] && decided=$count
        [ "$count" = "$decided" ] || { echo "$who decided $count messages, not $decided" >&2; exit 1; }
    done
    ours=$(awk -v n="$(field entries "$out/ours")" -v s="$(field seconds "$out/ours")" 'BEGIN { printf "%d", n / s }')
    hs=$(awk -v n="$(field entries "$out/hs")" -v s="$(field seconds "$out/hs")" 'BEGIN { printf "%d", n / s }')
    buffer=$(awk -v n="$(field bufferBytes "$out/hs")" -v s="$(field bufferSeconds "$out/hs")" 'BEGIN { printf "%.1f", n / s / 1e6 }')
    echo "round $round: blocklist $ours messages/s, Hyperscan $(pkg-config --modversion libhs) $hs messages/s, and $buffer MB/s on the bodies as one buffer"
    [ "$ours" -gt "$best_ours" ] && best_ours=$ours
    [ "$hs" -gt "$best_hs" ] && best_hs=$hs
done
awk -v o="$best_ours" -v h="$best_hs" -v d="$decided" 'BEGIN {
    printf "best: blocklist %d messages/s, Hyperscan %d messages/s: %.2f× Hyperscan (%d messages decided by each)\n", o, h, o / h, d
}'
