"""``slurmdiag fleet scan --since T0 --until T1``: the jobs that ended in a window, from one bulk
``sacct`` query per array task (never one query per job: slurmdbd serves the whole cluster).

Each job's files are found as ``slurmdiag job`` finds them (``StdOut``/``StdErr`` from Slurm 23.02,
else ``slurm-%j.out`` in ``WorkDir``, plus the job's other logs beside them).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from diag.api import diagnose_job
from diag.catalog.model import RuleSet
from diag.fleet.archive import Unit
from diag.fleet.record import slurm_meta
from diag.input.sources import SCAN_BYTES_PER_SECOND, budget_bytes
from diag.slurm.query import JobInfo, Runner, SlurmError, job_files, parse_sacct_parsable, run_command

FIELDS = (
    "JobIDRaw,JobID,JobName,User,Account,Partition,State,ExitCode,DerivedExitCode,Reason,NodeList,NNodes,"
    "Timelimit,Elapsed,Start,End,WorkDir,Restarts"
)
IO_FIELDS = ",StdOut,StdErr"  # sacct 23.02+; older ones say "Invalid field"
# A window scan wants finished jobs; one still running (or requeued) is scanned by a later window.
UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED", "COMPLETING", "CONFIGURING")


def sacct_window(since: str, until: str, runner: Runner = run_command, clusters: str | None = None) -> list[JobInfo]:
    """Every job (allocation, not steps) that ended between ``since`` and ``until``, all users."""
    base = ["sacct", "-a", "-X", "-P", "-S", since, "-E", until]
    if clusters:
        base += ["-M", clusters]
    fields = FIELDS + IO_FIELDS
    rc, out, err = runner([*base, "-o", fields])
    if rc != 0 and "invalid field" in (err + out).lower():
        fields = FIELDS
        rc, out, err = runner([*base, "-o", fields])
    if rc != 0:
        first = next((line for line in (err or out).splitlines() if line.strip()), f"exit {rc}")
        raise SlurmError(f"{' '.join(base)}: {first.strip()[:200]}")
    return parse_window(out, fields)


def parse_window(text: str, fields: str) -> list[JobInfo]:
    """``sacct -P`` output with or without its header line; ``raw`` keeps Account and Partition."""
    names = fields.split(",")
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].split("|")[: len(names)] == names[: len(lines[0].split("|"))]:
        lines = lines[1:]  # the header sacct prints without -n
    jobs = parse_sacct_parsable("\n".join(lines), fields)
    for job, line in zip(jobs, lines):
        job.raw = dict(zip(names, line.split("|")))
    return [j for j in jobs if "." not in j.job_id and j.base_state not in UNFINISHED]


def window_units(jobs: Sequence[JobInfo], rules: RuleSet) -> Iterator[Unit]:
    for job in jobs:
        yield Unit(job.job_id, lambda seconds, job=job: _diagnose(job, rules, seconds), lambda job=job: _meta(job))


def _diagnose(job: JobInfo, rules: RuleSet, seconds: float):
    files, _missing = job_files([job])
    max_bytes = budget_bytes(files, max(seconds * 0.8, 0.5), SCAN_BYTES_PER_SECOND)
    return diagnose_job([job], rules, job_id=job.job_id, max_bytes_per_file=max_bytes, sample_errors=True)


def _meta(job: JobInfo) -> dict[str, object]:
    return slurm_meta([job])
