#!/usr/bin/env bash
# Adds blocklist to an app as an iOS developer does, and checks what the app gets.
#
# Examples/ExtensionApp is an app's three extension handlers. This script tags a clone of this
# commit as version 1.0.0, points the app at it by version, naming no traits (as Xcode and XcodeGen
# cannot), and then:
#   - counts the packages the app resolves (at most 3: swift-crypto and what it needs);
#   - builds the three handlers (BlocklistCore, MessageFilterCore, UpdateCore alone);
#   - runs them on files the given blocklist binaries made: a shard streamed as the Call Directory
#     extension does, a message classified, and an update file applied to the installed shards;
#     each result is compared with what the tools say.
#
# Usage: Scripts/app-package.sh BINDIR     (BINDIR holds blocklist, e.g. .build/release)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:?usage: Scripts/app-package.sh BINDIR}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "app-package: $*" >&2; exit 1; }

git clone -q "$root" "$work/blocklist"
# Whatever tags the clone has, this commit is the newest version the app can resolve.
git -C "$work/blocklist" tag -l | xargs -r git -C "$work/blocklist" tag -d >/dev/null
git -C "$work/blocklist" tag 1.0.0
cp -R "$root/Examples/ExtensionApp" "$work/app"
rm -rf "$work/app/.build" "$work/app/Package.resolved"
export BLOCKLIST_URL="file://$work/blocklist"

started=$(date +%s)
(cd "$work/app" && swift package resolve >/dev/null)
pins=$(python3 -c "import json,sys; print(' '.join(p['identity'] for p in json.load(open(sys.argv[1]))['pins'] if p['identity'] != 'blocklist'))" \
    "$work/app/Package.resolved")
count=$(wc -w <<<"$pins")
echo "app-package: the app resolves $count packages besides blocklist: $pins"
[[ $count -le 3 ]] || fail "the app resolves $count packages; at most 3 (swift-crypto and what it needs)"
[[ " $pins " == *" swift-crypto "* ]] || fail "swift-crypto is not among them"
# What it fetched, not only what it pinned: the tools' packages are not even checked out.
checkouts=$(ls "$work/app/.build/checkouts" | grep -vx blocklist | tr '\n' ' ')
[[ $(wc -w <<<"$checkouts") -le 3 ]] || fail "the app checked out $(wc -w <<<"$checkouts") packages: $checkouts"

(cd "$work/app" && swift build --product app-check 2>&1 | tail -1)
echo "app-package: resolved and built in $(($(date +%s) - started)) s"
check="$work/app/.build/debug/app-check"

# The files: a 5,000-number set, its compiled rules, and an update to 5,018 numbers.
cd "$work"
python3 - <<'PY'
import random
r = random.Random(11)
a = set()
while len(a) < 5000: a.add(827000000000 + r.randrange(100000000))
b = set(sorted(a)[7:])
while len(b) < 5018: b.add(827000000000 + r.randrange(100000000))
open("a.txt", "w").write("".join("+%d\n" % n for n in sorted(a)))
open("b.txt", "w").write("".join("+%d\n" % n for n in sorted(b)))
PY
"$bin/blocklist" generate --numbers a.txt -o set >/dev/null
mkdir installed && cp set/set-*/shard-*.blk installed/
"$bin/blocklist" keys create keys >/dev/null
"$bin/blocklist" publish set --key keys/signing.key --to pub >/dev/null
"$bin/blocklist" generate --numbers b.txt -o set >/dev/null
"$bin/blocklist" publish set --key keys/signing.key --to pub >/dev/null
[[ -f pub/from-1.push ]] || fail "publish wrote no update file from generation 1"
"$bin/blocklist" sms compile "$root/docs/examples/sms-rules.json" -o rules >/dev/null
mkdir out
"$check" installed/shard-01.blk rules/rules.blsms "+821012345678" "Congratulations, you have won a car" \
    keys/root.json pub/from-1.push 1 "$(date +%s)" out installed/shard-*.blk | tee report.txt

grep -qx "call-directory entries 5000 ascending true last $(tail -1 a.txt | tr -d +)" report.txt ||
    fail "the Call Directory handler did not stream the 5,000 numbers in order"
grep -qx "message-filter action junk" report.txt || fail "the Message Filter handler did not find the prize scam junk"
grep -qx "notification-service generation 2 changed 1 added 25 removed 7" report.txt ||
    fail "the Notification Service handler did not apply the update (+25 -7)"
grep -qx "updated-shard 1 entries 5018" report.txt || fail "the updated shard does not hold 5,018 numbers"
# Number for number, the updated shard is the published list.
cmp -s <("$bin/blocklist" cat out/shard-1.blk) <(tr -d + <b.txt) ||
    fail "the updated shard's numbers differ from the published list (blocklist cat out/shard-1.blk)"

# The handler files `blocklist xcodegen` writes into an app's project compile, with the app's adapter
# of CallKit's manager, in the Swift 6 language mode with warnings as errors, against copies of the
# SDK stand-ins (Tests/SDKStandIns, which carry docs/PLATFORM.md's declarations), in a package that
# names blocklist by version with no traits.
"$bin/blocklist" xcodegen set --bundle-id com.example.blocklist -o proj --trust keys/root.json --generation 1 \
    --push-key keys/push.key >/dev/null
# Each target of project.yml becomes a target of the app's package (its copy here, so that
# blocklist and swift-crypto build once) with the same Swift files and the same blocklist products,
# and nothing else of blocklist: a file that needs a product its target does not link fails here
# as it would in Xcode. The app target's SwiftUI file is left out (no stand-in for SwiftUI).
for module in AppGroupContainers CallKit IdentityLookup UserNotifications LoggerStandIn; do
    cp -R "$root/Tests/SDKStandIns/$module" "$work/app/Sources/$module"
done
python3 - proj "$work/app" <<'PY' >>"$work/app/Package.swift"
import os, shutil, sys, yaml
proj, app = sys.argv[1], sys.argv[2]
spec = yaml.safe_load(open(os.path.join(proj, "project.yml")))
print("\n// Added by Scripts/app-package.sh: the SDK stand-ins and project.yml's targets.")
print('let strict: [SwiftSetting] = [.unsafeFlags(["-warnings-as-errors"])]')
print("package.targets += [")
for module in ["AppGroupContainers", "CallKit", "IdentityLookup", "UserNotifications", "LoggerStandIn"]:
    deps = "[]" if module in ("AppGroupContainers", "LoggerStandIn") else '["AppGroupContainers"]'
    print(f'    .target(name: "{module}", dependencies: {deps}, swiftSettings: strict),')
for name, target in sorted(spec["targets"].items()):
    files = [s["path"] for s in target.get("sources", []) if s["path"].startswith("Extensions/")]
    products = [d["product"] for d in target.get("dependencies", []) if d.get("package") == "blocklist"]
    os.makedirs(os.path.join(app, "Sources", "Xcode" + name))
    for path in files:
        shutil.copy(os.path.join(proj, path), os.path.join(app, "Sources", "Xcode" + name))
    deps = ['"CallKit"', '"IdentityLookup"', '"UserNotifications"', '"LoggerStandIn"'] + [
        f'.product(name: "{p}", package: "blocklist")' for p in products]
    print(f'    .target(name: "Xcode{name}", dependencies: [{", ".join(deps)}], swiftSettings: strict),')
    print(f"// {name}: {len(files)} files, {', '.join(products)}", file=sys.stderr)
print("]")
PY
targets=$(sed -n 's/^    .target(name: "\(Xcode[A-Za-z0-9]*\)".*/\1/p' "$work/app/Package.swift")
[[ -n "$targets" ]] || fail "project.yml gave no target to compile"
for target in $targets; do
    (cd "$work/app" && swift build --target "$target" --explicit-target-dependency-import-check error \
        >"$work/$target.log" 2>&1) ||
        { cat "$work/$target.log" >&2; fail "$target (project.yml's ${target#Xcode}) does not compile in the Swift 6 language mode with its own products"; }
    if grep -E "^$work/app/Sources/[A-Za-z]*/.*(warning|error):" "$work/$target.log" >&2; then
        fail "$target (project.yml's ${target#Xcode}) compiles with warnings"
    fi
done
echo "app-package: each target of project.yml ($(echo $targets | sed 's/Xcode//g')) compiles in the Swift 6 language mode with only its own products, no warning"
echo "app-package: OK: the three products work in an app that resolves $count packages"
