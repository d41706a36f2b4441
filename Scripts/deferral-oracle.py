#!/usr/bin/env python3
"""The independent side of DeferralDifferentialTests: reads deferral requests and responses with
Python's json module, as the server's DeferralQuery and the extension's DeferralResponse are
specified (docs/MESSAGE-FILTER.md), and prints one verdict per input.

Input: JSON lines {"kind": "query" | "response", "hex": "<the document's bytes>"}.
Output: JSON lines {"ok": false} or {"ok": true, ...decoded fields}.
"""
import json
import sys

ACTIONS = {"none": "none", "allow": "allow", "junk": "junk", "filter": "junk", "promotion": "promotion",
           "transaction": "transaction"}
SUB_ACTIONS = {
    "transaction": {"transactionalOthers", "transactionalFinance", "transactionalOrders", "transactionalReminders",
                    "transactionalHealth", "transactionalWeather", "transactionalCarrier", "transactionalRewards",
                    "transactionalPublicServices"},
    "promotion": {"promotionalOthers", "promotionalOffers", "promotionalCoupons"},
}


class Refused(Exception):
    pass


def refuse_constant(name):
    raise Refused(name)


def has_surrogate(text):
    return any(0xD800 <= ord(c) < 0xE000 for c in text)


def load(data, pairs_hook):
    # Strict UTF-8 first: json.loads on bytes would guess UTF-16 or UTF-32 too. One UTF-8
    # byte-order mark at the start is skipped, as RFC 8259 §8.1 lets a reader do.
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8")
    return json.loads(text, parse_constant=refuse_constant, object_pairs_hook=pairs_hook)


class Pairs(list):
    """An object's members in order, duplicates kept."""


def walk(value, depth, limit, unique=True):
    """Refuses lone surrogates anywhere, an array or object inside more than limit others (the
    top value is inside none) and, with unique, an object's repeated member name."""
    if isinstance(value, (Pairs, list)) and depth > limit:
        raise Refused("depth")
    if isinstance(value, Pairs):
        if unique and len({key for key, _ in value}) != len(value):
            raise Refused("duplicate")
        for key, member in value:
            if has_surrogate(key):
                raise Refused("surrogate")
            walk(member, depth + 1, limit, unique)
    elif isinstance(value, list):
        for member in value:
            walk(member, depth + 1, limit, unique)
    elif isinstance(value, str) and has_surrogate(value):
        raise Refused("surrogate")


def response(data):
    if len(data) > 64 * 1024:
        raise Refused("size")
    document = load(data, Pairs)
    if not isinstance(document, Pairs):
        raise Refused("not an object")
    walk(document, 0, 32)
    action = sub_action = None
    for key, value in document:
        if key in ("action", "subAction"):
            # Each is named once (duplicates were refused above) and must be a string.
            if not isinstance(value, str):
                raise Refused("not a string")
            if key == "action":
                action = value
            else:
                sub_action = value
    if action is None or action not in ACTIONS:
        raise Refused("action")
    action = ACTIONS[action]
    if sub_action is not None and sub_action not in SUB_ACTIONS.get(action, ()):
        raise Refused("subAction")
    return {"action": action, "subAction": sub_action}


def as_dict(pairs):
    # Duplicate keys were refused above.
    return dict(pairs) if isinstance(pairs, Pairs) else pairs


def query(data):
    document = load(data, Pairs)
    walk(document, 0, 32)
    document = as_dict(document)

    def member(container, key, kind):
        container = as_dict(container)
        if not isinstance(container, dict) or key not in container:
            raise Refused(key)
        value = as_dict(container[key])
        if kind is int:
            # A whole number within Int64; true and false are not numbers to Swift. JSONDecoder also
            # takes 1.0 and 1e2 when they are whole (RELIABILITY.md, differences kept).
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise Refused(key)
            if isinstance(value, float):
                if not value.is_integer():
                    raise Refused(key)
                value = int(value)
            if not -(1 << 63) <= value < (1 << 63):
                raise Refused(key)
        elif not isinstance(value, kind):
            raise Refused(key)
        return value

    version = member(document, "_version", int)
    app = member(document, "app", dict)
    the_query = member(document, "query", dict)
    message = member(the_query, "message", dict)
    return {"version": version, "app": member(app, "version", str), "sender": member(the_query, "sender", str),
            "text": member(message, "text", str)}


def main():
    for line in sys.stdin:
        case = json.loads(line)
        data = bytes.fromhex(case["hex"])
        try:
            verdict = (query if case["kind"] == "query" else response)(data)
            verdict["ok"] = True
        except (Refused, ValueError, RecursionError, TypeError) as error:
            verdict = {"ok": False, "why": str(error)[:80]}
        sys.stdout.write(json.dumps(verdict) + "\n")


main()
