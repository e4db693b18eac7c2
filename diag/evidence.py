"""Records shared by the scan, the facts and the diagnosis."""

from __future__ import annotations

import re
from dataclasses import dataclass

MAX_EVIDENCE_TEXT = 1000
_MONTHS = {
    m: i
    for i, m in enumerate(["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"], start=1)
}
_ISO = re.compile(r"^\d{4}-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d(?:[.,]\d+)?)")
_GLOG = re.compile(r"^(\d\d)(\d\d) (\d\d):(\d\d):(\d\d(?:\.\d+)?)$")
_SYSLOG = re.compile(r"^([A-Z][a-z]{2}) +(\d+) (\d\d):(\d\d):(\d\d)$")


def time_key(timestamp: str | None) -> tuple[int, int, int, int, float] | None:
    """(month, day, hour, minute, second) of a wall-clock timestamp in any form the framing keeps
    (ISO, NCCL's 2.26+ WARN stamp, glog's MMDD, syslog); None when it has none or it is not wall
    time (dmesg seconds since boot). Years are left out: glog and syslog do not print them."""
    if not timestamp:
        return None
    for rx in (_ISO, _GLOG):
        m = rx.match(timestamp)
        if m:
            return (int(m[1]), int(m[2]), int(m[3]), int(m[4]), float(m[5].replace(",", ".")))
    m = _SYSLOG.match(timestamp)
    if m and m[1] in _MONTHS:
        return (_MONTHS[m[1]], int(m[2]), int(m[3]), int(m[4]), float(m[5]))
    return None


_ISO_FULL = re.compile(r"^(\d{4})-(\d\d)-(\d\d)[T ](\d\d):(\d\d):(\d\d)(?:[.,](\d+))?(Z|[+-]\d\d:?\d\d)?$")
_EPOCH = re.compile(r"^(\d{10})(?:\.(\d+))?$")  # UCX prints seconds since 1970 (dmesg's are since boot)


def _iso(year: int, month: int, day: int, hh: int, mm: int, ss: float, tz: str = "") -> str | None:
    from datetime import datetime

    whole = int(ss)
    micro = round((ss - whole) * 1_000_000)
    try:
        dt = datetime(year, month, day, hh, mm, whole, min(micro, 999_999))
    except ValueError:  # Feb 29 in the wrong year, a garbled stamp
        return None
    return dt.isoformat(timespec="microseconds" if micro else "seconds") + tz


def anchor_of(timestamp: str | None):
    """A datetime with a year, from a stamp that carries one (ISO, UCX epoch); else None."""
    from datetime import datetime, timezone

    if not timestamp:
        return None
    m = _ISO_FULL.match(timestamp)
    if m:
        try:
            return datetime(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]))
        except ValueError:
            return None
    m = _EPOCH.match(timestamp)
    if m:
        return datetime.fromtimestamp(int(m[1]), tz=timezone.utc).replace(tzinfo=None)
    return None


def iso_time(timestamp: str | None, anchor=None) -> str | None:
    """ISO 8601 with a year for a line's timestamp, or None when it has no wall-clock time.

    Stamps without a year (glog's MMDD, syslog) take the year that puts them nearest ``anchor`` (a
    datetime from the same job: an ISO stamp, Slurm's record, the log file's time); without an
    anchor they get none rather than a guess. Local times stay local (no offset is invented)."""
    if not timestamp:
        return None
    m = _ISO_FULL.match(timestamp)
    if m:
        tz = m[8] or ""
        if tz and tz != "Z" and ":" not in tz:
            tz = tz[:3] + ":" + tz[3:]
        frac = float(f"0.{m[7]}") if m[7] else 0.0
        return _iso(int(m[1]), int(m[2]), int(m[3]), int(m[4]), int(m[5]), int(m[6]) + frac, tz)
    m = _EPOCH.match(timestamp)
    if m:
        from datetime import datetime, timezone

        dt = datetime.fromtimestamp(int(m[1]), tz=timezone.utc)
        frac = float(f"0.{m[2]}") if m[2] else 0.0
        return _iso(dt.year, dt.month, dt.day, dt.hour, dt.minute, dt.second + frac, "Z")
    key = time_key(timestamp)
    if key is None or anchor is None:
        return None
    month, day, hh, mm, ss = key
    best = None
    for year in (anchor.year - 1, anchor.year, anchor.year + 1):
        text = _iso(year, month, day, hh, mm, ss)
        if text is None:
            continue
        from datetime import datetime

        distance = abs((datetime.fromisoformat(text) - anchor).total_seconds())
        if best is None or distance < best[0]:
            best = (distance, text)
    return best[1] if best else None


@dataclass(frozen=True, slots=True)
class Evidence:
    """One log line that supports a finding: where it is, what it says, who printed it."""

    path: str
    line: int
    text: str
    order: tuple[int, int]  # (input index, line number): file order across one invocation
    host: str | None = None
    rank: int | None = None
    task: int | None = None
    local_rank: int | None = None
    pid: int | None = None
    timestamp: str | None = None

    def file_order(self) -> tuple:
        """Where it stands in the input, then its text: records glued onto one physical line share
        a line number, and their order must not depend on a set's iteration (the hash seed)."""
        return (self.order, self.text)

    def to_json(self) -> dict:
        out = {"path": self.path, "line": self.line, "text": self.text}
        for key in ("host", "rank", "task", "local_rank", "timestamp"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
