"""Type stubs of the robofilter extension module (robofilter._robofilter)."""

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Literal, TypedDict, overload

from typing_extensions import NotRequired

import pyarrow as pa

Verdict = Literal["allow", "disallow", "unknown", "invalid"]
Dialect = Literal["rfc9309", "google"]

#: What a host's robots.txt fetch gave: the body (status 200), an HTTP
#: status with no body, ``(status, body)``, or ``None`` (unreachable).
Fetch = bytes | str | int | tuple[int, bytes | str | None] | None

#: The dictionary of verdict arrays, indexed by code:
#: ``["allow", "disallow", "unknown", "invalid"]``.
VERDICTS: Final[list[str]]

class RobofilterError(ValueError):
    """Rules that cannot be loaded, a robots.txt that cannot be compiled,
    or an agent the rules were not compiled for; the message is the CLI's."""

#: Several agents: a list or tuple of product tokens (non-empty, each
#: named once, compared case-insensitively).
Agents = list[str] | tuple[str, ...]

class Why(TypedDict):
    reason: str
    line: int | None
    pattern: str | None

class Explanation(TypedDict):
    """``explain(url, agent)``: the CLI's ``--json --explain`` object."""

    url: str | bytes
    verdict: Verdict
    host: str | None
    fields: NotRequired[str | bytes]
    reason: str
    line: int | None
    pattern: str | None

class Explanations(TypedDict):
    """``explain(url, [agents])``: the CLI's ``--json --explain`` object
    for several agents; ``verdict`` is the combined verdict."""

    url: str | bytes
    verdict: Verdict
    verdicts: dict[str, Verdict]
    host: str | None
    fields: NotRequired[str | bytes]
    reasons: dict[str, Why]

class Directive(TypedDict):
    """A robots.txt line that decides no verdict (``Rules.directives``)."""

    line: int
    key: str
    value: str
    #: The group's index in the file; ``None`` before any ``user-agent``.
    group: int | None
    #: That group's ``user-agent`` values.
    agents: list[str]

class VerdictBatches(Iterator[pa.RecordBatch]):
    """The lazy iterator returned by ``Rules.filter_batches``."""

    def __iter__(self) -> VerdictBatches: ...
    def __next__(self) -> pa.RecordBatch: ...

class Rules:
    """Compiled robots.txt rules: one rules file, or a bundle of hosts.

    Thread-safe and immutable; bundle members are checked and loaded the
    first time one of their hosts is looked up.
    """

    @staticmethod
    def load(path: str | os.PathLike[str]) -> Rules:
        """Loads a rules file, a bundle or a shard directory (``robofilter
        compile`` or ``Rules.save``), checked as ``robofilter filter``
        checks it. A rules file or bundle is read into memory: a file cut
        or rewritten afterwards changes no answer. A shard directory's
        shards are each opened when a URL first needs one, checked against
        ``index.json``; one changed in place after that raises
        ``RobofilterError``."""
    @staticmethod
    def from_bytes(data: bytes) -> Rules:
        """Loads rules from bytes (copied once, to align them)."""
    @staticmethod
    def compile(
        robots_txt: bytes | str,
        *,
        dialect: Dialect = "rfc9309",
        agents: Sequence[str] | None = None,
        dfa_byte_limit: int | None = None,
    ) -> Rules:
        """Compiles one robots.txt (``agents``: only these agents' groups
        and the ``*`` fallback; default: every agent). Compressed (gzip,
        zstd) or compiled input is refused with ``RobofilterError``, as
        ``robofilter compile`` refuses it."""
    @staticmethod
    def compile_hosts(
        sources: Mapping[str, Fetch] | str | os.PathLike[str],
        *,
        dialect: Dialect = "rfc9309",
        agents: Sequence[str] | None = None,
        dfa_byte_limit: int | None = 32768,
        strict: bool = False,
    ) -> Rules:
        """Compiles a bundle from ``{host: fetch}``, a directory of
        ``HOST.txt`` files, a WARC file (``.warc``, ``.warc.gz``) or a
        manifest (what ``fetch`` writes): the bytes of ``robofilter compile
        --hosts``/``--warc``/``--manifest``. A bad member is a ``UserWarning`` and its host disallowed;
        with ``strict=True``, a ``RobofilterError``."""
    def to_bytes(self) -> bytes:
        """The rules file's (or bundle's) bytes (not for a shard
        directory)."""
    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the rules through a temporary file renamed over ``path``."""
    @property
    def is_bundle(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def host_count(self) -> int:
        """How many hosts a bundle has (0 for a single rules file)."""
    @overload
    def verdict(self, url: str | bytes, agent: str) -> Verdict: ...
    @overload
    def verdict(self, url: str | bytes, agent: Agents) -> dict[str, Verdict]: ...
    def verdict(self, url: str | bytes, agent: str | Agents) -> Verdict | dict[str, Verdict]:
        """The verdict of one URL, as ``robofilter filter --emit all``; for
        a list of agents, a dict agent -> verdict in the order given."""
    def allowed(self, url: str | bytes, agent: str | Agents) -> bool:
        """Whether the verdict is ``"allow"`` (for every agent of a list)."""
    @overload
    def explain(self, url: str | bytes, agent: str) -> Explanation: ...
    @overload
    def explain(self, url: str | bytes, agent: Agents) -> Explanations: ...
    def explain(self, url: str | bytes, agent: str | Agents) -> Explanation | Explanations:
        """The verdict with its reason, as ``filter --json --explain``."""
    def crawl_delay(self, agent: str, host: str | None = None) -> float | None:
        """The crawl delay in seconds of the groups that apply to ``agent``
        (the first numeric ``crawl-delay`` line of the groups naming it, or
        else of the ``*`` groups); ``None`` if there is none. For a bundle
        or shard directory, ``host`` names the host (host name or URL;
        ``KeyError`` if the bundle has no entry for it)."""
    def sitemaps(self, host: str | None = None) -> list[str]:
        """The sitemap URLs, in file order (``host`` as for ``crawl_delay``)."""
    def directives(self, host: str | None = None, *, agent: str | None = None) -> list[Directive]:
        """The lines that decide no verdict (Content-Signal, Content-Usage,
        Request-rate, Host, Crawl-delay, unknown keys), in file order, as
        ``inspect --json`` lists them (``host`` as for ``crawl_delay``);
        with ``agent``, only those of the groups whose rules it gets."""
    @overload
    def check(
        self,
        urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None],
        agent: str,
        *,
        threads: int = 1,
        usage: None = None,
    ) -> pa.DictionaryArray: ...
    @overload
    def check(
        self,
        urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None],
        agent: Agents,
        *,
        threads: int = 1,
        usage: None = None,
    ) -> pa.RecordBatch: ...
    @overload
    def check(
        self,
        urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None],
        agent: str | Agents,
        *,
        threads: int = 1,
        usage: str | Sequence[str],
    ) -> pa.RecordBatch: ...
    def check(
        self,
        urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None],
        agent: str | Agents,
        *,
        threads: int = 1,
        usage: str | Sequence[str] | None = None,
    ) -> pa.DictionaryArray | pa.RecordBatch:
        """Verdicts of many URLs: ``dictionary<uint8, string>`` (codes index
        ``VERDICTS``; null where the URL is null); for a list of agents, a
        record batch with one such column per agent, named by the agent.
        With ``usage`` (``"train-ai"``, ``"search"`` or a list), a record
        batch with, after the verdicts, one column per agent and key,
        ``usage_<key>`` (``usage_<key>_<agent>`` for a list of agents):
        ``y``, ``n``, ``unknown``, or null where there is no preference to
        have. Arrow string/binary arrays (or dictionaries of them) are read
        in place; the GIL is
        released; ``threads=0`` uses every core."""
    def content_signal(
        self, agent: str, host: str | None = None
    ) -> dict[str, bool | None] | None:
        """The first ``Content-Signal`` line of the groups ``agent`` gets,
        as ``{"ai_train", "ai_input", "search"}``, each ``True`` (yes),
        ``False`` (no) or ``None``; ``None`` without one (``host`` as for
        ``crawl_delay``)."""
    def filter_batches(
        self,
        batches: Iterable[pa.RecordBatch],
        agent: str | Agents,
        url_column: str = "url",
        *,
        threads: int = 1,
        verdict_column: str = "verdict",
    ) -> VerdictBatches:
        """Each batch with a ``verdict`` column added (see ``check``), or
        one ``verdict_<agent>`` column per agent of a list, lazily, other
        columns passed through: the shape PySpark's ``mapInArrow`` wants."""


@overload
def shard_of(urls: str | bytes, shards: int) -> int | None: ...
@overload
def shard_of(
    urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None], shards: int
) -> pa.Array: ...
def shard_of(urls: object, shards: int) -> int | None | pa.Array:
    """The shard (0-based) of each URL's or host's host key among
    ``shards``: XXH3-64 (seed 0) of the bundle host key, mod ``shards``, as
    ``robofilter compile --shards`` places hosts. One ``str``/``bytes``
    gives an ``int`` (``None``: no host); an Arrow array or a sequence
    gives a ``uint32`` array (null: null input or no host)."""


class FetchSummary(TypedDict):
    """What ``fetch`` did: the counts ``robofilter fetch`` reports."""

    hosts: int
    ok: int
    revalidated: int
    unavailable: int
    unreachable: int
    refused: int
    stale: int
    fresh: int
    resumed: int
    bad_lines: int
    other_shards: int
    fetched: int
    seconds: float

def fetch(
    inputs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    output: str | os.PathLike[str],
    *,
    resolve: Sequence[str] | None = None,
    scheme: Literal["https", "http"] = "https",
    timeout: float = 10.0,
    user_agent: str | None = None,
    concurrency: int = 256,
    max_body: int = 528663,
    min_ttl: int = 0,
    max_ttl: int = 86400,
    shard: tuple[int, int] | None = None,
    retries: int = 2,
    per_address: int = 8,
) -> FetchSummary:
    """Fetches the robots.txt of every host named in ``inputs`` into the
    manifest ``output``, as ``robofilter fetch`` does (the same output,
    journal and cache; ``resolve`` takes curl's ``HOST:PORT:ADDR``). The
    GIL is released while it runs."""

def _shard_index(text: bytes, name: str) -> dict[str, object]:
    """A shard directory's ``index.json``, parsed and checked."""
