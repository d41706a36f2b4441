#!/usr/bin/env bash
# Writes blocklist's man pages, one per command (blocklist.1, blocklist.diff.1, blocklist.sms.serve.1,
# ...), into DIR, from the commands' own help: swift-argument-parser's generate-manual for blocklist
# and blocklist-sms, and, for the commands whose options another program parses (generate, which
# blocklist-generate runs, and updates serve), a page holding their --help text.
#
# Usage: Scripts/man-pages.sh DIR [BINDIR]    (BINDIR: the built programs, default .build/release)
set -euo pipefail
[ $# -ge 1 ] || { echo "usage: Scripts/man-pages.sh DIR [BINDIR]" >&2; exit 64; }
# Relative paths are the caller's, not the repository's.
absolute() { case $1 in /*) printf '%s' "$1" ;; *) printf '%s/%s' "$PWD" "$1" ;; esac; }
out=$(absolute "$1")
bin=$(absolute "${2:-$(dirname "$0")/../.build/release}")
cd "$(dirname "$0")/.."
[ -x "$bin/blocklist" ] && [ -x "$bin/blocklist-sms" ] || { echo "man-pages.sh: no built blocklist in $bin" >&2; exit 1; }
swift build -c release --product generate-manual > /dev/null
manual=$(swift build -c release --show-bin-path)/generate-manual
mkdir -p "$out"
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

mkdir -p "$scratch/blocklist" "$scratch/sms"
"$manual" "$bin/blocklist" --multi-page --output-directory "$scratch/blocklist"
"$manual" "$bin/blocklist-sms" --multi-page --output-directory "$scratch/sms"
cp "$scratch"/blocklist/*.1 "$out/"
# blocklist execs blocklist-sms for these two, so their options are blocklist-sms's: its pages
# replace blocklist's stubs, under blocklist's names.
for command in serve simulate; do
    sed -e 's/^\.Dt "BLOCKLIST SMS\./.Dt "BLOCKLIST.SMS./' "$scratch/sms/blocklist sms.$command.1" > "$out/blocklist.sms.$command.1"
done

# A page holding `blocklist COMMAND... --help`: NAME from its overview, the rest as printed.
from_help() { # PAGE COMMAND...
    local page=$1
    shift
    local help name abstract
    help=$("$bin/blocklist" "$@" --help)
    name="blocklist $*"
    abstract=$(printf '%s\n' "$help" | sed -n '/^OVERVIEW: /,/^$/p' | sed 's/^OVERVIEW: //' | tr '\n' ' ' | sed 's/ *$//')
    {
        printf '.TH "%s" "1" "%s" "blocklist"\n' "$(printf '%s' "${page%.1}" | tr '[:lower:]' '[:upper:]')" "$(date -u +%Y-%m-%d)"
        printf '.SH NAME\n%s \\- %s\n' "$name" "$abstract"
        printf '.SH DESCRIPTION\n.nf\n'
        # Backslashes escaped, and a line that starts with . or ' kept as text.
        printf '%s\n' "$help" | sed -e 's/\\/\\e/g' -e "s/^\\([.']\\)/\\\\\\&\\1/"
        printf '.fi\n'
    } > "$out/$page"
}
from_help blocklist.generate.1 generate
from_help blocklist.updates.serve.1 updates serve
echo "wrote $(ls "$out" | wc -l) man pages in $out"
