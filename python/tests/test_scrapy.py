"""robofilter.scrapy.RobotParser as Scrapy uses it (issue 38): the behaviours
Scrapy's own parser-interface tests check, written anew for this parser,
what it adds (agents as product tokens, refused bodies, the dialect
setting), and a real Scrapy crawl of a loopback site that obeys it."""

from __future__ import annotations

import gzip
import http.server
import json
import logging
import os
import subprocess
import sys
import textwrap
import threading
import warnings

import pytest

scrapy = pytest.importorskip(
    "scrapy", reason="Scrapy is not installed (pip install 'robofilter[scrapy]')"
)

from scrapy.robotstxt import RobotParser as ScrapyRobotParser  # noqa: E402
from scrapy.utils.test import get_crawler  # noqa: E402

from robofilter import Rules  # noqa: E402
from robofilter.scrapy import RobotParser  # noqa: E402

SITE = "https://www.site.local"


def parser(body: bytes, dialect: str | None = None) -> RobotParser:
    """A parser built as Scrapy builds it: through ``from_crawler``, with no
    crawler (Scrapy's interface tests) or one whose settings choose the
    dialect."""
    if dialect is None:
        return RobotParser.from_crawler(None, body)
    crawler = get_crawler(settings_dict={"ROBOFILTER_DIALECT": dialect})
    return RobotParser.from_crawler(crawler, body)


both_dialects = pytest.mark.parametrize("dialect", [None, "google", "rfc9309"])


def test_it_is_a_scrapy_robot_parser():
    p = parser(b"")
    assert isinstance(p, ScrapyRobotParser)
    assert p.dialect == "google" and p.rules.dialect == "google"
    assert parser(b"", "rfc9309").rules.dialect == "rfc9309"


@both_dialects
def test_allowed_and_disallowed_paths(dialect):
    p = parser(b"User-agent: * \nDisallow: /disallowed \nAllow: /allowed \nCrawl-delay: 10", dialect)
    assert p.allowed(f"{SITE}/allowed", "*")
    assert not p.allowed(f"{SITE}/disallowed", "*")
    assert not p.allowed(f"{SITE}/disallowed/deeper?q=1", "*")
    assert p.allowed(f"{SITE}/elsewhere", "*")
    assert p.crawl_delay("*") == 10.0


@both_dialects
def test_wildcards_and_end_anchor(dialect):
    p = parser(
        b"User-agent: first\n"
        b"Disallow: /disallowed/*/end$   \n"
        b"\n"
        b"User-agent: second\n"
        b"Allow: /*allowed\n"
        b"Disallow: /\n",
        dialect,
    )
    assert p.allowed(f"{SITE}/disallowed", "first")
    assert not p.allowed(f"{SITE}/disallowed/xyz/end", "first")
    assert not p.allowed(f"{SITE}/disallowed/a/b/end", "first")
    assert p.allowed(f"{SITE}/disallowed/xyz/endinglater", "first")
    assert p.allowed(f"{SITE}/allowed", "second")
    assert p.allowed(f"{SITE}/is_still_allowed", "second")
    assert p.allowed(f"{SITE}/is_allowed_too", "second")
    assert not p.allowed(f"{SITE}/other", "second")


@both_dialects
def test_length_based_precedence(dialect):
    p = parser(b"User-agent: * \nDisallow: / \nAllow: /page", dialect)
    assert p.allowed(f"{SITE}/page", "*")
    assert p.allowed(f"{SITE}/page/more", "*")
    assert not p.allowed(f"{SITE}/pag", "*")


@both_dialects
def test_order_based_precedence_is_not_ours(dialect):
    # Scrapy's interface tests also ask for order-based precedence (the
    # first matching line wins, so `Disallow: /` before `Allow: /page`
    # would disallow /page). RFC 9309 section 2.2.2 and Google both let
    # the longest match win, as Protego does (Scrapy skips that test for
    # it): /page stays allowed, whatever the order of the lines.
    for body in (b"User-agent: *\nDisallow: /\nAllow: /page\n",
                 b"User-agent: *\nAllow: /page\nDisallow: /\n"):
        p = parser(body, dialect)
        assert p.allowed(f"{SITE}/page", "*")
        assert not p.allowed(f"{SITE}/other", "*")


@both_dialects
@pytest.mark.parametrize("body", [b"", b"GIF89a\xd3\x00\xfe\x00\xa2", b"\x00\xff\xfe\n\n\r"])
def test_empty_and_garbage_bodies_allow_everything(dialect, body):
    p = parser(body, dialect)
    assert p.refused is None
    for agent in ("*", "chrome", "Mozilla/5.0 (X11; Linux x86_64) Chrome/120.0"):
        for path in ("/", "/index.html", "/disallowed"):
            assert p.allowed(f"https://site.local{path}", agent)
        assert p.crawl_delay(agent) is None


UNICODE_BODY = """
User-Agent: *
Disallow: /admin/
Disallow: /static/
Disallow: /wiki/K%C3%A4ytt%C3%A4j%C3%A4:
Disallow: /wiki/Käyttäjä:

User-Agent: UnicödeBöt
Disallow: /some/randome/page.html
""".encode()


@both_dialects
def test_unicode_url_and_agent(dialect):
    p = parser(UNICODE_BODY, dialect)
    assert p.allowed("https://site.local/", "*")
    assert not p.allowed("https://site.local/admin/", "*")
    assert not p.allowed("https://site.local/static/", "*")
    assert p.allowed("https://site.local/some/randome/page.html", "*")
    # The escaped and the unicode spelling of one path: one verdict.
    assert not p.allowed("https://site.local/wiki/K%C3%A4ytt%C3%A4j%C3%A4:", "*")
    assert not p.allowed("https://site.local/wiki/Käyttäjä:", "*")
    assert not p.allowed("https://site.local/wiki/Käyttäjä:Foo", "*")
    assert p.allowed("https://site.local/wiki/Kayttaja:", "*")
    # UnicödeBöt's product token is `Unic`, and so is its group's in the
    # robots.txt (google/robotstxt cuts a group's name to its token too):
    # that group, not `*`, applies.
    for agent in ("UnicödeBöt", "UnicödeBöt".encode()):
        assert p.allowed("https://site.local/admin/", agent)
        assert not p.allowed("https://site.local/some/randome/page.html", agent)


@both_dialects
def test_crawl_delay(dialect):
    p = parser(
        b"User-agent: slowbot\nCrawl-delay: 2.5\nDisallow: /x\n\n"
        b"User-agent: quietbot\nDisallow: /y\n\n"
        b"User-agent: *\nCrawl-delay: 7\n",
        dialect,
    )
    assert p.crawl_delay("SlowBot") == 2.5
    assert p.crawl_delay(b"slowbot/1.0 (+https://x.example)") == 2.5
    # quietbot's own group has no delay: the `*` group's does not apply.
    assert p.crawl_delay("QuietBot") is None
    assert p.crawl_delay("OtherBot") == 7.0
    assert p.crawl_delay("*") == 7.0
    assert isinstance(p.crawl_delay("OtherBot"), float)


@both_dialects
def test_non_utf8_body(dialect):
    # Latin-1 é (0xE9) in a path, and a byte no encoding would decode.
    p = parser(b"User-agent: *\nDisallow: /caf\xe9\nDisallow: /\xff\xfe/x\n", dialect)
    assert not p.allowed(f"{SITE}/caf%E9", "*")
    assert not p.allowed(b"https://www.site.local/caf\xe9/menu", "*")
    assert not p.allowed(f"{SITE}/%FF%FE/x", "*")
    assert p.allowed(f"{SITE}/cafe", "*")
    # UTF-8's é is another path than Latin-1's.
    assert p.allowed(f"{SITE}/café", "*")


@both_dialects
def test_bytes_and_str_arguments_agree(dialect):
    p = parser(UNICODE_BODY + b"\nUser-agent: FooBot\nDisallow: /foo\n", dialect)
    urls = [
        "https://site.local/", "https://site.local/admin/x", "https://site.local/foo?a=b",
        "https://site.local/wiki/Käyttäjä:", "https://site.local/some/randome/page.html",
    ]
    agents = ["*", "FooBot", "FooBot/1.0", "UnicödeBöt", "Mozilla/5.0 (compatible; FooBot/1.0)"]
    for url in urls:
        for agent in agents:
            want = p.allowed(url, agent)
            assert p.allowed(url.encode(), agent) == want, (url, agent)
            assert p.allowed(url, agent.encode()) == want, (url, agent)
            assert p.allowed(url.encode(), agent.encode()) == want, (url, agent)
    assert not p.allowed(b"https://site.local/foo", b"FooBot/1.0")
    assert p.allowed(b"https://site.local/foo", b"BarBot")


AGENTS = [
    "Mozilla/5.0 (compatible; MyBot1/2.0)",
    "Scrapy/2.11 (+https://scrapy.org)",
    "Rule1TestBot",
    "MyBot1",
    "Googlebot/2.1",
    "",
    "   ",
    "7up",
    "*",
    "* and more",
    "bot\tname\nnext",
    "UnicödeBöt",
    b"Mozilla/5.0 \xff\xfe",
    "x" * 10_000,
]


@both_dialects
def test_whole_user_agents_and_digit_tokens_never_raise_or_warn(dialect):
    p = parser(
        b"User-agent: MyBot\nDisallow: /mine\n\n"
        b"User-agent: Rule\nDisallow: /rule\n\n"
        b"User-agent: Mozilla\nDisallow: /mozilla\n\n"
        b"User-agent: *\nDisallow: /all\n",
        dialect,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no UserWarning reaches Scrapy users
        for agent in AGENTS:
            assert isinstance(p.allowed(f"{SITE}/x", agent), bool)
            assert p.crawl_delay(agent) is None
        # Each is decided by its longest [A-Za-z_-] prefix.
        assert not p.allowed(f"{SITE}/mine", "MyBot1")
        assert p.allowed(f"{SITE}/all", "MyBot1")
        assert not p.allowed(f"{SITE}/rule", "Rule1TestBot")
        assert not p.allowed(f"{SITE}/mozilla", "Mozilla/5.0 (compatible; MyBot1/2.0)")
        assert p.allowed(f"{SITE}/mine", "Mozilla/5.0 (compatible; MyBot1/2.0)")
        # No such prefix: the `*` group.
        for agent in ("7up", "", "* and more"):
            assert not p.allowed(f"{SITE}/all", agent), agent
            assert p.allowed(f"{SITE}/mine", agent), agent


def test_rfc9309_names_a_reduced_agent_once(caplog):
    p = parser(b"User-agent: LogOnceBot\nDisallow: /x\n", "rfc9309")
    agent = "LogOnceBot/3.1 (+https://log-once.example)"
    with caplog.at_level(logging.INFO, logger="robofilter.scrapy"):
        for _ in range(5):
            assert not p.allowed(f"{SITE}/x", agent)
            assert not p.allowed(f"{SITE}/x", agent.encode())
        # Another parser (another host) of the same crawl: still once.
        assert not parser(b"User-agent: *\nDisallow: /\n", "rfc9309").allowed(f"{SITE}/y", agent)
        # A token is not reported at all.
        assert not p.allowed(f"{SITE}/x", "LogOnceBot")
    said = [r for r in caplog.records if r.name == "robofilter.scrapy"]
    assert len(said) == 1, [r.getMessage() for r in said]
    assert agent in said[0].getMessage()
    assert "'LogOnceBot'" in said[0].getMessage()


def test_google_takes_the_token_silently(caplog):
    p = parser(b"User-agent: QuietTokenBot\nDisallow: /x\n")
    with caplog.at_level(logging.DEBUG, logger="robofilter"):
        assert not p.allowed(f"{SITE}/x", "QuietTokenBot/1.0")
    assert not [r for r in caplog.records if r.name.startswith("robofilter")]


def _zstd(data: bytes) -> bytes:
    """A zstd frame: the magic number is what the engine refuses by."""
    return b"\x28\xb5\x2f\xfd" + data


@both_dialects
def test_refused_body_disallows_everything_with_an_error(dialect, caplog):
    robots = b"User-agent: *\nAllow: /\nCrawl-delay: 3\n"
    refused = {
        "gzip": gzip.compress(robots),
        "zstd": _zstd(robots),
        "compiled rules file": Rules.compile(robots).to_bytes(),
    }
    for what, body in refused.items():
        caplog.clear()
        with caplog.at_level(logging.ERROR, logger="robofilter.scrapy"):
            p = parser(body, dialect)
        errors = [r for r in caplog.records if r.levelno == logging.ERROR]
        assert len(errors) == 1, what
        assert what.split()[0] in errors[0].getMessage(), errors[0].getMessage()
        assert "disallowed" in errors[0].getMessage()
        assert p.refused and what.split()[0] in p.refused
        for agent in ("*", "FooBot", "Mozilla/5.0"):
            assert not p.allowed(f"{SITE}/", agent)
            assert not p.allowed(f"{SITE}/anything?q", agent)
            assert p.crawl_delay(agent) is None
    # The text itself is read, and allows.
    assert parser(robots, dialect).allowed(f"{SITE}/x", "FooBot")


def test_dialect_setting():
    # /robots.txt can never be disallowed in RFC 9309; google/robotstxt
    # has no such exception.
    body = b"User-agent: *\nDisallow: /\n"
    assert not parser(body).allowed(f"{SITE}/robots.txt", "*")
    assert not parser(body, "google").allowed(f"{SITE}/robots.txt", "*")
    assert parser(body, "rfc9309").allowed(f"{SITE}/robots.txt", "*")
    with pytest.raises(ValueError, match="ROBOFILTER_DIALECT"):
        parser(body, "strict")


def test_host_of_the_url_is_ignored():
    # Scrapy keeps one parser per host; like its other parsers, this one
    # decides the path and query of whatever URL it is given.
    p = parser(b"User-agent: *\nDisallow: /p\n")
    for url in ("https://a.example/p", "http://b.example:8080/p?x", "https://bücher.example/p",
                "https://[::1]/p", "//c.example/p"):
        assert not p.allowed(url, "*"), url
    assert p.allowed("https://bücher.example/q", "*")


# ---------------------------------------------------------------------------
# A real crawl: Scrapy obeys robots.txt through this parser.

PAGES = {
    "/": b'<a href="/public">public</a> <a href="/private">private</a> '
         b'<a href="/private/deeper">deeper</a>',
    "/public": b'<a href="/">home</a> <a href="/public/more">more</a> '
               b'<a href="/private?from=public">private</a>',
    "/public/more": b'<a href="/public">back</a>',
    "/private": b"secret",
    "/private/deeper": b"secret",
}
# `*` may have nothing; the crawler's own group (its User-Agent header's
# product token) lets it in except under /private. If the agent were not
# reduced to its token, `*` would apply and nothing but /robots.txt would
# be fetched.
ROBOTS = b"User-agent: *\nDisallow: /\n\nUser-agent: LoopBot\nDisallow: /private\n"

CRAWL = textwrap.dedent("""\
    '''A Scrapy crawl of the loopback site at argv[1] that obeys its
    robots.txt through robofilter.scrapy.RobotParser; writes the stats as
    JSON to argv[2]. ROBOFILTER_DIALECT is argv[3].'''
    import json
    import sys

    import scrapy
    from scrapy.crawler import CrawlerProcess

    base, out, dialect = sys.argv[1:4]


    class Loop(scrapy.Spider):
        name = "loop"
        start_urls = [base + "/"]

        def parse(self, response):
            for href in response.css("a::attr(href)").getall():
                yield response.follow(href, self.parse)


    process = CrawlerProcess(settings={
        "ROBOTSTXT_OBEY": True,
        "ROBOTSTXT_PARSER": "robofilter.scrapy.RobotParser",
        "ROBOFILTER_DIALECT": dialect,
        "USER_AGENT": "LoopBot/1.0 (+http://127.0.0.1/bot)",
        "TELNETCONSOLE_ENABLED": False,
        "HTTPPROXY_ENABLED": False,
        "RETRY_ENABLED": False,
        "COOKIES_ENABLED": False,
        "DOWNLOAD_TIMEOUT": 10,
        "CLOSESPIDER_TIMEOUT": 30,
        "LOG_LEVEL": "DEBUG",
    })
    crawler = process.create_crawler(Loop)
    process.crawl(crawler)
    process.start()
    with open(out, "w") as f:
        json.dump(crawler.stats.get_stats(), f, default=str)
""")


class _Site(http.server.BaseHTTPRequestHandler):
    """The loopback site; every request's path is logged in ``paths``."""

    paths: list[str] = []

    def do_GET(self):  # noqa: N802 (http.server's name)
        self.paths.append(self.path)
        if self.path == "/robots.txt":
            body, kind = ROBOTS, "text/plain"
        elif self.path.split("?")[0] in PAGES:
            body, kind = PAGES[self.path.split("?")[0]], "text/html"
        else:
            self.send_error(404)
            return
        self.send_response(200)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.mark.parametrize("dialect", ["google", "rfc9309"])
def test_a_real_crawl_obeys_robots_txt(tmp_path, dialect):
    handler = type("Site", (_Site,), {"paths": []})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    script = tmp_path / "crawl.py"
    script.write_text(CRAWL)
    stats_path = tmp_path / "stats.json"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    try:
        # Twisted's reactor cannot be restarted in one process: a process
        # of its own, with this interpreter (the venv with the wheel).
        run = subprocess.run(
            [sys.executable, str(script), f"http://127.0.0.1:{httpd.server_address[1]}",
             str(stats_path), dialect],
            capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path,
        )
    finally:
        httpd.shutdown()
        httpd.server_close()
    log = run.stderr
    assert run.returncode == 0, log[-4000:]
    paths = handler.paths
    assert paths.count("/robots.txt") == 1, paths
    assert paths.index("/robots.txt") == 0, paths
    assert "/" in paths and "/public" in paths and "/public/more" in paths, paths
    assert not [p for p in paths if p.startswith("/private")], paths
    stats = json.loads(stats_path.read_text())
    assert stats["robotstxt/request_count"] == 1
    assert stats["robotstxt/response_status_count/200"] == 1
    # /private, /private/deeper and /private?from=public were dropped.
    assert stats["robotstxt/forbidden"] == 3, stats
    assert log.count("Forbidden by robots.txt") == 3, log[-4000:]
    assert "Traceback" not in log, log[-4000:]
    reported = log.count("is not a product token")
    # rfc9309 names the reduced User-Agent once; google takes it silently.
    assert reported == (1 if dialect == "rfc9309" else 0), log[-4000:]
