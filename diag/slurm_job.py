"""Diagnose a job by its Slurm id: its files as one job, with Slurm's record as evidence."""

from __future__ import annotations

import os
from collections.abc import Sequence

from diag.diagnosis import evaluate
from diag.report import Report
from diag.rules import RuleSet
from diag.scan import Scanner
from diag.slurm import JobInfo, job_files
from diag.slurm_facts import apply_job, record_text
from diag.sources import InputProblem, Source
from diag.textsafe import safe_text

MIB = 1 << 20


def diagnose_job(
    jobs: Sequence[JobInfo],
    rules: RuleSet,
    *,
    job_id: str | None = None,
    extra_paths: Sequence[str] = (),
    max_bytes_per_file: int | None = None,
) -> Report:
    """One report for the job whose records are ``jobs`` (several for a het job)."""
    files, missing = job_files(jobs)
    files += [p for p in extra_paths if p not in files]
    problems = [
        InputProblem(p, "Slurm names this output file, but it is not there (or not visible here)") for p in missing
    ]
    sources = [Source(path, max_bytes=max_bytes_per_file) for path in files]
    scan = Scanner(rules).scan(sources)
    # Slurm's node count makes the job multi-node even when its logs never say so.
    scan.facts.slurm_nodes = max(scan.facts.slurm_nodes, sum(j.num_nodes for j in jobs))
    findings, notes = apply_job(evaluate(rules, scan), jobs, rules)
    report = Report(
        findings=findings,
        inputs=scan.inputs,
        facts=scan.facts,
        problems=problems,
        job=job_id or jobs[0].job_id,
        slurm=[j.to_json() for j in jobs],
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


def budget_bytes(paths: Sequence[str], seconds: float, bytes_per_second: float) -> int | None:
    """``max_bytes_per_file`` that keeps reading ``paths`` within ``seconds`` at the given rate;
    None when everything fits."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            continue
    allowed = int(seconds * bytes_per_second)
    if sum(sizes) <= allowed or not sizes:
        return None
    # Give every file an equal share; a file under its share leaves the rest to the others.
    sizes.sort()
    remaining, left = allowed, len(sizes)
    for size in sizes:
        share = remaining // left
        if size > share:
            return max(share, 64 * 1024)
        remaining -= size
        left -= 1
    return None


def slurm_lines(report: Report) -> list[str]:
    """Slurm's record and the notes, as plain text lines (safe for a terminal and Markdown)."""
    out = [f"slurm: {safe_text(record_text_from_json(j))}" for j in report.slurm]
    out += [f"note: {safe_text(n)}" for n in report.notes]
    return out


def record_text_from_json(job: dict) -> str:
    info = JobInfo(
        job_id=job.get("job_id", ""),
        state=job.get("state", ""),
        reason=job.get("reason", ""),
        exit_code=job.get("exit_code", ""),
        derived_exit_code=job.get("derived_exit_code") or "",
        run_time=job.get("run_time", ""),
        time_limit=job.get("time_limit", ""),
        node_list=job.get("node_list", ""),
        restarts=job.get("restarts", 0),
    )
    return record_text(info)
