"""robofilter.compat.RobotFileParser against the standard library's
documented behaviour (issue 38): parse() and read() from a loopback server
this test starts, the fetch outcomes, the state before reading, mtime and
modified, a differential test against urllib.robotparser where both
semantics agree by construction, and the documented differences."""

from __future__ import annotations

import http.server
import logging
import random
import socket
import subprocess
import sys
import threading
import time
import urllib.robotparser
import warnings

import pytest

from robofilter import Rules
from robofilter.compat import RequestRate, RobotFileParser, product_token, request_target

# The example of the standard library's documentation (a robots.txt with a
# crawl delay, a request rate and sitemaps), served by the test server.
DOC_ROBOTS = b"""\
# a site's robots.txt
User-agent: figtree
Crawl-delay: 3
Request-rate: 9/30
Disallow: /tmp

User-agent: *
Crawl-delay: 6
Request-rate: 3/20
Disallow: /cgi-bin/
Disallow: /private

Sitemap: http://www.example.test/sitemap-1.xml
Sitemap: http://www.example.test/sitemap-2.xml
"""


class _Robots(http.server.BaseHTTPRequestHandler):
    """/robots.txt by the Host header's first label: ``ok`` serves
    DOC_ROBOTS, ``s401`` answers 401, and so on; ``gz`` serves a gzip body
    that is not declared as such. Other paths are 404."""

    def do_GET(self):  # noqa: N802 (http.server's name)
        label = self.headers.get("Host", "").split(".")[0]
        if self.path != "/robots.txt":
            self.send_error(404)
            return
        if label.startswith("s") and label[1:].isdigit():
            body = b"User-agent: *\nAllow: /\n"  # never read: not a 2xx
            self.send_response(int(label[1:]))
        elif label == "gz":
            import gzip

            body = gzip.compress(DOC_ROBOTS)
            self.send_response(200)
        else:
            body = DOC_ROBOTS
            self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def port():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Robots)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def fetched(label: str, port: int, **kwargs) -> RobotFileParser:
    """A parser that has read http://LABEL.test:PORT/robots.txt, the name
    resolved to the loopback server through fetch's ``resolve``."""
    rp = RobotFileParser(
        f"http://{label}.test:{port}/robots.txt",
        fetch_options={"resolve": [f"{label}.test:{port}:127.0.0.1"], "timeout": 5, "retries": 0},
        **kwargs,
    )
    rp.read()
    return rp


def test_the_documented_example(port):
    # docs.python.org's urllib.robotparser example, on the loopback server:
    # read() then the delay, the rate, the sitemaps and two verdicts.
    rp = RobotFileParser()
    rp.set_url(f"http://127.0.0.1:{port}/robots.txt")
    rp.read()
    rrate = rp.request_rate("*")
    assert rrate == RequestRate(3, 20)
    assert (rrate.requests, rrate.seconds) == (3, 20)
    assert isinstance(rrate, urllib.robotparser.RequestRate)
    assert rp.crawl_delay("*") == 6
    assert rp.site_maps() == [
        "http://www.example.test/sitemap-1.xml",
        "http://www.example.test/sitemap-2.xml",
    ]
    assert not rp.can_fetch("*", "http://www.example.test/cgi-bin/search?city=San+Francisco")
    assert rp.can_fetch("*", "http://www.example.test/")
    # An agent with a group of its own gets that group's facts.
    assert rp.crawl_delay("figtree") == 3
    assert rp.request_rate("FigTree/1.0") == RequestRate(9, 30)
    assert not rp.can_fetch("figtree", "/tmp/x")
    assert rp.can_fetch("figtree", "/cgi-bin/x")


def test_the_standard_library_reads_the_same_server(port, monkeypatch):
    # The same example through CPython itself, so the test above checks
    # what the standard library really answers.
    for var in ("http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    std = urllib.robotparser.RobotFileParser(f"http://127.0.0.1:{port}/robots.txt")
    std.read()
    ours = fetched("ok", port)
    for agent in ("*", "figtree", "OtherBot/2.0"):
        assert ours.crawl_delay(agent) == std.crawl_delay(agent), agent
        assert ours.request_rate(agent) == std.request_rate(agent), agent
        for path in ("/", "/cgi-bin/search?city=San+Francisco", "/private", "/tmp/a", "/public"):
            assert ours.can_fetch(agent, path) == std.can_fetch(agent, path), (agent, path)
    assert ours.site_maps() == std.site_maps()


def test_parse_and_read_agree(port):
    parsed = RobotFileParser()
    parsed.parse(DOC_ROBOTS.decode().splitlines())
    read = fetched("ok", port)
    # readlines()-style lines keep their line breaks: the same file.
    kept = RobotFileParser()
    kept.parse(DOC_ROBOTS.decode().splitlines(keepends=True))
    by_bytes = RobotFileParser()
    by_bytes.parse(DOC_ROBOTS.splitlines())
    agents = ["*", "figtree", "FigTree/2.0 (+https://x.test)", "Other"]
    paths = ["/", "/tmp", "/tmpx", "/private/a", "/cgi-bin/", "/cgi-bin", "/x?y=/private"]
    for rp in (read, kept, by_bytes):
        for agent in agents:
            for path in paths:
                assert rp.can_fetch(agent, path) == parsed.can_fetch(agent, path), (agent, path)
                url = f"https://anywhere.test{path}"
                assert rp.can_fetch(agent, url) == parsed.can_fetch(agent, path), (agent, url)
            assert rp.crawl_delay(agent) == parsed.crawl_delay(agent)
            assert rp.request_rate(agent) == parsed.request_rate(agent)
        assert rp.site_maps() == parsed.site_maps()
        assert str(rp) == str(parsed)
    assert str(parsed) == DOC_ROBOTS.decode()


@pytest.mark.parametrize(
    "label, public, private",
    [
        ("ok", True, False),  # 2xx: the rules
        ("s404", True, True),  # unavailable: allow all
        ("s410", True, True),
        ("s401", True, True),  # CPython: disallow all (RFC 9309: any 4xx allows)
        ("s403", True, True),  # CPython: disallow all
        ("s429", False, False),  # CPython: allow all, as a 4xx; RFC 9309 and Google: as 5xx
        ("s500", False, False),  # unreachable: disallow all
        ("s503", False, False),
        ("gz", False, False),  # a 200 body still compressed: not read, disallow all
    ],
)
def test_fetch_outcomes(port, label, public, private):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        rp = fetched(label, port)
    # compile_hosts reports the body it could not read, and only that.
    reported = [str(w.message) for w in caught]
    if label == "gz":
        assert any("gzip" in m for m in reported), reported
    else:
        assert reported == []
    assert rp.mtime() > 0, "every completed read() sets mtime"
    assert rp.can_fetch("FooBot", "/public") is public
    assert rp.can_fetch("FooBot", "/private") is private
    if label != "ok":
        assert rp.crawl_delay("FooBot") is None
        assert rp.request_rate("FooBot") is None
        assert rp.site_maps() is None
        assert str(rp) == ""


def test_an_unreachable_host_disallows_everything_without_raising():
    closed = _free_port()
    rp = RobotFileParser(
        f"http://127.0.0.1:{closed}/robots.txt",
        fetch_options={"retries": 0, "timeout": 5},
    )
    rp.read()  # CPython raises URLError here
    assert rp.mtime() > 0
    for path in ("/", "/anything", "/robots.txt/x"):
        assert not rp.can_fetch("FooBot", path)
    assert rp.crawl_delay("FooBot") is None and rp.site_maps() is None


def test_before_read_or_parse_nothing_is_allowed():
    for rp in (RobotFileParser(), RobotFileParser("http://127.0.0.1:9/robots.txt")):
        assert rp.mtime() == 0
        assert not rp.can_fetch("*", "/")
        assert not rp.can_fetch("FooBot", "http://a.test/x")
        assert rp.crawl_delay("*") is None
        assert rp.request_rate("*") is None
        assert rp.site_maps() is None
        assert str(rp) == ""
    # CPython's overrides hold even before reading.
    rp = RobotFileParser()
    rp.allow_all = True
    assert rp.can_fetch("*", "/x")
    rp.disallow_all = True
    assert not rp.can_fetch("*", "/x")


def test_mtime_and_modified():
    rp = RobotFileParser()
    assert rp.mtime() == 0
    before = time.time()
    rp.parse(["User-agent: *", "Disallow: /x"])
    after = time.time()
    assert before <= rp.mtime() <= after
    first = rp.mtime()
    time.sleep(0.01)
    rp.modified()
    assert rp.mtime() > first
    assert rp.mtime() == rp.last_checked
    # An empty file is a read file: allow all, and mtime set.
    empty = RobotFileParser()
    empty.parse([])
    assert empty.mtime() > 0 and empty.can_fetch("*", "/anything")
    # modified() alone (CPython: no groups, so every URL is allowed).
    touched = RobotFileParser()
    touched.modified()
    assert touched.can_fetch("*", "/x")


def test_parse_and_read_reset_the_overrides(port):
    rp = RobotFileParser()
    rp.disallow_all = True
    rp.parse(["User-agent: *", "Disallow: /x"])
    assert rp.can_fetch("*", "/y") and not rp.can_fetch("*", "/x")
    rp.allow_all = True
    rp.set_url(f"http://127.0.0.1:{port}/robots.txt")
    rp.read()
    assert not rp.can_fetch("*", "/private")


def test_set_url_and_its_attributes():
    rp = RobotFileParser("https://a.test:8443/robots.txt")
    assert (rp.url, rp.host, rp.path) == ("https://a.test:8443/robots.txt", "a.test:8443", "/robots.txt")
    rp.set_url("http://b.test/other/robots.txt")
    assert (rp.host, rp.path) == ("b.test", "/other/robots.txt")
    assert "b.test" in repr(rp)


def test_read_refuses_what_is_not_an_http_url():
    for url in ("", "ftp://a.test/robots.txt", "a.test/robots.txt", "http:///robots.txt",
                "http://a.test/robots.txt\nhttp://b.test/"):
        with pytest.raises(ValueError, match="cannot fetch robots.txt"):
            RobotFileParser(url).read()
    with pytest.raises(ValueError, match="fetch_options cannot set 'scheme'"):
        RobotFileParser(fetch_options={"scheme": "http"})
    with pytest.raises(ValueError, match="dialect"):
        RobotFileParser(dialect="strict")


def test_read_fetches_the_root_robots_txt_of_any_path(port):
    # set_url may name another path; RFC 9309 has one location.
    rp = RobotFileParser(
        f"http://ok.test:{port}/some/where/robots.txt",
        fetch_options={"resolve": [f"ok.test:{port}:127.0.0.1"], "retries": 0},
    )
    rp.read()
    assert not rp.can_fetch("*", "/private") and rp.can_fetch("*", "/public")


ODD = [
    "", " ", "/", "not a url", "http://", "http://[::1", "//", "?q", "#frag",
    "\x00\x01\t\n\r", "/a\tb", "/a\nb", "/\udcff", "http://a.test/é?ü#ö",
    "javascript:alert(1)", "%", "%zz", "/%00", "x" * 100_000,
    b"", b"/\xff\xfe", b"http://a.test/\x80", b"\x00",
]


@pytest.mark.parametrize("dialect", ["rfc9309", "google"])
def test_can_fetch_never_raises_on_odd_input(dialect):
    rp = RobotFileParser(dialect=dialect)
    rp.parse(["User-agent: *", "Disallow: /private", "Disallow: /a"])
    for url in ODD:
        for agent in ("*", "", "FooBot/1.0", b"\xff", "Ünïcode", "x" * 10_000):
            assert isinstance(rp.can_fetch(agent, url), bool), (agent, url)
    assert not rp.can_fetch("FooBot", "/a\tb"), "a TAB does not end the path"
    assert not rp.can_fetch("FooBot", "/a\nb")
    assert not rp.can_fetch("FooBot", "private"), "a path without / is read with it"
    with pytest.raises(TypeError):
        rp.can_fetch("FooBot", None)
    with pytest.raises(TypeError):
        rp.can_fetch(None, "/")


def test_request_target():
    assert request_target("https://h.test/a/b?c=d#e") == "/a/b?c=d"
    assert request_target("https://h.test") == "/"
    assert request_target("https://h.test?q") == "/?q"
    assert request_target("//h.test/p") == "/p"
    assert request_target("/wiki/Käyttäjä:") == "/wiki/K%C3%A4ytt%C3%A4j%C3%A4:"
    assert request_target(b"/caf\xe9") == "/caf%E9"
    assert request_target("/a b\tc") == "/a%20b%09c"
    assert request_target("/already%20escaped") == "/already%20escaped"
    assert request_target("  https://h.test/p  ") == "/p"


def test_product_token():
    cases = {
        "FooBot": "FooBot",
        "FooBot/1.0": "FooBot",
        "Mozilla/5.0 (compatible; MyBot1/2.0)": "Mozilla",
        "Rule1TestBot": "Rule",
        "my_bot-x": "my_bot-x",
        " FooBot ": "FooBot",
        "UnicödeBöt": "Unic",
        "*": "*",
        "": "*",
        "7up": "*",
        "*bot": "*",
        b"FooBot/1.0": "FooBot",
    }
    for agent, token in cases.items():
        assert product_token(agent) == token, agent


def test_rfc9309_names_a_reduced_agent_once(caplog):
    rp = RobotFileParser()
    rp.parse(["User-agent: CompatOnceBot", "Disallow: /x"])
    with caplog.at_level(logging.INFO, logger="robofilter.compat"):
        for _ in range(3):
            assert not rp.can_fetch("CompatOnceBot/2.0", "/x")
            assert rp.crawl_delay("CompatOnceBot/2.0") is None
    said = [r.getMessage() for r in caplog.records if r.name == "robofilter.compat"]
    assert len(said) == 1 and "'CompatOnceBot'" in said[0], said


def test_a_refused_text_disallows_everything(caplog):
    rp = RobotFileParser()
    with caplog.at_level(logging.ERROR, logger="robofilter.compat"):
        rp.parse([Rules.compile(b"User-agent: *\nAllow: /\n").to_bytes()])
    assert any("compiled rules file" in r.getMessage() for r in caplog.records)
    assert rp.mtime() > 0
    assert not rp.can_fetch("*", "/") and not rp.can_fetch("FooBot", "/x")
    assert str(rp) == "" and rp.site_maps() is None and rp.crawl_delay("*") is None


def test_facts_of_several_groups():
    rp = RobotFileParser()
    rp.parse([
        "User-agent: a-bot",
        "Crawl-delay: soon",  # not a number: skipped
        "Crawl-delay: 1.5",  # CPython: an int or nothing
        "Request-rate: 1/x",  # not n/s: skipped
        "Request-rate: 2 / 5",
        "Request-rate: 4/5",
        "Sitemap: https://a.test/in-a-group.xml",
        "Disallow: /a",  # a rule: the next user-agent starts a group
        "",
        "User-agent: b-bot",
        "Disallow: /b",
    ])
    assert rp.crawl_delay("a-bot") == 1.5
    assert rp.request_rate("a-bot") == RequestRate(2, 5)
    assert rp.crawl_delay("b-bot") is None and rp.request_rate("b-bot") is None
    assert rp.crawl_delay("other") is None and rp.request_rate("other") is None
    assert rp.site_maps() == ["https://a.test/in-a-group.xml"]
    # Without a rule between them, user-agent lines make one group (as in
    # google/robotstxt); CPython starts a group at any line after one.
    std, ours = _both(["User-agent: a-bot", "Crawl-delay: 3", "User-agent: b-bot", "Disallow: /b"])
    assert (std.crawl_delay("b-bot"), std.can_fetch("a-bot", "/b")) == (None, True)
    assert (ours.crawl_delay("b-bot"), ours.can_fetch("a-bot", "/b")) == (3, False)


# ---------------------------------------------------------------------------
# The differential test: where both semantics agree by construction.

NAMES = ["alphabot", "betacrawler", "gammaspider", "*"]
SEGMENTS = ["a", "b", "cd", "e", "fgh", "index.html", "x"]
QUERY = ["", "?q=1", "?a=b&c"]


def _random_robots(rng: random.Random) -> tuple[list[str], list[str]]:
    """A robots.txt (as lines) both parsers read alike: one group per agent,
    at most one ``*`` group, groups parted by one blank line and none
    inside, plain prefix rules, and no two rules of a group where one is a
    prefix of the other (so no rule order or length decides anything);
    integer crawl delays and request rates. Also the paths to ask about."""
    lines: list[str] = []
    paths = {"/"}
    for name in rng.sample(NAMES, rng.randint(1, len(NAMES))):
        if lines:
            lines.append("")
        lines.append(f"User-agent: {name}")
        heads = rng.sample(SEGMENTS, rng.randint(0, 4))
        for head in heads:
            rule = "/" + head
            if rng.random() < 0.5:
                rule += "/" + rng.choice(SEGMENTS)
            kind = "Allow" if rng.random() < 0.3 else "Disallow"
            lines.append(f"{kind}: {rule}")
            paths.update({rule, rule + "/deeper", rule + "x", rule[:-1] or "/"})
        if rng.random() < 0.5:
            lines.append(f"Crawl-delay: {rng.randint(1, 30)}")
        if rng.random() < 0.3:
            lines.append(f"Request-rate: {rng.randint(1, 9)}/{rng.randint(1, 99)}")
        if not heads:
            # An empty rule allows everything; and a group needs a line
            # after its user-agent, or CPython's blank line would end it
            # where RFC 9309 lets it join the next group.
            lines.append("Disallow:")
    if rng.random() < 0.3:
        lines.append(f"Sitemap: https://h.test/map{rng.randint(0, 9)}.xml")
    for seg in SEGMENTS:
        paths.add(f"/{seg}")
    return lines, sorted(paths)


AGENTS = ["AlphaBot", "alphabot/1.0", "BetaCrawler/2.1 (+https://b.test)", "gammaspider",
          "DeltaBot", "*"]


@pytest.mark.parametrize("dialect", ["rfc9309", "google"])
def test_differential_against_the_standard_library(dialect):
    rng = random.Random(38)
    compared = 0
    for _ in range(150):
        lines, paths = _random_robots(rng)
        std = urllib.robotparser.RobotFileParser()
        std.parse(lines)
        ours = RobotFileParser(dialect=dialect)
        ours.parse(lines)
        text = "\n".join(lines)
        for agent in AGENTS:
            for path in paths:
                for query in QUERY:
                    for url in (path + query, f"https://h.test{path}{query}"):
                        assert ours.can_fetch(agent, url) == std.can_fetch(agent, url), (
                            f"{agent} {url}\n{text}")
                        compared += 1
            assert ours.crawl_delay(agent) == std.crawl_delay(agent), f"{agent}\n{text}"
            assert ours.request_rate(agent) == std.request_rate(agent), f"{agent}\n{text}"
        assert ours.site_maps() == std.site_maps()
    assert compared > 20_000


def _both(lines: list[str], dialect: str = "rfc9309"):
    std = urllib.robotparser.RobotFileParser()
    std.parse(lines)
    ours = RobotFileParser(dialect=dialect)
    ours.parse(lines)
    return std, ours


def test_documented_differences():
    # The longest match wins (RFC 9309 2.2.2), not the first line.
    std, ours = _both(["User-agent: *", "Disallow: /", "Allow: /page"])
    assert std.can_fetch("FooBot", "/page") is False
    assert ours.can_fetch("FooBot", "/page") is True
    # Wildcards and the end anchor.
    std, ours = _both(["User-agent: *", "Disallow: /*.pdf$"])
    assert std.can_fetch("FooBot", "/a/b.pdf") is True
    assert ours.can_fetch("FooBot", "/a/b.pdf") is False
    assert ours.can_fetch("FooBot", "/a/b.pdf?x") is True
    # Agents: whole product tokens, not substrings of the useragent.
    std, ours = _both(["User-agent: bot", "Disallow: /"])
    assert std.can_fetch("FooBot/1.0", "/x") is False
    assert ours.can_fetch("FooBot/1.0", "/x") is True
    assert ours.can_fetch("Bot/1.0", "/x") is False
    # A blank line does not end a group (RFC 9309 2.1).
    std, ours = _both(["User-agent: FooBot", "", "Disallow: /x"])
    assert std.can_fetch("FooBot", "/x") is True
    assert ours.can_fetch("FooBot", "/x") is False
    # Every group naming the agent applies, not only the first.
    std, ours = _both(["User-agent: FooBot", "Disallow: /a", "", "User-agent: FooBot", "Disallow: /b"])
    assert std.can_fetch("FooBot", "/b") is True
    assert ours.can_fetch("FooBot", "/b") is False
    # A fractional crawl delay counts, as a float.
    std, ours = _both(["User-agent: *", "Crawl-delay: 0.5"])
    assert std.crawl_delay("FooBot") is None
    assert ours.crawl_delay("FooBot") == 0.5
    # /robots.txt is never disallowed in RFC 9309; google has no exception.
    std, ours = _both(["User-agent: *", "Disallow: /"])
    assert std.can_fetch("FooBot", "/robots.txt") is False
    assert ours.can_fetch("FooBot", "/robots.txt") is True
    assert _both(["User-agent: *", "Disallow: /"], "google")[1].can_fetch("FooBot", "/robots.txt") is False


def test_importing_needs_no_scrapy(tmp_path):
    # robofilter, robofilter.compat and robofilter.scrapy import with Scrapy
    # blocked (robofilter.scrapy then subclasses nothing but still works).
    code = (
        "import sys; sys.modules['scrapy'] = None\n"
        "import robofilter, robofilter.compat, robofilter.scrapy\n"
        "p = robofilter.scrapy.RobotParser.from_crawler(None, b'User-agent: *\\nDisallow: /x\\n')\n"
        "assert not p.allowed('https://a.test/x', 'Bot/1.0') and p.allowed('https://a.test/y', '*')\n"
        "assert robofilter.scrapy.RobotParser.__bases__ == (object,)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr
    # And a plain `import robofilter` imports neither submodule.
    code = (
        "import sys, robofilter\n"
        "assert 'robofilter.scrapy' not in sys.modules and 'robofilter.compat' not in sys.modules\n"
        "assert 'scrapy' not in sys.modules\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=tmp_path, timeout=60)
    assert run.returncode == 0, run.stderr


def test_the_helpers_docstring_examples():
    import doctest

    import robofilter.compat

    result = doctest.testmod(robofilter.compat, raise_on_error=False)
    assert result.attempted >= 4 and result.failed == 0, result
