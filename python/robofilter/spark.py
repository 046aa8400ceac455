"""PySpark integration: filter a crawl frontier DataFrame against robots.txt
rules on the executors, with the same Rust engine as ``robofilter filter``.

The rules file (a single rules file or a bundle of hosts) is shipped to the
executors with ``SparkContext.addFile``, memory-mapped once per Python
worker, and applied to each Arrow batch through ``DataFrame.mapInArrow``::

    from robofilter.spark import filter_frontier
    frontier = spark.read.parquet("s3://.../cc-index/table/.../subset=warc/")
    checked = filter_frontier(frontier, "rules.bin", "FooBot", url_col="url")
    checked.where("verdict = 'allow'").write.parquet("allowed/")

    # Several agents: one column per agent, verdict_FooBot, verdict_GPTBot.
    both = filter_frontier(frontier, "rules.bin", ["FooBot", "GPTBot"])

The no-Python fallback pipes the URL column through the CLI on each
executor (``robofilter`` must be on the executors' PATH)::

    urls = frontier.select("url").rdd.map(lambda r: r.url)
    allowed = urls.pipe("robofilter filter rules.bin --agent FooBot")
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import pyarrow as pa

from ._robofilter import Rules

if TYPE_CHECKING:
    from pyspark.sql import DataFrame

__all__ = ["filter_frontier", "load_once"]

_loaded: dict[str, Rules] = {}
_lock = threading.Lock()


def load_once(path: str) -> Rules:
    """``Rules.load(path)``, once per Python process (Spark reuses its
    Python workers, so each loads a rules file once)."""
    with _lock:
        rules = _loaded.get(path)
        if rules is None:
            rules = Rules.load(path)
            _loaded[path] = rules
        return rules


def filter_frontier(
    df: DataFrame,
    rules_path: str,
    agent: str | Sequence[str],
    url_col: str = "url",
    *,
    verdict_col: str = "verdict",
    threads: int = 1,
) -> DataFrame:
    """``df`` with a string column ``verdict_col`` added: ``allow``,
    ``disallow``, ``unknown`` (a bundle without the URL's host), ``invalid``
    (not a URL), or null where the URL is null. Every other column is
    passed through.

    ``agent`` is one agent, or a list or tuple of agents: then one column
    ``f"{verdict_col}_{agent}"`` per agent, in the order given (each URL
    is decided once for all of them). Agents are compared
    case-insensitively, as Spark compares column names.

    ``rules_path`` is shipped to the executors with ``addFile``; it is
    loaded (and the agents checked) on the driver first, so that a damaged
    file or an unknown agent fails before any task runs. ``threads`` is the
    number of threads per task (Spark already runs one task per core).
    """
    from pyspark import SparkFiles
    from pyspark.sql.types import StringType, StructField, StructType

    if isinstance(agent, str) and verdict_col in df.columns:
        raise ValueError(
            f"the DataFrame already has a column '{verdict_col}' (pass "
            f"verdict_col= to name the verdicts otherwise)"
        )
    if url_col not in df.columns:
        raise ValueError(
            f"the DataFrame has no column '{url_col}' (its columns: "
            f"{', '.join(df.columns)}); pass url_col="
        )
    # Fail on the driver, with the CLI's message, before shipping anything
    # (an unknown agent; for a list, also an agent named twice or none).
    Rules.load(rules_path).filter_batches(
        iter(()), agent, url_col, verdict_column=verdict_col
    )
    if isinstance(agent, str):
        names = [verdict_col]
    else:
        names = [f"{verdict_col}_{a}" for a in agent]
        have = {c.lower() for c in df.columns}
        for name in names:
            if name.lower() in have:
                raise ValueError(
                    f"the DataFrame already has a column '{name}' (pass "
                    f"verdict_col= to name the verdict columns otherwise)"
                )
    spark = df.sparkSession
    spark.sparkContext.addFile(os.path.abspath(rules_path))
    name = os.path.basename(rules_path)
    schema = StructType(
        df.schema.fields + [StructField(n, StringType(), True) for n in names]
    )
    n = len(names)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rules = load_once(SparkFiles.get(name))
        for batch in rules.filter_batches(
            batches, agent, url_col, threads=threads, verdict_column=verdict_col
        ):
            # Spark's Arrow reader wants plain strings, not dictionaries.
            k = batch.num_columns - n
            verdicts = [c.dictionary_decode() for c in batch.columns[k:]]
            columns = batch.columns[:k] + verdicts
            yield pa.RecordBatch.from_arrays(
                columns, schema=_arrow_schema(batch, names)
            )

    return df.mapInArrow(run, schema)


def _arrow_schema(batch: pa.RecordBatch, names: list[str]) -> pa.Schema:
    """``batch``'s schema with its last ``len(names)`` (verdict) columns
    as plain strings."""
    k = len(batch.schema) - len(names)
    fields = list(batch.schema)[:k] + [pa.field(n, pa.string()) for n in names]
    return pa.schema(fields, metadata=batch.schema.metadata)
