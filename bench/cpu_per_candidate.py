"""CPU seconds of a one-worker scan per candidate line, with the compiled core on and off.

    python bench/cpu_per_candidate.py bench/data/dense-*.log            # hyperscan, 3 runs each
    python bench/cpu_per_candidate.py --engine python --runs 1 LOG...

CPU time (``time.process_time``, min of ``--runs`` scans in one process) rather than wall time: it is the steadier
figure on a shared machine. Candidate lines are the lines Hyperscan finds (the ``python`` engine finds the same).
Each configuration runs in a subprocess, since ``SLURMDIAG_NO_CORE`` is read when a scan starts.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

_CHILD = "--child"


def _measure(engine: str, runs: int, path: str) -> dict:
    from diag.api import load_rules
    from diag.input.sources import InputStats, Source, read_blocks
    from diag.scan.scanner import Scanner

    rules = load_rules()
    best = None
    for _ in range(runs):
        scanner = Scanner(rules, engine=engine, jobs=1)
        start = time.process_time()
        scanner.scan([Source(path)])
        spent = time.process_time() - start
        best = spent if best is None else min(best, spent)
    scanner = Scanner(rules, engine="hyperscan", jobs=1)
    blocks = read_blocks(Source(path), InputStats(path), scanner.chunk_bytes, count_lines=False)
    candidates = sum(len(scanner.engine.lines(block)) for block in blocks)
    return {"cpu": best, "candidates": candidates}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("logs", nargs="+")
    ap.add_argument("--engine", default="hyperscan")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument(_CHILD, action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        print(json.dumps([_measure(args.engine, args.runs, path) for path in args.logs]))
        return 0
    print("| log | core | CPU s | candidate lines | µs per candidate |")
    print("|---|---|---:|---:|---:|")
    for label, env in (("on", ""), ("off", "1")):
        out = subprocess.run(
            [sys.executable, __file__, _CHILD, "--engine", args.engine, "--runs", str(args.runs), *args.logs],
            env={**os.environ, "SLURMDIAG_NO_CORE": env},
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for path, row in zip(args.logs, json.loads(out)):
            us = row["cpu"] / max(row["candidates"], 1) * 1e6
            print(f"| {os.path.basename(path)} | {label} | {row['cpu']:.3f} | {row['candidates']:,} | {us:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
