#!/usr/bin/env bash
# Holds `blocklist generate` to its 7,168 KiB whole-process peak RSS (issue 9) in every condition
# that changes it, 5 runs each: the binaries as the linker wrote them, after `cp` to a new path,
# after `install`, on a terminal (progress bars, under `script`), with --json, and for a
# 10,000-shard spec. A static binary's resident code depends on how its file sits in the page
# cache, so the copied and installed binaries are measured too. Needs a release build.
set -euo pipefail
cd "$(dirname "$0")/.."
budget=${BUDGET_KIB:-7168}
release=.build/release
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/cp" "$work/install"
for product in blocklist blocklist-generate blocklist-extension; do
    cp "$release/$product" "$work/cp/"
    install "$release/$product" "$work/install/"
done
failed=0
measure() {  # name, directory with the binaries, then arguments after `generate`
    local name=$1 bin=$2
    shift 2
    local peaks=()
    for run in 1 2 3 4 5; do
        rm -rf "$work/out"
        if [ "$name" = terminal ]; then
            script -qec "/usr/bin/time -f %M -o $work/rss $bin/blocklist generate --output $work/out $*" /dev/null >/dev/null
        else
            /usr/bin/time -f %M -o "$work/rss" "$bin/blocklist" generate --output "$work/out" "$@" >/dev/null
        fi
        peaks+=("$(tail -n 1 "$work/rss")")
    done
    local worst
    worst=$(printf '%s\n' "${peaks[@]}" | sort -n | tail -n 1)
    printf '%-34s %s KiB (worst %s, budget %s)\n' "$name" "${peaks[*]}" "$worst" "$budget"
    if [ "$worst" -gt "$budget" ]; then failed=1; fi
}
measure "as built" "$release"
measure "after cp" "$work/cp"
measure "after install" "$work/install"
measure "terminal" "$work/cp"
measure "--json" "$work/cp" --json
measure "10,000 shards (after cp)" "$work/cp" --pattern +1########### --range-size 10000000 --no-exclusions --capacity 10000000 --no-sync
if [ "$failed" -ne 0 ]; then
    echo "generate went over its ${budget} KiB memory budget" >&2
    exit 1
fi
