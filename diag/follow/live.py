"""The scan of a running job, fed as its files grow: the scanner's own digest/apply steps on each
new block of whole lines, so what it knows mid-run is what a scan of the bytes so far would know.

Records are applied in arrival order. For one file that is file order, and the state after the
last byte equals a whole-file scan (tests/follow checks it); for several files growing at once
the interleaving can change which 64 samples a signature keeps, so the final report of
``slurmdiag follow`` is always a plain diagnosis of the finished files (one more full read).
"""

from __future__ import annotations

import copy

from diag.catalog.model import RuleSet
from diag.diagnosis.evaluate import evaluate
from diag.input.framing import ANSI_BYTES_RE
from diag.input.lines import count_newlines
from diag.input.paste import PASTE_BYTES, unglue
from diag.input.sources import InputStats
from diag.report import Finding
from diag.scan.scanner import FACTS_OWNER, Scanner, ScanResult


class LiveScan:
    """Scan state of one job whose files are read in pieces (file ``index`` = position in the job)."""

    def __init__(self, rules: RuleSet, engine: str = "auto", nodes: int = 0):
        self.rules = rules
        self.scanner = Scanner(rules, engine=engine)
        self.nodes = nodes
        self.result = self._fresh()
        self.paths: dict[str, int] = {}  # path -> its index in the job
        self.line_no: list[int] = []
        self.dirty = False  # a rule's signature matched since the last evaluation
        self.facts_dirty = False  # only facts (hosts, ranks, settings) changed: can wait a little

    def reset(self) -> None:
        """Forget everything (a file was truncated or replaced: what it said before is void)."""
        self.result = self._fresh()
        self.paths, self.line_no = {}, []
        self.dirty = True

    def _fresh(self) -> ScanResult:
        result = ScanResult()
        result.facts.slurm_nodes = self.nodes  # Slurm's word, as diagnose_job gives it
        return result

    def index(self, path: str, stats: InputStats) -> int:
        i = self.paths.get(path)
        if i is not None:
            self.result.inputs[i] = stats  # the tail owns the counters; it may have restarted them
            return i
        self.paths[path] = len(self.line_no)
        self.line_no.append(0)
        self.result.inputs.append(stats)
        return len(self.line_no) - 1

    def feed(self, path: str, stats: InputStats, block: bytes) -> None:
        """Scan ``block`` (whole lines of ``path``, following what was fed before)."""
        if not block:
            return
        index = self.index(path, stats)
        scanner = self.scanner
        if stats.bytes_read <= PASTE_BYTES:
            # A file read whole is repaired when it is a paste's size (diag.input.paste); ungluing is
            # line by line, so a block gets what the whole file would, as long as the file stays that
            # small (a log that grows past it is read as it is by the final diagnosis).
            repaired = unglue(block)
            stats.bytes_read += len(repaired) - len(block)
            block = repaired
        if b"\x1b" in block:
            block = ANSI_BYTES_RE.sub(b"", block)
        shipped = []
        for start, end, members in scanner.engine.lines(block):
            record = scanner.digest(block[start:end], 0, members)
            if record is not None:
                shipped.append((start, record))
        before, total = count_newlines(block, [start for start, _ in shipped])
        base = self.line_no[index]
        records = [(base + newlines + 1, *record[1:]) for (_, record), newlines in zip(shipped, before)]
        self.line_no[index] = base + total
        stats.lines += total
        if records:
            scanner.apply(records, path, index, self.result)
            entries = scanner.entries
            if not self.dirty and any(entries[i][0] != FACTS_OWNER for r in records for i, _ in r[-1]):
                self.dirty = True
            self.facts_dirty = True

    def findings(self) -> list[Finding]:
        """The diagnosis of what was read so far (on a copy: evaluation must not touch the live state)."""
        self.dirty = self.facts_dirty = False
        return evaluate(self.rules, copy.deepcopy(self.result))
