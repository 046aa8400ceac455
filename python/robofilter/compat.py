"""A drop-in for the standard library's ``urllib.robotparser.RobotFileParser``
whose verdicts come from robofilter's engine (RFC 9309 or Google's dialect).

::

    from robofilter.compat import RobotFileParser

    rp = RobotFileParser("https://example.com/robots.txt")
    rp.read()                     # robofilter.fetch, RFC 9309's status policy
    rp.can_fetch("FooBot/1.0", "https://example.com/private/x")   # False
    rp.crawl_delay("FooBot")      # 1.5, or None
    rp.request_rate("FooBot")     # RequestRate(requests=1, seconds=10), or None
    rp.site_maps()                # ['https://example.com/sitemap.xml'], or None

    rp = RobotFileParser(dialect="google")
    rp.parse(["User-agent: *", "Disallow: /*.pdf$"])
    rp.can_fetch("FooBot", "/a/b.pdf")                              # False

The methods and their state are CPython's: ``can_fetch`` is ``False`` until
``read()`` or ``parse()`` has run (``mtime()`` is 0 until then), the
``allow_all`` and ``disallow_all`` attributes still override every verdict
when set, and ``can_fetch`` decides the path and query of a URL (its host
is ignored) or a bare path against this one robots.txt. What differs, and
why:

- **Precedence and wildcards.** The longest matching rule decides and
  ``Allow`` wins a tie (RFC 9309 section 2.2.2); ``*`` and a final ``$``
  are wildcards. CPython takes the first matching line in file order and
  matches ``*`` and ``$`` literally.
- **Groups.** Every group naming the agent applies, merged, and a blank
  line does not end a group (RFC 9309 section 2.1); ``User-agent`` lines
  with no ``Allow`` or ``Disallow`` between them name one group even when
  other lines (``Crawl-delay``) come between, as in google/robotstxt.
  CPython uses the first group that matches, ends a group at a blank
  line, and starts one at a ``User-agent`` after any other line.
- **Agents.** The agent is its product token, the longest prefix of
  ``[A-Za-z_-]`` characters (``"FooBot/1.0"`` and ``"FooBot"`` are both
  ``FooBot``; ``"*"`` and an agent without such a prefix are ``*``),
  matched case-insensitively against whole ``User-agent`` names, as
  google/robotstxt's callers do. CPython matches a ``User-agent`` name
  that is a substring of the lower-cased text before the useragent's
  first ``/``, so ``User-agent: bot`` applies to ``FooBot/1.0`` there and
  not here. In the rfc9309 dialect an agent that was not already a token
  is named once in the log (logger ``robofilter.compat``, INFO) with the
  token used.
- **Fetching** (``read()``) goes through ``robofilter.fetch``, the CLI's
  fetcher: ``/robots.txt`` at the URL's scheme, host and port whatever
  path ``set_url`` named (the file's only location in RFC 9309), up to
  five redirects, the body cut at the parse limit. Its outcome follows
  RFC 9309 section 2.3.1: 2xx gives the rules; any other 4xx, including
  401 and 403, allows everything (CPython disallows everything after 401
  or 403); 429, 5xx and an unreachable host disallow everything (CPython
  allows everything after 429, and raises ``URLError`` when the host is
  unreachable). ``mtime()`` is set by every ``read()`` that completed,
  whatever the status (CPython sets it only when it parsed a body).
- **Facts.** ``crawl_delay`` is a ``float`` (``Crawl-delay: 1.5`` counts;
  CPython returns an ``int`` and ignores non-integers), from the first
  numeric ``Crawl-delay`` line of the agent's groups. ``request_rate`` is
  the first valid ``Request-rate: n/s`` line of the agent's groups (CPython
  keeps the last one of the first group).
- **Percent-encoding.** URLs and rules are compared after the dialect's
  normalization (RFC 9309: ``%xx`` and the UTF-8 octets it names are equal;
  unreserved characters decoded). CPython unquotes and re-quotes both.
- ``str(rp)`` is the robots.txt text the verdicts come from; CPython
  re-serializes its parsed groups. CPython's private attributes
  (``entries``, ``default_entry``, ``sitemaps``) are not there.
- A ``useragent`` or ``url`` that is neither ``str`` nor ``bytes`` raises
  ``TypeError``; any string, however odd, gets a verdict (a path that does
  not start with ``/`` is read as if it did).

The helpers ``product_token`` and ``request_target`` are shared with
``robofilter.scrapy``.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import re
import tempfile
import threading
import time
from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import urlparse
from urllib.robotparser import RequestRate

from ._robofilter import RobofilterError, Rules, fetch

__all__ = ["RobotFileParser", "RequestRate", "product_token", "request_target"]

logger = logging.getLogger(__name__)

DIALECTS = ("rfc9309", "google")

#: The origin put before a path decided against rules from ``parse()``:
#: one robots.txt speaks for one host, so the URL's own host never matters,
#: and a reserved name (RFC 2606) never looks like a real one in a message.
PARSED_ORIGIN = "http://robots.invalid"

#: The rules that replace a robots.txt the engine refuses to read as text
#: (compressed, or a compiled rules file): everything disallowed.
DISALLOW_ALL = b"User-agent: *\nDisallow: /\n"

_TOKEN = re.compile(r"[A-Za-z_-]+")
# Characters a URL never holds raw: C0 controls, space, DEL and anything
# past ASCII. A TAB or newline would end the URL for the engine's line
# reader, so they are escaped like the rest.
_UNSAFE = re.compile(r"[^\x21-\x7e]+")
# A scheme and authority, or a network-path reference's authority.
_ORIGIN = re.compile(r"(?:[A-Za-z][A-Za-z0-9+.\-]*:)?//[^/?#]*")
_RATE = re.compile(r"\s*([0-9]+)\s*/\s*([0-9]+)\s*")

# Agents already reported as reduced to a token, per logger name; capped so
# that a crawler rotating through endless User-Agent strings cannot grow it
# without bound (past the cap, new agents are not reported).
_REPORTED: set[tuple[str, str]] = set()
_REPORTED_CAP = 4096
_REPORTED_LOCK = threading.Lock()


def product_token(agent: str | bytes) -> str:
    """The product token robofilter decides ``agent`` by: the longest prefix
    of ``[A-Za-z_-]`` characters after surrounding white space, as
    google/robotstxt's callers extract it; ``"*"``, and an agent with no
    such prefix, give ``"*"`` (the groups every crawler obeys).

    >>> product_token("Mozilla/5.0 (compatible; MyBot1/2.0)")
    'Mozilla'
    >>> product_token(b"Rule1TestBot"), product_token("7up"), product_token("*")
    ('Rule', '*', '*')
    """
    if isinstance(agent, bytes):
        agent = agent.decode("utf-8", "replace")
    elif not isinstance(agent, str):
        raise TypeError(f"an agent is str or bytes, not {type(agent).__name__}")
    m = _TOKEN.match(agent.strip())
    return m.group() if m else "*"


def token_for(agent: str | bytes, dialect: str, log: logging.Logger) -> str:
    """``product_token(agent)``; in the rfc9309 dialect an agent that was not
    already its token is reported once per process on ``log`` (INFO), naming
    the token used. The google dialect takes the token silently, as
    google/robotstxt's callers do."""
    token = product_token(agent)
    if dialect != "rfc9309" or token == agent:
        return token
    shown = agent.decode("utf-8", "replace") if isinstance(agent, bytes) else agent
    if token == shown:
        return token
    key = (log.name, shown)
    with _REPORTED_LOCK:
        if key in _REPORTED or len(_REPORTED) >= _REPORTED_CAP:
            return token
        _REPORTED.add(key)
    log.info(
        "robots.txt agent %r is not a product token (RFC 9309 section 2.2.1); "
        "deciding it as %r, its longest [A-Za-z_-] prefix",
        shown,
        token,
    )
    return token


def _escape(match: re.Match[str]) -> str:
    """``%XX`` for each UTF-8 octet of the matched characters."""
    out = []
    for ch in match.group():
        try:
            # A surrogate from bytes decoded with surrogateescape is that
            # byte; any other lone surrogate is encoded as it stands.
            octets = ch.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:
            octets = ch.encode("utf-8", "surrogatepass")
        out.extend(f"%{b:02X}" for b in octets)
    return "".join(out)


def request_target(url: str | bytes) -> str:
    """The path and query of ``url`` (a full URL, a network-path reference
    or a bare path), as ASCII: the fragment dropped, a missing leading ``/``
    added, and every control character, space and non-ASCII character
    written as the ``%XX`` escapes of its UTF-8 octets, which is what
    Scrapy's ``safe_url_string`` and browsers do to a path. Bytes are read
    as UTF-8 and their other octets kept as they are (escaped). Never
    raises for a ``str`` or ``bytes``.

    >>> request_target("https://site.local/wiki/Käyttäjä:?q#top")
    '/wiki/K%C3%A4ytt%C3%A4j%C3%A4:?q'
    >>> request_target(b"//h.example"), request_target("a b")
    ('/', '/a%20b')
    """
    if isinstance(url, bytes):
        url = url.decode("utf-8", "surrogateescape")
    elif not isinstance(url, str):
        raise TypeError(f"a URL is str or bytes, not {type(url).__name__}")
    url = url.strip()
    m = _ORIGIN.match(url)
    rest = url[m.end():] if m else url
    rest = rest.partition("#")[0]
    if not rest.startswith("/"):
        rest = "/" + rest
    return _UNSAFE.sub(_escape, rest)


def _join_lines(lines: Iterable[str | bytes]) -> bytes:
    """``parse()``'s lines as one robots.txt: each line's own line break
    (from ``readlines()``) dropped, then joined with ``\\n``; ``str`` lines
    are UTF-8, ``bytes`` lines kept as they are."""
    out = []
    for line in lines:
        if isinstance(line, str):
            line = line.encode("utf-8", "surrogateescape")
        elif not isinstance(line, (bytes, bytearray)):
            raise TypeError(f"robots.txt lines are str or bytes, not {type(line).__name__}")
        if line.endswith(b"\n"):
            line = line[:-1]
        if line.endswith(b"\r"):
            line = line[:-1]
        out.append(bytes(line))
    return b"\n".join(out) + b"\n" if out else b""


class RobotFileParser:
    """``urllib.robotparser.RobotFileParser``'s API over robofilter's engine
    (see the module's documentation for where the verdicts differ).

    ``dialect`` is ``"rfc9309"`` (the default) or ``"google"``.
    ``fetch_options`` are keyword arguments of ``robofilter.fetch`` used by
    ``read()`` (``timeout``, ``user_agent``, ``resolve``, ``retries``,
    ``max_body``, ...); the scheme is the URL's own.
    """

    def __init__(
        self,
        url: str = "",
        *,
        dialect: str = "rfc9309",
        fetch_options: Mapping[str, Any] | None = None,
    ):
        if dialect not in DIALECTS:
            raise ValueError(f"dialect must be 'rfc9309' or 'google', not {dialect!r}")
        options = dict(fetch_options or {})
        for key in ("scheme", "inputs", "output"):
            if key in options:
                raise ValueError(
                    f"fetch_options cannot set {key!r}: read() fetches the "
                    "robots.txt of the URL given to set_url, over its scheme"
                )
        self.dialect = dialect
        self.fetch_options = options
        self.disallow_all = False
        self.allow_all = False
        self.last_checked = 0.0
        self._rules: Rules | None = None
        self._origin = PARSED_ORIGIN
        self._host: str | None = None
        self._text = ""
        self.set_url(url)

    def __repr__(self) -> str:
        return f"RobotFileParser({self.url!r}, dialect={self.dialect!r})"

    def mtime(self) -> float:
        """The time ``read()`` or ``parse()`` last ran (``time.time()``), or
        0 if neither has."""
        return self.last_checked

    def modified(self) -> None:
        """Sets ``mtime()`` to now."""
        self.last_checked = time.time()

    def set_url(self, url: str) -> None:
        """Sets the robots.txt URL that ``read()`` fetches (its ``host`` and
        ``path`` attributes as CPython sets them)."""
        self.url = url
        self.host, self.path = urlparse(url)[1:3]

    def read(self) -> None:
        """Fetches the robots.txt of ``url``'s scheme, host and port with
        ``robofilter.fetch`` and compiles what it got with RFC 9309's status
        policy (2xx: the rules; other 4xx: allow all; 429, 5xx,
        unreachable: disallow all). Raises ``ValueError`` for a URL that is
        not ``http``/``https`` with a host, ``OSError`` if the temporary
        files cannot be written; never for what the server answered."""
        url = self.url.strip() if isinstance(self.url, str) else ""
        parts = urlparse(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https") or not parts.hostname or _UNSAFE.search(url):
            raise ValueError(
                f"cannot fetch robots.txt for {self.url!r}: not an http or "
                "https URL with a host (write a non-ASCII host name in IDNA)"
            )
        with tempfile.TemporaryDirectory(prefix="robofilter-compat-") as tmp:
            hosts = os.path.join(tmp, "hosts.txt")
            with open(hosts, "w", encoding="utf-8") as f:
                f.write(url + "\n")
            manifest = os.path.join(tmp, "robots.jsonl")
            summary = fetch(hosts, manifest, scheme=scheme, **self.fetch_options)
            if summary["hosts"] != 1:
                raise ValueError(
                    f"cannot fetch robots.txt for {self.url!r}: "
                    "robofilter.fetch found no host to fetch from in it"
                )
            rules = Rules.compile_hosts(manifest, dialect=self.dialect)
            with open(manifest, encoding="utf-8") as f:
                entry = next(json.loads(line) for line in f if line.strip())
        # The bundle's host key: verdicts and facts are asked of that host.
        host = entry["host"]
        self._set(rules, f"{scheme}://{host}", host, _manifest_text(entry, self.dialect))

    def parse(self, lines: Iterable[str | bytes]) -> None:
        """Compiles the robots.txt given as lines (``str`` or ``bytes``, with
        or without their line breaks) and sets ``mtime()``. A text the engine
        refuses (a compiled rules file given as lines) is logged as an error
        and disallows everything, as ``User-agent: *`` with ``Disallow: /``
        would."""
        body = _join_lines(lines)
        text = body.decode("utf-8", "replace")
        try:
            rules = Rules.compile(body, dialect=self.dialect)
        except RobofilterError as e:
            logger.error("robots.txt not read, so every URL is disallowed: %s", e)
            rules = Rules.compile(DISALLOW_ALL, dialect=self.dialect)
            text = ""
        self._set(rules, PARSED_ORIGIN, None, text)

    def _set(self, rules: Rules, origin: str, host: str | None, text: str) -> None:
        """The state after a ``read()`` or ``parse()``: ``allow_all`` and
        ``disallow_all`` cleared (the new file decides), ``mtime()`` now."""
        self._rules = rules
        self._origin = origin
        self._host = host
        self._text = text
        self.disallow_all = False
        self.allow_all = False
        self.modified()

    def _token(self, useragent: str | bytes) -> str:
        """The product token ``useragent`` is decided by."""
        return token_for(useragent, self.dialect, logger)

    def can_fetch(self, useragent: str | bytes, url: str | bytes) -> bool:
        """Whether ``useragent`` may fetch ``url`` (a full URL, whose host is
        ignored, or a path) by this robots.txt: ``False`` before ``read()`` or
        ``parse()``, ``allow_all``/``disallow_all`` first when set."""
        if self.disallow_all:
            return False
        if self.allow_all:
            return True
        if not self.last_checked:
            return False
        token = self._token(useragent)
        target = self._origin + request_target(url)
        if self._rules is None:
            # CPython's answer after modified() alone: no groups, so allowed.
            return True
        return self._rules.verdict(target, token) == "allow"

    def crawl_delay(self, useragent: str | bytes) -> float | None:
        """The agent's ``Crawl-delay`` in seconds (a ``float``), or ``None``."""
        if not self.mtime() or self._rules is None:
            return None
        return self._rules.crawl_delay(self._token(useragent), host=self._host)

    def request_rate(self, useragent: str | bytes) -> RequestRate | None:
        """The first valid ``Request-rate: n/s`` of the agent's groups as
        ``urllib.robotparser.RequestRate(requests=n, seconds=s)``, or
        ``None``."""
        if not self.mtime() or self._rules is None:
            return None
        for d in self._rules.directives(host=self._host, agent=self._token(useragent)):
            if d["key"].lower() == "request-rate":
                m = _RATE.fullmatch(d["value"])
                if m:
                    return RequestRate(int(m.group(1)), int(m.group(2)))
        return None

    def site_maps(self) -> list[str] | None:
        """The ``Sitemap`` URLs in file order, or ``None`` if there are none."""
        if self._rules is None:
            return None
        return self._rules.sitemaps(host=self._host) or None

    def __str__(self) -> str:
        """The robots.txt text the verdicts come from ('' when none was
        read: before reading, after a non-2xx answer or a refused body)."""
        return self._text


def _manifest_text(entry: dict[str, Any], dialect: str) -> str:
    """The robots.txt text of a manifest entry whose rules were read (a 2xx
    body the engine compiles), else ''."""
    status = entry.get("status")
    if not isinstance(status, int) or not 200 <= status < 300:
        return ""
    if "body" in entry:
        body = entry["body"].encode("utf-8", "replace")
    elif "body_base64" in entry:
        body = base64.b64decode(entry["body_base64"])
    else:
        return ""
    try:
        # A body compile_hosts refused (still compressed) gave no rules.
        Rules.compile(body, dialect=dialect)
    except RobofilterError:
        return ""
    return body.decode("utf-8", "replace")
