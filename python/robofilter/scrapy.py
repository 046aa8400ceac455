"""robots.txt for Scrapy from robofilter's engine: a parser for Scrapy's
``ROBOTSTXT_PARSER`` setting.

Enable it in a project's ``settings.py``::

    ROBOTSTXT_OBEY = True
    ROBOTSTXT_PARSER = "robofilter.scrapy.RobotParser"
    ROBOTSTXT_USER_AGENT = "MyBot"     # recommended: your crawler's token
    # ROBOFILTER_DIALECT = "rfc9309"   # default "google"

Scrapy's ``RobotsTxtMiddleware`` downloads each host's ``/robots.txt``,
builds one parser per host with ``RobotParser.from_crawler(crawler,
body)`` and asks ``allowed(request.url, user_agent)`` before every
request; ``crawl_delay(user_agent)`` is there for code that asks (Scrapy's
interface since 2.18). The class subclasses ``scrapy.robotstxt.RobotParser``
when Scrapy is importable; ``import robofilter`` never needs Scrapy (it is
the optional extra ``robofilter[scrapy]``).

Decisions:

- **Dialect**: ``google`` by default, since Scrapy's default parser
  (Protego) follows Google's; the setting ``ROBOFILTER_DIALECT =
  "rfc9309"`` chooses RFC 9309 (read from ``crawler.settings``; another
  value raises ``ValueError`` when the middleware starts).
- **User agents**: Scrapy passes whole User-Agent strings
  (``Mozilla/5.0 (compatible; MyBot1/2.0)``) and names with digits
  (``Rule1TestBot``), as ``str`` or ``bytes``. Each is decided by its
  product token, the longest ``[A-Za-z_-]`` prefix (``Mozilla``, ``Rule``;
  ``*`` stays ``*``, and an agent without such a prefix is ``*``), in both
  dialects, as google/robotstxt's callers do, so nothing is raised and the
  google dialect warns about nothing. In ``rfc9309`` an agent that was not
  already a token is named once per process in the log (logger
  ``robofilter.scrapy``, INFO) with the token used. Protego instead
  matches a ``User-agent`` name found anywhere in the whole string, so
  ``User-agent: MyBot`` applies to ``Mozilla/5.0 (compatible; MyBot/1.0)``
  there and not here: set ``ROBOTSTXT_USER_AGENT`` to your token.
- **URLs**: the URL's path and query are decided (its host is ignored, as
  every Scrapy parser does: the middleware keeps one parser per host).
  Control characters, spaces and non-ASCII characters are first written as
  the ``%XX`` escapes of their UTF-8 octets, as Scrapy's
  ``safe_url_string`` writes a request's path, so
  ``https://site.local/wiki/Käyttäjä:`` and its escaped form get one
  verdict; a ``bytes`` URL is read as UTF-8, its other octets escaped as
  they are. Only a verdict of ``allow`` is allowed: the engine's
  ``invalid`` (not a URL) cannot occur for a path on a fixed origin, and
  would not be allowed if it did.
- **Bodies** are compiled as bytes, whatever their encoding: an empty or
  garbage body (``GIF89a...``) has no rules and allows everything, and a
  Latin-1 path matches its ``%XX`` escapes. A body the engine refuses
  (still gzip- or zstd-compressed, or a compiled rules file) is not
  read as text: the parser logs an error naming the reason (kept in
  ``refused``) and **disallows every URL of the host** (its rules are
  ``User-agent: *`` with ``Disallow: /``), as ``robofilter compile
  --hosts`` does with such a member, because a robots.txt that cannot be
  read is not permission. (Protego decodes it as text, finds no rules,
  and allows everything.)
- **Status**: Scrapy hands the parser the body of whatever response
  ``/robots.txt`` got (a 404 page, a 503 page), never the status, so
  RFC 9309's status policy is not applied here: a 5xx page usually has
  no rules and allows everything, as with every Scrapy parser. When the
  download itself fails, Scrapy's middleware allows the host's URLs.
"""

from __future__ import annotations

import logging
from typing import Any

from ._robofilter import RobofilterError, Rules
from .compat import DIALECTS, DISALLOW_ALL, PARSED_ORIGIN, request_target, token_for

try:
    from scrapy.robotstxt import RobotParser as _ScrapyRobotParser
except ImportError:  # Scrapy is optional; Scrapy loads this class by path.
    _ScrapyRobotParser = object  # type: ignore[assignment,misc]

__all__ = ["RobotParser"]

logger = logging.getLogger(__name__)


class RobotParser(_ScrapyRobotParser):  # type: ignore[misc,valid-type]
    """One host's robots.txt for Scrapy's ``RobotsTxtMiddleware`` (see the
    module's documentation). ``rules`` is the compiled ``Rules``; for a
    body the engine refused, ``refused`` holds why and ``rules`` are those
    of ``User-agent: *`` with ``Disallow: /``."""

    def __init__(
        self,
        robotstxt_body: bytes | str,
        *,
        dialect: str = "google",
        spider: Any = None,
    ):
        if dialect not in DIALECTS:
            raise ValueError(
                f"ROBOFILTER_DIALECT must be 'google' or 'rfc9309', not {dialect!r}"
            )
        self.dialect = dialect
        self.spider = spider
        if robotstxt_body is None:
            robotstxt_body = b""
        elif isinstance(robotstxt_body, str):
            robotstxt_body = robotstxt_body.encode("utf-8", "surrogateescape")
        self.refused: str | None = None
        try:
            self.rules = Rules.compile(bytes(robotstxt_body), dialect=dialect)
        except RobofilterError as e:
            logger.error(
                "robots.txt not read, so every URL of its host is disallowed: %s",
                e,
                extra={"spider": spider},
            )
            self.refused = str(e)
            self.rules = Rules.compile(DISALLOW_ALL, dialect=dialect)

    @classmethod
    def from_crawler(cls, crawler: Any, robotstxt_body: bytes) -> RobotParser:
        """The parser of one robots.txt body; ``crawler`` may be ``None``
        (Scrapy's own tests pass it), else its ``ROBOFILTER_DIALECT``
        setting chooses the dialect."""
        dialect = "google"
        spider = None
        if crawler is not None:
            dialect = crawler.settings.get("ROBOFILTER_DIALECT") or "google"
            spider = getattr(crawler, "spider", None)
        return cls(robotstxt_body, dialect=dialect, spider=spider)

    def allowed(self, url: str | bytes, user_agent: str | bytes) -> bool:
        """Whether ``user_agent`` (its product token) may fetch ``url``."""
        token = token_for(user_agent, self.dialect, logger)
        return self.rules.verdict(PARSED_ORIGIN + request_target(url), token) == "allow"

    def crawl_delay(self, user_agent: str | bytes) -> float | None:
        """The ``Crawl-delay`` in seconds of the groups ``user_agent``'s
        product token gets, or ``None``."""
        return self.rules.crawl_delay(token_for(user_agent, self.dialect, logger))
