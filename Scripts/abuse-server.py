#!/usr/bin/env python3
"""Slow-client abuse of the deferral server, on loopback only, bounded in clients and time.

Starts BINARY serve --port 0 with the example rules (and any options after --), opens CLIENTS
connections that each send half a request head and wait, holds them HOLD seconds while sampling
the server's open descriptors and resident memory, then checks that a well-formed request is
answered, closes the clients, sends SIGTERM and times the exit.

Usage: Scripts/abuse-server.py BINARY [--clients 8000] [--hold 30] [-- serve options...]
Raises its own open-file limit to the hard limit (the clients need one descriptor each).
"""
import argparse
import os
import resource
import signal
import socket
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
QUERY = b'{"_version":1,"app":{"version":"1"},"query":{"sender":"+15550101","message":{"text":"see you at 6"}}}'


def status(pid, field):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return -1


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


POST = (b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nConnection: close\r\n"
        + b"Content-Length: %d\r\n\r\n" % len(QUERY) + QUERY)


def request(port, timeout, payload=POST):
    """Sends `payload` (QUERY posted) on a new connection; returns (status line, seconds) or (reason, seconds)."""
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(payload)
            data = b""
            while b"\r\n" not in data:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            return data.split(b"\r\n")[0].decode(errors="replace") or "closed without an answer", time.monotonic() - started
    except OSError as error:
        return f"no answer ({error})", time.monotonic() - started


def half_sent(port, count, pause):
    """Opens `count` connections without waiting for their accept and, `pause` seconds later, sends
    each half a request head; returns them and how many connects were refused."""
    clients, refused = [], 0
    for _ in range(count):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        except OSError:
            refused += 1
            s.close()
            continue
        clients.append(s)
    time.sleep(pause)
    for s in clients:
        try:
            s.send(b"POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Le")
        except OSError:
            pass
    return clients, refused


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary")
    parser.add_argument("--clients", type=int, default=8000)
    parser.add_argument("--hold", type=float, default=30)
    parser.add_argument("serve", nargs="*")
    args = parser.parse_args()
    if not 1 <= args.clients <= 10000 or not 0 < args.hold <= 120:
        sys.exit("--clients must be 1…10000 and --hold 0…120 s")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    server = subprocess.Popen([args.binary, "serve", "--rules", os.path.join(ROOT, "docs/examples/sms-server-rules.json"),
                               "--port", "0"] + args.serve, stdout=subprocess.PIPE, text=True)
    clients = []
    try:
        line = server.stdout.readline()
        port = int(line.rsplit(":", 1)[1].split("/")[0])
        print(f"server pid {server.pid} on port {port}; {descriptors(server.pid)} descriptors, "
              f"{status(server.pid, 'VmRSS')} KiB RSS at start")
        started = time.monotonic()
        clients, refused = half_sent(port, args.clients, 0.5)
        print(f"{len(clients)} clients connected ({refused} refused) in {time.monotonic() - started:.1f} s")
        peak = 0
        end = time.monotonic() + args.hold
        while time.monotonic() < end:
            time.sleep(min(5, max(0.1, end - time.monotonic())))
            fds = descriptors(server.pid)
            peak = max(peak, fds)
            print(f"  t={time.monotonic() - started:5.1f} s: {fds} descriptors, {status(server.pid, 'VmRSS')} KiB RSS")
        closed = 0
        for s in clients:
            try:
                if s.recv(1) == b"":
                    closed += 1
            except BlockingIOError:
                pass
            except OSError:
                closed += 1
        print(f"after {args.hold:.0f} s: {descriptors(server.pid)} descriptors (peak {peak}), RSS {status(server.pid, 'VmRSS')} KiB, "
              f"peak RSS {status(server.pid, 'VmHWM')} KiB; the server closed {closed} of {len(clients)} clients")
        answer, seconds = request(port, 15)
        print(f"a well-formed request with the clients still open: {answer} in {seconds:.2f} s")
        signalled = time.monotonic()
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=10)
            rest = server.stdout.read().strip()
            print(f"SIGTERM with the clients still open: exited {server.returncode} in {time.monotonic() - signalled:.2f} s, printed {rest!r}")
        except subprocess.TimeoutExpired:
            print("SIGTERM with the clients still open: still running 10 s later")
    finally:
        for s in clients:
            s.close()
        if server.poll() is None:
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
