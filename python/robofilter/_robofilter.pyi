"""Type stubs of the robofilter extension module (robofilter._robofilter)."""

import os
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Final, Literal, TypedDict

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

class Explanation(TypedDict):
    url: str | bytes
    verdict: Verdict
    host: str | None
    reason: str
    line: int | None
    pattern: str | None

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
        """Memory-maps a rules file or bundle (``robofilter compile`` or
        ``Rules.save``). The file must not change while it is loaded."""
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
        and the ``*`` fallback; default: every agent)."""
    @staticmethod
    def compile_hosts(
        sources: Mapping[str, Fetch] | str | os.PathLike[str],
        *,
        dialect: Dialect = "rfc9309",
        agents: Sequence[str] | None = None,
        dfa_byte_limit: int | None = 32768,
    ) -> Rules:
        """Compiles a bundle from ``{host: fetch}`` or a directory of
        ``HOST.txt`` files (as ``robofilter compile --hosts DIR``)."""
    def to_bytes(self) -> bytes:
        """The rules file's (or bundle's) bytes."""
    def save(self, path: str | os.PathLike[str]) -> None:
        """Writes the rules through a temporary file renamed over ``path``."""
    @property
    def is_bundle(self) -> bool: ...
    @property
    def dialect(self) -> Dialect: ...
    @property
    def host_count(self) -> int:
        """How many hosts a bundle has (0 for a single rules file)."""
    def verdict(self, url: str | bytes, agent: str) -> Verdict:
        """The verdict of one URL, as ``robofilter filter --emit all``."""
    def allowed(self, url: str | bytes, agent: str) -> bool:
        """Whether the verdict is ``"allow"``."""
    def explain(self, url: str | bytes, agent: str) -> Explanation:
        """The verdict with its reason, as ``filter --json --explain``."""
    def check(
        self,
        urls: pa.Array | pa.ChunkedArray | Iterable[str | bytes | None],
        agent: str,
        *,
        threads: int = 1,
    ) -> pa.DictionaryArray:
        """Verdicts of many URLs: ``dictionary<uint8, string>`` (codes index
        ``VERDICTS``; null where the URL is null). Arrow string/binary
        arrays are read in place; the GIL is released; ``threads=0`` uses
        every core."""
    def filter_batches(
        self,
        batches: Iterable[pa.RecordBatch],
        agent: str,
        url_column: str = "url",
        *,
        threads: int = 1,
    ) -> VerdictBatches:
        """Each batch with a ``verdict`` column added (see ``check``), lazily:
        the shape PySpark's ``mapInArrow`` wants."""
