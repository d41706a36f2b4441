#!/usr/bin/env python3
"""Writes the seeds of Fuzz/corpus-update that hold the binary update formats (docs/FORMAT.md),
made here independently of the Swift writers: a delta payload against the fuzz target's base
shard (Fuzz/FuzzUpdate.swift), its delta file, a push sealed as Fuzz/CryptoStub.swift seals,
and an update file (from-M.push). Each seed's first byte picks the fuzz target's mode.

Usage: Scripts/fuzz-update-seeds.py [DIRECTORY]   (default Fuzz/corpus-update)
"""
import struct
import sys
import zlib


def varint(value):
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class Bits:
    """LSB-first bit writer with version 2's adaptive Rice code (BlocklistCore's RiceState)."""

    def __init__(self):
        self.out, self.acc, self.count = bytearray(), 0, 0

    def put(self, value, width):
        self.acc |= (value & ((1 << width) - 1)) << self.count
        self.count += width
        while self.count >= 8:
            self.out.append(self.acc & 0xFF)
            self.acc >>= 8
            self.count -= 8

    def explicit(self, value):
        length = max(1, value.bit_length())
        self.put(length - 1, 6)
        self.put(value, length)

    def rice(self, value, state):
        total, n = state
        mean = total // n
        k = 0 if mean == 0 else mean.bit_length() - 1
        q = value >> k
        if q < 24:
            self.put((1 << q) - 1, q + 1)
            self.put(value, k)
        else:
            self.put((1 << 24) - 1, 24)
            self.explicit(value)
        total, n = min(total + min(value, 1 << 56), 1 << 57), n + 1
        if n == 64:
            total, n = total >> 1, n >> 1
        state[:] = [total, n]

    def section(self, runs, label_width=0):
        """runs: (start, count, label); as RunSection.put writes a section."""
        if not runs:
            return
        has_lengths = any(count > 1 for _, count, _ in runs)
        self.put(1 if has_lengths else 0, 1)
        gaps, lengths = [1024, 1], [1024, 1]
        previous_last = None
        for start, count, label in runs:
            if previous_last is None:
                self.explicit(start)
            else:
                self.rice(start - (previous_last + 1), gaps)
            if has_lengths:
                self.rice(count - 1, lengths)
            self.put(label, label_width)
            previous_last = start + count - 1

    def bytes(self):
        if self.count:
            self.out.append(self.acc & 0xFF)
        return bytes(self.out)


def payload():
    # The base holds blocking runs 1000+997i (3 numbers) and identification runs 500000+5000j (10).
    removed = [(1000, 3, 0), (1997, 1, 0)]
    added = [(1500, 1, 0), (300000, 1, 0), (300002, 4, 0)]
    removed_ids = [(500000, 10, 0)]
    added_ids = [(700000, 2, 0), (700010, 1, 1)]
    labels = [b"ham", b"loan"]
    head = b"".join(varint(v) for v in [1, 2, 0, len(removed), len(added), len(removed_ids), len(added_ids)])
    head += varint(len(labels)) + b"".join(varint(len(l)) + l for l in labels)
    bits = Bits()
    bits.section(removed)
    bits.section(added)
    bits.section(removed_ids)
    bits.section(added_ids, label_width=1)
    return head + bits.bytes()


def delta_file(body):
    compressed = zlib.compress(body)
    head = b"BLKDELTA" + struct.pack("<HHIQQIII", 2, 48, 1, 1, 2, len(body), len(compressed), zlib.crc32(compressed))
    return head + struct.pack("<I", zlib.crc32(head)) + compressed


def signed_push(deltas):
    body = b"BLKPUSH2" + struct.pack("<QQq", 1, 2, 2**62) + bytes(32) + struct.pack("<I", 1)
    body += varint(0) + varint(len(deltas)) + b"".join(varint(len(d)) + d for d in deltas)
    return body + bytes([1]) + bytes(64)


def main():
    directory = sys.argv[1] if len(sys.argv) > 1 else "Fuzz/corpus-update"
    body = payload()
    plain = signed_push([body])
    sealed = bytes(12) + struct.pack("<I", len(plain)) + zlib.compress(plain) + bytes(16)
    seeds = {
        "delta-file": b"\x00" + delta_file(body),
        "delta-payload": b"\x01" + body,
        "push-stub-sealed": b"\x03" + sealed,
        "update-file": b"\x07" + plain,
    }
    for name, data in seeds.items():
        with open(f"{directory}/{name}", "wb") as out:
            out.write(data)


if __name__ == "__main__":
    main()
