"""What the wheel shares with the CLI since both are glue over the same
crates: loading every compiled form, refusing what is not robots.txt,
compiling hosts to the CLI's bytes, and fetching (against a loopback
server this test starts)."""

from __future__ import annotations

import gzip
import http.server
import json
import shutil
import socket
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

import robofilter
from robofilter import RobofilterError, Rules

from conftest import DATA

HOSTS = DATA / "bundle" / "hosts"
AGENT = "MyBot"


def urls_for_hosts() -> list[bytes]:
    """URLs on every host of the fixture, an unknown host and junk."""
    out = []
    for f in sorted(HOSTS.iterdir()):
        if f.suffix != ".txt":
            continue
        host = f.stem
        for path in ("/", "/private/x", "/a/b?c=d", "/search"):
            out.append(f"https://{host}{path}".encode())
    out += [b"https://nobody.example/x", b"not a url", b""]
    return out


def test_compile_refuses_compressed_and_compiled_input(cli, tmp_path):
    robots = b"User-agent: *\nDisallow: /\n"
    zstd = shutil.which("zstd")
    compiled = Rules.compile(robots).to_bytes()
    cases = {"gzip": gzip.compress(robots), "rules file": compiled}
    if zstd:
        import subprocess

        cases["zstd"] = subprocess.run(
            [zstd, "-c"], input=robots, capture_output=True, check=True
        ).stdout
    else:
        # The zstd frame magic, then anything: refused by its first octets.
        cases["zstd"] = b"\x28\xb5\x2f\xfd" + robots
    for what, body in cases.items():
        with pytest.raises(RobofilterError, match="not a robots.txt"):
            Rules.compile(body)
        # The CLI refuses the same file.
        path = tmp_path / f"{what.replace(' ', '-')}.txt"
        path.write_bytes(body)
        p = cli.run("compile", path, "-o", tmp_path / "x.rules", check=False)
        assert p.returncode == 2, what
        assert b"not a robots.txt" in p.stderr, what
    # Text still compiles, and disallows.
    assert Rules.compile(robots).verdict("https://x.example/private", "Bot") == "disallow"


def test_compile_hosts_mapping_reports_a_compressed_body(recwarn):
    rules = Rules.compile_hosts({
        "a.example": gzip.compress(b"User-agent: *\nDisallow: /\n"),
        "b.example": b"User-agent: *\nDisallow: /\n",
    })
    # Never read as text (allow all): reported, and the host disallowed.
    assert rules.verdict("https://a.example/x", "Bot") == "disallow"
    assert any("gzip" in str(w.message) for w in recwarn.list)
    with pytest.raises(RobofilterError, match="strict"):
        Rules.compile_hosts(
            {"a.example": gzip.compress(b"User-agent: *\n")}, strict=True
        )


def test_compile_hosts_gives_the_cli_s_bytes(cli, tmp_path):
    out = tmp_path / "hosts.bundle"
    cli.run("compile", "--hosts", HOSTS, "-o", out)
    assert Rules.compile_hosts(HOSTS).to_bytes() == out.read_bytes()
    assert Rules.compile_hosts(str(HOSTS)).to_bytes() == out.read_bytes()
    for flags in (["--dialect", "google"], ["--agent", "MyBot"]):
        cli.run("compile", "--hosts", HOSTS, *flags, "-o", out)
        kwargs = {"dialect": "google"} if "google" in flags else {"agents": ["MyBot"]}
        assert Rules.compile_hosts(HOSTS, **kwargs).to_bytes() == out.read_bytes()
    # A manifest, as `compile --manifest` reads it.
    manifest = DATA / "bundle" / "manifest.jsonl"
    cli.run("compile", "--manifest", manifest, "-o", out)
    assert Rules.compile_hosts(manifest).to_bytes() == out.read_bytes()


def test_load_takes_rules_files_bundles_and_shard_directories(cli, tmp_path):
    rules = cli.compile((DATA / "sample" / "robots.txt").read_bytes(),
                        tmp_path / "sample.rules")
    bundle = tmp_path / "hosts.bundle"
    cli.run("compile", "--hosts", HOSTS, "-o", bundle)
    shards = tmp_path / "hosts.shards"
    cli.run("compile", "--hosts", HOSTS, "--shards", "3", "-o", shards)
    lines = urls_for_hosts()
    for path in (rules, bundle, shards):
        loaded = Rules.load(path)
        want = [v for v, _ in cli.filter_all(path, AGENT, lines)]
        got = loaded.check(pa.array(lines, pa.binary()), AGENT)
        assert got.dictionary_decode().to_pylist() == want, path
    s = Rules.load(shards)
    assert s.is_bundle and s.host_count == Rules.load(bundle).host_count
    assert s.dialect == "rfc9309"
    with pytest.raises(RobofilterError, match="shard directory"):
        s.to_bytes()
    # A directory that is not a shard directory: the CLI's message.
    with pytest.raises(RobofilterError, match="is a directory .*index.json"):
        Rules.load(tmp_path)
    with pytest.raises(OSError, match="cannot open"):
        Rules.load(tmp_path / "missing.rules")


def test_a_file_changed_under_a_loaded_rules_never_changes_an_answer(cli, tmp_path):
    lines = urls_for_hosts()
    allow_all = b"User-agent: *\nAllow: /\n"
    other = tmp_path / "other"
    other.mkdir()
    for f in HOSTS.iterdir():
        if f.suffix == ".txt":
            (other / f.name).write_bytes(allow_all)
    # A rules file and a bundle: read whole when loaded; cut or rewritten
    # in place afterwards, they give the old answers.
    rules = cli.compile(b"User-agent: *\nDisallow: /private/\n", tmp_path / "r.rules")
    bundle = tmp_path / "b.bundle"
    cli.run("compile", "--hosts", HOSTS, "-o", bundle)
    for path, replacement in (
        (rules, cli.compile(allow_all, tmp_path / "allow.rules").read_bytes()),
        (bundle, Rules.compile_hosts(other).to_bytes()),
    ):
        loaded = Rules.load(path)
        before = loaded.check(lines, AGENT).dictionary_decode().to_pylist()
        assert "disallow" in before
        with open(path, "r+b") as f:  # in place: same inode
            f.write(replacement)
            f.truncate()
        after = loaded.check(lines, AGENT).dictionary_decode().to_pylist()
        assert after == before, path
        with open(path, "r+b") as f:
            f.truncate(100)
        assert loaded.check(lines, AGENT).dictionary_decode().to_pylist() == before
    # A shard directory: each shard is opened when a URL first needs it and
    # checked against index.json; a shard rewritten before then is an
    # error, never another build's answer.
    shards = tmp_path / "s.shards"
    cli.run("compile", "--hosts", HOSTS, "--shards", "2", "-o", shards)
    loaded = Rules.load(shards)
    index = json.loads((shards / "index.json").read_bytes())
    victim = shards / index["files"][1]["name"]
    victim.write_bytes(victim.read_bytes()[:-1])
    with pytest.raises(RobofilterError, match="shard"):
        loaded.check(lines, AGENT)


class _Robots(http.server.BaseHTTPRequestHandler):
    """Serves /robots.txt per Host header; a slow host sleeps first."""

    bodies = {
        "a.test": b"User-agent: *\nDisallow: /private/\n",
        "b.test": b"User-agent: *\nDisallow: /\n",
        "slow.test": b"User-agent: *\nAllow: /\n",
    }

    def do_GET(self):  # noqa: N802 (http.server's name)
        host = self.headers.get("Host", "").split(":")[0]
        if host == "slow.test":
            time.sleep(1.0)
        body = self.bodies.get(host)
        if self.path != "/robots.txt" or body is None:
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture()
def server():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Robots)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd.server_address[1]
    httpd.shutdown()
    httpd.server_close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _stable(manifest: Path) -> list[dict]:
    """Manifest entries without the fields that depend on the clock."""
    out = []
    for line in manifest.read_text().splitlines():
        e = json.loads(line)
        for k in ("fetched_at", "checked_at", "expires", "elapsed_ms",
                  "last_modified", "error"):
            e.pop(k, None)
        out.append(e)
    return out


def test_fetch_writes_what_the_cli_writes(cli, server, tmp_path):
    closed = _free_port()
    hosts = tmp_path / "hosts.txt"
    hosts.write_text(
        f"http://a.test:{server}/page\nb.test:{server}\n"
        f"nobody.test:{server}\nhttp://c.test:{closed}/\n# a comment\n"
    )
    resolve = [f"*:{server}:127.0.0.1", f"*:{closed}:127.0.0.1"]
    out = tmp_path / "py.jsonl"
    summary = robofilter.fetch(hosts, out, scheme="http", resolve=resolve,
                               timeout=5)
    assert summary["hosts"] == 4
    assert (summary["ok"], summary["unavailable"], summary["unreachable"]) == (2, 1, 1)
    assert summary["fetched"] == 4 and summary["fresh"] == 0
    args = ["--scheme", "http", "--timeout", "5"]
    for r in resolve:
        args += ["--resolve", r]
    cli_out = tmp_path / "cli.jsonl"
    cli.run("fetch", hosts, "-o", cli_out, *args)
    assert _stable(out) == _stable(cli_out)
    # The manifest compiles, in Python as with the CLI.
    rules = Rules.compile_hosts(out)
    assert rules.verdict(f"http://a.test:{server}/private/x", "Bot") == "disallow"
    assert rules.verdict(f"http://nobody.test:{server}/x", "Bot") == "allow"
    assert rules.verdict(f"http://c.test:{closed}/x", "Bot") == "disallow"
    # The output is the next run's cache: every entry still fresh.
    again = robofilter.fetch([str(hosts)], out, scheme="http", resolve=resolve)
    assert again["fresh"] == 4 and again["fetched"] == 0
    assert not (tmp_path / "py.jsonl.journal").exists()


def test_fetch_releases_the_gil(server, tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text(f"slow.test:{server}\n")
    ticks = []
    done = threading.Event()

    def tick():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    t = threading.Thread(target=tick)
    t.start()
    try:
        start = time.monotonic()
        robofilter.fetch(hosts, tmp_path / "out.jsonl", scheme="http",
                         resolve=[f"*:{server}:127.0.0.1"])
        end = time.monotonic()
    finally:
        done.set()
        t.join()
    assert end - start >= 0.9, "the slow host takes a second"
    during = [x for x in ticks if start < x < end]
    # With the GIL held, the other thread could not run at all meanwhile.
    assert len(during) > 20, len(during)


def test_fetch_refuses_bad_options(tmp_path):
    hosts = tmp_path / "hosts.txt"
    hosts.write_text("a.test\n")
    with pytest.raises(ValueError, match="scheme"):
        robofilter.fetch(hosts, tmp_path / "o.jsonl", scheme="ftp")
    with pytest.raises(ValueError, match="shard"):
        robofilter.fetch(hosts, tmp_path / "o.jsonl", shard=(2, 2))
    with pytest.raises(RobofilterError, match="resolve|HOST:PORT"):
        robofilter.fetch(hosts, tmp_path / "o.jsonl", resolve=["nonsense"])
    # An output that is also an input is refused before any work.
    with pytest.raises(RobofilterError, match="input"):
        robofilter.fetch(hosts, hosts)
    assert hosts.read_text() == "a.test\n"
    with pytest.raises(OSError, match="no-such"):
        robofilter.fetch(tmp_path / "no-such.txt", tmp_path / "o.jsonl")


def test_check_never_iterates_one_url():
    rules = Rules.compile(b"User-agent: *\nDisallow: /private/\n")
    for one in ("http://a.example/ok", b"http://a.example/ok"):
        with pytest.raises(TypeError, match="verdict"):
            rules.check(one, "MyBot")
        with pytest.raises(TypeError, match="verdict"):
            rules.check(one, ["A", "B"])
    # A list of one is fine: one verdict.
    got = rules.check(["http://a.example/ok"], "MyBot").dictionary_decode()
    assert got.to_pylist() == ["allow"]


def test_load_of_an_endless_file_is_bounded():
    """`Rules.load("/dev/zero")` reads a head and says what it is not (in a
    child process under an address-space limit, so that a regression
    fails instead of filling the machine)."""
    import resource
    import subprocess
    import sys

    code = (
        "import robofilter\n"
        "try:\n"
        "    robofilter.Rules.load('/dev/zero')\n"
        "except robofilter.RobofilterError as e:\n"
        "    print('refused:', e)\n"
    )

    def limit():
        resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))

    p = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       preexec_fn=limit, timeout=60)
    assert p.returncode == 0, p.stderr
    assert b"refused:" in p.stdout and b"not a rules file" in p.stdout


def test_shard_directory_repr_and_missing_paths(cli, tmp_path):
    shards = tmp_path / "h.shards"
    cli.run("compile", "--hosts", HOSTS, "--shards", "3", "-o", shards)
    text = repr(Rules.load(shards))
    assert "shard directory of" in text and "3 shards" in text, text
    with pytest.raises(OSError, match="compile_hosts takes a directory"):
        Rules.compile_hosts(tmp_path / "no-such-dir")
    assert robofilter.__version__
