""" "No progress" watch of ``slurmdiag follow --stall-after``: training progress lines (step,
iteration, loss, epoch, tqdm bars) must recur; when a source that printed them has printed none
for the window, follow warns with the ``nccl-timeout`` symptom (a hang is that symptom's early
form: the watchdog fires only after its own, usually much longer, timeout).

A source is a file, or a rank inside it when the lines carry one (``[rank3]:``, ``rank 3``, srun's
``--label`` prefix ``3:``). A job that never printed a progress line is never called stalled: an
unknown pace is not a stall. Time is the injected clock of the follower (when a line was *read*,
not a timestamp inside it: many training logs carry none).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from diag.evidence import Evidence
from diag.report import Finding

CAUSE = "nccl-timeout"
DEFAULT_PROGRESS = (
    r"\b(?:global[_ ])?step[ :=\[]*\d+",
    r"\biter(?:ation)?[ :=\[]*\d+",
    r"\d+(?:\.\d+)?\s*(?:it/s|s/it)\b",
    r"\bloss\s*[=:]\s*[-+]?\d",
    r"\bepoch[ :=\[]*\d+",
    r"\d+%\|[^|]*\|\s*\d+/\d+",  # a tqdm bar: 42%|####      | 42/100
)
RANK_RE = re.compile(rb"^\s*(?:\[rank\s*(\d+)\]|(\d+):\s)|\brank[ =:\[]*(\d+)", re.IGNORECASE)
OWN_PREFIX = b"slurmdiag"  # our own alerts land in the job's .err: never progress
MAX_TEXT = 300


@dataclass
class Mark:
    path: str
    line: int
    text: str
    at: float  # follower clock when read
    seen: int = 1  # progress lines of this source so far


class StallWatch:
    def __init__(self, stall_s: float, patterns: Sequence[str] = DEFAULT_PROGRESS):
        self.stall_s = stall_s
        self.progress = re.compile("|".join(f"(?:{p})" for p in patterns).encode(), re.IGNORECASE)
        self.lines: dict[str, int] = {}  # path -> lines seen
        self.last: dict[tuple[str, int | None], Mark] = {}  # source -> its last progress line
        self.alerted: set[tuple[str, int | None]] = set()

    def reset(self) -> None:
        self.lines.clear()  # files are read again from the start: line numbers restart

    def feed(self, path: str, block: bytes, now: float) -> None:
        """Note the progress lines of ``block`` (whole lines of ``path`` following what was fed)."""
        base = self.lines.get(path, 0)
        lines = block.splitlines()  # \n, \r\n and a lone \r, as the scanner numbers lines
        self.lines[path] = base + len(lines)
        if not self.progress.search(block):
            return
        for i, line in enumerate(lines):
            if line.lstrip().startswith(OWN_PREFIX) or not self.progress.search(line):
                continue
            m = RANK_RE.search(line)
            rank = int(next(g for g in m.groups() if g is not None)) if m else None
            source = (path, rank)
            seen = self.last[source].seen + 1 if source in self.last else 1
            text = line.decode("utf-8", "replace").strip()[:MAX_TEXT]
            self.last[source] = Mark(path, base + i + 1, text, now, seen)
            self.alerted.discard(source)  # progress again: a later stall warns again

    def check(self, now: float) -> list[Finding]:
        """One warning when a source has been silent for the window: the one silent longest, whose
        rank fell silent first (the others that stop after it are the same hang). None again
        until that source progresses again."""
        if self.alerted:
            return []
        # One progress line ("resuming from step 1000") gives no pace: a source needs two to stall.
        silent = [(m.at, s) for s, m in self.last.items() if m.seen >= 2 and now - m.at >= self.stall_s]
        if not silent:
            return []
        source = min(silent, key=lambda x: x[0])[1]
        self.alerted.add(source)
        return [self._finding(source, self.last[source], now)]

    def _finding(self, source: tuple[str, int | None], mark: Mark, now: float) -> Finding:
        rank = source[1]
        others = sum(1 for s, m in self.last.items() if s != source and now - m.at < self.stall_s)
        who = f"rank {rank}" if rank is not None else mark.path
        still = f" while {others} other source(s) still progress" if others else ""
        silent = now - mark.at
        span = f"{silent / 60:.0f} min" if silent >= 60 else f"{silent:.0f} s"
        detail = (f"no training progress for {span} from {who}{still}: "
                  f"last line {mark.path}:{mark.line}: {mark.text}")  # fmt: skip
        return Finding(
            id=CAUSE,
            title=f"no training progress for {span} from {who} (a hang?): last line {mark.text[:120]!r}",
            severity="warning",
            role="symptom",
            confidence=0.5,
            detail=detail,
            remediation="look at the silent rank now (py-spy dump --pid, or NCCL_DEBUG=INFO next run): a rank "
            "stuck in a collective shows where the job hangs before the watchdog ends it",
            ranks=[rank] if rank is not None else [],
            evidence=[Evidence(path=mark.path, line=mark.line, text=mark.text, order=(0, mark.line), rank=rank)],
            count=1,
        )
