#!/usr/bin/env python3
# Generates the bundle input fixtures of data/bundle/ (see its README.md):
#
#     hosts/            one robots.txt per host, for `--hosts DIR`
#     manifest.jsonl    fetch outcomes, one JSON object a line (`--manifest`)
#     robots.warc       WARC captures of robots.txt fetches (`--warc`)
#     robots.warc.gz    the same, one gzip member per record (Common Crawl)
#
# All content is synthetic. Deterministic (no randomness, gzip mtime 0);
# standard library only. Run from the repository root:
#
#     python3 tools/gen/bundle-fixtures.py

import base64
import gzip
import json
import os
import shutil

OUT = os.path.join("data", "bundle")

RULES_A = b"User-agent: *\nDisallow: /private/\n"
RULES_C = b"User-agent: *\nAllow: /api/public\nDisallow: /api/\n"
# CRLF line ends and a UTF-8 byte order mark.
RULES_D = b"\xef\xbb\xbfUser-agent: *\r\nDisallow: /tmp/\r\n"


def write(path, data):
    full = os.path.join(OUT, path)
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "wb") as f:
        f.write(data)


def hosts():
    shutil.rmtree(os.path.join(OUT, "hosts"), ignore_errors=True)
    write("hosts/a.example.txt", RULES_A)
    write("hosts/b.example.txt", RULES_A)  # same bytes: one member
    write("hosts/c.example:8080.txt", RULES_C)
    write("hosts/d.example.txt", RULES_D)
    write("hosts/e.example.txt", b"")
    write("hosts/notes.md", b"Not a robots.txt: skipped.\n")
    write("hosts/archive/old.example.txt", b"User-agent: *\nDisallow: /\n")


def manifest():
    latin1 = b"User-agent: *\nDisallow: /caf\xe9/\n"  # not UTF-8
    rows = [
        {"host": "a.example", "status": 200,
         "body": "User-agent: *\nDisallow: /private/\n"},
        {"host": "B.Example:443", "status": 200,
         "body_base64": base64.b64encode(latin1).decode()},
        {"host": "c.example", "status": 404},
        {"host": "d.example", "status": 429},
        {"host": "e.example", "status": 503, "body": "ignored"},
        {"host": "f.example", "status": "unreachable"},
        None,  # an empty line
        {"host": "g.example", "status": 200, "redirects": 2,
         "body": "User-agent: *\nDisallow: /g/\n"},
        {"host": "h.example", "status": 200, "redirects": 6,
         "body": "User-agent: *\nDisallow: /\n"},
        {"host": "i.example:8080", "status": 200},
        "   ",  # a line of spaces
        {"host": "j.example", "status": 301, "redirects": 5},
        {"host": "k.example", "status": 200, "body": "User-agent: *\n",
         "fetched_at": "2025-01-01T00:00:00Z"},
    ]
    lines = []
    for r in rows:
        if r is None:
            lines.append("")
        elif isinstance(r, str):
            lines.append(r)
        else:
            lines.append(json.dumps(r, separators=(",", ":")))
    write("manifest.jsonl", ("\n".join(lines) + "\n").encode())


def warc_record(version, kind, uri, block, extra=()):
    head = [f"WARC/{version}", f"WARC-Type: {kind}"]
    if uri is not None:
        head.append(f"WARC-Target-URI: {uri}")
    head.append("WARC-Date: 2025-01-01T00:00:00Z")
    head.extend(extra)
    head.append(f"Content-Length: {len(block)}")
    return ("\r\n".join(head) + "\r\n\r\n").encode() + block + b"\r\n\r\n"


def http(status, headers=(), body=b""):
    reason = {200: "OK", 301: "Moved Permanently", 302: "Found",
              404: "Not Found", 429: "Too Many Requests",
              500: "Internal Server Error",
              503: "Service Unavailable"}[status]
    lines = [f"HTTP/1.1 {status} {reason}"] + list(headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


def chunked(body, size):
    out = b""
    for i in range(0, len(body), size):
        part = body[i:i + size]
        out += f"{len(part):x}\r\n".encode() + part + b"\r\n"
    return out + b"0\r\n\r\n"


def warc():
    recs = []

    def response(uri, status, headers=(), body=b"", version="1.0"):
        recs.append(warc_record(
            version, "response", uri, http(status, headers, body),
            ["Content-Type: application/http; msgtype=response"]))

    def request(uri, version="1.0"):
        host = uri.split("/")[2]
        block = (f"GET /robots.txt HTTP/1.1\r\nHost: {host}\r\n"
                 "User-Agent: fixturebot\r\n\r\n").encode()
        recs.append(warc_record(
            version, "request", uri, block,
            ["Content-Type: application/http; msgtype=request"]))

    info = b"software: gen-bundle-fixtures.py\r\nformat: WARC 1.0\r\n"
    recs.append(warc_record("1.0", "warcinfo", None, info,
                            ["Content-Type: application/warc-fields"]))
    # a.example: 200, stored de-chunked with the header renamed (Common
    # Crawl style): must NOT be de-chunked again.
    request("http://a.example/robots.txt")
    response("http://a.example/robots.txt", 200,
             ["Content-Type: text/plain",
              "X-Crawler-Transfer-Encoding: chunked"], RULES_A)
    recs.append(warc_record(
        "1.0", "metadata", "http://a.example/robots.txt",
        b"fetchTimeMs: 12\r\n", ["Content-Type: application/warc-fields"]))
    # A capture that is not a robots.txt.
    response("http://a.example/sitemap.xml", 200, [], b"<urlset/>\n")
    # b.example: 404, its URI in angle brackets (WARC/1.0's grammar).
    request("http://b.example/robots.txt")
    response("<http://b.example/robots.txt>", 404, [], b"not here\n")
    response("https://c.example/robots.txt", 500, [], b"oops\n", "1.1")
    # d.example redirects to www.d.example, which is captured.
    response("http://d.example/robots.txt", 301,
             ["Location: https://www.d.example/robots.txt"])
    response("https://www.d.example/robots.txt", 200, [],
             b"User-agent: *\nDisallow: /d/\n", "1.1")
    # e.example redirects to a URI that is not captured.
    response("http://e.example/robots.txt", 302,
             ["Location: http://elsewhere.example/robots.txt"])
    # f.example: a chunked body.
    response("http://f.example/robots.txt", 200,
             ["Transfer-Encoding: chunked"],
             chunked(b"User-agent: *\nDisallow: /f/\n", 10))
    # g.example: a relative redirect to a captured non-robots.txt URI.
    response("http://g.example/robots.txt", 302,
             ["Location: /new/robots.txt"])
    response("http://g.example/new/robots.txt", 200, [],
             b"User-agent: *\nDisallow: /g/\n")
    # h.example over http (503), then over https (200): the last counts.
    response("http://h.example/robots.txt", 503)
    response("https://h.example/robots.txt", 200, [],
             b"User-agent: *\nDisallow: /h/\n", "1.1")
    # i.example captured twice: 200, then 429: the last counts.
    response("http://i.example/robots.txt", 200, [],
             b"User-agent: *\nDisallow: /\n")
    response("http://i.example/robots.txt", 429)
    # j.example: a gzip Content-Encoding.
    response("http://j.example/robots.txt", 200,
             ["Content-Encoding: gzip"],
             gzip.compress(b"User-agent: *\nDisallow: /j/\n", mtime=0))
    # k.example: the crawler already decoded it and renamed the header.
    response("http://k.example/robots.txt", 200,
             ["X-Crawler-Content-Encoding: gzip"],
             b"User-agent: *\nDisallow: /k/\n")
    # l.example and m.example redirect to each other: a loop.
    response("http://l.example/robots.txt", 301,
             ["Location: http://m.example/robots.txt"])
    response("http://m.example/robots.txt", 301,
             ["Location: http://l.example/robots.txt"])
    # n.example: six redirects (/r1 ... /r6), one more than allowed.
    response("http://n.example/robots.txt", 301, ["Location: /r1/robots.txt"])
    for i in range(1, 6):
        response(f"http://n.example/r{i}/robots.txt", 301,
                 [f"Location: ../r{i + 1}/robots.txt"])
    response("http://n.example/r6/robots.txt", 200, [],
             b"User-agent: *\nDisallow: /n/\n")

    write("robots.warc", b"".join(recs))
    write("robots.warc.gz", b"".join(
        gzip.compress(r, compresslevel=9, mtime=0) for r in recs))


if __name__ == "__main__":
    hosts()
    manifest()
    warc()
