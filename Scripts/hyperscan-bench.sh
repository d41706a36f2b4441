#!/usr/bin/env bash
# The message filter's offline classification beside Hyperscan, on the same rules and messages,
# in the same run (issue 29, item 7). Builds Benchmarks/Hyperscan/hs-bench.c against Debian's
# libhyperscan-dev (installed when missing), writes the bench corpus with
# `blocklist bench-workload sms-corpus`, then runs `sms-compiled` and hs-bench in turn, ROUNDS
# times each (default 3), over MESSAGES messages (default 2,000,000), both single-threaded.
# Each run must decide the same number of messages. Prints each run's rate and the best of each.
#
# Usage: Scripts/hyperscan-bench.sh [ROUNDS] [MESSAGES]   (after swift build -c release)
set -euo pipefail
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
    echo "round $round: blocklist $ours messages/s, Hyperscan $(pkg-config --modversion libhs) $hs messages/s"
    [ "$ours" -gt "$best_ours" ] && best_ours=$ours
    [ "$hs" -gt "$best_hs" ] && best_hs=$hs
done
awk -v o="$best_ours" -v h="$best_hs" -v d="$decided" 'BEGIN {
    printf "best: blocklist %d messages/s, Hyperscan %d messages/s: %.2f× Hyperscan (%d messages decided by each)\n", o, h, o / h, d
}'
