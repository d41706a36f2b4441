#!/usr/bin/env bash
# Runs `swift test` with a TMPDIR of its own and checks that nothing outside the tests' own
# temporary directories changed: the work tree (without .build) and the home directory's top level
# are listed with sizes and times before and after, and TMPDIR must be empty at the end (every test
# removes its own blocklist-* directory). Tests that try to write outside (`generate --output /`) check that
# themselves.
set -euo pipefail
cd "$(dirname "$0")/.."
state=$(mktemp -d)
trap 'rm -rf "$state"' EXIT
export TMPDIR="$state/tmp"
mkdir "$TMPDIR"
list() {
    { find . -path ./.build -prune -o -path ./.git -prune -o -path './.build-*' -prune -o -printf '%p %s %T@ %y\n'
      find "$HOME" -maxdepth 1 -printf '%p %s %T@ %y\n' 2>/dev/null; } | sort
}
# Package.resolved is SwiftPM's, written on the first resolve: resolve first, so that a run of
# this stage alone (`.ci/run test`) does not count it as the tests' doing.
swift package resolve > /dev/null
list > "$state/before"
swift test 2>&1 | tee "$state/log"
# Under BLOCKLIST_REQUIRE_REFERENCES=1 (.ci/run) every differential test runs against its Python
# reference: none may be skipped for a module that is missing.
if [ "${BLOCKLIST_REQUIRE_REFERENCES:-}" = 1 ] && grep -E 'skipped: "needs Python' "$state/log"; then
    echo "swift test skipped a differential test whose Python reference .ci/run installs" >&2
    exit 1
fi
list > "$state/after"
if ! diff "$state/before" "$state/after" > "$state/diff"; then
    echo "swift test changed files outside its temporary directories:" >&2
    cat "$state/diff" >&2
    exit 1
fi
# SwiftPM keeps its own locks and build files in TMPDIR; the tests' directories are blocklist-*.
left=$(ls -A "$TMPDIR" | grep '^blocklist-' || true)
if [ -n "$left" ]; then
    echo "swift test left files in its temporary directory: $left" >&2
    exit 1
fi
echo "swift test touched nothing outside its own temporary directories"
