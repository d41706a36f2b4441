#!/usr/bin/env python3
"""Both servers under slow clients (issue 27, items 1 and 8), on loopback only, bounded in clients and time.

Slow readers (item 1): publishes 5,000,000 random numbers with BINDIR/blocklist, starts
`updates serve` on it and opens READERS connections that each ask for the largest shard or for
/v1/update?from=0 (over 1 MiB, so answered 404) with a 4 KiB receive buffer, then read 16 bytes a
second for --read-seconds. It fails if the server's peak resident memory (VmHWM) reaches
--max-rss-mib (128) or a reader is not answered.

Half-sent requests (item 8): for `sms serve` (the example rules) and `updates serve` (the same
publication): starts the server with its defaults (1,024 connections, 10 s header timeout),
starts DOWNLOADS slow downloads of the publication's largest file (complete requests, read only at
the end), opens CLIENTS connections that each send half a request head and hold it, then times
REQUESTS well-formed requests on new connections, one after another. It fails if any is not
answered, or answered later than --limit seconds, or if a slow download does not arrive whole
afterwards: the server makes room by closing the oldest connections still sending their request,
never one whose request has arrived.

Readers that never read (issue 46): `updates serve --max-connections 16` and STALLED connections
(24) that each ask for the largest shard and never read, so that every answer stalls; then REQUESTS
well-formed requests on new connections. It fails if any is not answered within --limit seconds:
when no connection is still sending its request, the server closes the oldest stalled one for room.

Usage: Scripts/slow-clients.py BINDIR [--only readers|half-sent|stalled] [--readers 200] [--read-seconds 5]
       [--max-rss-mib 128] [--clients 8000] [--requests 20] [--limit 1.0] [--downloads 20] [--stalled 24]
BINDIR holds blocklist and blocklist-sms (.build/release). Raises its own open-file limit to the
hard limit (each client needs a descriptor).
"""
import argparse
import importlib.util
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The half-sent requests and /proc figures of Scripts/abuse-server.py.
_spec = importlib.util.spec_from_file_location("abuse_server", os.path.join(ROOT, "Scripts/abuse-server.py"))
abuse = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(abuse)
status = abuse.status


def download(port, path):
    """A complete GET of `path` on a socket with a small receive buffer, not read yet."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n" % path.encode())
    return s


def drain(s, timeout):
    """Everything the server sends until it closes; the body's length, or -1 if it was cut."""
    s.settimeout(timeout)
    data = b""
    try:
        while True:
            chunk = s.recv(1 << 16)
            if not chunk:
                break
            data += chunk
    except OSError:
        return -1
    head, _, body = data.partition(b"\r\n\r\n")
    for line in head.split(b"\r\n"):
        if line.lower().startswith(b"content-length:"):
            return len(body) if int(line.split(b":")[1]) == len(body) else -1
    return -1


def run(name, command, request, large, args):
    """One server: returns a list of failures (sentences)."""
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    clients, downloads, failures = [], [], []
    try:
        line = server.stdout.readline()
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        if large:
            downloads = [download(port, large[0]) for _ in range(args.downloads)]
        started = time.monotonic()
        clients, _ = abuse.half_sent(port, args.clients, 1)
        time.sleep(1)
        print(f"{name}: {len(clients)} half-sent requests opened in {time.monotonic() - started:.1f} s; "
              f"{len(os.listdir(f'/proc/{server.pid}/fd'))} descriptors, {status(server.pid, 'VmRSS')} KiB RSS")
        times = []
        for _ in range(args.requests):
            line, seconds = abuse.request(port, 10, request)
            times.append(seconds)
            if not line.startswith("HTTP/1.1 200") or seconds > args.limit:
                failures.append(f"{name}: a well-formed request got {line!r} after {seconds:.3f} s, "
                                f"with {args.clients} half-sent requests open (limit {args.limit} s).")
        times.sort()
        print(f"{name}: {args.requests} well-formed requests: median {times[len(times) // 2] * 1000:.1f} ms, "
              f"max {times[-1] * 1000:.1f} ms")
        whole = sum(1 for s in downloads if drain(s, 30) == large[1]) if large else 0
        if large:
            print(f"{name}: {whole} of {len(downloads)} slow downloads of {large[0]} ({large[1]} bytes) arrived whole")
            if whole != len(downloads):
                failures.append(f"{name}: {len(downloads) - whole} of {len(downloads)} slow downloads of {large[0]} "
                                "were cut: a connection whose request had arrived was closed.")
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=10)
    finally:
        for s in clients + downloads:
            s.close()
        if server.poll() is None:
            server.kill()
            server.wait()
    return failures


def stop(server, sockets):
    """Closes the clients' sockets and kills the server."""
    for s in sockets:
        s.close()
    server.kill()
    server.wait()


def stalled(sms, pub, large, args):
    """Connections that never read hold every slot: returns a list of failures (sentences)."""
    server = subprocess.Popen([sms, "updates", "serve", pub, "--port", "0", "--max-connections", "16"],
                              stdout=subprocess.PIPE, text=True)
    sockets, failures = [], []
    try:
        port = int(server.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        sockets = [download(port, large[0]) for _ in range(args.stalled)]
        time.sleep(2)
        times = []
        for _ in range(args.requests):
            line, seconds = abuse.request(port, 10, b"GET /timestamp.json HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                                          b"Connection: close\r\n\r\n")
            times.append(seconds)
            if not line.startswith("HTTP/1.1 200") or seconds > args.limit:
                failures.append(f"updates serve: a well-formed request got {line!r} after {seconds:.3f} s, with "
                                f"{args.stalled} connections that never read {large[0]} and 16 slots "
                                f"(limit {args.limit} s).")
                break
        times.sort()
        print(f"updates serve: {args.stalled} connections never reading {large[0]} ({large[1]} bytes), 16 slots: "
              f"{len(times)} well-formed requests, median {times[len(times) // 2] * 1000:.1f} ms, "
              f"max {times[-1] * 1000:.1f} ms")
    finally:
        stop(server, sockets)
    return failures


def publish(bindir, work, count):
    """Publishes `count` random numbers (gaps of 1…2,048) into work/pub; returns the largest shard."""
    r = random.Random(27)
    number, lines = 33_600_000_000, []
    for _ in range(count):
        number += 1 + r.getrandbits(11)
        lines.append(f"+{number}\n")
    with open(f"{work}/numbers.txt", "w") as numbers:
        numbers.write("".join(lines))
    blocklist = os.path.join(bindir, "blocklist")
    for step in (["keys", "create", f"{work}/keys"],
                 ["generate", "--numbers", f"{work}/numbers.txt", "--no-sync", "-o", f"{work}/set"],
                 ["publish", f"{work}/set", "--key", f"{work}/keys/signing.key", "--to", f"{work}/pub"]):
        subprocess.run([blocklist] + step, check=True, stdout=subprocess.DEVNULL)
    shards = [(f"1/{name}", os.path.getsize(f"{work}/pub/1/{name}")) for name in os.listdir(f"{work}/pub/1")
              if name.endswith(".blk")]
    print(f"published {count} numbers: {len(shards)} shards, {sum(size for _, size in shards)} bytes")
    return max(shards, key=lambda shard: shard[1])


def readers(sms, pub, large, args):
    """Slow readers of `updates serve`: returns a list of failures (sentences)."""
    server = subprocess.Popen([sms, "updates", "serve", pub, "--port", "0"], stdout=subprocess.PIPE, text=True)
    sockets, failures = [], []
    try:
        port = int(server.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        before = status(server.pid, "VmRSS")
        paths = [large[0], "v1/update?from=0"]
        for index in range(args.readers):
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
            s.connect(("127.0.0.1", port))
            s.sendall(b"GET /%s HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" % paths[index % 2].encode())
            s.setblocking(False)
            sockets.append(s)
        heads = [b""] * len(sockets)
        peak = 0
        for _ in range(int(args.read_seconds)):
            time.sleep(1)
            for index, s in enumerate(sockets):
                try:
                    heads[index] += s.recv(16) if len(heads[index]) < 16 else b""
                except BlockingIOError:
                    pass
            peak = max(peak, status(server.pid, "VmRSS"))
        high = status(server.pid, "VmHWM")
        print(f"updates serve: {args.readers} slow readers of {large[0]} ({large[1]} bytes) and /v1/update?from=0: "
              f"RSS {before} KiB before, {peak} KiB at most when sampled, VmHWM {high} KiB")
        for index, head in enumerate(heads):
            want = b"HTTP/1.1 200" if index % 2 == 0 else b"HTTP/1.1 404"
            if not head.startswith(want):
                failures.append(f"updates serve: reader {index} of /{paths[index % 2]} got {head!r}, not {want!r}.")
                break
        if high >= args.max_rss_mib * 1024:
            failures.append(f"updates serve: {args.readers} slow readers took the server to {high} KiB, "
                            f"over {args.max_rss_mib} MiB.")
    finally:
        stop(server, sockets)
    return failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("bindir")
    parser.add_argument("--only", choices=["readers", "half-sent", "stalled"])
    parser.add_argument("--readers", type=int, default=200)
    parser.add_argument("--read-seconds", type=float, default=5)
    parser.add_argument("--max-rss-mib", type=int, default=128)
    parser.add_argument("--numbers", type=int, default=5_000_000)
    parser.add_argument("--clients", type=int, default=8000)
    parser.add_argument("--requests", type=int, default=20)
    parser.add_argument("--limit", type=float, default=1.0)
    parser.add_argument("--downloads", type=int, default=20)
    parser.add_argument("--stalled", type=int, default=24)
    args = parser.parse_args()
    if not 1 <= args.clients <= 10000 or not 1 <= args.readers <= 1000:
        sys.exit("--clients must be 1…10000 and --readers 1…1000")
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    if hard < args.clients + args.downloads + 64:
        sys.exit(f"{args.clients} clients need {args.clients + args.downloads + 64} open files; the hard limit is {hard}.")
    sms = os.path.join(args.bindir, "blocklist-sms")
    failures = []
    with tempfile.TemporaryDirectory() as work:
        large = publish(args.bindir, work, args.numbers)
        if args.only in (None, "readers"):
            failures += readers(sms, f"{work}/pub", large, args)
        if args.only in (None, "stalled"):
            failures += stalled(sms, f"{work}/pub", large, args)
        if args.only in (None, "half-sent"):
            failures += run("sms serve", [sms, "serve", "--rules", os.path.join(ROOT, "docs/examples/sms-server-rules.json"),
                                          "--port", "0"], abuse.POST, None, args)
            failures += run("updates serve", [sms, "updates", "serve", f"{work}/pub", "--port", "0"],
                            b"GET /timestamp.json HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", large, args)
    for failure in failures:
        print(failure, file=sys.stderr)
    sys.exit(1 if failures else 0)


main()
