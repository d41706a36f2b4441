#!/usr/bin/env bash
# Builds blocklist in release and installs it under a prefix: the CLI in PREFIX/bin and the programs
# it starts (blocklist-generate, blocklist-extension, blocklist-sms, blocklist-message-filter,
# blocklist-notification-service) in PREFIX/libexec/blocklist, where blocklist looks for them when
# they are not beside it; a man page per command in PREFIX/share/man/man1 (Scripts/man-pages.sh);
# shell completion for bash, zsh and fish where those shells look under PREFIX/share.
#
# Usage: Scripts/install.sh --prefix DIR    (default: $HOME/.local)
set -euo pipefail
prefix="$HOME/.local"
while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) [ $# -ge 2 ] || { echo "install.sh: --prefix needs a directory" >&2; exit 64; }; prefix=$2; shift 2 ;;
        --prefix=*) prefix=${1#--prefix=}; shift ;;
        -h|--help) sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument '$1'; give --prefix DIR" >&2; exit 64 ;;
    esac
done
[ -n "$prefix" ] || { echo "install.sh: --prefix is empty" >&2; exit 64; }
# A relative prefix is the caller's, not the repository's.
case $prefix in /*) ;; *) prefix="$PWD/$prefix" ;; esac
cd "$(dirname "$0")/.."
swift build -c release
helpers=(blocklist-generate blocklist-extension blocklist-sms blocklist-message-filter blocklist-notification-service)
for program in blocklist "${helpers[@]}"; do
    [ -x ".build/release/$program" ] || { echo "install.sh: .build/release/$program was not built" >&2; exit 1; }
done
mkdir -p "$prefix/bin" "$prefix/libexec/blocklist"
# install(1) unlinks an existing file before it writes the new one, so a running copy keeps its own.
install -m 755 .build/release/blocklist "$prefix/bin/blocklist"
for program in "${helpers[@]}"; do
    install -m 755 ".build/release/$program" "$prefix/libexec/blocklist/$program"
done
# Man pages, from the commands' help.
Scripts/man-pages.sh "$prefix/share/man/man1" .build/release > /dev/null
# Completion scripts, from swift-argument-parser, where each shell looks for them.
mkdir -p "$prefix/share/bash-completion/completions" "$prefix/share/zsh/site-functions" \
    "$prefix/share/fish/vendor_completions.d"
.build/release/blocklist --generate-completion-script bash > "$prefix/share/bash-completion/completions/blocklist"
.build/release/blocklist --generate-completion-script zsh > "$prefix/share/zsh/site-functions/_blocklist"
.build/release/blocklist --generate-completion-script fish > "$prefix/share/fish/vendor_completions.d/blocklist.fish"
echo "installed blocklist in $prefix/bin, its helpers in $prefix/libexec/blocklist, its man pages in $prefix/share/man/man1 and completion for bash, zsh and fish under $prefix/share"
