"""The library API the CLI, tests and other programs call."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from diag.diagnosis import evaluate
from diag.facts import Facts
from diag.report import Report
from diag.rules import RuleSet, load_rules
from diag.scan import Scanner
from diag.sources import CHUNK_BYTES, InputProblem, MemorySource, Source, discover


def diagnose_sources(
    sources: Sequence[Source],
    rules: RuleSet,
    job: str | None = None,
    chunk_bytes: int = CHUNK_BYTES,
    engine: str = "auto",
    expect_busbw: float | None = None,
    jobs: int | None = None,
) -> Report:
    """``jobs``: worker processes for large inputs (None: ``$SLURMDIAG_JOBS`` or the usable cores)."""
    scan = Scanner(rules, chunk_bytes, engine, jobs).scan(sources)
    findings = evaluate(rules, scan, expect_busbw=expect_busbw)
    return Report(findings=findings, inputs=scan.inputs, facts=scan.facts, job=job)


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
    """One report for the job at ``paths`` (one per file with ``per_file``), and the inputs that
    could not even be found. Every report carries those problems too."""
    found = discover(paths)
    groups = [[s] for s in found.sources] if per_file else [found.sources]
    reports = [
        diagnose_sources(group, rules, job, engine=engine, expect_busbw=expect_busbw, jobs=jobs)
        for group in groups
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
    """Diagnose the logs at ``paths`` as one job (or one report per file with ``per_file``).

    Raises :class:`diag.rules.RuleError` for a bad rule file. Input problems (missing files,
    unreadable gzip...) never raise: they are listed in ``Report.problems``.
    """
    rules = rules or load_rules(rule_dirs, disabled)
    reports, problems = diagnose_paths(
        paths, rules, per_file=per_file, job=job, expect_busbw=expect_busbw, engine=engine, jobs=jobs
    )
    if per_file:
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
