#!/usr/bin/env python3
"""The independent side of HTTPFetchTests' differential test: reads HTTP/1.1 responses with
Python's http.client (HTTPResponse over a fake socket, begin() then read()), as the response to a
GET, and prints one verdict per response.

Input: JSON lines {"hex": "<the response's bytes, as the server sent them before closing>"}.
Output: JSON lines {"ok": true, "status": 200, "body": "<hex>"} or {"ok": false, "why": "..."}.

http.client's begin() skips 100 Continue itself but returns other 1xx interim responses (102,
103) as if final; a client then reads the response that follows, and so does this script. Where
http.client is more lenient than HTTPResponseParser on purpose (bare LF, obs-fold, ...), the test
excuses the difference only for the listed leniencies (HTTPFetchTests.swift, `Leniency`).
"""
import http.client
import io
import json
import sys


class FakeSocket:
    """What HTTPResponse needs of a socket: makefile, here one buffered file over the bytes."""

    def __init__(self, fp):
        self.fp = fp

    def makefile(self, *args, **kwargs):
        return self.fp


def read(data):
    fp = io.BufferedReader(io.BytesIO(data))
    # Responses are kept until the end: an HTTPResponse that is collected closes the shared file.
    responses = []
    while True:
        response = http.client.HTTPResponse(FakeSocket(fp), method="GET")
        responses.append(response)
        response.begin()
        if 100 <= response.status < 200 and response.status != 101:
            continue  # an interim response: the final one follows
        return response.status, response.read()


def main():
    for line in sys.stdin:
        data = bytes.fromhex(json.loads(line)["hex"])
        try:
            status, body = read(data)
            verdict = {"ok": True, "status": status, "body": body.hex()}
        except Exception as error:  # every refusal counts the same: http.client raises many kinds
            verdict = {"ok": False, "why": f"{type(error).__name__}: {error}"[:120]}
        sys.stdout.write(json.dumps(verdict) + "\n")


main()
