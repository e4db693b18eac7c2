"""Records shared by the scan, the facts and the diagnosis."""

from __future__ import annotations

from dataclasses import dataclass

MAX_EVIDENCE_TEXT = 1000


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
