"""``follow --stall-after``: a warning when training progress lines stop, on a fake clock (the
follower's sleep advances time and lets the "job" write its next minute of log)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from diag.api import load_rules
from diag.follow import Follower, FollowOptions
from diag.follow.alerts import alert_line
from diag.follow.stall import StallWatch

RULES = load_rules()
MINUTE = 60.0


def _follow(path: Path, write_minute: Callable[[int], bytes], minutes: int, stall_min: float = 30):
    """Follow ``path`` for ``minutes`` fake minutes, one poll a minute; ``write_minute(m)`` is what
    the job appends during minute m. Returns the alerts."""
    now = [0.0]

    def sleep(seconds: float) -> None:
        now[0] += seconds
        minute = int(now[0] // MINUTE)
        with open(path, "ab") as fh:
            fh.write(write_minute(minute))

    opts = FollowOptions(interval_s=MINUTE, idle_s=float("inf"), stall_s=stall_min * MINUTE, after_end_s=0, sleep=sleep,
                         clock=lambda: now[0], ended=lambda: now[0] >= minutes * MINUTE)  # the job ends  # fmt: skip
    path.write_bytes(b"torchrun: starting 2 ranks\n")
    alerts = []
    Follower([str(path)], RULES, opts, alerts.append).run()
    return alerts


def _train(last_step_minute: dict[int, int]):
    """Two ranks print a step line a minute; rank r stops after minute ``last_step_minute[r]``."""

    def write(minute: int) -> bytes:
        out = b"NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n" if minute == 1 else b""
        for rank, last in last_step_minute.items():
            if minute <= last:
                out += f"[rank{rank}]: step {minute * 10} loss=2.{minute:02d} lr=3e-4\n".encode()
        return out

    return write


def test_progress_that_stops_gives_one_warning_naming_the_last_line_and_the_silent_rank(tmp_path):
    log = tmp_path / "train-7.out"
    # rank 1 falls silent after minute 12, rank 0 after minute 15; followed for 3 hours
    alerts = _follow(log, _train({0: 15, 1: 12}), minutes=180)
    stalls = [a for a in alerts if a.finding.id == "nccl-timeout"]
    assert len(stalls) == 1
    finding = stalls[0].finding
    assert finding.severity == "warning" and finding.role == "symptom"
    assert finding.ranks == [1]
    lines = log.read_bytes().splitlines()
    ev = finding.evidence[0]
    assert lines[ev.line - 1].decode() == ev.text == "[rank1]: step 120 loss=2.12 lr=3e-4"
    assert "no training progress for 30 min" in finding.detail and f"{log}:{ev.line}" in finding.detail
    assert 42 * MINUTE <= stalls[0].elapsed_s <= 44 * MINUTE  # 30 min after rank 1's last step
    assert "WARNING nccl-timeout" in alert_line(stalls[0], "7") and "rank 1" in alert_line(stalls[0], "7")


def test_a_job_that_keeps_progressing_gets_no_stall_warning(tmp_path):
    alerts = _follow(tmp_path / "train-8.out", _train({0: 999, 1: 999}), minutes=120)
    assert [a for a in alerts if a.finding.id == "nccl-timeout"] == []


def test_a_job_without_progress_lines_is_not_called_stalled(tmp_path):
    def write(minute: int) -> bytes:
        return b"" if minute > 2 else b"preprocessing shard %d\n" % minute

    assert _follow(tmp_path / "prep-9.out", write, minutes=120) == []


def test_a_stall_shorter_than_the_window_does_not_warn_and_progress_rearms_it():
    watch = StallWatch(30 * MINUTE)
    watch.feed("a.out", b"resuming from checkpoint at step 1000\n", 0.0)
    assert watch.check(60 * MINUTE) == []  # one progress line gives no pace: not a stall
    watch.feed("a.out", b"Epoch 1: 10%|#         | 10/100 [00:10<01:30, 1.02it/s]\r", 60 * MINUTE)
    assert watch.check(89 * MINUTE) == []
    (first,) = watch.check(91 * MINUTE)
    assert first.evidence[0].line == 2 and first.ranks == []
    assert watch.check(100 * MINUTE) == []  # once per stall
    watch.feed("a.out", b"slurmdiag follow: job 9: +1860s WARNING nccl-timeout: step 10\n", 101 * MINUTE)
    assert watch.check(140 * MINUTE) == []  # our own alert in the .err is not progress
    watch.feed("a.out", b"Epoch 1: 11%|#         | 11/100\n", 141 * MINUTE)
    (again,) = watch.check(172 * MINUTE)
    assert again.evidence[0].line == 4
