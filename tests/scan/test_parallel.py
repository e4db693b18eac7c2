"""Splitting the scan across worker processes never changes what the scan found."""

from __future__ import annotations

import dataclasses
import os
import signal
import subprocess
import sys
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diag.input.sources import InputStats, Source, Span, read_blocks, resume_state
from diag.scan import parallel
from diag.scan.scanner import Scanner

from ..conftest import ROOT, case_logs, corpus_cases

CASES = corpus_cases()
SPLIT = {"min_bytes": 0, "task_chunks": 1}


def _scan(rules, paths, jobs, chunk=1 << 20, **options):
    scanner = Scanner(rules, chunk_bytes=chunk, jobs=jobs)
    scanner.parallel_options = options
    result = scanner.scan([Source(p) for p in paths])
    return result.stats, result.facts, result.inputs


def test_the_corpus_scans_the_same_on_workers(rules):
    """Every corpus case, cut into 256-byte chunks so most files become several spans."""
    split = 0
    for case in CASES:
        paths = case_logs(case)
        sources = [Source(p) for p in paths]
        if parallel.plan(sources, 2, 256, **SPLIT) is not None:
            split += 1
        assert _scan(rules, paths, 2, 256, **SPLIT) == _scan(rules, paths, 1, 256), case.name
    assert split > len(CASES) // 2


def test_a_long_generated_job_scans_the_same_on_workers(rules, tmp_path):
    """The benchmark's job log (communicators rebuilt all along, faults planted): every count,
    sample, host and fact is the one a single process finds."""
    log = tmp_path / "job.log"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_log.py"), "--size", "3M", "--out", str(log)], check=True)
    sources = [Source(str(log))]
    plan = parallel.plan(sources, 2, 64 << 10, min_bytes=0, task_chunks=2)
    assert plan is not None and len(plan.tasks) > 10
    assert _scan(rules, [str(log)], 2, 64 << 10, min_bytes=0, task_chunks=2) == _scan(rules, [str(log)], 1, 64 << 10)


def test_several_files_are_tasks_of_their_own(tmp_path):
    paths = []
    for i in range(3):
        path = tmp_path / f"rank{i}.err"
        path.write_bytes(b"line\n" * 1000)
        paths.append(str(path))
    plan = parallel.plan([Source(p) for p in paths], 2, 1 << 20, min_bytes=0)
    assert plan is not None and [t.index for t in plan.tasks] == [0, 1, 2] and plan.jobs == 2


def test_small_inputs_and_stdin_stay_on_one_core(tmp_path):
    path = tmp_path / "a.log"
    path.write_bytes(b"x\n" * 10)
    assert parallel.plan([Source(str(path))], 2, 1 << 20) is None  # below the threshold
    assert parallel.plan([Source("-"), Source(str(path))], 2, 1 << 20, min_bytes=0) is None
    assert parallel.plan([Source(str(path))], 1, 1 << 20, min_bytes=0) is None


def test_a_program_running_threads_is_not_forked(tmp_path):
    """A library caller with threads of its own gets a one-core scan: a forked child could inherit
    a lock one of those threads held."""
    import threading

    path = tmp_path / "a.log"
    path.write_bytes(b"x\n" * 10)
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert parallel.plan([Source(str(path))], 2, 4, min_bytes=0, task_chunks=1) is None
    finally:
        stop.set()
        other.join()
    assert parallel.plan([Source(str(path))], 2, 4, min_bytes=0, task_chunks=1) is not None


def test_jobs_come_from_the_environment(monkeypatch):
    monkeypatch.setenv(parallel.JOBS_ENV, "3")
    assert parallel.default_jobs() == 3
    monkeypatch.setenv(parallel.JOBS_ENV, "zero")
    assert 1 <= parallel.default_jobs() <= parallel.MAX_JOBS


LINE = st.one_of(
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"")),
    st.sampled_from([b"NET/IB : No device found.", b"Using network Socket", b"x" * 300, b""]),
)
ENDING = st.sampled_from([b"\n", b"\r\n", b"\r"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    lines=st.lists(st.tuples(LINE, ENDING), max_size=80),
    chunk=st.integers(min_value=1, max_value=64),
    cap=st.integers(min_value=1, max_value=40),
)
def test_spans_yield_exactly_the_blocks_of_a_whole_read(tmp_path_factory, monkeypatch, lines, chunk, cap):
    """Whatever the line endings, over-long lines (cut at a small cap here) and chunk size, the
    blocks of consecutive spans are the blocks of one read, and the counts add up."""
    monkeypatch.setattr("diag.input.sources.MAX_LINE_BYTES", cap)
    # Spans are only ever planned over inputs larger than a paste, which are read as they are; here
    # a small file stands for one, so the whole read must not repair it either (diag.input.paste).
    monkeypatch.setattr("diag.input.sources.PASTE_BYTES", -1)
    path = tmp_path_factory.mktemp("span") / "log"
    path.write_bytes(b"".join(text + end for text, end in lines) + b"tail")
    whole = InputStats(str(path))
    expected = list(read_blocks(Source(str(path)), whole, chunk))
    size = path.stat().st_size
    starts = [Span(0, None)] + [s for off in range(chunk, size, chunk) if (s := resume_state(str(path), off, chunk))]
    got, parts = [], []
    for span, nxt in zip(starts, [*starts[1:], None]):
        stats = InputStats(str(path))
        bounded = Span(span.start, nxt.start if nxt else None, span.carry, span.cut_line)
        got.extend(read_blocks(Source(str(path)), stats, chunk, span=bounded))
        parts.append(stats)
    assert got == expected
    assert sum(p.lines for p in parts) == whole.lines
    assert sum(p.truncated_lines for p in parts) == whole.truncated_lines
    assert sum(p.bytes_read for p in parts) == whole.bytes_read


@pytest.fixture(scope="module")
def job_40m(tmp_path_factory):
    log = tmp_path_factory.mktemp("job") / "job.log"
    subprocess.run([sys.executable, str(ROOT / "bench" / "gen_log.py"), "--size", "40M", "--out", str(log)], check=True)
    return log


def test_a_parallel_scan_from_the_command_line_matches_one_core(job_40m):
    """End to end through the installed command: the JSON report is byte-identical with 1 and 2 jobs."""
    outs = []
    for jobs in ("1", "2"):
        proc = subprocess.run(
            [sys.executable, "-m", "diag", "--format", "json", "--jobs", jobs, str(job_40m)],
            capture_output=True, cwd=ROOT, check=False,
        )  # fmt: skip
        assert proc.returncode == 1, proc.stderr
        outs.append(proc.stdout)
    assert outs[0] == outs[1]
    assert b"ib-devices-not-mounted" in outs[0]


def _workers_of(pid: int) -> list[int]:
    """Child processes of ``pid``, from /proc (a clean machine may have no ps)."""
    children = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as f:
                    fields = f.read().rsplit(")", 1)[-1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                children.append(int(entry))
    return children


@pytest.mark.parametrize("how", ["SIGTERM", "SIGKILL", "Ctrl-C"])
def test_killing_a_parallel_scan_leaves_no_worker_behind(job_40m, how):
    """A time limit kills slurmdiag (an epilog, a CI step): its workers must go with it, and Ctrl-C
    on a terminal (SIGINT to the whole group) ends with one line, not a worker's traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "diag", "--format", "json", "--jobs", "2", "--engine", "python", str(job_40m)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, start_new_session=True,
    )  # fmt: skip
    deadline = time.monotonic() + 20
    while not (workers := _workers_of(proc.pid)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers, "the scan never started its workers"
    if how == "Ctrl-C":
        os.killpg(proc.pid, signal.SIGINT)
    else:
        proc.send_signal(getattr(signal, how))
    _, err = proc.communicate(timeout=30)
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(_alive(w) for w in workers)
    if how == "Ctrl-C":
        assert proc.returncode == 130 and err.strip().endswith(b"slurmdiag: interrupted"), err[-500:]
        assert b"Traceback" not in err


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def test_a_worker_that_dies_falls_back_to_one_core(rules, tmp_path):
    """A worker killed mid-scan (out of memory, a signal) costs time, never the answer."""
    import os

    path = tmp_path / "a.log"
    path.write_bytes(b"host1:1:1 [0] NCCL INFO NET/IB : No device found.\n" * 5000)
    expected = _scan(rules, [str(path)], 1, 4096)
    scanner = Scanner(rules, chunk_bytes=4096, jobs=2)
    scanner.parallel_options = {"min_bytes": 0, "task_chunks": 1}
    main, digest = os.getpid(), scanner.digest_source

    def dies_in_a_worker(*args, **kwargs):
        if os.getpid() != main:
            os._exit(3)
        return digest(*args, **kwargs)

    scanner.digest_source = dies_in_a_worker  # type: ignore[method-assign]
    result = scanner.scan([Source(str(path))])
    assert (result.stats, result.facts, result.inputs) == expected


@pytest.mark.parametrize("density", ["0.02", "0.30"])
def test_a_dense_job_scans_the_same_on_workers_with_and_without_the_core(rules, tmp_path, monkeypatch, density):
    """An NCCL-dense job (ranks changing with every communicator, restarts): the workers' records
    folded again on the apply side by the compiled core (diag.scan.core Keeper) or by Python, and
    one process, find the same counts, samples, hosts and facts."""
    from diag.scan import core

    log = tmp_path / "dense.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--shape", "dense", "--ranks", "64", "--size", "2M",
         "--density", density, "--out", str(log)],
        check=True, capture_output=True,
    )  # fmt: skip
    results = []
    for no_core in ("", "1"):
        monkeypatch.setenv(core.NO_CORE_ENV, no_core)
        results.append(_scan(rules, [str(log)], 2, 64 << 10, min_bytes=0, task_chunks=2))
    results.append(_scan(rules, [str(log)], 1, 64 << 10))
    assert results[0] == results[1] == results[2]
    stats = results[0][0]
    assert sum(s.count for s in stats.values()) > 100


@pytest.mark.parametrize(
    ("loadavg", "busy"),
    [("0.10 0.20 0.30 1/120 999\n", 0), ("3.90 4.10 4.20 5/130 999\n", 4), ("0.0 0.0 0.0 2/50 1\n", 1)],
)
def test_idle_cores_leave_out_those_other_programs_keep_busy(tmp_path, monkeypatch, loadavg, busy):
    """The run queue counts this process too: one running task is an idle machine."""
    monkeypatch.setattr(parallel, "_cores", lambda: 8)
    path = tmp_path / "loadavg"
    path.write_text(loadavg)
    assert parallel.idle_cores(loadavg=str(path)) == 8 - busy
    monkeypatch.setattr(parallel, "_cores", lambda: 2)
    assert parallel.idle_cores(loadavg=str(path)) == max(1, 2 - busy)
    assert parallel.idle_cores(loadavg=str(tmp_path / "missing")) == 2  # not Linux: every core counts


def test_a_busy_machine_scans_on_one_core_unless_told(tmp_path, monkeypatch):
    """The default worker count stops at the idle cores; --jobs and $SLURMDIAG_JOBS are obeyed as given."""
    path = tmp_path / "big.log"
    path.write_bytes(b"a line\n" * 200)
    sources = [Source(str(path))]
    monkeypatch.delenv(parallel.JOBS_ENV, raising=False)
    monkeypatch.setattr(parallel, "_cores", lambda: 4)
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    assert parallel.plan(sources, None, 4, min_bytes=0, task_chunks=1) is None
    assert parallel.plan(sources, 2, 4, min_bytes=0, task_chunks=1).jobs == 2
    monkeypatch.setattr(parallel, "idle_cores", lambda: 3)
    assert parallel.plan(sources, None, 4, min_bytes=0, task_chunks=1).jobs == 3
    monkeypatch.setattr(parallel, "idle_cores", lambda: 1)
    monkeypatch.setenv(parallel.JOBS_ENV, "2")
    assert parallel.plan(sources, None, 4, min_bytes=0, task_chunks=1).jobs == 2


def _count_checks(monkeypatch) -> dict:
    """Count the apply side's checks of the folds workers made assuming (fold.Folder.assume)."""
    checks = {True: 0, False: 0}
    check = parallel.assumption_holds

    def counted(*args):
        held = check(*args)
        checks[held] += 1
        return held

    monkeypatch.setattr(parallel, "assumption_holds", counted)
    return checks


@pytest.mark.parametrize("no_core", ["", "1"])
def test_folds_a_worker_makes_assuming_a_new_process_are_checked_and_redone_where_wrong(
    rules, tmp_path, monkeypatch, no_core
):
    """A worker's span folds the first lines of processes it has seen no rank for as if they had
    none (most are new processes after a restart); where one did have a rank that its rules'
    ranks do not hold yet (64 ranks: those tables are not full), the apply digests that span
    again. Both happen on this log, and the result is one process's."""
    from diag.scan import core

    monkeypatch.setenv(core.NO_CORE_ENV, no_core)
    log = tmp_path / "dense.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--shape", "dense", "--ranks", "64", "--size", "2M",
         "--density", "0.30", "--out", str(log)],
        check=True, capture_output=True,
    )  # fmt: skip
    checks = _count_checks(monkeypatch)
    one = _scan(rules, [str(log)], 1, 64 << 10)
    assert _scan(rules, [str(log)], 2, 64 << 10, min_bytes=0, task_chunks=2) == one
    # Which of two workers takes which span follows their timing (under AddressSanitizer no check
    # failed), and with it which folds a worker makes assuming. One worker taking every span in
    # turn makes both outcomes of the check certain on this log.
    plan = parallel.plan
    monkeypatch.setattr(parallel, "plan", lambda *args, **kwargs: dataclasses.replace(plan(*args, **kwargs), jobs=1))
    checks.update({True: 0, False: 0})
    assert _scan(rules, [str(log)], 2, 64 << 10, min_bytes=0, task_chunks=2) == one
    assert checks[True] and checks[False]


def _process_lines(host: str, pid: int, rank: int | None, comm: int) -> list[str]:
    head = f"{host}:{pid}:{pid} [0] NCCL INFO"
    lines = [
        f"{head} NCCL version 2.28.9+cuda12.9",
        f"{head} NET/IB : No device found.",
        f"{head} Using network Socket",
        f"{head} NCCL_IB_HCA set to mlx5_0",
    ]
    if rank is not None:
        lines.append(f"{head} comm 0x{comm:x} rank {rank} nranks 1024 cudaDev {rank % 8} busId 1000 - Init START")
    return lines


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(
    steps=st.lists(
        st.tuples(st.integers(0, 1), st.integers(0, 5), st.one_of(st.none(), st.integers(0, 1023)), st.integers(0, 3)),
        min_size=1,
        max_size=120,
    ),
    chunk=st.integers(min_value=200, max_value=2000),
    samples=st.integers(min_value=1, max_value=4),
)
def test_processes_that_keep_or_reuse_their_pid_across_spans_scan_the_same_on_workers(
    rules, tmp_path_factory, monkeypatch, steps, chunk, samples
):
    """Processes printing rank-less rule matches (their NCCL version, a missing IB device) before
    and after they take a rank, pids reused on a host, the lines cut into many spans anywhere:
    whatever the workers assume about a process's rank at their span's start, the scan finds what
    one process finds. Few samples per rule, so folds (and the assumption) start early; ranks up
    to 1023, so a process's rank is often missing from its rules' ranks and the check fails."""
    monkeypatch.setattr("diag.scan.scanner.MAX_SAMPLES", samples)
    monkeypatch.setattr("diag.input.sources.PASTE_BYTES", -1)  # a small file read whole is not repaired as a paste
    lines = []
    for n, (node, pid, rank, noise) in enumerate(steps):
        lines += _process_lines(f"node{node}", 100 + pid, rank, 0x1000 + n)
        lines += [f"step {n} loss 1.{noise}"] * noise
    path = tmp_path_factory.mktemp("reuse") / "job.log"
    path.write_text("\n".join(lines) + "\n")
    two = _scan(rules, [str(path)], 2, chunk, min_bytes=0, task_chunks=1)
    assert two == _scan(rules, [str(path)], 1, chunk)
