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

A frontier of many hosts against a shard directory (``robofilter compile
... --shards N -o DIR``): each task decides the URLs of one shard and opens
only that shard::

    from robofilter.spark import filter_sharded
    checked = filter_sharded(frontier, "/data/robots.shards", "FooBot")

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

from ._robofilter import Rules, _shard_index, shard_of

if TYPE_CHECKING:
    from pyspark import Accumulator
    from pyspark.sql import DataFrame, SparkSession

__all__ = ["filter_frontier", "filter_sharded", "load_once"]

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

    ``rules_path`` is shipped to the executors with ``addFile``, under a
    name derived from its content (a file recompiled at the same path is
    shipped anew, never served from Spark's copy of the old one); it is
    loaded (and the agents checked) on the driver first, so that a damaged
    file or an unknown agent fails before any task runs. ``threads`` is the
    number of threads per task (Spark already runs one task per core).
    """
    from pyspark import SparkFiles
    from pyspark.sql.types import StringType, StructField, StructType

    names = _verdict_names(df, agent, url_col, verdict_col)
    # Fail on the driver, with the CLI's message, before shipping anything
    # (an unknown agent; for a list, also an agent named twice or none).
    Rules.load(rules_path).filter_batches(
        iter(()), agent, url_col, verdict_column=verdict_col
    )
    spark = df.sparkSession
    # Shipped under a name derived from its content: Spark keeps the first
    # file added under a name for the whole session (a later addFile of
    # the same name only logs a warning), so a file recompiled at the same
    # path must travel under a new name, never as the stale copy.
    shipped = _content_named(rules_path)
    spark.sparkContext.addFile(shipped)
    name = os.path.basename(shipped)
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


def filter_sharded(
    df: DataFrame,
    shard_dir: str,
    agent: str | Sequence[str],
    url_col: str = "url",
    *,
    verdict_col: str = "verdict",
    threads: int = 1,
    opened: Accumulator | None = None,
) -> DataFrame:
    """``filter_frontier`` against a shard directory (``robofilter compile
    ... --shards N -o DIR``): the same columns and verdicts, with each task
    deciding the URLs of exactly one shard and opening only that shard.

    The shard of each URL is computed on the executors by the wheel
    (``shard_of``: robofilter's own host parse); a URL without a host
    goes with shard 0, whose answer for it (``unknown`` or ``invalid``) is
    every shard's. The rows are then shuffled into N partitions, partition
    ``i`` holding shard ``i``'s rows: the partitioning key of shard ``i``
    is an integer that Spark's own hash partitioning (the ``hash``
    function, Murmur3 with seed 42, mod N) sends to partition ``i``, found
    on the driver by Spark itself, so no task gets two shards. Each task
    then opens the directory with the wheel (``Rules.load``), which reads
    only its shard, in place when ``shard_dir`` is a local path (or
    ``file:``), else from a local copy of ``index.json`` and that shard
    made through ``pyarrow.fs`` (``s3://``, ``hdfs://``, ``gs://``...).

    ``opened``, if given, is an integer accumulator that counts the shards
    the tasks open (for tests and monitoring).
    """
    from pyspark.sql.types import IntegerType, StringType, StructField, StructType

    index = _read_index(shard_dir)
    n = int(index["shards"])
    names = _verdict_names(df, agent, url_col, verdict_col)
    # Fail on the driver, with the CLI's message, before any task runs (an
    # agent the shards were not compiled for, one named twice, none).
    _shard(shard_dir, index, 0).filter_batches(
        iter(()), agent, url_col, verdict_column=verdict_col
    )
    keys = _partition_keys(df.sparkSession, n)
    key_col = "__robofilter_shard_key"
    while key_col in df.columns:
        key_col += "_"

    def add_key(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        lookup = pa.array(keys, pa.int32())
        for batch in batches:
            shards = shard_of(batch.column(url_col), n).fill_null(0)
            yield batch.append_column(key_col, lookup.take(shards))

    keyed_schema = StructType(
        df.schema.fields + [StructField(key_col, IntegerType(), False)])
    parted = df.mapInArrow(add_key, keyed_schema).repartition(n, key_col)
    shard_by_key = {k: i for i, k in enumerate(keys)}
    schema = StructType(
        df.schema.fields + [StructField(c, StringType(), True) for c in names]
    )
    width = len(names)

    def run(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
        rules, mine = None, None
        for batch in batches:
            if batch.num_rows == 0:
                continue
            ks = batch.column(key_col).unique().to_pylist()
            if len(ks) != 1 or (mine is not None and ks[0] != mine):
                raise RuntimeError(
                    f"robofilter: a task got rows of several shards ({ks}): "
                    f"Spark did not partition by the shard key as expected")
            if rules is None:
                mine = ks[0]
                rules = _shard(shard_dir, index, shard_by_key[mine])
                if opened is not None:
                    opened.add(1)
            batch = batch.drop_columns([key_col])
            for out in rules.filter_batches(
                iter([batch]), agent, url_col, threads=threads,
                verdict_column=verdict_col,
            ):
                k = out.num_columns - width
                verdicts = [c.dictionary_decode() for c in out.columns[k:]]
                yield pa.RecordBatch.from_arrays(
                    out.columns[:k] + verdicts,
                    schema=_arrow_schema(out, names),
                )

    return parted.mapInArrow(run, schema)


def _content_named(path: str) -> str:
    """A copy (or hard link) of ``path`` named by its content's digest, in a
    directory of this process's own: ``rules-3f2a...9c.bin`` for
    ``rules.bin``. The same content keeps the same name."""
    import hashlib
    import shutil
    import tempfile

    digest = hashlib.blake2b(digest_size=16)
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    stem, ext = os.path.splitext(os.path.basename(path))
    target_dir = os.path.join(tempfile.gettempdir(), f"robofilter-ship-{os.getpid()}")
    os.makedirs(target_dir, exist_ok=True)
    target = os.path.join(target_dir, f"{stem}-{digest.hexdigest()}{ext}")
    if not os.path.exists(target):
        part = target + ".part"
        try:
            os.link(path, part)
        except OSError:
            shutil.copyfile(path, part)
        os.replace(part, target)
    return target


def _verdict_names(
    df: DataFrame, agent: str | Sequence[str], url_col: str, verdict_col: str
) -> list[str]:
    """The verdict columns to add (``verdict_col``, or one
    ``f"{verdict_col}_{agent}"`` per agent of a list), after checking that
    ``df`` has ``url_col`` and none of them (compared case-insensitively,
    as Spark compares column names)."""
    if url_col not in df.columns:
        raise ValueError(
            f"the DataFrame has no column '{url_col}' (its columns: "
            f"{', '.join(df.columns)}); pass url_col="
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
    return names


def _partition_keys(spark: SparkSession, n: int) -> list[int]:
    """For each shard ``i`` of ``n``, an int that ``repartition(n, col)``
    sends to partition ``i``: the smallest ``k >= 0`` whose
    ``pmod(hash(k), n)`` is ``i``, computed by Spark (the same Murmur3
    with seed 42 that its hash partitioning uses)."""
    from pyspark.sql import functions as F

    limit = 64 * n + 4096
    while True:
        rows = (
            spark.range(limit)
            .select(F.col("id").cast("int").alias("k"))
            .select("k", F.pmod(F.hash("k"), F.lit(n)).alias("p"))
            .groupBy("p").agg(F.min("k").alias("k"))
            .collect()
        )
        found = {r["p"]: r["k"] for r in rows}
        if len(found) == n:
            return [found[i] for i in range(n)]
        limit *= 4


def _read_index(shard_dir: str) -> dict:
    """``shard_dir``'s ``index.json``, read from any file system and
    parsed and checked by the wheel (the reader the CLI uses)."""
    path = _join(shard_dir, "index.json")
    with _open_input(path) as f:
        return _shard_index(f.read(), path)


# The shard directory a Python worker holds: only the last one loaded,
# since each shard has one task (a worker that ran another shard's task
# before has no use for that one, and keeping every shard it met would
# grow with the job).
_last_shard: dict[str, Rules] = {}


def _shard(shard_dir: str, index: dict, i: int) -> Rules:
    """The shard directory, opened by the wheel (``Rules.load``, which
    checks each shard against ``index.json`` and opens it only when a URL
    needs it) for a task that decides the URLs of shard ``i``. A local
    directory (plain or ``file:``) is used in place; from any other file
    system ``pyarrow.fs`` reads, ``index.json`` and shard ``i`` are copied
    to local disk first. The previous shard this process held is
    dropped (its copy removed)."""
    key = f"{shard_dir}#{i}"
    with _lock:
        rules = _last_shard.get(key)
        if rules is not None:
            return rules
        for old in list(_last_shard):
            del _last_shard[old]
        local = _local_path(shard_dir)
        if local is None:
            local = _copy_shard(shard_dir, index["files"][i]["name"])
        rules = Rules.load(local)
        _last_shard[key] = rules
        return rules


def _join(base: str, name: str) -> str:
    return base.rstrip("/") + "/" + name


def _local_path(path: str) -> str | None:
    """The local file system path of ``path`` (plain or ``file:``), else
    ``None``."""
    if path.startswith("file://"):
        return path[len("file://"):]
    if path.startswith("file:"):
        return path[len("file:"):]
    return None if "://" in path else path


def _open_input(path: str):
    local = _local_path(path)
    if local is not None:
        return open(local, "rb")
    from pyarrow import fs

    filesystem, inner = fs.FileSystem.from_uri(path)
    return filesystem.open_input_stream(inner)


def _copy_shard(shard_dir: str, name: str) -> str:
    """Copies ``index.json`` and the shard ``name`` of ``shard_dir`` into
    a directory of this process's own (replacing the previous copy) and
    returns its path: a shard directory holding the one shard a task
    needs."""
    import shutil
    import tempfile

    from pyarrow import fs

    target = os.path.join(tempfile.gettempdir(), f"robofilter-shards-{os.getpid()}")
    shutil.rmtree(target, ignore_errors=True)
    os.makedirs(target)
    for file in ("index.json", name):
        filesystem, inner = fs.FileSystem.from_uri(_join(shard_dir, file))
        part = os.path.join(target, file + ".part")
        with filesystem.open_input_stream(inner) as src, open(part, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
        os.replace(part, os.path.join(target, file))
    return target


def _arrow_schema(batch: pa.RecordBatch, names: list[str]) -> pa.Schema:
    """``batch``'s schema with its last ``len(names)`` (verdict) columns
    as plain strings."""
    k = len(batch.schema) - len(names)
    fields = list(batch.schema)[:k] + [pa.field(n, pa.string()) for n in names]
    return pa.schema(fields, metadata=batch.schema.metadata)
