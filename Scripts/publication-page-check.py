#!/usr/bin/env python3
"""Checks a publication's page (index.html, or the DOM a browser made of it) against
`blocklist publication status --json`: every figure the page shows, its grouped text and its
exact value, the signed files' expiry, one chart point per generation and one bar per
generation with delta bytes; and that the page runs no script and loads nothing from elsewhere.

Usage: publication-page-check.py PAGE STATUS.json     (prints "ok N figures", exits 1 otherwise)

Written apart from the Swift renderer, with Python's own HTML parser, so that a figure the
renderer gets wrong, or places where no one reads it, fails here."""
import json
import sys
from html.parser import HTMLParser


class Page(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack = []          # open elements: (tag, attrs)
        self.fields = []         # (scope, field, value, text)
        self.capture = None      # [scope, field, value, text] being read
        self.depth = 0
        self.circles = []
        self.bars = []
        self.scripts = 0
        self.external = []

    def scope(self):
        for tag, attrs in reversed(self.stack):
            if "data-generation" in attrs and tag in ("tr", "div"):
                return ("generation", attrs["data-generation"], tag)
            if "data-role" in attrs:
                return ("role", attrs["data-role"], tag)
        return ("page", "", "")

    def handle_starttag(self, tag, attributes):
        attrs = dict(attributes)
        if tag == "script":
            self.scripts += 1
        for name in ("src", "href"):
            if name in attrs:
                self.external.append(attrs[name])
        if tag in ("link", "iframe", "img", "object", "embed"):
            self.external.append(tag)
        if tag == "circle":
            self.circles.append((attrs.get("data-generation"), attrs.get("data-entries")))
        if tag == "rect" and "data-delta-bytes" in attrs:
            self.bars.append((attrs.get("data-generation"), attrs.get("data-delta-bytes")))
        void = tag in ("meta", "br", "line", "polyline", "circle", "input", "img")
        if not void:
            self.stack.append((tag, attrs))
        if "data-field" in attrs and not void:
            self.capture = [self.scope(), attrs["data-field"], attrs.get("data-value"), ""]
            self.depth = len(self.stack)

    def handle_startendtag(self, tag, attributes):
        self.handle_starttag(tag, attributes)
        if self.stack and self.stack[-1][0] == tag:
            self.stack.pop()

    def handle_endtag(self, tag):
        if self.capture is not None and len(self.stack) == self.depth and self.stack[-1][0] == tag:
            scope, field, value, text = self.capture
            self.fields.append((scope, field, value, text.strip()))
            self.capture = None
        while self.stack:
            open_tag, _ = self.stack.pop()
            if open_tag == tag:
                break

    def handle_data(self, data):
        if self.capture is not None:
            self.capture[3] += data


def grouped(n):
    return f"{n:,}"


def runs(shards):
    """Shard numbers as the page writes them: "none", "3", "1–4, 7"."""
    if not shards:
        return "none"
    out, start, last = [], shards[0], shards[0]
    for s in shards[1:] + [None]:
        if s is not None and s == last + 1:
            last = s
            continue
        out.append(str(start) if start == last else f"{start}–{last}")
        start = last = s
    return ", ".join(out)


def main():
    page = Page()
    with open(sys.argv[1], encoding="utf-8") as f:
        page.feed(f.read())
    with open(sys.argv[2], encoding="utf-8") as f:
        status = json.load(f)
    problems = []
    found = {}
    for scope, field, value, text in page.fields:
        found.setdefault((scope[0], scope[1], scope[2], field), []).append((value, text))

    def expect(kind, key, tag, field, number, text=None):
        entries = found.get((kind, str(key), tag, field))
        if not entries:
            problems.append(f"{kind} {key}: no {field} on the page")
            return
        for value, shown in entries:
            if value != str(number):
                problems.append(f"{kind} {key} {field}: data-value {value!r}, status says {number}")
            if text is not None and text not in shown:
                problems.append(f"{kind} {key} {field}: shows {shown!r}, expected {text!r}")

    checked = 0
    generations = {g["generation"]: g for g in status["generations"]}
    current = generations[status["generation"]]
    expect("page", "", "", "generation", status["generation"])
    for field in ("numbers", "labels", "shards", "bytes"):
        expect("generation", status["generation"], "div", field, current[field], grouped(current[field]))
        checked += 1
    if current["numbers"] + current["labels"] != status["entries"]:
        problems.append("the current generation's numbers and labels do not add up to its entries")
    for role in status["roles"]:
        expect("role", role["role"], "tr", "version", role["version"])
        expect("role", role["role"], "tr", "expires", role["expires"], role["expiresAt"])
        checked += 2
    for g in status["generations"]:
        for field in ("numbers", "labels", "shards", "bytes"):
            expect("generation", g["generation"], "tr", field, g[field], grouped(g[field]))
            checked += 1
        expect("generation", g["generation"], "tr", "expires", g["expires"])
        checked += 1
        if "previous" in g:
            expect("generation", g["generation"], "tr", "previous", g["previous"])
            for field, sign in (("added", "+"), ("removed", "−"), ("labelsAdded", "+"), ("labelsRemoved", "−")):
                expect("generation", g["generation"], "tr", field, g[field], sign + grouped(g[field]))
                checked += 1
            shards = ", ".join(str(s) for s in g["changedShards"])
            expect("generation", g["generation"], "tr", "changedShards", shards, runs(g["changedShards"]))
            expect("generation", g["generation"], "tr", "deltaBytes", g["deltaBytes"], grouped(g["deltaBytes"]))
            checked += 2
        elif ("generation", str(g["generation"]), "tr", "previous") in found:
            problems.append(f"generation {g['generation']} is the oldest held, yet the page names one before it")
    rows = {key[1] for key in found if key[0] == "generation" and key[2] == "tr"}
    if rows != {str(g) for g in generations}:
        problems.append(f"the page lists generations {sorted(rows)}, status {sorted(generations)}")
    points = [(g, int(e)) for g, e in page.circles]
    expected_points = [(str(g["generation"]), g["numbers"] + g["labels"]) for g in status["generations"]]
    if points != expected_points:
        problems.append(f"chart points {points}, expected {expected_points}")
    bars = [(g, int(b)) for g, b in page.bars]
    expected_bars = [(str(g["generation"]), g["deltaBytes"]) for g in status["generations"] if g["deltaBytes"] > 0]
    if bars != expected_bars:
        problems.append(f"chart bars {bars}, expected {expected_bars}")
    if page.scripts:
        problems.append(f"{page.scripts} script elements")
    if page.external:
        problems.append(f"loads from elsewhere: {page.external}")
    if problems:
        print("\n".join(problems))
        sys.exit(1)
    print(f"ok {checked} figures")


main()
