"""A bounded sample of a job's error-looking lines that no rule knows, for the fleet's template mining.

Off unless the caller asks (the fleet's producers do: ``epilog --fleet-dir``, ``fleet scan``), so
a plain diagnosis pays nothing. When on, a second prefilter over each block finds lines holding an
error word (diag.input.mask.ERROR_LITERALS); those are framed, confirmed and masked, and a line is
kept only if its masked shape is new and no rule's signature matches it (a line a rule knows is no
"new template"). The candidates it looks at, the shapes it remembers and the lines it keeps are
all capped, so a log with a million error lines costs the same as one with a few hundred.

The sampled lines travel as ordinary scan records whose matches are :data:`SAMPLE_MATCHES`; the
scanner routes them into :class:`ErrorSample` before anything else sees them, so the facts, the
statistics and every finding are the same with sampling on or off.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field

from diag.evidence import Evidence
from diag.input.framing import frame_fields
from diag.input.mask import ERROR_LITERALS, looks_like_error, mask

SAMPLE_INDEX = -1
SAMPLE_MATCHES: tuple = ((SAMPLE_INDEX, {}),)
MAX_CANDIDATES = 5000  # framed lines per job (per worker): beyond, the sample is full enough
MAX_RAW = 4096  # raw lines (digits taken out) remembered per job (per worker): repeats cost no framing
MAX_SHAPES = 512  # masked shapes remembered per job (per worker)
MAX_HEAD = 32  # a job keeps its first distinct lines (where a failure usually starts) ...
MAX_TAIL = 32  # ... and its last ones (what it died of); the record keeps fewer (diag.fleet.record)
MAX_PAYLOAD = 600
_NO_DIGITS = str.maketrans("", "", "0123456789")
_DIGITS = b"0123456789"
# Lines every failed job prints, whatever failed: the launcher's summary of a child's failure and
# a traceback's frames (the exception line after them is kept). They would rank first among the
# templates and say nothing new. Tested on the payload before it is stripped.
BOILERPLATE = re.compile(
    r"ChildFailedError|Root Cause \(first observed failure\)|error_file:|To enable traceback see"
    r"|^#\s+size\s+count\b|^#\s+\(B\)\s"  # nccl-tests' table header has an "error" column
    r"|^\s*traceback ?:|^\s*Failures:|^\s*exitcode\s*:|^\s*\[\d+\]:\s*$|^\s+File \"|^\s{4,}raise\b|^\s*\S+ FAILED\s*$"
)
# unexplained-failure's signatures that show *what* failed (an exception, a refused step): their
# lines are exactly the ones to mine. Its other signatures (task exit codes, CANCELLED banners,
# MPI_ABORT) are the cascade every failure prints, and count as known like any rule's.
CONTENT_SIGNATURES = frozenset(
    {
        "exception", "exception_socket", "exception_other", "terminate", "slurm_error", "sbatch_error", "salloc_error", "stepd_error",
        "glibc_corrupt", "glibc_invalid", "check_failed", "crash_core", "segfault_line", "nccl_error", "nccl_tests_failure", "cuda_error",
        "mpich_fatal", "mpich_exit_string", "ompi_daemon_died", "ucx_signal",
    }
)


_engines = threading.local()  # one prefilter per engine name and thread: a fleet scan builds a Scanner per job


def _engine(name: str):
    from diag.scan.engines import Pattern, make_engine

    cache = _engines.__dict__
    if name not in cache:
        cache[name] = make_engine(name, [Pattern(lit, lit) for lit in ERROR_LITERALS])
    return cache[name]


class Sampler:
    """Per scanner: finds the candidate lines of a block and turns the new ones into records."""

    def __init__(self, engine_name: str, scanner, facts_owner: str) -> None:
        self.engine = _engine(engine_name)
        self.scanner = scanner  # its engine and signatures tell whether a rule knows a line
        self.facts_owner = facts_owner
        self.candidates = MAX_CANDIDATES
        self.raw: set[bytes] = set()
        self.shapes: set[str] = set()
        # Payloads without their digits: a repeat that differs only in numbers (most do: ranks,
        # addresses, node numbers) is known before paying for the masking.
        self.payloads: set[str] = set()

    def digest(self, block: bytes) -> list[tuple[int, tuple]]:
        out: list[tuple[int, tuple]] = []
        if self.candidates <= 0:
            return out
        for start, end, _members in self.engine.lines(block):
            raw = block[start:end]
            # The same line again (another rank, another step) costs one translate and a lookup,
            # and does not count against the budget, so the job's last lines are still reached.
            key = raw.translate(None, _DIGITS)
            if key in self.raw:
                continue
            if len(self.raw) < MAX_RAW:
                self.raw.add(key)
            self.candidates -= 1
            if self.candidates < 0:
                break
            text, cut, host, pid, rank, local_rank, task, level, ts, emitter = frame_fields(
                raw.decode("utf-8", "replace")
            )
            payload = text[cut:].strip()[:MAX_PAYLOAD]
            digitless = payload.translate(_NO_DIGITS)
            if digitless in self.payloads or not payload:
                continue
            if len(self.payloads) < MAX_SHAPES:
                self.payloads.add(digitless)
            if not looks_like_error(payload, level) or BOILERPLATE.search(text[cut:]):
                continue
            shape = mask(payload)
            if shape in self.shapes:
                continue
            if len(self.shapes) < MAX_SHAPES:
                self.shapes.add(shape)
            if self.known(payload, level):
                continue
            out.append((start, (0, text, cut, host, pid, rank, local_rank, task, level, ts, emitter, SAMPLE_MATCHES)))
        return out

    def known(self, payload: str, level: str | None) -> bool:
        """Whether a rule's signature matches the line (the facts' and unexplained-failure's
        content signatures do not count)."""
        scanner = self.scanner
        for _start, _end, members in scanner.engine.lines(payload.encode("utf-8", "replace") + b"\n"):
            for i, _groups in scanner._confirm(payload, level, members):
                owner, sig = scanner.entries[i]
                if owner == self.facts_owner:
                    continue
                if owner == "unexplained-failure" and sig.name in CONTENT_SIGNATURES:
                    continue
                return True
        return False


@dataclass
class ErrorSample:
    """The job's sampled lines in file order, one per masked shape: its first MAX_HEAD and its
    last MAX_TAIL, each as [payload, host, times seen, the first line's evidence]."""

    head: dict[str, list] = field(default_factory=dict)
    tail: OrderedDict[str, list] = field(default_factory=OrderedDict)

    def add(self, payload: str, host: str | None, evidence: Evidence | None = None) -> None:
        shape = mask(payload)
        kept = self.head.get(shape) or self.tail.get(shape)
        if kept is not None:
            kept[2] += 1
        elif len(self.head) < MAX_HEAD:
            self.head[shape] = [payload, host, 1, evidence]
        else:
            self.tail[shape] = [payload, host, 1, evidence]
            if len(self.tail) > MAX_TAIL:
                self.tail.popitem(last=False)

    def items(self) -> list[tuple[str, str | None, int]]:
        return [(p, h, n) for p, h, n, _ in [*self.head.values(), *self.tail.values()]]

    def evidence(self) -> list[Evidence]:
        """Where each kept shape was first seen, in file order."""
        return sorted((e for *_, e in [*self.head.values(), *self.tail.values()] if e is not None), key=lambda e: e.order)
