#!/usr/bin/env python3
"""The README's command table, made from the built CLI's own help.

    Scripts/cli-table.py [--binary PATH] [--readme PATH] --write   rewrites README.md between the markers
    Scripts/cli-table.py [--binary PATH] [--readme PATH] --check   exits 1, printing a diff, if it differs

It walks `blocklist --help` and `blocklist help COMMAND` (nested subcommands too), and takes each
command's overview and the option names of its OPTIONS section (--help and --version, which every
command has, are left out). The binary defaults to .build/debug/blocklist.
"""

import difflib
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
README = os.path.join(ROOT, "README.md")
BEGIN = "<!-- cli-table:begin (Scripts/cli-table.py --write makes this table from --help) -->"
END = "<!-- cli-table:end -->"


def help_text(binary, path):
    arguments = [binary, "help", *path] if path else [binary, "--help"]
    result = subprocess.run(arguments, capture_output=True, text=True, timeout=60)
    if result.returncode != 0:
        sys.exit(f"{' '.join(arguments)} exited {result.returncode}: {result.stderr.strip()}")
    return result.stdout


def sections(text):
    """The help's sections by heading (OVERVIEW, USAGE, OPTIONS, SUBCOMMANDS...), as lists of lines."""
    found, current = {}, None
    for line in text.splitlines():
        heading = re.match(r"^([A-Z][A-Z ]+):(.*)$", line)
        if heading:
            current = heading.group(1)
            found[current] = [heading.group(2).strip()] if heading.group(2).strip() else []
        elif current is not None:
            found[current].append(line)
    return found


def overview(found):
    """The overview's first paragraph, on one line."""
    lines = []
    for line in found.get("OVERVIEW", []):
        if not line.strip():
            break
        lines.append(line.strip())
    return " ".join(lines)


def subcommands(found):
    return [m.group(1) for line in found.get("SUBCOMMANDS", []) if (m := re.match(r"^  ([a-z][a-z-]*)\b", line))]


def options(found):
    names = []
    for line in found.get("OPTIONS", []):
        match = re.match(r"^  (?:-[A-Za-z], )?(--[a-z][a-z-]*)", line)
        if match and match.group(1) not in ("--help", "--version") and match.group(1) not in names:
            names.append(match.group(1))
    return names


def table(binary):
    rows = []

    def walk(path):
        found = sections(help_text(binary, path))
        children = subcommands(found)
        if path and not children:
            names = ", ".join(f"`{name}`" for name in options(found)) or "—"
            what = overview(found).replace("|", "\\|")
            rows.append(f"| `blocklist {' '.join(path)}` | {what} | {names} |")
        for child in children:
            if child != "help":
                walk(path + [child])

    walk([])
    return "\n".join(["| command | what it does | options |", "|---|---|---|", *rows])


def main():
    arguments = sys.argv[1:]
    binary = os.path.join(ROOT, ".build/debug/blocklist")
    readme_path = README
    if "--binary" in arguments:
        binary = arguments[arguments.index("--binary") + 1]
    if "--readme" in arguments:
        readme_path = arguments[arguments.index("--readme") + 1]
    mode = "--write" if "--write" in arguments else "--check" if "--check" in arguments else None
    if mode is None:
        sys.exit(__doc__)
    readme = open(readme_path, encoding="utf-8").read()
    if BEGIN not in readme or END not in readme:
        sys.exit(f"README.md has no {BEGIN} … {END} markers")
    head, rest = readme.split(BEGIN, 1)
    old, tail = rest.split(END, 1)
    new = "\n" + table(binary) + "\n"
    if mode == "--write":
        with open(readme_path, "w", encoding="utf-8") as file:
            file.write(head + BEGIN + new + END + tail)
        return
    if old != new:
        sys.stdout.writelines(
            difflib.unified_diff(old.splitlines(True), new.splitlines(True), "README.md", "from --help")
        )
        print("The README's command table differs from --help: run Scripts/cli-table.py --write.")
        sys.exit(1)


if __name__ == "__main__":
    main()
