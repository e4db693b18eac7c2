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

    def to_json(self) -> dict:
        out = {"path": self.path, "line": self.line, "text": self.text}
        for key in ("host", "rank", "task", "local_rank", "timestamp"):
            value = getattr(self, key)
            if value is not None:
                out[key] = value
        return out
