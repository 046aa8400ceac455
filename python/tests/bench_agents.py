"""`Rules.check` with 1, 2 and 5 agents in one call, against the same agents
in separate single-agent calls: CPU time, the median of interleaved rounds.
Not a test (pytest does not collect it); run by hand:

    python python/tests/bench_agents.py RULES_OR_BUNDLE URLS.txt [--rounds 3]

URLS.txt has one URL per line (e.g. the first 200 k lines of
../shared/data/urls-joinable.txt.gz); RULES_OR_BUNDLE is compiled for
every agent (e.g. `Rules.compile_hosts(DIR).save(...)`).
"""

from __future__ import annotations

import argparse
import statistics
import time

import pyarrow as pa

from robofilter import Rules

AGENTS = ["Googlebot", "GPTBot", "CCBot", "Bingbot", "FooBot"]


def cpu(f) -> float:
    t = time.process_time()
    f()
    return time.process_time() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("rules")
    ap.add_argument("urls")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    rules = Rules.load(args.rules)
    with open(args.urls, "rb") as f:
        urls = pa.array([l for l in f.read().split(b"\n") if l], pa.binary())
    print(f"{rules!r}\n{len(urls):,} URLs; CPU ms, median of {args.rounds} rounds")
    rules.check(urls, AGENTS)  # load every member once, outside the rounds
    times: dict[str, list[float]] = {}
    for _ in range(args.rounds):
        for n in (1, 2, 5):
            agents = AGENTS[:n]
            times.setdefault(f"one call, {n} agents", []).append(
                cpu(lambda: rules.check(urls, agents)))
            times.setdefault(f"{n} single-agent calls", []).append(
                cpu(lambda: [rules.check(urls, a) for a in agents]))
        times.setdefault("one call, str agent", []).append(
            cpu(lambda: rules.check(urls, AGENTS[0])))
    for name, ts in times.items():
        ms = statistics.median(ts) * 1e3
        print(f"{name:26} {ms:8.1f} ms  {ms * 1e6 / len(urls):6.0f} ns/URL")


if __name__ == "__main__":
    main()
