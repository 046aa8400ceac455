"""Per-host facts from Python (issue 38): crawl delays, sitemaps and the
other lines, equal to what `robofilter inspect --json` prints for the same
hosts, from rules files, bundles and shard directories."""

from __future__ import annotations

import json

import pytest

from robofilter import RobofilterError, Rules

ROBOTS = b"""Sitemap: https://a.example/s1.xml
User-agent: GPTBot
User-agent: CCBot
Crawl-delay: fast
Crawl-delay: 4
Content-Usage: train-ai=n
Disallow: /

User-agent: *
Crawl-delay: 1.5
Request-rate: 1/10
Content-Signal: search=yes, ai-train=no
Disallow: /private

User-agent: gptbot
Crawl-delay: 9
Host: a.example
Sitemap: https://a.example/s2.xml
"""


def test_crawl_delay_follows_the_agents_groups():
    for dialect in ("rfc9309", "google"):
        rules = Rules.compile(ROBOTS, dialect=dialect)
        # GPTBot's groups are merged; the first numeric delay counts.
        assert rules.crawl_delay("GPTBot") == 4.0
        assert rules.crawl_delay("gptbot") == 4.0
        assert rules.crawl_delay("CCBot") == 4.0
        assert rules.crawl_delay("OtherBot") == 1.5
        assert rules.crawl_delay("*") == 1.5
    assert Rules.compile(b"User-agent: *\nDisallow: /\n").crawl_delay("x") is None
    with pytest.raises(RobofilterError, match="product token"):
        Rules.compile(ROBOTS).crawl_delay("GPTBot/1.0")
    # google decides such an agent by `*`, with a warning, as for verdicts.
    with pytest.warns(UserWarning):
        assert Rules.compile(ROBOTS, dialect="google").crawl_delay("GPTBot/1.0") == 1.5


def test_sitemaps_and_directives():
    rules = Rules.compile(ROBOTS)
    assert rules.sitemaps() == ["https://a.example/s1.xml", "https://a.example/s2.xml"]
    got = [(d["line"], d["key"], d["value"], d["group"], d["agents"]) for d in rules.directives()]
    assert got == [
        (4, "Crawl-delay", "fast", 0, ["GPTBot", "CCBot"]),
        (5, "Crawl-delay", "4", 0, ["GPTBot", "CCBot"]),
        (6, "Content-Usage", "train-ai=n", 0, ["GPTBot", "CCBot"]),
        (10, "Crawl-delay", "1.5", 1, ["*"]),
        (11, "Request-rate", "1/10", 1, ["*"]),
        (12, "Content-Signal", "search=yes, ai-train=no", 1, ["*"]),
        (16, "Crawl-delay", "9", 2, ["gptbot"]),
        (17, "Host", "a.example", 2, ["gptbot"]),
    ]
    mine = [d["line"] for d in rules.directives(agent="GPTBot")]
    assert mine == [4, 5, 6, 16, 17]
    assert [d["line"] for d in rules.directives(agent="Other")] == [10, 11, 12]
    with pytest.raises(ValueError, match="without host="):
        rules.sitemaps(host="a.example")


def test_bundle_facts_equal_inspect_json(cli, tmp_path):
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "a.example.txt").write_bytes(ROBOTS)
    (hosts / "b.example:8080.txt").write_bytes(
        b"User-agent: *\nCrawl-delay: 3\nSitemap: http://b.example:8080/map\nClean-param: x\n")
    manifest = tmp_path / "m.jsonl"
    manifest.write_text(
        "".join(json.dumps(e) + "\n" for e in [
            {"host": "a.example", "status": 200, "body": ROBOTS.decode()},
            {"host": "b.example:8080", "status": 200,
             "body": (hosts / "b.example:8080.txt").read_text()},
            {"host": "down.example", "status": "unreachable", "error": "refused"},
        ]))
    bundle = tmp_path / "b.rf"
    cli.run("compile", "--manifest", manifest, "-o", bundle)
    shards = tmp_path / "shards"
    cli.run("compile", "--manifest", manifest, "--shards", "2", "-o", shards)
    inspected = {}
    for line in cli.run("inspect", bundle, "--json").stdout.splitlines():
        obj = json.loads(line)
        inspected[obj["host"]] = obj
    assert set(inspected) == {"a.example", "b.example:8080", "down.example"}
    for path in (bundle, shards):
        rules = Rules.load(path)
        for host, obj in inspected.items():
            assert rules.sitemaps(host=host) == [s["url"] for s in obj["sitemaps"]]
            want = sorted(
                [(d["line"], "Crawl-delay", d["value"]) for d in obj["crawl_delays"]]
                + [(d["line"], d["key"], d["value"]) for d in obj["other_lines"]])
            got = [(d["line"], d["key"], d["value"]) for d in rules.directives(host=host)]
            assert got == want, host
        # A URL names its host too; a host without rules has no facts.
        assert rules.crawl_delay("bot", host="http://B.example:8080/x") == 3.0
        assert rules.crawl_delay("GPTBot", host="a.example") == 4.0
        assert rules.crawl_delay("bot", host="down.example") is None
        assert rules.sitemaps(host="down.example") == []
        with pytest.raises(KeyError, match="no entry for host zz.example"):
            rules.sitemaps(host="zz.example")
        with pytest.raises(ValueError, match="host="):
            rules.crawl_delay("bot")
