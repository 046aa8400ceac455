"""End to end on Spark (local[2]): a Parquet frontier in Common Crawl's
URL-index column layout, filtered with the wheel through mapInArrow, equals
the CLI's output row by row."""

from __future__ import annotations

import json
import os
import random
import shutil
from urllib.parse import urlsplit

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from robofilter import RobofilterError, Rules, shard_of
from robofilter.spark import filter_frontier, filter_sharded

from conftest import DATA


@pytest.fixture(scope="module")
def spark():
    try:
        from pyspark.sql import SparkSession
    except ImportError as e:
        pytest.fail(f"pyspark is needed for the Spark test (pip install pyspark): {e}")
    if shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        pytest.fail("Java (17) is needed for the Spark test: install a JDK or set JAVA_HOME")
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    session = (
        SparkSession.builder.master("local[2]")
        .appName("robofilter-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.shuffle.partitions", "2")
        # Several Arrow batches per partition.
        .config("spark.sql.execution.arrow.maxRecordsPerBatch", "300")
        .getOrCreate()
    )
    yield session
    session.stop()


def cc_frontier(lines: list[str]) -> pa.Table:
    """Rows in Common Crawl's URL-index layout (a subset of its columns)."""
    cols: dict[str, list] = {k: [] for k in [
        "url_surtkey", "url", "url_host_name", "url_host_tld", "url_protocol",
        "url_port", "url_path", "url_query", "fetch_status", "content_mime_type",
        "row"]}
    for i, url in enumerate(lines):
        try:
            p = urlsplit(url)
            host, port = p.hostname, p.port
        except ValueError:
            p, host, port = None, None, None
        cols["url_surtkey"].append(",".join(reversed((host or "").split("."))) + ")" + (p.path if p else ""))
        cols["url"].append(url)
        cols["url_host_name"].append(host)
        cols["url_host_tld"].append(host.rsplit(".", 1)[-1] if host else None)
        cols["url_protocol"].append(p.scheme if p else None)
        cols["url_port"].append(port)
        cols["url_path"].append(p.path if p else None)
        cols["url_query"].append(p.query or None if p else None)
        cols["fetch_status"].append(200)
        cols["content_mime_type"].append("text/html")
        cols["row"].append(i)
    return pa.table(cols, schema=pa.schema([
        ("url_surtkey", pa.string()), ("url", pa.string()),
        ("url_host_name", pa.string()), ("url_host_tld", pa.string()),
        ("url_protocol", pa.string()), ("url_port", pa.int32()),
        ("url_path", pa.string()), ("url_query", pa.string()),
        ("fetch_status", pa.int16()), ("content_mime_type", pa.string()),
        ("row", pa.int64()),
    ]))


def test_filter_frontier_equals_cli(spark, cli, tmp_path, sample_urls):
    bundle = tmp_path / "rules.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    hosts = [json.loads(l)["host"] for l in
             (DATA / "bundle" / "manifest.jsonl").read_text().splitlines() if l.strip()]
    rng = random.Random(9309)
    paths = ["/", "/private/x", "/api/public/1", "/api/x?q=1", "/tmp/a", "/robots.txt"]
    lines = [f"{rng.choice(['http', 'https'])}://{rng.choice(hosts)}{rng.choice(paths)}"
             for _ in range(3000)]
    lines += [l.decode() for l in sample_urls] + ["not a url", "http://x/a b"]
    rng.shuffle(lines)
    frontier = tmp_path / "frontier"
    frontier.mkdir()
    table = cc_frontier(lines)
    # Several files, as a crawl index has.
    for k in range(3):
        pq.write_table(table.slice(k * 1200, 1200), frontier / f"part-{k}.parquet")

    df = spark.read.parquet(str(frontier))
    out = filter_frontier(df, str(bundle), "FooBot")
    assert out.columns == df.columns + ["verdict"]
    rows = sorted(out.select("row", "url", "url_host_name", "verdict").collect())
    want = cli.filter_all(bundle, "FooBot", [l.encode() for l in lines])
    assert len(rows) == len(lines)
    for (row, url, host, verdict), (cli_verdict, cli_line) in zip(rows, want):
        assert url.encode() == cli_line and url == lines[row]
        assert verdict == cli_verdict, url
    counts = {v: sum(1 for r in rows if r[3] == v) for v in ("allow", "disallow", "unknown", "invalid")}
    assert all(counts.values()), counts
    # The allowed frontier, as a crawl would keep it.
    allowed = out.where("verdict = 'allow'").count()
    assert allowed == counts["allow"]


def test_filter_frontier_ships_a_recompiled_bundle_anew(spark, cli, tmp_path):
    """A bundle recompiled at the same path in one session: the second call
    answers by the new version (Spark keeps a file added under one name for
    the session, so a stale copy would otherwise answer)."""
    bundle = tmp_path / "b.bin"
    df = spark.createDataFrame([("https://a.example/private/x",)], "url string")
    verdicts = []
    for rule in ("Disallow: /private/", "Allow: /"):
        body = f"User-agent: *\n{rule}\n".encode()
        out = Rules.compile_hosts({"a.example": body})
        out.save(bundle)
        got = filter_frontier(df, str(bundle), "FooBot").select("verdict").collect()
        verdicts.append(got[0][0])
    assert verdicts == ["disallow", "allow"]


def test_filter_frontier_fails_on_the_driver(spark, cli, tmp_path):
    rules = cli.compile(b"User-agent: FooBot\nDisallow: /\n", tmp_path / "r.rules",
                        "--agent", "FooBot")
    df = spark.createDataFrame([("http://x/",)], "url string")
    with pytest.raises(RobofilterError, match="OtherBot"):
        filter_frontier(df, str(rules), "OtherBot")
    with pytest.raises(ValueError, match="no column 'link'"):
        filter_frontier(df, str(rules), "FooBot", url_col="link")


def test_filter_frontier_several_agents_equals_cli(spark, cli, tmp_path):
    """A list of agents: one column per agent (verdict_<agent>), the other
    columns passed through, every column equal to `filter --emit all
    --agent A --agent B` on the same lines (TAB fields, spaces, unknown
    hosts, invalid lines)."""
    bundle = tmp_path / "rules.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    hosts = [json.loads(l)["host"] for l in
             (DATA / "bundle" / "manifest.jsonl").read_text().splitlines() if l.strip()]
    hosts.append("unknown.example")
    rng = random.Random(12)
    paths = ["/", "/private/x", "/api/public/1", "/tmp/a", "/a b/c", "/robots.txt"]
    tails = ["", "\tdepth=1\tscore=0.3", " ", "\t"]
    lines = [f"{rng.choice(['http', 'https'])}://{rng.choice(hosts)}{rng.choice(paths)}"
             f"{rng.choice(tails)}" for _ in range(2000)]
    lines += ["not a url", "\tk=v", ""]
    table = cc_frontier(lines)
    path = tmp_path / "frontier.parquet"
    pq.write_table(table, path)
    df = spark.read.parquet(str(path))
    agents = ["FooBot", "GPTBot"]
    out = filter_frontier(df, str(bundle), agents)
    assert out.columns == df.columns + ["verdict_FooBot", "verdict_GPTBot"]
    got = sorted(out.select("row", "url", "fetch_status", "verdict_FooBot",
                            "verdict_GPTBot").collect())
    p = cli.run("filter", bundle, "--agent", "FooBot", "--agent", "GPTBot", "--emit",
                "all", input="".join(l + "\n" for l in lines).encode())
    want = [r.split("\t", 2) for r in p.stdout.decode().split("\n")[:-1]]
    assert len(got) == len(want) == len(lines)
    for (row, url, status, foo, gpt), (cli_foo, cli_gpt, cli_line) in zip(got, want):
        assert url == lines[row] == cli_line and status == 200
        assert (foo, gpt) == (cli_foo, cli_gpt), url
    assert {w[0] for w in want} == {"allow", "disallow", "unknown", "invalid"}
    # The single-agent form is unchanged: one `verdict` column.
    single = filter_frontier(df, str(bundle), "GPTBot")
    assert single.columns == df.columns + ["verdict"]
    assert [r.verdict for r in sorted(single.select("row", "verdict").collect())] == \
        [w[1] for w in want]
    # Names Spark would confuse (it compares columns case-insensitively).
    clash = df.withColumnRenamed("row", "VERDICT_gptbot")
    with pytest.raises(ValueError, match="already has a column 'verdict_GPTBot'"):
        filter_frontier(clash, str(bundle), agents)
    with pytest.raises(ValueError, match="given twice"):
        filter_frontier(df, str(bundle), ["GPTBot", "gptbot"])


def test_filter_sharded_equals_cli_one_shard_per_task(spark, cli, tmp_path):
    """Issue 15: the sample bundle split into 4 shards; `filter_sharded`
    gives the CLI's verdicts on the same URLs (on the unsharded bundle),
    each task decides the rows of one shard, and each task opens one shard
    (counted with an accumulator)."""
    manifest = DATA / "bundle" / "manifest.jsonl"
    bundle, shards = tmp_path / "rules.bin", tmp_path / "shards"
    cli.run("compile", "--manifest", manifest, "-o", bundle)
    cli.run("compile", "--manifest", manifest, "--shards", "4", "-o", shards)
    hosts = [json.loads(l)["host"] for l in manifest.read_text().splitlines() if l.strip()]
    hosts += ["unknown.example", "UNKNOWN2.example:8080"]
    rng = random.Random(15)
    paths = ["/", "/private/x", "/api/public/1", "/tmp/a", "/a b/c", "/robots.txt"]
    lines = [f"{rng.choice(['http', 'https'])}://{rng.choice(hosts)}{rng.choice(paths)}"
             for _ in range(3000)]
    lines += ["not a url", "", "http://a\\@b.example/"]
    df = spark.createDataFrame(cc_frontier(lines).to_pandas())
    opened = spark.sparkContext.accumulator(0)
    out = filter_sharded(df, str(shards), ["FooBot", "GPTBot"], opened=opened)
    assert out.columns == df.columns + ["verdict_FooBot", "verdict_GPTBot"]
    got = sorted(out.select("row", "url", "verdict_FooBot", "verdict_GPTBot").collect())
    p = cli.run("filter", bundle, "--agent", "FooBot", "--agent", "GPTBot", "--emit",
                "all", input="".join(l + "\n" for l in lines).encode())
    want = [r.split("\t", 2) for r in p.stdout.decode().split("\n")[:-1]]
    assert len(got) == len(want) == len(lines)
    for (row, url, foo, gpt), (cli_foo, cli_gpt, cli_line) in zip(got, want):
        assert url == lines[row] == cli_line
        assert (foo, gpt) == (cli_foo, cli_gpt), url
    assert {w[0] for w in want} == {"allow", "disallow", "unknown", "invalid"}
    # Partition i holds shard i's rows only (URLs without a host: shard 0).
    def shards_of(i, rows):
        yield i, sorted({shard_of(r.url, 4) or 0 for r in rows})
    per_task = dict(out.select("url").rdd.mapPartitionsWithIndex(shards_of).collect())
    nonempty = {i: s for i, s in per_task.items() if s}
    assert all(s == [i] for i, s in nonempty.items()), per_task
    # One shard opened per task that had rows (the count comes from the
    # tasks of the `collect` above and of this `count`).
    opened_before = opened.value
    assert opened_before >= len(nonempty)
    out.count()
    assert opened.value - opened_before == len(nonempty)
