"""The first failure in time is the prime suspect: timestamps of every form order the findings."""

from __future__ import annotations

from diag.diagnosis.evaluate import rank
from diag.evidence import Evidence, time_key
from diag.report import Finding


def test_time_key_reads_every_wall_clock_form():
    assert time_key("2025-03-01 12:34:56") == (3, 1, 12, 34, 56.0)  # NCCL 2.26+ WARN
    assert time_key("2024-05-01T12:34:56.5") == (5, 1, 12, 34, 56.5)  # ISO
    assert time_key("1202 10:49:30.014446102") == (12, 2, 10, 49, 30.014446102)  # glog / c10
    assert time_key("Dec  2 10:49:30") == (12, 2, 10, 49, 30.0)  # syslog / journald
    assert time_key("12345.678901") is None  # dmesg: seconds since boot, not wall time
    assert time_key(None) is None


def _finding(fid: str, line: int, stamp: str | None) -> Finding:
    ev = Evidence(path="job.err", line=line, text="x", order=(0, line), timestamp=stamp)
    return Finding(fid, fid, "error", "root", 0.9, "d", "r", evidence=[ev])


def test_earlier_failure_ranks_first_even_when_printed_later():
    # The later file line happened first (another rank's buffered output): time wins over file order.
    early = _finding("x-early", 900, "1202 10:49:30.000")
    late = _finding("x-late", 10, "1202 10:52:00.000")
    assert [f.id for f in rank([late, early], {})] == ["x-early", "x-late"]


def test_file_order_decides_where_lines_carry_no_time():
    first = _finding("x-first", 10, None)
    second = _finding("x-second", 20, None)
    assert [f.id for f in rank([second, first], {})] == ["x-first", "x-second"]
