"""The wheel's API, checked against the CLI on the repository's data."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

import robofilter
from robofilter import RobofilterError, Rules

from conftest import DATA

SAMPLE_ROBOTS = (DATA / "sample" / "robots.txt").read_bytes()
AGENTS = ["Googlebot", "FooBot", "*"]
ODD_LINES = [
    b"", b"\r", b"not a url", b"http://x/a b", b"http://x/\x7f", b"1http://x/",
    b"https://example.com/a\r", b"HTTPS://Example.COM:443/Private/x",
    b"http://b.example:4000/x", b"s3+a.b-c://k/x", b"https://example.com",
    b"http://x/%E3%83%84?q=1#frag", "http://x/ツ".encode(),
]


def verdict_list(array: pa.Array) -> list[str | None]:
    return array.dictionary_decode().to_pylist()


def test_verdict_array_type_and_codes():
    rules = Rules.compile(b"User-agent: *\nDisallow: /d\n")
    out = rules.check(["http://x/a", "http://x/d", None, "junk"], "bot")
    assert out.type == pa.dictionary(pa.uint8(), pa.string())
    assert out.dictionary.to_pylist() == robofilter.VERDICTS
    assert out.indices.to_pylist() == [0, 1, None, 3]
    assert out.null_count == 1


def test_google_conformance_equals_pinned_and_cli(cli, tmp_path):
    """Every pinned google/robotstxt behaviour: the wheel's verdict is the
    expected one and the CLI's."""
    cases = [json.loads(l) for l in
             (DATA / "conformance" / "google-behaviours.jsonl").open()]
    checked = 0
    for c in cases:
        if c["multi_agent"] or not c["agent"]:
            continue  # the CLI takes one non-empty agent
        robots = bytes.fromhex(c["robots_hex"])
        rules = Rules.compile(robots, dialect="google")
        url = c["url"]
        line = url.encode()
        path = cli.compile(robots, tmp_path / f"{c['id']}.rules",
                           "--dialect", "google")
        [(cli_verdict, _)] = cli.filter_all(path, c["agent"], [line])
        got = rules.verdict(url, c["agent"])
        assert got == cli_verdict, c["id"]
        if got in ("allow", "disallow"):
            assert got == c["expect"], c["id"]
        # The same bytes as the CLI compiled.
        assert rules.to_bytes() == path.read_bytes(), c["id"]
        checked += 1
    assert checked > 100


@pytest.mark.parametrize("dialect", ["rfc9309", "google"])
def test_sample_equals_cli_row_by_row(cli, tmp_path, sample_urls, dialect):
    path = cli.compile(SAMPLE_ROBOTS, tmp_path / "s.rules", "--dialect", dialect)
    rules = Rules.load(path)
    assert rules.to_bytes() == Rules.compile(SAMPLE_ROBOTS, dialect=dialect).to_bytes()
    lines = sample_urls + ODD_LINES
    for agent in AGENTS:
        want = [v for v, _ in cli.filter_all(path, agent, lines)]
        assert verdict_list(rules.check(pa.array(lines, pa.binary()), agent)) == want
        assert [rules.verdict(l, agent) for l in lines] == want
        assert [rules.allowed(l, agent) for l in lines] == [w == "allow" for w in want]


def test_bundle_equals_cli(cli, tmp_path, sample_urls):
    """A bundle compiled by the CLI from the manifest, and the same hosts
    compiled by the wheel from the directory: verdicts equal the CLI's."""
    bundle = tmp_path / "b.bin"
    cli.run("compile", "--manifest", DATA / "bundle" / "manifest.jsonl", "-o", bundle)
    rules = Rules.load(bundle)
    assert rules.is_bundle and rules.host_count > 5
    hosts = [json.loads(l)["host"] for l in
             (DATA / "bundle" / "manifest.jsonl").read_text().splitlines() if l.strip()]
    rng = random.Random(5)
    paths = ["/", "/private/x", "/api/public/1", "/api/x", "/tmp/a", "/robots.txt"]
    lines = [f"{rng.choice(['http', 'https'])}://{h}{p}".encode()
             for h in hosts for p in paths]
    lines += sample_urls[:200] + ODD_LINES
    rng.shuffle(lines)
    for agent in ["FooBot", "Googlebot"]:
        want = [v for v, _ in cli.filter_all(bundle, agent, lines)]
        assert set(want) >= {"allow", "disallow", "unknown", "invalid"}
        assert verdict_list(rules.check(lines, agent)) == want
        # One URL at a time (a host lookup, not a batch checker).
        assert [rules.verdict(l, agent) for l in lines] == want
    # explain on a bundle: members, fixed fetch outcomes, unknown hosts.
    utf8 = [l for l in lines if l and b"\r" not in l]
    p = cli.run("filter", bundle, "--agent", "FooBot", "--emit", "all", "--json",
                "--explain", input=b"".join(l + b"\n" for l in utf8))
    rows = [json.loads(r) for r in p.stdout.decode().splitlines()]
    assert len(rows) == len(utf8)
    assert {r["verdict"] for r in rows} == {"allow", "disallow", "unknown", "invalid"}
    for line, row in zip(utf8, rows):
        assert rules.explain(line.decode(), "FooBot") == row, line


def test_compile_hosts_dir_is_byte_identical_to_cli(cli, tmp_path):
    out = tmp_path / "h.bin"
    cli.run("compile", "--hosts", DATA / "bundle" / "hosts", "-o", out)
    mine = Rules.compile_hosts(DATA / "bundle" / "hosts")
    assert mine.to_bytes() == out.read_bytes()
    mine.save(tmp_path / "mine.bin")
    assert Rules.load(tmp_path / "mine.bin").to_bytes() == out.read_bytes()


def test_compile_hosts_mapping_outcomes():
    rules = Rules.compile_hosts({
        "a.example": b"User-agent: *\nDisallow: /p\n",
        "b.example": "User-agent: *\nDisallow: /\n",
        "gone.example": 404,
        "down.example": 503,
        "dead.example": None,
        "pair.example:8080": (200, b"User-agent: *\nAllow: /\n"),
    })
    want = {
        "http://a.example/p": "disallow", "http://a.example/q": "allow",
        "http://b.example/": "disallow", "http://gone.example/x": "allow",
        "http://down.example/x": "disallow", "http://dead.example/": "disallow",
        "http://pair.example:8080/x": "allow", "http://pair.example/x": "unknown",
        "http://other.example/": "unknown",
    }
    for url, verdict in want.items():
        assert rules.verdict(url, "bot") == verdict, url
    why = rules.explain("http://down.example/x", "bot")
    assert why["reason"] == "robots.txt HTTP 503, unreachable: disallow all (RFC 9309)"
    assert rules.explain("http://zz.example/", "bot")["reason"] == "no entry for host zz.example"
    # A status outside 100-599 is a failed fetch (issue 11): unreachable,
    # disallow all, as the CLI's manifest and WARC inputs decide it.
    odd = Rules.compile_hosts({"a.example": 700, "b.example": (999, b"x")})
    assert odd.verdict("http://a.example/x", "bot") == "disallow"
    assert odd.verdict("http://b.example/x", "bot") == "disallow"
    assert "unreachable" in odd.explain("http://b.example/x", "bot")["reason"]
    with pytest.raises(RobofilterError, match="is not an HTTP status"):
        Rules.compile_hosts({"a.example": 70000})
    with pytest.raises(TypeError, match="a fetch outcome"):
        Rules.compile_hosts({"a.example": 1.5})


def test_explain_equals_cli_json(cli, tmp_path, sample_urls):
    path = cli.compile(SAMPLE_ROBOTS, tmp_path / "s.rules")
    rules = Rules.load(path)
    lines = [l for l in sample_urls[:100] + ODD_LINES if l and b"\r" not in l]
    p = cli.run("filter", path, "--agent", "FooBot", "--emit", "all", "--json",
                "--explain", input=b"".join(l + b"\n" for l in lines))
    rows = [json.loads(r) for r in p.stdout.decode().splitlines()]
    assert len(rows) == len(lines)
    for line, row in zip(lines, rows):
        got = rules.explain(line.decode(), "FooBot")
        assert got == row, line


def test_arrow_types_chunks_slices_and_threads():
    rules = Rules.compile(SAMPLE_ROBOTS)
    rng = random.Random(7)
    pool = (DATA / "sample" / "urls.txt").read_text().splitlines() + [
        l.decode() for l in ODD_LINES]
    urls = [rng.choice(pool) if rng.random() > 0.01 else None for _ in range(70_000)]
    want = verdict_list(rules.check(urls, "FooBot"))
    assert want.count(None) == urls.count(None)
    for ty in [pa.string(), pa.large_string(), pa.string_view(), pa.binary(),
               pa.large_binary()]:
        arr = pa.array(urls, ty)
        assert verdict_list(rules.check(arr, "FooBot")) == want, ty
        assert verdict_list(rules.check(arr, "FooBot", threads=4)) == want, ty
        assert verdict_list(rules.check(arr.slice(123, 4567), "FooBot")) == want[123:123 + 4567]
    chunked = pa.chunked_array([urls[:1000], urls[1000:1000], urls[1000:]])
    assert verdict_list(rules.check(chunked, "FooBot", threads=0)) == want
    # A dictionary-encoded column (as Parquet readers give a repeated
    # column), whole and sliced, as filter --input-format parquet reads it.
    for ty in [pa.string(), pa.binary_view()]:
        encoded = pa.array(urls, ty).dictionary_encode()
        assert pa.types.is_dictionary(encoded.type)
        assert verdict_list(rules.check(encoded, "FooBot", threads=4)) == want, ty
        assert verdict_list(rules.check(encoded.slice(99, 777), "FooBot")) == want[99:99 + 777]
        got = rules.check(encoded, ["FooBot", "BarBot"], usage="train-ai")
        assert verdict_list(got.column("FooBot")) == want
        assert got.column("usage_train-ai_FooBot").null_count >= urls.count(None)
    with pytest.raises(TypeError, match="string or binary"):
        rules.check(pa.array([1, 2]), "FooBot")
    with pytest.raises(TypeError, match="str, bytes or None"):
        rules.check([1], "FooBot")


def test_filter_batches_appends_verdicts_lazily():
    rules = Rules.compile(SAMPLE_ROBOTS)
    urls = ((DATA / "sample" / "urls.txt").read_text().splitlines() * 10)[:500]
    batches = [pa.record_batch({"id": list(range(i, i + 100)), "url": urls[i:i + 100]})
               for i in range(0, 500, 100)]
    seen = []

    def source():
        for b in batches:
            seen.append(b)
            yield b

    it = rules.filter_batches(source(), "FooBot")
    assert seen == []  # lazy
    out = list(it)
    assert len(out) == 5
    for b, o in zip(batches, out):
        assert o.schema.names == ["id", "url", "verdict"]
        assert o.column("id") == b.column("id")
        assert verdict_list(o.column("verdict")) == verdict_list(rules.check(b.column("url"), "FooBot"))
    with pytest.raises(ValueError, match="no column 'link'"):
        list(rules.filter_batches(iter(batches), "FooBot", url_column="link"))


def test_errors_carry_the_cli_messages(cli, tmp_path):
    path = cli.compile(SAMPLE_ROBOTS, tmp_path / "s.rules", "--agent", "FooBot")
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x40
    bad = tmp_path / "bad.rules"
    bad.write_bytes(bytes(data))

    def cli_message(*args) -> str:
        p = cli.run("filter", *args, input=b"", check=False)
        assert p.returncode == 2
        return p.stderr.decode().strip().removeprefix("robofilter: ")

    with pytest.raises(RobofilterError) as e:
        Rules.load(bad)
    assert str(e.value) == cli_message(bad, "--agent", "FooBot")
    with pytest.raises(OSError) as e:
        Rules.load(tmp_path / "missing.rules")
    assert str(e.value) == cli_message(tmp_path / "missing.rules", "--agent", "x")
    robots = tmp_path / "robots.txt"
    robots.write_bytes(SAMPLE_ROBOTS)
    with pytest.raises(RobofilterError) as e:
        Rules.load(robots)
    assert str(e.value) == cli_message(robots, "--agent", "x")
    rules = Rules.load(path)
    with pytest.raises(RobofilterError) as e:
        rules.check(["http://x/"], "OtherBot")
    assert str(e.value) == cli_message(path, "--agent", "OtherBot")
    with pytest.raises(RobofilterError, match="dialect"):
        Rules.compile(b"", dialect="bing")


def test_agents_that_are_not_product_tokens():
    # Issue 11, Part B item 11: rfc9309 refuses such an agent, google warns
    # and keeps the reference's verdicts (the `*` group).
    robots = b"User-agent: Googlebot\nDisallow: /g\n\nUser-agent: *\nDisallow: /s\n"
    rfc = Rules.compile(robots)
    with pytest.raises(RobofilterError, match="did you mean 'Googlebot'"):
        rfc.verdict("http://a.example/g", "Googlebot/2.1")
    google = Rules.compile(robots, dialect="google")
    with pytest.warns(UserWarning, match="is not a product token"):
        assert google.verdict("http://a.example/g", "Googlebot/2.1") == "allow"
    with pytest.warns(UserWarning):
        assert google.verdict("http://a.example/s", "") == "disallow"
    # A product token: no warning.
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert google.verdict("http://a.example/g", "Googlebot") == "disallow"


def test_a_str_with_lone_surrogates_is_its_octets():
    """A str from ``os.fsdecode`` carries undecodable octets as lone
    surrogates; they are decided as those octets (surrogateescape), not
    refused with a UnicodeEncodeError."""
    body = b"User-agent: *\nDisallow: /caf\xe9\n"
    # rfc9309 compares octets (the pattern's 0xE9 is the URL's); google
    # escapes the pattern only, so a raw 0xE9 in the URL does not match it.
    for dialect, want in (("rfc9309", "disallow"), ("google", "allow")):
        rules = Rules.compile(body, dialect=dialect)
        assert rules.verdict(b"http://x/caf\xe9", "bot") == want
        assert rules.verdict("http://x/caf\udce9", "bot") == want
        assert rules.explain("http://x/caf\udce9", "bot")["verdict"] == want
        assert rules.verdict("http://x/caf%E9", "bot") == "disallow"
