"""Shards (issue 15): `robofilter.shard_of` against `robofilter shard`, an
independent XXH3-64 (the `xxhash` package, when installed), and the shard
files `compile --shards` writes."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

import robofilter
from robofilter import Rules

from conftest import DATA

LINES = [
    b"https://www.example.com/a",
    b"HTTP://WWW.Example.COM:80/b?c",
    b"http://user@www.example.com:443/\tdepth=2",
    b"https://a.example:8080/x\r",
    b"www.example.com",
    b"A.Example:8080",
    b"not a host/",
    b"",
    b"http://b.example\\@a.example/",
    "https://caf\u00e9.example/menu".encode(),
]


@pytest.mark.parametrize("n", [1, 2, 7, 64])
def test_shard_of_matches_the_cli(cli, n: int) -> None:
    p = cli.run("shard", "--shards", str(n), input=b"\n".join(LINES) + b"\n")
    want = []
    for row in p.stdout.split(b"\n")[:-1]:
        s = row.split(b"\t", 1)[0]
        want.append(None if s == b"-" else int(s))
    assert len(want) == len(LINES)
    # One at a time (str and bytes) and as Arrow arrays of every kind.
    assert [robofilter.shard_of(line, n) for line in LINES] == want
    text = [line.decode("utf-8", "replace") for line in LINES]
    assert [robofilter.shard_of(t, n) for t in text] == want
    for array in (pa.array(LINES, pa.binary()), pa.array(LINES, pa.large_binary()),
                  pa.array(text, pa.string()), pa.chunked_array([LINES[:3], LINES[3:]])):
        got = robofilter.shard_of(array, n)
        assert got.type == pa.uint32()
        assert got.to_pylist() == want
    # Nulls stay null.
    got = robofilter.shard_of(pa.array([None, b"a.example"], pa.binary()), n)
    assert got.to_pylist()[0] is None


def test_shard_of_is_xxh3_of_the_host_key() -> None:
    xxhash = pytest.importorskip("xxhash")
    for key in [b"www.example.com", b"a.example:8080", b"xn--caf-dma.example", b"[::1]:8080"]:
        for n in (1, 3, 8, 1000):
            want = xxhash.xxh3_64_intdigest(key) % n
            assert robofilter.shard_of(key, n) == want, key
            assert robofilter.shard_of(b"https://" + key + b"/x", n) == want, key


def test_shard_of_refuses_zero_shards() -> None:
    with pytest.raises(ValueError):
        robofilter.shard_of("a.example", 0)


def test_each_shard_file_holds_the_hosts_shard_of_names(cli, tmp_path) -> None:
    out = tmp_path / "s"
    cli.run("compile", "--hosts", DATA / "bundle" / "hosts", "--shards", "3", "-o", out)
    index = json.loads((out / "index.json").read_text())
    assert index["shards"] == 3 and index["hash"] == "xxh3-64"
    seen = 0
    for i, f in enumerate(index["files"]):
        rules = Rules.load(out / f["name"])
        assert rules.host_count == f["hosts"]
        seen += f["hosts"]
    for host in ["a.example", "b.example", "c.example:8080", "d.example", "e.example"]:
        s = robofilter.shard_of(host, 3)
        # The host's own shard knows it; the others do not.
        for i, f in enumerate(index["files"]):
            v = Rules.load(out / f["name"]).verdict(f"https://{host}/x", "bot")
            assert (v != "unknown") == (i == s), (host, i, s)
    assert seen == index["hosts"]
