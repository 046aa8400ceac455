"""robots.txt verdicts for URLs at memory speed, in Python.

``Rules`` wraps a rules file or a bundle of many hosts compiled by
``robofilter compile`` (or by ``Rules.compile`` / ``Rules.compile_hosts``)
and decides URLs with the same Rust code as ``robofilter filter``: a URL
gets the verdict ``allow``, ``disallow``, ``unknown`` (a bundle without its
host) or ``invalid`` (not a URL), exactly as the CLI's ``--emit all``
writes it.

Bulk calls take Arrow arrays and read them in place::

    import pyarrow as pa, robofilter
    rules = robofilter.Rules.load("rules.bin")
    verdicts = rules.check(pa.array(urls), "FooBot")   # dictionary<uint8, string>
    batch = rules.check(pa.array(urls), ["FooBot", "GPTBot"])  # one column per agent

A line is what the CLI reads: the URL ends at the first TAB (the fields
after it are ignored), and spaces inside the URL belong to it.

``Rules.load`` takes rules files, bundles and shard directories;
``robofilter.fetch(inputs, output)`` fetches robots.txt files into the
manifest that ``Rules.compile_hosts`` and ``robofilter compile --manifest``
read, as ``robofilter fetch`` does.

``robofilter.spark.filter_frontier`` runs the same on a PySpark DataFrame.
``robofilter.scrapy.RobotParser`` is a Scrapy ``ROBOTSTXT_PARSER`` (needs Scrapy).
``robofilter.compat.RobotFileParser`` is a drop-in for ``urllib.robotparser``'s.
``robofilter.shard_of(urls, n)`` gives each URL's or host's shard, as
``robofilter compile --shards n`` places hosts.
"""

from ._robofilter import (
    VERDICTS,
    RobofilterError,
    Rules,
    VerdictBatches,
    fetch,
    shard_of,
)

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("robofilter")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0.0.0+unknown"

__all__ = ["Rules", "RobofilterError", "VerdictBatches", "VERDICTS", "fetch", "shard_of"]
