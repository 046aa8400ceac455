"""Shared fixtures: the repository's data and the robofilter CLI, whose
output the wheel's verdicts are compared with."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "data"


def _cli() -> Path:
    """The CLI binary: $ROBOFILTER_CLI, or one cargo built in target/.
    Missing is a failure with the reason, never a skip."""
    env = os.environ.get("ROBOFILTER_CLI")
    candidates = [Path(env)] if env else [
        REPO / "target" / "release" / "robofilter",
        REPO / "target" / "debug" / "robofilter",
    ]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return c
    pytest.fail(
        "the robofilter CLI is needed to compare verdicts with: build it "
        "with `cargo build` (tools/test does) or set ROBOFILTER_CLI "
        f"(looked for {', '.join(map(str, candidates))})"
    )


class Cli:
    """Runs the robofilter CLI."""

    def __init__(self, path: Path):
        self.path = path

    def run(self, *args: str | os.PathLike, input: bytes | None = None,
            check: bool = True) -> subprocess.CompletedProcess:
        p = subprocess.run([self.path, *map(str, args)], input=input,
                           capture_output=True)
        if check and p.returncode != 0:
            raise AssertionError(
                f"robofilter {' '.join(map(str, args))} failed "
                f"({p.returncode}): {p.stderr.decode(errors='replace')}")
        return p

    def compile(self, robots: bytes, out: Path, *args: str) -> Path:
        src = out.with_suffix(".robots.txt")
        src.write_bytes(robots)
        self.run("compile", *args, src, "-o", out)
        return out

    def filter_all(self, rules: Path, agent: str, lines: list[bytes],
                   *args: str) -> list[tuple[str, bytes]]:
        """`filter --emit all`: (verdict, line) per input line."""
        p = self.run("filter", rules, "--agent", agent, "--emit", "all",
                     *args, input=b"".join(l + b"\n" for l in lines))
        out = []
        for row in p.stdout.split(b"\n")[:-1]:
            verdict, _, text = row.partition(b"\t")
            out.append((verdict.decode(), text))
        assert len(out) == len(lines), "the CLI accounts for every line"
        return out


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(_cli())


@pytest.fixture(scope="session")
def sample_urls() -> list[bytes]:
    return (DATA / "sample" / "urls.txt").read_bytes().split(b"\n")[:-1]
