"""Fleet throughput: jobs per second of ``fleet scan`` on one core, and the store's size per 10k jobs.

    python bench/fleet.py [--jobs 1000] [--dir /tmp/fleet-bench] [--keep]

Builds the synthetic archive of tests/fleet/synthetic.py (corpus cases, host names rewritten; logs of
12-450 KB per job, ~120 KB on average), scans it in this process pinned to one core (as one array task
would), then compacts. The store size per 10k jobs is measured on 10,000 records: the scanned ones,
repeated under new job ids and times, folded into Parquet by ``fleet compact``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from diag.api import load_rules  # noqa: E402
from diag.fleet.archive import scan_archive  # noqa: E402
from diag.fleet.store import compact  # noqa: E402
from tests.fleet.synthetic import build_archive  # noqa: E402


def _size(path: Path, pattern: str) -> int:
    return sum(p.stat().st_size for p in path.rglob(pattern))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", type=int, default=1000)
    parser.add_argument("--dir", default=None, help="Work directory (default: a temporary one).")
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    os.environ["SLURMDIAG_JOBS"] = "1"  # no worker processes: one core means one core
    work = Path(args.dir or tempfile.mkdtemp(prefix="fleet-bench-"))
    archive = build_archive(work / "archive", jobs=args.jobs)
    logs = _size(archive.root, "*.o*") + _size(archive.root, "*.e*") + _size(archive.root, "*.log")
    rules = load_rules()
    out = work / "fleet"
    cpu0, wall0 = time.process_time(), time.perf_counter()
    stats = scan_archive([str(archive.root)], str(out), rules, cluster="bench")
    wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
    shard_bytes = _size(out, "*.jsonl")
    print(f"fleet scan, one core: {stats.scanned} jobs ({logs / 1e6:.0f} MB of logs) in {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU: {stats.scanned / wall:.0f} jobs/s wall, {stats.scanned / cpu:.0f} jobs per CPU-second "
          f"({logs / wall / 1e6:.0f} MB/s); wall > CPU means the machine was busy or the files slow")  # fmt: skip
    print(f"shard: {shard_bytes / stats.scanned:.0f} bytes per job record (JSON line)")

    # 10,000 records: the scanned ones again under new ids, a minute apart, on other nodes (of a
    # 2,000-node cluster) for other users, so that Parquet cannot compress the copies away.
    records = [json.loads(line) for line in Path(stats.shard_path).read_text().splitlines()]
    big = work / "fleet10k"
    (big / "shards").mkdir(parents=True)
    rng = random.Random(1)
    pool = [f"gpu{i:04d}" for i in range(2000)]
    lines = []
    for i in range(10_000):
        r = json.loads(json.dumps(records[i % len(records)]))
        job = str(1_000_000 + i)
        rename = dict(zip(r["nodes"], rng.sample(pool, len(r["nodes"]))))
        r["nodes"] = sorted(rename.values())
        for f in r["findings"]:
            f["hosts"] = [rename.get(h, h) for h in f["hosts"]]
            f["evidence"] = (f["evidence"] or "").replace(r["job_id"], job)
        r["job_id"], r["raw_id"] = job, job
        r["user"] = f"user{rng.randrange(300):03d}"
        r["end_time"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_790_000_000 + 60 * i))
        r["start_time"] = time.strftime(
            "%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_790_000_000 + 60 * i - rng.randrange(86400))
        )
        r["scanned_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_790_000_000 + 60 * i + rng.randrange(600)))
        lines.append(json.dumps(r, separators=(",", ":")) + "\n")
    (big / "shards" / "all.jsonl").write_text("".join(lines))
    jsonl = _size(big, "*.jsonl")
    t0 = time.perf_counter()
    result = compact(str(big))
    took = time.perf_counter() - t0
    parquet = _size(big / "store", "*.parquet")
    print(f"store: 10,000 jobs = {jsonl / 1e6:.1f} MB of JSON lines -> {parquet / 1e6:.2f} MB of Parquet "
          f"({parquet / 10_000:.0f} bytes per job), compacted in {took:.2f} s; {result.rows} rows")  # fmt: skip
    per_day = 100_000
    print(f"100k jobs/day: {per_day / (stats.scanned / cpu) / 3600:.2f} CPU-hours/day of scanning "
          f"({per_day / (stats.scanned / wall) / 3600:.2f} h of one task at this wall rate); "
          f"{parquet * per_day / 10_000 * 365 / 1e9:.1f} GB of store per year")  # fmt: skip
    if not args.keep and not args.dir:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
