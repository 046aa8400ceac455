"""Several agents in one call, and frontier lines (URL, TAB, fields; spaces
inside URLs): the wheel against `robofilter filter --emit all --agent A
--agent B ...` (issue 12, section 2), column by column."""

from __future__ import annotations

import functools
import json
import random
import warnings

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from robofilter import RobofilterError, Rules

from conftest import DATA

SAMPLE_ROBOTS = (DATA / "sample" / "robots.txt").read_bytes()
# Rules where spaces, their escapes and the agents all matter.
SPACE_ROBOTS = (b"User-agent: FooBot\nDisallow: /a%20b\nAllow: /x y\nDisallow: /x\n\n"
                b"User-agent: GPTBot\nDisallow: /private\nDisallow: /c d\n\n"
                b"User-agent: *\nDisallow: /tmp\n")
SAMPLE_AGENTS = ["Googlebot", "FooBot", "Bingbot", "DuckDuckBot", "YandexBot"]


def cli_columns(cli, rules, agents: list[str], lines: list[bytes],
                *args: str) -> list[list[bytes]]:
    """`filter --emit all`, one `--agent` per agent: per line, its columns
    (one verdict per agent, then the line)."""
    flags = [x for a in agents for x in ("--agent", a)]
    p = cli.run("filter", rules, *flags, "--emit", "all", *args,
                input=b"".join(l + b"\n" for l in lines))
    rows = [r.split(b"\t", len(agents)) for r in p.stdout.split(b"\n")[:-1]]
    assert len(rows) == len(lines), "the CLI accounts for every line"
    return rows


def frontier_lines(urls: list[bytes], rng: random.Random) -> list[bytes]:
    """Frontier lines as crawlers keep them: each URL bare, with TAB
    fields (Nutch/StormCrawler style, empty, non-UTF-8, CRLF), with spaces
    inside, before or after it, and lines that are not URLs."""
    out = []
    for u in urls:
        out.append(u)
        out.append(u + b"\tdepth=2\tscore=0.5")
        out.append(u + b"\t")
        out.append(u + b"\tsource=\xff\xfe")
        out.append(u + b"\tdiscovered=2024-05-01\r")
        if b"/" in u[8:]:
            k = u.index(b"/", 8) + 1 + rng.randrange(4)
            out.append(u[:k] + b" " + u[k:])          # a space inside
            out.append(u[:k] + b"  x y" + u[k:] + b"\tk=v")
        out.append(u + b" ")                          # ends with a space
        out.append(b" " + u)                          # starts with a space
        out.append(u + b" \tk=v")                     # URL ends with a space
    out += [b"", b"\r", b"\t", b"\tk=v", b"not a url\tk=v", b"http://x/a\x01b\tk",
            b"http://x/a b", b"http://x/c d/e\tk=v", b"http://x/x y", b"http://x/x yz",
            b"http://x/a%20b", b"http://x/a b", b"http://x/a%20b\t", b"http://x/\tq",
            b"http://x\tq", b"https://example.com/private\x7f\tk"]
    rng.shuffle(out)
    return out


def bundle_lines(rng: random.Random) -> list[bytes]:
    hosts = [json.loads(l)["host"] for l in
             (DATA / "bundle" / "manifest.jsonl").read_text().splitlines() if l.strip()]
    hosts += ["unknown.example", "zz.example:8080"]   # hosts the bundle lacks
    paths = ["/", "/private/x", "/api/public/1", "/api/x", "/tmp/a", "/robots.txt",
             "/a b/c", "/private/a b"]
    urls = [f"{rng.choice(['http', 'https'])}://{h}{p}".encode()
            for h in hosts for p in paths]
    return frontier_lines(urls, rng)


def as_columns(batch: pa.RecordBatch) -> list[list[str | None]]:
    return [c.dictionary_decode().to_pylist() for c in batch.columns]


def check_against_cli(cli, rules_path, agents, lines):
    """Every call of the wheel, for `agents` together and one by one,
    against the CLI's columns for `agents`."""
    rows = cli_columns(cli, rules_path, agents, lines)
    want = [[r[a].decode() for r in rows] for a in range(len(agents))]
    # The CLI prints each line whole (fields included), without its `\r`.
    assert [r[-1] for r in rows] == [l.removesuffix(b"\r") for l in lines]
    rules = Rules.load(rules_path)
    batch = rules.check(pa.array(lines, pa.binary()), agents)
    assert isinstance(batch, pa.RecordBatch)
    assert batch.schema.names == agents
    assert as_columns(batch) == want
    # A list of str (copied), a tuple of agents, string_view (in place).
    utf8 = [l.decode("utf-8", "surrogateescape") for l in lines]
    assert as_columns(rules.check(lines, tuple(agents))) == want
    views = pa.array(lines, pa.binary_view())
    assert as_columns(rules.check(views, agents, threads=2)) == want
    # The README's "allowed for every agent" mask (code 0 is allow).
    keep = functools.reduce(pc.and_, [pc.equal(c.indices, 0) for c in batch.columns])
    assert keep.to_pylist() == [all(w[i] == "allow" for w in want)
                                for i in range(len(lines))]
    # One agent at a time: each column equals the single-agent call.
    for a, agent in enumerate(agents):
        single = rules.check(pa.array(lines, pa.binary()), agent)
        assert single.dictionary_decode().to_pylist() == want[a], agent
    # One URL at a time: a dict per line, in the agents' order.
    for i, line in enumerate(lines):
        got = rules.verdict(line, agents)
        assert list(got) == agents
        assert list(got.values()) == [w[i] for w in want], (line, utf8[i])
        assert rules.allowed(line, agents) == all(w[i] == "allow" for w in want)
    return want


@pytest.mark.parametrize("dialect", ["rfc9309", "google"])
def test_rules_file_columns_equal_cli(cli, tmp_path, sample_urls, dialect):
    rng = random.Random(12)
    path = cli.compile(SPACE_ROBOTS + b"\n" + SAMPLE_ROBOTS, tmp_path / "s.rules",
                       "--dialect", dialect)
    lines = frontier_lines(sample_urls[:60], rng)
    want = check_against_cli(cli, path, ["FooBot", "GPTBot"], lines)
    # The agents disagree, and every verdict shows up.
    assert want[0] != want[1]
    assert {"allow", "disallow", "invalid"} <= set(want[0])
    want5 = check_against_cli(cli, path, SAMPLE_AGENTS, lines)
    assert len({tuple(w) for w in want5}) >= 3


def test_space_urls_equal_cli_per_dialect(cli, tmp_path):
    """Spaces inside a URL: rfc9309 matches them as %20, google raw; the
    wheel gives the CLI's verdicts in each dialect (and they differ)."""
    lines = [b"http://x/a b", b"http://x/a%20b", b"http://x/x y", b"http://x/x%20y",
             b"http://x/c d\tk=v", b"http://x/c%20d", b"http://x/x y\tk"]
    got = {}
    for dialect in ["rfc9309", "google"]:
        path = cli.compile(SPACE_ROBOTS, tmp_path / f"{dialect}.rules", "--dialect", dialect)
        got[dialect] = check_against_cli(cli, path, ["FooBot", "GPTBot"], lines)
    assert got["rfc9309"] != got["google"]


def test_bundle_columns_equal_cli(cli, tmp_path):
    bundle = tmp_path / "b.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    lines = bundle_lines(random.Random(4))
    want = check_against_cli(cli, bundle, ["FooBot", "Googlebot"], lines)
    assert set(want[0]) == {"allow", "disallow", "unknown", "invalid"}
    check_against_cli(cli, bundle, ["FooBot", "Googlebot", "GPTBot", "CCBot", "Bingbot"],
                      lines)


def cli_json(cli, rules, agents, lines):
    flags = [x for a in agents for x in ("--agent", a)]
    p = cli.run("filter", rules, *flags, "--emit", "all", "--json", "--explain",
                input=b"".join(l + b"\n" for l in lines))
    rows = [json.loads(r) for r in p.stdout.decode().splitlines()]
    assert len(rows) == len(lines)
    return rows


def test_explain_equals_cli_json_for_several_agents(cli, tmp_path, sample_urls):
    """`explain(url, [A, B])` is the CLI's `--json --explain` object for
    the same agents: combined `verdict`, `verdicts`, `reasons`, `fields`;
    `explain(url, A)` is its one-agent object, with `fields` too."""
    bundle = tmp_path / "b.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    single = cli.compile(SPACE_ROBOTS + b"\n" + SAMPLE_ROBOTS, tmp_path / "s.rules")
    rng = random.Random(3)
    cases = [(bundle, bundle_lines(rng)),
             (single, frontier_lines(sample_urls[:40], rng))]
    for path, lines in cases:
        rules = Rules.load(path)
        # JSON carries text: UTF-8 lines without a `\r` (the CLI drops it).
        lines = [l for l in lines if b"\r" not in l and b"\xff" not in l]
        agents = ["FooBot", "Googlebot", "GPTBot"]
        rows = cli_json(cli, path, agents, lines)
        assert any("fields" in r for r in rows)
        assert {r["verdict"] for r in rows} >= {"allow", "disallow", "invalid"}
        for line, row in zip(lines, rows):
            got = rules.explain(line.decode(), agents)
            assert got == row, line
            assert list(got["verdicts"]) == agents
        for line, row in zip(lines, cli_json(cli, path, ["GPTBot"], lines)):
            assert rules.explain(line.decode(), "GPTBot") == row, line


def test_explain_keeps_the_input_type():
    rules = Rules.compile(SPACE_ROBOTS)
    got = rules.explain(b"http://x/c d\tsrc=\xff\r", ["FooBot", "GPTBot"])
    assert got["url"] == b"http://x/c d" and got["fields"] == b"src=\xff"
    assert got["verdict"] == "disallow"
    assert got["verdicts"] == {"FooBot": "allow", "GPTBot": "disallow"}
    assert got["reasons"]["GPTBot"]["pattern"] == "/c%20d"
    assert got["reasons"]["FooBot"] == {"reason": "no matching rule", "line": None,
                                        "pattern": None}
    # A line without a TAB: `url` is the argument as given, no `fields`.
    one = rules.explain("http://x/x y", "FooBot")
    assert one["url"] == "http://x/x y" and "fields" not in one
    assert one["verdict"] == "allow" and one["line"] == 3


def test_agent_argument_shapes_and_errors():
    rules = Rules.compile(SPACE_ROBOTS)
    url = "http://x/private"
    assert rules.verdict(url, "GPTBot") == "disallow"          # str: as before
    assert rules.verdict(url, ["GPTBot"]) == {"GPTBot": "disallow"}
    assert rules.verdict(url, ("FooBot", "GPTBot")) == {"FooBot": "allow",
                                                        "GPTBot": "disallow"}
    assert rules.allowed(url, ["FooBot"]) and not rules.allowed(url, ["FooBot", "GPTBot"])
    assert isinstance(rules.check([url], "GPTBot"), pa.DictionaryArray)
    one = rules.check([url], ["GPTBot"])
    assert isinstance(one, pa.RecordBatch) and one.schema.names == ["GPTBot"]
    for call in (rules.verdict, rules.allowed, rules.explain):
        with pytest.raises(ValueError, match="given twice .*'GPTBot' names the same one"):
            call(url, ["GPTBot", "FooBot", "gptbot"])
        with pytest.raises(ValueError, match="empty"):
            call(url, [])
        with pytest.raises(TypeError, match="each agent must be a str"):
            call(url, ["GPTBot", b"FooBot"])
        with pytest.raises(TypeError, match="a str or a list or tuple"):
            call(url, {"GPTBot"})
    with pytest.raises(ValueError, match="given twice"):
        rules.check([url], ["GPTBot", "GPTBOT"])
    with pytest.raises(ValueError, match="given twice"):
        rules.filter_batches(iter(()), ["a", "A"])
    with pytest.raises(TypeError):
        rules.check([url], None)


def test_agents_that_are_not_product_tokens_in_a_list():
    robots = b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n"
    rfc = Rules.compile(robots)
    with pytest.raises(RobofilterError, match="did you mean 'Googlebot'"):
        rfc.verdict("http://a.example/g", ["FooBot", "Googlebot/2.1"])
    with pytest.raises(RobofilterError, match="did you mean 'Googlebot'"):
        rfc.check(["http://a.example/g"], ["FooBot", "Googlebot/2.1"])
    google = Rules.compile(robots, dialect="google")
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = google.verdict("http://a.example/g", ["Googlebot/2.1", "Googlebot", "x y"])
    assert got == {"Googlebot/2.1": "allow", "Googlebot": "disallow", "x y": "allow"}
    messages = [str(w.message) for w in seen if w.category is UserWarning]
    assert len(messages) == 2, messages            # one per non-token agent
    assert "'Googlebot/2.1'" in messages[0] and "'x y'" in messages[1]


def test_check_threads_chunks_and_nulls_per_agent():
    rules = Rules.compile(SPACE_ROBOTS + b"\n" + SAMPLE_ROBOTS)
    rng = random.Random(8)
    pool = [l.decode() for l in frontier_lines(
        (DATA / "sample" / "urls.txt").read_bytes().split(b"\n")[:-1], rng)
        if b"\xff" not in l]
    urls = [rng.choice(pool) if rng.random() > 0.01 else None for _ in range(70_000)]
    agents = ["FooBot", "GPTBot", "Googlebot"]
    singles = [rules.check(urls, a).dictionary_decode().to_pylist() for a in agents]
    assert singles[0].count(None) == urls.count(None)
    arr = pa.array(urls, pa.large_string())
    # threads=4 splits every agent's column into the same ranges.
    for threads in (1, 4):
        assert as_columns(rules.check(arr, agents, threads=threads)) == singles
    chunked = pa.chunked_array([urls[:1000], urls[1000:1000], urls[1000:]])
    batch = rules.check(chunked, agents, threads=0)
    assert batch.num_rows == len(urls) and as_columns(batch) == singles
    assert as_columns(rules.check(arr.slice(99, 5000), agents)) == [
        s[99:5099] for s in singles]
    empty = rules.check(pa.array([], pa.string()), agents)
    assert empty.num_rows == 0 and empty.schema.names == agents


def test_filter_batches_adds_one_column_per_agent_and_passes_others(cli, tmp_path):
    bundle = tmp_path / "b.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    rules = Rules.load(bundle)
    lines = bundle_lines(random.Random(6))
    agents = ["FooBot", "GPTBot"]
    rows = cli_columns(cli, bundle, agents, lines)
    frontier = pa.table({
        "url": pa.array(lines, pa.binary()),
        "depth": list(range(len(lines))),
        "meta": [{"k": i % 3} for i in range(len(lines))],
    }, metadata={b"source": b"crawl-7"})
    batches = frontier.to_batches(max_chunksize=100)
    out = list(rules.filter_batches(iter(batches), agents))
    assert len(out) == len(batches)
    for b, o in zip(batches, out):
        assert o.schema.names == ["url", "depth", "meta", "verdict_FooBot", "verdict_GPTBot"]
        assert o.schema.metadata == {b"source": b"crawl-7"}
        for name in ["url", "depth", "meta"]:
            assert o.column(name) == b.column(name)
    got = pa.Table.from_batches(out)
    for a, agent in enumerate(agents):
        col = got.column(f"verdict_{agent}").to_pylist()
        assert col == [r[a].decode() for r in rows], agent
    # The prefix is verdict_column=; one agent keeps its `verdict` column.
    [o] = rules.filter_batches(iter(batches[:1]), agents, verdict_column="v")
    assert o.schema.names[-2:] == ["v_FooBot", "v_GPTBot"]
    [o] = rules.filter_batches(iter(batches[:1]), "FooBot")
    assert o.schema.names == ["url", "depth", "meta", "verdict"]
    clash = batches[0].append_column("verdict_GPTBot", pa.array([1] * batches[0].num_rows))
    with pytest.raises(ValueError, match="already has a column 'verdict_GPTBot'"):
        list(rules.filter_batches(iter([clash]), agents))
