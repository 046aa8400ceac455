"""AI usage preferences from Python (issue 40 item 5): `check(..., usage=)`
equal to `robofilter filter --usage` on the same URLs, and Content-Signal
against fast-robotstxt (Google's parser with the signal extension) where it
is installed."""

from __future__ import annotations

import json
import random

import pyarrow as pa
import pytest

from robofilter import Rules

ROBOTS = b"""User-agent: *
Content-Usage: train-ai=n, search=y
Content-Usage: /blog/ train-ai=y
Disallow: /private

User-agent: GPTBot
Content-Usage: /docs/ train-ai=n
Disallow: /x
"""

URLS = [
    "https://a.example/",
    "https://a.example/blog/1",
    "https://a.example/private/z",
    "https://a.example/docs/1",
    "https://a.example/x",
    "not a url",
    None,
]


def test_check_adds_usage_columns():
    rules = Rules.compile(ROBOTS)
    out = rules.check(URLS, "MyBot", usage=["train-ai", "search"])
    assert out.schema.names == ["verdict", "usage_train-ai", "usage_search"]
    assert out.column("usage_train-ai").to_pylist() == [
        "n", "y", None, "n", "n", None, None,
    ]
    assert out.column("usage_search").to_pylist() == [
        "y", "unknown", None, "y", "y", None, None,
    ]
    many = rules.check(pa.array(URLS), ["MyBot", "GPTBot"], usage="train-ai")
    assert many.schema.names == [
        "MyBot", "GPTBot", "usage_train-ai_MyBot", "usage_train-ai_GPTBot",
    ]
    assert many.column("usage_train-ai_GPTBot").to_pylist() == [
        "unknown", "unknown", "unknown", "n", None, None, None,
    ]
    # usage=[] still asks for a record batch (as the stub types it).
    assert rules.check(URLS, "MyBot", usage=[]).schema.names == ["verdict"]
    # Without usage= the answer is the verdict array, as before.
    assert isinstance(rules.check(URLS, "MyBot"), pa.DictionaryArray)
    with pytest.raises(ValueError, match="train-ai and search"):
        rules.check(URLS, "MyBot", usage="Train-AI")


def test_check_usage_equals_the_cli(tmp_path, cli):
    """The same preferences as `filter --usage --emit all`, on random URLs
    over a bundle of hosts with and without preferences."""
    manifest = tmp_path / "m.jsonl"
    lines = [
        {"host": "a.example", "status": 200, "body": ROBOTS.decode()},
        {"host": "b.example", "status": 404},
        {"host": "c.example", "status": 503},
    ]
    manifest.write_text("".join(json.dumps(x) + "\n" for x in lines))
    bundle = tmp_path / "b.bin"
    cli.run("compile", "--manifest", manifest, "-o", bundle)
    rng = random.Random(40)
    paths = ["/", "/blog/", "/blog/x", "/docs/a", "/private", "/x", "/y"]
    hosts = ["a.example", "b.example", "c.example", "d.example"]
    urls = [
        f"https://{rng.choice(hosts)}{rng.choice(paths)}" for _ in range(500)
    ] + ["junk"]
    frontier = tmp_path / "urls.txt"
    frontier.write_text("".join(u + "\n" for u in urls))
    agents = ["MyBot", "GPTBot"]
    args = ["filter", bundle, "--emit", "all", frontier]
    for a in agents:
        args += ["--agent", a]
    args += ["--usage", "train-ai", "--usage", "search"]
    printed = cli.run(*args).stdout.decode()
    want = [line.split("\t")[2:6] for line in printed.splitlines()]
    assert len(want) == len(urls)
    got = Rules.load(str(bundle)).check(urls, agents, usage=["train-ai", "search"])
    columns = [
        got.column(f"usage_{k}_{a}").to_pylist()
        for a in agents
        for k in ("train-ai", "search")
    ]
    for i, row in enumerate(want):
        assert [c[i] or "-" for c in columns] == row, urls[i]


SIGNAL_FILES = [
    b"User-agent: *\nContent-Signal: search=yes, ai-train=no, ai-input=no\nAllow: /\n",
    b"User-agent: *\ncontent-signal: AI-TRAIN=NO\n",
    b"User-agent: GPTBot\nContent-Signal: ai-train=yes\nDisallow: /a\n\nUser-agent: *\nContent-Signal: ai-train=no\n",
    b"User-agent: *\nContent-Signal: ai-train = no ,, search=maybe\n",
    b"User-agent: *\nContent-Signal: ai-train=no\nContent-Signal: ai-train=yes\n",
    b"User-agent: *\nContent-Signal: ai-train=yes, ai-train=no\n",
    b"User-agent: *\nContent-Signal: ai-train=no; search=yes\n",
    b"User-agent: *\nContent-Signal: \n",
    b"Content-Signal: ai-train=no\nUser-agent: *\nDisallow: /x\n",
    b"User-agent: Other\nContent-Signal: ai-train=no\nDisallow: /\n",
    b"User-agent: GPTBot\nUser-agent: *\nContent-Signal: ai-train=no, search=no\n",
]


def test_content_signal_agrees_with_fast_robotstxt():
    robotstxt = pytest.importorskip(
        "robotstxt", reason="fast-robotstxt is not installed (the test extra has it)"
    )
    RobotsMatcher = robotstxt.RobotsMatcher
    agreed = 0
    for body in SIGNAL_FILES:
        for agent in ("GPTBot", "CCBot"):
            m = RobotsMatcher()
            m.is_allowed(body.decode(), agent, "https://a.example/a")
            theirs = m.content_signal
            ours = Rules.compile(body, dialect="google").content_signal(agent)
            assert ours == theirs, (body, agent)
            agreed += 1
    assert agreed == 2 * len(SIGNAL_FILES)


def test_content_signal_keeps_to_the_agents_group():
    # GPTBot's own group has no Content-Signal: robofilter reports none,
    # where fast-robotstxt falls back to the `*` group's line.
    body = b"User-agent: GPTBot\nDisallow: /a\n\nUser-agent: *\nContent-Signal: ai-train=no\n"
    rules = Rules.compile(body)
    assert rules.content_signal("GPTBot") is None
    assert rules.content_signal("CCBot") == {
        "ai_train": False, "ai_input": None, "search": None,
    }
