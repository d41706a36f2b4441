#!/usr/bin/env python3
"""Fuzzes the deferral server's HTTP handling with raw bytes on a loopback socket, seeded and bounded.

Starts BINARY serve --port 0 (short timeouts, a small connection cap) and for SECONDS sends
random and mutated requests: broken request lines, huge or many headers, bad Content-Length,
chunked garbage, bodies that are not deferred queries, pipelined requests, early closes and
half-sent requests left open. Every 50 cases, and at the end, a well-formed request must be
answered 200 with a verdict; every answer must be HTTP/1.1 with a status below 500. At the end,
once the timeouts have closed what was left open, the server's open descriptors must be back
near where they started, and SIGTERM must stop it within 5 s, printing "stopped".

Usage: Scripts/fuzz-server.py BINARY [SECONDS=20] [SEED=1]
Exit 0 when all holds, 1 with the reason and the seed otherwise.
"""
import os
import random
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY = b'{"_version":1,"app":{"version":"1"},"query":{"sender":"+15550101","message":{"text":"see you at 6"}}}'
TIMEOUT_MS = 500


def well_formed(body=QUERY, extra=b""):
    return (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra
            + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def chunked(body, rng):
    out = b""
    while body:
        n = rng.randint(1, max(1, len(body)))
        out += b"%x\r\n" % n + body[:n] + b"\r\n"
        body = body[n:]
    return out + b"0\r\n\r\n"


def mutate(data, rng):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        if not data:
            break
        at = rng.randrange(len(data))
        kind = rng.randrange(6)
        if kind == 0:
            del data[at]
        elif kind == 1:
            data.insert(at, rng.choice(b"\r\n :\x00\x7f\xff0-9aZ{}\"\t"))
        elif kind == 2:
            data[at] = rng.randrange(256)
        elif kind == 3:
            del data[at:]
        elif kind == 4:
            data[at:at] = data[at:at + rng.randint(1, 40)] * rng.randint(1, 50)
        else:
            data[at:at] = bytes(rng.randrange(256) for _ in range(rng.randint(1, 20)))
    return bytes(data)


def complete(received):
    """How many whole responses (each with a Content-Length) received holds."""
    count = 0
    while True:
        head_end = received.find(b"\r\n\r\n")
        if head_end < 0:
            return count
        length = 0
        for line in received[:head_end].split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value.strip() or 0)
        if len(received) < head_end + 4 + length:
            return count
        count += 1
        received = received[head_end + 4 + length:]


def case(rng):
    """One attack: (bytes to send, whether to leave the connection open unanswered, how many
    answers are due, when known)."""
    kind = rng.randrange(12)
    if kind == 0:
        return mutate(well_formed(), rng), False, None
    if kind == 1:
        line = rng.choice([b"GET / HTTP/1.1", b"POST /x HTTP/1.1", b"POST / HTTP/9.9", b"POST  / HTTP/1.1", b"PO\x00ST / HTTP/1.1",
                           b"POST / HTTP/1.1 extra", b"\r\n\r\nPOST / HTTP/1.1", b"POST " + b"/" * 70000 + b" HTTP/1.1", b"BREW / HTCPCP/1.0"])
        return line + b"\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}", False, None
    if kind == 2:
        return well_formed(extra=b"X-Big: " + b"a" * rng.choice([100, 8000, 90000]) + b"\r\n"), False, 1
    if kind == 3:
        return well_formed(extra=b"".join(b"X-%d: v\r\n" % i for i in range(rng.choice([10, 500, 1200])))), False, 1
    if kind == 4:
        length = rng.choice([b"-1", b"abc", b"99999999999999999999999", b"1, 2", b"0x10", b" 5", b"5 ", b""])
        return b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: " + length + b"\r\n\r\n" + QUERY, False, None
    if kind == 5:
        return (b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\nContent-Length: %d\r\n\r\n" % (len(QUERY), len(QUERY) + 1)) + QUERY, False, None
    if kind == 6:
        body = chunked(QUERY, rng)
        return b"POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n" + (mutate(body, rng) if rng.random() < 0.7 else body), False, None
    if kind == 7:
        count = rng.randint(2, 20)
        if rng.random() < 0.5:
            return well_formed() * count, False, count
        return b"".join(well_formed() if rng.random() < 0.7 else mutate(well_formed(), rng) for _ in range(count)), False, None
    if kind == 8:
        full = well_formed()
        return full[:rng.randrange(len(full))], True, None
    if kind == 9:
        body = rng.choice([b"", b"{}", b"[]", b"null", b'{"_version":1}', mutate(QUERY, rng), b"\xff" * 100, QUERY * 2,
                           b'{"_version":1,"app":{"version":"1"},"query":{"sender":"","message":{"text":"x"}}}'])
        return well_formed(body), False, 1
    if kind == 10:
        return well_formed(b'{"x":"' + b"a" * 70000 + b'"}'), False, 1
    return bytes(rng.randrange(256) for _ in range(rng.randint(1, 2000))), rng.random() < 0.2, None


def exchange(port, data, rng, wait, due=None):
    """Sends data (in pieces, sometimes) and reads what comes back within wait seconds."""
    s = socket.create_connection(("127.0.0.1", port), timeout=2)
    try:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00" if rng.random() < 0.1 else b"\x00" * 8)
        pieces = [data] if rng.random() < 0.7 else [data[i:i + 97] for i in range(0, len(data), 97)]
        for piece in pieces:
            s.sendall(piece)
        if rng.random() < 0.2:
            s.shutdown(socket.SHUT_WR)
        s.settimeout(wait)
        received = b""
        try:
            while len(received) < 1 << 20:
                chunk = s.recv(65536)
                if not chunk:
                    break
                received += chunk
                if due is not None and complete(received) >= due:
                    break
        except (socket.timeout, ConnectionResetError):
            pass
        return received
    except (BrokenPipeError, ConnectionResetError):
        return b""
    finally:
        s.close()


def check_answer(port):
    received = exchange(port, well_formed(extra=b"Connection: close\r\n"), random.Random(0), 3, 1)
    if not received.startswith(b"HTTP/1.1 200") or b'{"action":' not in received:
        return f"a well-formed request got {received[:200]!r}"
    return None


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def main():
    binary = sys.argv[1]
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else 20
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    rng = random.Random(seed)
    server = subprocess.Popen(
        [binary, "serve", "--rules", os.path.join(ROOT, "docs/examples/sms-server-rules.json"), "--port", "0",
         "--header-timeout-ms", str(TIMEOUT_MS), "--body-timeout-ms", str(TIMEOUT_MS), "--idle-timeout-ms", str(TIMEOUT_MS),
         "--max-connections", "256"], stdout=subprocess.PIPE, text=True)
    left_open = []
    failure = None
    statuses = {}
    cases = 0
    try:
        port = int(server.stdout.readline().rsplit(":", 1)[1].split("/")[0])
        time.sleep(0.2)
        baseline = descriptors(server.pid)
        end = time.monotonic() + seconds
        while time.monotonic() < end and failure is None:
            data, keep, due = case(rng)
            cases += 1
            if keep:
                s = socket.create_connection(("127.0.0.1", port), timeout=2)
                s.sendall(data)
                left_open.append(s)
                if len(left_open) > 100:
                    left_open.pop(0).close()
            else:
                received = exchange(port, data, rng, 0.3, due)
                for response in received.split(b"HTTP/1.1 ")[1:]:
                    code = response[:3]
                    statuses[code] = statuses.get(code, 0) + 1
                    if not code.isdigit() or int(code) >= 500:
                        failure = f"an answer with status {code!r} to {data[:200]!r}"
                if received and not received.startswith(b"HTTP/1.1 "):
                    failure = f"an answer that is not HTTP/1.1: {received[:200]!r} to {data[:200]!r}"
            if server.poll() is not None:
                failure = f"the server exited with {server.returncode} after case {cases}"
            elif cases % 50 == 0:
                failure = failure or check_answer(port)
        if failure is None:
            time.sleep(TIMEOUT_MS / 1000 * 3)
            failure = check_answer(port)
        if failure is None:
            fds = descriptors(server.pid)
            if fds > baseline + 4:
                failure = f"{fds} descriptors open after the timeouts, {baseline} at the start"
        for s in left_open:
            s.close()
        left_open = []
        if failure is None:
            signalled = time.monotonic()
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(timeout=5)
                if server.stdout.read().strip() != "stopped" or server.returncode != 0:
                    failure = f"SIGTERM: exit {server.returncode} without printing stopped"
            except subprocess.TimeoutExpired:
                failure = "still running 5 s after SIGTERM"
            else:
                print(f"stopped {time.monotonic() - signalled:.2f} s after SIGTERM")
    finally:
        for s in left_open:
            s.close()
        if server.poll() is None:
            server.kill()
            server.wait()
    summary = ", ".join(f"{code.decode(errors='replace')} {count}" for code, count in sorted(statuses.items()))
    print(f"fuzz-server: {cases} cases in {seconds:.0f} s, seed {seed}; answers: {summary}")
    if failure:
        print(f"fuzz-server: FAILED (seed {seed}): {failure}")
        sys.exit(1)
    print("fuzz-server: OK")


main()
