"""Scanning large inputs on several cores, with the same result as one core.

The inputs are cut into tasks: a small file whole, a large plain file into spans of whole chunks
(:class:`diag.sources.Span`, so every block is the one a single sequential read would see). Worker
processes, forked so they share the compiled engine, *digest* the tasks (read, prefilter, frame,
match: the work that depends on a line alone). The main process *applies* the records in input
order, so facts, ranks and the first evidence lines come out exactly as a sequential scan makes
them. A worker condenses each long run of communicator lines into its net effect before shipping
(diag.scan.runs), so the main process applies a few summaries instead of one record per line. At
most a few tasks are in flight, which bounds memory whatever the input size.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING

from diag.input import lines
from diag.input.sources import InputStats, MemorySource, Source, Span, resume_state
from diag.scan.fold import assumption_holds
from diag.scan.runs import MAX_DISTINCT, apply_run

if TYPE_CHECKING:
    from diag.scan.fold import Folded, Folder
    from diag.scan.scanner import Record, Scanner, ScanResult

JOBS_ENV = "SLURMDIAG_JOBS"
MIN_PARALLEL_BYTES = 32 << 20  # below this, starting workers costs more than it saves
TASK_CHUNKS = 8  # chunks per span: 16 held 102 MB PSS in all (fallback, 2 workers, 30% candidates), 8 93 MB; CPU alike
MAX_JOBS = 8
_PR_SET_PDEATHSIG = 1


@dataclass(frozen=True)
class Task:
    index: int  # which source
    span: Span | None  # None: the whole source


@dataclass(frozen=True)
class Plan:
    jobs: int
    tasks: list[Task]


def default_jobs() -> int:
    """Worker count: ``$SLURMDIAG_JOBS`` if set, else the cores this process may use (at most 8)."""
    raw = os.environ.get(JOBS_ENV, "").strip()
    if raw.isdigit() and int(raw) > 0:
        return int(raw)
    return max(1, min(_cores(), MAX_JOBS))


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def idle_cores(samples: int = 3, loadavg: str = "/proc/loadavg") -> int:
    """The cores this process may use less those other programs keep busy right now: the run queue's
    length (the fourth field of /proc/loadavg, this process included), least of a few samples 5 ms
    apart. Workers on busy cores only compete with each other and with the process applying their
    records: on the 2-core bench machine with others' jobs running, two workers were up to 1.7x
    slower than one process. Where the run queue cannot be read, every core counts as idle."""
    cores = _cores()
    running = None
    for i in range(samples):
        try:
            with open(loadavg) as f:
                now = int(f.read().split()[3].split("/")[0])
        except (OSError, ValueError, IndexError):
            return cores
        running = now if running is None else min(running, now)
        if i + 1 < samples:
            time.sleep(0.005)
    return max(1, cores - max(0, (running or 1) - 1))


def _size(source: Source) -> int | None:
    """Bytes of a source that may be split or handed to a worker; None for one that may not."""
    if source.is_stdin:
        return None
    if isinstance(source, MemorySource):
        return len(source.data)  # type: ignore[attr-defined]
    try:
        return os.stat(source.path).st_size
    except OSError:
        return 0  # the worker reports the problem, as a sequential read would


def _splittable(source: Source) -> bool:
    return not (source.is_gzip or source.max_bytes or isinstance(source, MemorySource))


def plan(
    sources: list[Source],
    jobs: int | None,
    chunk_bytes: int,
    min_bytes: int = MIN_PARALLEL_BYTES,
    task_chunks: int = TASK_CHUNKS,
) -> Plan | None:
    """The tasks for ``sources``, or None when one core is the better choice (or the only one)."""
    chosen = jobs is not None or os.environ.get(JOBS_ENV, "").strip().isdigit()
    jobs = default_jobs() if jobs is None else jobs
    if jobs < 2 or not hasattr(os, "fork") or threading.active_count() > 1:
        return None  # forking a process that runs other threads can leave a child holding their locks
    sizes = [_size(s) for s in sources]
    if any(size is None for size in sizes) or sum(sizes) < min_bytes:  # type: ignore[arg-type]
        return None
    if not chosen:  # the default: as many workers as cores are idle now (a large input only: 10 ms)
        jobs = min(jobs, idle_cores())
        if jobs < 2:
            return None
    tasks: list[Task] = []
    span_bytes = chunk_bytes * task_chunks
    for index, (source, size) in enumerate(zip(sources, sizes)):
        if not _splittable(source) or size <= span_bytes:  # type: ignore[operator]
            tasks.append(Task(index, None))
            continue
        tasks.extend(Task(index, span) for span in _spans(source.path, size, chunk_bytes, span_bytes))  # type: ignore[arg-type]
    if len(tasks) < 2:
        return None
    return Plan(min(jobs, len(tasks)), tasks)


def _spans(path: str, size: int, chunk_bytes: int, span_bytes: int) -> list[Span]:
    """Spans of about ``span_bytes``, each starting at a chunk boundary whose read state is known."""
    starts = [Span(0, None)]
    try:
        for offset in range(span_bytes, size, span_bytes):
            state = resume_state(path, offset, chunk_bytes)
            if state is not None:
                starts.append(state)
    except OSError:
        return [Span(0, None)]
    return [
        Span(s.start, nxt.start if nxt else None, s.carry, s.cut_line) for s, nxt in zip(starts, [*starts[1:], None])
    ]


# --- worker side: state inherited through fork -------------------------------------------------
_scanner: Scanner | None = None
_sources: list[Source] = []


_carried: tuple | None = None  # this worker's fold memory from its earlier tasks (Folder.carry)


def _digest(task: Task) -> tuple[list[Record], InputStats, Folded, set[tuple]]:
    global _carried
    assert _scanner is not None
    source = _sources[task.index]
    stats = InputStats(source.path)
    folder = _scanner.folder(from_start=_from_start(task))
    if _carried is not None:  # the pool hands each worker its tasks in input order
        folder.adopt(_carried)
    folder.assume()  # checked by the apply before this task's records (fold.assumption_holds)
    shipped = dict(folder._shipped)  # what this worker shipped before the task: runs.condense needs it
    records = list(_scanner.digest_source(task.index, source, stats, span=task.span, folder=folder))
    _carried = folder.carry()
    records = _scanner.condense(records, shipped)
    return records, stats, folder.folded, folder._assumed


def _from_start(task: Task) -> bool:
    return task.index == 0 and (task.span is None or task.span.start == 0)


def _worker_start(parent: int) -> None:
    """A worker dies with the main process (killed by a time limit, say) instead of waiting forever
    on a queue it holds both ends of; Ctrl-C is the main process's to handle."""
    global _carried
    _carried = None  # a new worker has shipped nothing yet
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # Forked with SIGINT blocked (see run): a Ctrl-C that came before the line above is dropped here,
    # instead of killing the worker with a KeyboardInterrupt that reads as a broken pool.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it died before the line above
        os._exit(1)


def run(scanner: Scanner, sources: list[Source], plan: Plan, result: ScanResult) -> bool:
    """Digest in workers, apply here in input order. False (and ``result`` untouched beyond repair,
    so the caller starts over) when the workers could not run."""
    import multiprocessing  # with concurrent.futures, 35 ms of imports a small log never needs
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    global _scanner, _sources
    _scanner, _sources = scanner, sources
    if scanner._core is None:
        # Without the compiled core the workers count line feeds (and may find lines) with NumPy:
        # imported once here, not in each. The core needs none, and the import (60-110 ms) would
        # only delay the first fork.
        lines.preload()
    context = multiprocessing.get_context("fork")
    lines_before = [0] * len(sources)
    folder = scanner.folder(from_start=True)  # folds what each worker shipped as a first sighting of its task
    try:
        with ProcessPoolExecutor(
            plan.jobs, mp_context=context, initializer=_worker_start, initargs=(os.getpid(),)
        ) as pool:
            pending: deque = deque()
            queue = iter(plan.tasks)
            window = plan.jobs + 1
            # The first submit forks every worker: with SIGINT blocked meanwhile, a Ctrl-C at that moment
            # waits for the main process (which then stops) rather than reaching a worker too early.
            blocked = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
            try:
                first = next(queue, None)
                if first is not None:
                    pending.append((first, pool.submit(_digest, first)))
            finally:
                signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
            for task in queue:
                pending.append((task, pool.submit(_digest, task)))
                if len(pending) >= window:
                    _apply_one(scanner, sources, pending.popleft(), lines_before, result, folder)
            while pending:
                _apply_one(scanner, sources, pending.popleft(), lines_before, result, folder)
        scanner.apply_folded(folder.folded, result)
    except (BrokenProcessPool, OSError):
        return False
    finally:
        _scanner, _sources = None, []
    return True


def apply_condensed(
    scanner: Scanner, records: list, path: str, index: int, base: int, result: ScanResult, folder: Folder | None
) -> None:
    """Apply a task's records as :meth:`Scanner.condense` left them: records and condensed runs."""
    plain: list = []  # records between two condensed runs (diag.scan.runs), applied together
    described: dict[int, tuple] = {}  # the task's records share their matches: each described once
    for record in records:
        if type(record) is tuple:
            plain.append(record)
            continue
        scanner.apply(plain, path, index, result, line_base=base, folder=folder, described=described)
        plain = []
        apply_run(record, index, base, result, folder)
    scanner.apply(plain, path, index, result, line_base=base, folder=folder, described=described)


def _apply_one(
    scanner: Scanner, sources: list[Source], item, lines_before: list[int], result: ScanResult, folder: Folder
) -> None:
    task, future = item
    records, stats, folded, assumed = future.result()
    index = task.index
    source = sources[index]
    if assumed and not assumption_holds(assumed, result.facts.rank_of_process, _rule_stats(scanner, result), MAX_DISTINCT):
        # A process the worker took to have no rank had one: digest the task here, as one core would,
        # with the folder that has seen every record applied so far. The worker's answer is dropped.
        stats = InputStats(source.path)
        records = scanner.digest_source(index, source, stats, span=task.span, folder=folder)
        scanner.apply(records, source.path, index, result, line_base=lines_before[index])
        folded = None
    else:
        apply_condensed(scanner, records, source.path, index, lines_before[index], result, folder)
    if folded is not None:
        scanner.apply_folded(folded, result)
    lines_before[index] += stats.lines
    result.inputs[index].add(stats)


def _rule_stats(scanner: Scanner, result: ScanResult):
    keys = scanner._rule_key_list()
    stats = result.stats
    return lambda i: stats.get(keys[i]) if keys[i] is not None else None
