"""How long ``slurmdiag follow`` takes from the write of a line that shows a root cause to its alert.

A thread appends a healthy NCCL log (``--log``, default a 4-node corpus case, repeated to
``--mb`` MiB) to a file at a steady rate, then one ``Call to ibv_open_device failed`` line; the
follower polls every ``--interval`` seconds. Printed: the alert latency per round and the cost of
one poll's work (read + scan of the new bytes + evaluation of everything read so far), which is
what the latency adds to the wait for the next poll (on average half an interval).

    .venv/bin/python bench/follow_latency.py --interval 2 --rounds 5
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import threading
import time
from pathlib import Path

from diag.api import load_rules
from diag.follow import Follower, FollowOptions

REPO = Path(__file__).resolve().parents[1]
TRIGGER = b"slinky-2:4411:4411 [0] misc/ibvwrap.cc:212 NCCL WARN Call to ibv_open_device failed\n"


def one_round(rules, body: bytes, interval: float) -> tuple[float, list[float]]:
    with tempfile.TemporaryDirectory() as tmp:
        target = Path(tmp) / "train-1.out"
        target.write_bytes(b"")
        written, alerted, polls = [], [], []

        class Timed(Follower):
            def poll(self):
                t = time.perf_counter()
                grew = super().poll()
                if grew:
                    polls.append(time.perf_counter() - t)
                return grew

        def write():
            step = max(1, len(body) // 20)
            for i in range(0, len(body), step):  # the log arrives over ~1 s
                with open(target, "ab") as fh:
                    fh.write(body[i : i + step])
                time.sleep(0.05)
            time.sleep(interval * 0.37)  # land anywhere in the poll cycle
            with open(target, "ab") as fh:
                fh.write(TRIGGER)
            written.append(time.monotonic())

        follower = Timed([str(target)], rules, FollowOptions(interval_s=interval, idle_s=interval * 2 + 1),
                         lambda a: alerted.append(time.monotonic()))  # fmt: skip
        thread = threading.Thread(target=write)
        thread.start()
        follower.run()
        thread.join()
        return alerted[0] - written[0], polls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--log", default=str(REPO / "corpus/real-nccl-01-baseline-torchrun"))
    ap.add_argument("--mb", type=float, default=8.0)
    ap.add_argument("--interval", type=float, default=2.0)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    log = Path(args.log)
    files = [log] if log.is_file() else sorted(p for p in log.iterdir() if p.suffix in (".out", ".err", ".log"))
    unit = b"".join(p.read_bytes() for p in files)
    body = unit * max(1, int(args.mb * (1 << 20) / len(unit)))
    rules = load_rules()
    latencies, polls = [], []
    for _ in range(args.rounds):
        latency, cost = one_round(rules, body, args.interval)
        latencies.append(latency)
        polls += cost
    print(f"log {len(body) / (1 << 20):.1f} MiB, --interval {args.interval}")
    print(
        "alert latency: "
        + ", ".join(f"{x:.3f} s" for x in latencies)
        + f" (median {statistics.median(latencies):.3f} s)"
    )
    print(f"one poll's work: median {statistics.median(polls) * 1000:.1f} ms, max {max(polls) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
