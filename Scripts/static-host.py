#!/usr/bin/env python3
"""A static host as phones meet them, serving a publication directory on 127.0.0.1 for the tests.

    static-host.py ROOT [--missing 404|403|html] [--rate BYTES_PER_SECOND] [--cut-after BYTES]
                        [--stall-after BYTES] [--no-range] [--redirect-from PREFIX]
                        [--junk-bundle BYTES]

--missing   what a path that is not a file answers: 404, 403 (S3 without list permission) or
            200 with an HTML page (a single-page-app fallback).
--rate      the body is sent at about this many bytes a second (a slow phone network).
--cut-after the first GET of each path (but metadata, .json) closes the connection after this many body bytes (an
            interrupted download); later GETs are whole.
--stall-after  the first GET of each path sends this many body bytes, then nothing more while
            holding the connection open (a network that stops moving).
--no-range  Range is ignored: every GET answers 200 with the whole file.
--redirect-from  a GET under PREFIX answers 301 to the same path without it.
--relative-redirects  that 301's Location is a relative reference (../../1/shard.blk), as RFC 9110 allows.
--bundle-fault  `GET /v1/update` misbehaves: cut (a body cut short), loop (a redirect to itself),
               garbage (bytes that are not HTTP).
--junk-bundle  `GET /v1/update` answers 200 with a bundle of this many bytes whose one file,
            timestamp.json, is random bytes (a hostile host filling a phone's memory).

Range: one `bytes=A-B`, `bytes=A-` or `bytes=-N` answers 206 with Content-Range; one that
does not fit answers 416. Prints the port on its first line; stops when its standard input
closes. Each request is logged on stderr as `METHOD PATH RANGE -> STATUS BYTES`.
"""
import argparse
import os
import socket
import sys
import threading
import time

parser = argparse.ArgumentParser()
parser.add_argument("root")
parser.add_argument("--missing", default="404", choices=["404", "403", "html"])
parser.add_argument("--rate", type=int, default=0)
parser.add_argument("--cut-after", type=int, default=-1)
parser.add_argument("--stall-after", type=int, default=-1)
parser.add_argument("--no-range", action="store_true")
parser.add_argument("--redirect-from", default="")
parser.add_argument("--relative-redirects", action="store_true")
parser.add_argument("--junk-bundle", type=int, default=0)
parser.add_argument("--bundle-fault", default="", choices=["", "cut", "loop", "garbage"])
options = parser.parse_args()
root = os.path.realpath(options.root)
cut = set()
lock = threading.Lock()


def log(line):
    with lock:
        sys.stderr.write(line + "\n")
        sys.stderr.flush()


def answer(conn, status, reason, headers, body=b"", send_body=True, limit=-1):
    head = "HTTP/1.1 %d %s\r\n" % (status, reason)
    for name, value in headers:
        head += "%s: %s\r\n" % (name, value)
    head += "Content-Length: %d\r\nConnection: close\r\n\r\n" % len(body)
    conn.sendall(head.encode())
    if not send_body:
        return 0
    sent = 0
    piece = 4096 if options.rate else 65536
    while sent < len(body):
        if 0 <= limit <= sent:
            return sent
        end = min(len(body), sent + piece)
        if limit >= 0:
            end = min(end, limit)
        conn.sendall(body[sent:end])
        if options.rate:
            time.sleep((end - sent) / options.rate)
        sent = end
    return sent


def serve(conn):
    try:
        request = b""
        while b"\r\n\r\n" not in request:
            data = conn.recv(4096)
            if not data:
                return
            request += data
        lines = request.split(b"\r\n")
        method, target = lines[0].split(b" ")[:2]
        path = target.decode().split("?")[0]
        fields = {}
        for line in lines[1:]:
            if b":" in line:
                name, value = line.split(b":", 1)
                fields[name.strip().lower().decode()] = value.strip().decode()
        if options.redirect_from and path.startswith(options.redirect_from):
            location = path[len(options.redirect_from) - 1:]
            if options.relative_redirects:
                location = "../" * (len(path.split("/")) - 2) + location.lstrip("/")
            answer(conn, 301, "Moved Permanently", [("Location", location)], b"moved\n")
            log("%s %s -> 301" % (method.decode(), path))
            return
        if options.bundle_fault and path == "/v1/update":
            # The optional route misbehaving: a body cut short, a redirect to itself, or bytes
            # that are not HTTP.
            log("%s %s -> bundle fault %s" % (method.decode(), path, options.bundle_fault))
            if options.bundle_fault == "cut":
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\nBLKBNDL1")
            elif options.bundle_fault == "loop":
                answer(conn, 302, "Found", [("Location", "/v1/update?from=0")], b"")
            else:
                conn.sendall(b"\x00\x01 not http at all\r\n\r\n")
            return
        if options.junk_bundle and path == "/v1/update":
            name = b"timestamp.json"
            size = options.junk_bundle - 8 - 2 - len(name) - 4
            body = b"BLKBNDL1" + len(name).to_bytes(2, "little") + name + size.to_bytes(4, "little") + os.urandom(size)
            log("%s %s -> junk bundle %d" % (method.decode(), path, len(body)))
            answer(conn, 200, "OK", [("Content-Type", "application/octet-stream")], body)
            return
        full = os.path.realpath(os.path.join(root, path.lstrip("/")))
        if not full.startswith(root + os.sep) or not os.path.isfile(full):
            if options.missing == "403":
                body = b"<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code></Error>"
                answer(conn, 403, "Forbidden", [("Content-Type", "application/xml")], body)
            elif options.missing == "html":
                body = b"<!doctype html><html><body>app</body></html>"
                answer(conn, 200, "OK", [("Content-Type", "text/html")], body)
            else:
                answer(conn, 404, "Not Found", [("Content-Type", "text/plain")], b"not found\n")
            log("%s %s -> missing (%s)" % (method.decode(), path, options.missing))
            return
        data = open(full, "rb").read()
        status, reason, headers, body = 200, "OK", [("Accept-Ranges", "bytes")], data
        wanted = fields.get("range", "")
        if wanted and not options.no_range:
            spec = wanted[len("bytes="):] if wanted.startswith("bytes=") else ""
            first, _, last = spec.partition("-")
            try:
                if first == "":
                    start, end = max(0, len(data) - int(last)), len(data) - 1
                else:
                    start, end = int(first), (int(last) if last else len(data) - 1)
                end = min(end, len(data) - 1)
                if start > end or "," in spec:
                    raise ValueError
                status, reason, body = 206, "Partial Content", data[start:end + 1]
                headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end, len(data))))
            except ValueError:
                answer(conn, 416, "Range Not Satisfiable", [("Content-Range", "bytes */%d" % len(data))])
                log("%s %s %s -> 416" % (method.decode(), path, wanted))
                return
        limit, stall = -1, False
        with lock:
            if (options.cut_after >= 0 or options.stall_after >= 0) and path not in cut and not path.endswith(".json"):
                cut.add(path)
                limit = max(options.cut_after, options.stall_after)
                stall = options.stall_after >= 0
        sent = answer(conn, status, reason, headers, body, method != b"HEAD", limit)
        log("%s %s %s -> %d %d" % (method.decode(), path, wanted or "-", status, sent))
        if stall:
            time.sleep(3600)
    except OSError:
        pass
    finally:
        conn.close()


server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
server.bind(("127.0.0.1", 0))
server.listen(64)
print(server.getsockname()[1], flush=True)
threading.Thread(target=lambda: (sys.stdin.read(), os._exit(0)), daemon=True).start()
while True:
    conn, _ = server.accept()
    threading.Thread(target=serve, args=(conn,), daemon=True).start()
