"""The library API the CLI, the epilog, tests and other programs call: one pipeline.

paths or a Slurm job -> sources -> scan -> diagnosis (-> Slurm's verdict merged) -> ranked Report.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from diag.catalog.load import load_rules as load_catalog
from diag.catalog.model import RuleSet
from diag.diagnosis.analyzers import check
from diag.diagnosis.coverage import assess
from diag.diagnosis.cues import INFO_LEVELS
from diag.diagnosis.evaluate import evaluate, rank
from diag.input.framing import frame_fields
from diag.input.paste import PASTE_BYTES
from diag.input.sources import CHUNK_BYTES, InputProblem, MemorySource, Source, discover
from diag.report import Report
from diag.scan.facts import Facts
from diag.scan.scanner import Scanner, ScanResult
from diag.slurm.jobid import group_by_job, guess_job_id

MIB = 1 << 20


def load_rules(extra_dirs: Iterable[str] = (), disabled: Iterable[str] = ()) -> RuleSet:
    """The rule catalogue (built-in, ``$SLURMDIAG_RULES``, ``extra_dirs``), checked against the analyzers.

    Raises :class:`diag.catalog.model.RuleError` naming the file and field of a bad rule."""
    rules = load_catalog(extra_dirs, disabled)
    check(rules.rules)
    return rules


def _scan(
    sources: Sequence[Source], rules: RuleSet, chunk_bytes: int, engine: str, jobs: int | None, sample: bool = False
) -> ScanResult:
    return Scanner(rules, chunk_bytes, engine, jobs, sample_errors=sample).scan(sources)


def _report(scan: ScanResult, findings: list, job: str | None, rules: RuleSet, **extra) -> Report:
    job = job or guess_job_id(i.path for i in scan.inputs)
    report = Report(findings=findings, inputs=scan.inputs, facts=scan.facts, job=job, **extra)
    report.error_sample = scan.error_sample.items()
    if not findings:
        # A line its program printed as information (NCCL INFO: a retry, a probe that failed) is no error.
        report.unrecognised = [
            e for e in scan.error_sample.evidence() if frame_fields(e.text)[7] not in INFO_LEVELS
        ][:MAX_UNRECOGNISED]
    report.coverage = assess(scan.facts, findings, rules.ids(), bool(report.slurm))
    return report


def diagnose_sources(
    sources: Sequence[Source],
    rules: RuleSet,
    job: str | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    engine: str = "auto",
    expect_busbw: float | None = None,
    jobs: int | None = None,
    sample_errors: bool = False,
) -> Report:
    """``jobs``: worker processes for large inputs (None: ``$SLURMDIAG_JOBS`` or the usable cores).
    ``sample_errors``: fill ``Report.error_sample`` (what a fleet record keeps of an unexplained job)."""
    scan = _scan(sources, rules, chunk_bytes, engine, jobs, sample_errors or _excerpt(sources))
    return _report(scan, evaluate(rules, scan, expect_busbw=expect_busbw), job, rules)


# Error-looking lines no rule knows, shown when nothing was found: at most this many.
MAX_UNRECOGNISED = 8


def _excerpt(sources: Sequence[Source]) -> bool:
    """Whether the input is the size of a paste (standard input counts: what is piped in usually
    is): its error-looking lines that no rule knows are then sampled, so that a report with no
    finding shows them instead of an all-clear (the sampling is bounded; see diag.scan.sample)."""
    total = 0
    for source in sources:
        if source.is_stdin:
            return True
        data = getattr(source, "data", None)
        try:
            total += len(data) if data is not None else os.stat(source.path).st_size
        except OSError:
            continue
    return total <= PASTE_BYTES


def diagnose_paths(
    paths: Iterable[str],
    rules: RuleSet,
    *,
    per_file: bool = False,
    job: str | None = None,
    engine: str = "auto",
    expect_busbw: float | None = None,
    jobs: int | None = None,
) -> tuple[list[Report], list[InputProblem]]:
    """One report per Slurm job at ``paths`` (one per file with ``per_file``), and the inputs that
    could not even be found. Every report carries those problems too.

    Files whose names carry different job ids (``slurm-123.out``, ``train-124_4.err``) are
    different jobs: each gets its own report, so one job's failure is never told as the cause or
    the consequence of another's. Files without an id join the only job, or get a report of their
    own beside several. ``job`` (the user names one job) reads everything as that one job."""
    found = discover(paths)
    sources = list(found.sources)
    if per_file:
        groups = [(None, [s]) for s in sources]
    elif job:
        groups = [(job, sources)]
    else:
        groups = [(jid, [sources[i] for i in idx]) for jid, idx in group_by_job([s.path for s in sources])]
    reports = [
        diagnose_sources(group, rules, job or jid, engine=engine, expect_busbw=expect_busbw, jobs=jobs)
        for jid, group in groups
        if group
    ]
    for report in reports:
        report.problems = list(found.problems)
    return reports, found.problems


def diagnose(
    paths: Iterable[str],
    *,
    rule_dirs: Iterable[str] = (),
    disabled: Iterable[str] = (),
    rules: RuleSet | None = None,
    per_file: bool = False,
    job: str | None = None,
    expect_busbw: float | None = None,
    engine: str = "auto",
    jobs: int | None = None,
) -> list[Report] | Report:
    """Diagnose the logs at ``paths`` as one job: a Report; a list of Reports with ``per_file``, or
    when the file names carry several job ids (one per job; ``job`` reads them all as one job).

    Raises :class:`diag.catalog.model.RuleError` for a bad rule file. Input problems (missing files,
    unreadable gzip...) never raise: they are listed in ``Report.problems``.
    """
    rules = rules or load_rules(rule_dirs, disabled)
    reports, problems = diagnose_paths(
        paths, rules, per_file=per_file, job=job, expect_busbw=expect_busbw, engine=engine, jobs=jobs
    )
    if per_file or len(reports) > 1:
        return reports
    return reports[0] if reports else Report(findings=[], inputs=[], facts=Facts(), problems=problems, job=job)


def diagnose_bytes(
    data: bytes | Sequence[bytes],
    rules: RuleSet | None = None,
    *,
    names: Sequence[str] | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    engine: str = "auto",
) -> Report:
    """Diagnose logs already in memory (one bytes object, or several files of one job)."""
    blobs = [data] if isinstance(data, (bytes, bytearray)) else list(data)
    names = names or [f"<memory-{i}>" for i in range(len(blobs))]
    sources = [MemorySource(n, bytes(b)) for n, b in zip(names, blobs)]
    return diagnose_sources(sources, rules or load_rules(), chunk_bytes=chunk_bytes, engine=engine)


def diagnose_job(
    jobs: Sequence,
    rules: RuleSet,
    *,
    job_id: str | None = None,
    extra_paths: Sequence[str] = (),
    max_bytes_per_file: int | None = None,
    sample_errors: bool = False,
) -> Report:
    """One report for the Slurm job whose records are ``jobs`` (:class:`diag.slurm.query.JobInfo`,
    several for a het job): its files as one job, with Slurm's verdict merged in as evidence.
    ``sample_errors`` as for :func:`diagnose_sources`."""
    from diag.slurm.query import job_files
    from diag.slurm.verdict import apply_job, slurm_record

    files, missing = job_files(jobs)
    files += [p for p in extra_paths if p not in files]
    problems = [
        InputProblem(p, "Slurm names this output file, but it is not there (or not visible here)") for p in missing
    ]
    scan = _scan(
        [Source(path, max_bytes=max_bytes_per_file) for path in files], rules, CHUNK_BYTES, "auto", None, sample_errors
    )
    # Slurm's node count makes the job multi-node even when its logs never say so.
    scan.facts.slurm_nodes = max(scan.facts.slurm_nodes, sum(j.num_nodes for j in jobs))
    findings, notes = apply_job(evaluate(rules, scan), jobs, rules)
    report = _report(
        scan,
        rank(findings, rules.by_id()),
        job_id or jobs[0].job_id,
        rules,
        problems=problems,
        slurm=[slurm_record(j) for j in jobs],
        notes=notes,
    )
    for stats in scan.inputs:
        if stats.skipped_bytes:
            report.notes.append(
                f"{stats.path}: over the time budget, only its first and last {max_bytes_per_file // 2 / MIB:.1f} MiB "
                f"were read ({stats.skipped_bytes / MIB:.1f} MiB in the middle skipped; line numbers after the gap "
                "count from the gap)."
            )
    if not files:
        report.notes.append("Slurm names no output file that exists here: the diagnosis rests on Slurm's record alone.")
    return report
