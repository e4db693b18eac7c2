"""``slurmdiag fleet scan --since T0 --until T1``: the jobs that ended in a window, from one bulk
``sacct`` query per array task (never one query per job: slurmdbd serves the whole cluster).

``sacct --json`` first (21.08+, with Slurm's serializer/json plugin): a job name or path with a
``|`` in it cannot shift its columns, and it carries array and het ids, node lists and times as
fields. Where it does not answer (older Slurm, plugin missing) ``sacct -P`` does. Each job's files
are found as ``slurmdiag job`` finds them (``StdOut``/``StdErr`` from Slurm 23.02, else
``slurm-%j.out`` in ``WorkDir``, plus the job's other logs beside them).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from diag.api import diagnose_job
from diag.catalog.model import RuleSet
from diag.fleet.archive import Unit, sacct_json_jobs
from diag.fleet.record import slurm_meta
from diag.input.sources import SCAN_BYTES_PER_SECOND, budget_bytes
from diag.slurm.query import (
    JobInfo,
    Runner,
    SlurmError,
    fill_from_parsable,
    job_files,
    parse_sacct_parsable,
    run_command,
    run_sacct_parsable,
)  # fmt: skip

FIELDS = (
    "JobIDRaw,JobID,JobName,User,Account,Partition,State,ExitCode,DerivedExitCode,Reason,NodeList,NNodes,"
    "Timelimit,Elapsed,Start,End,WorkDir"
)
IO_FIELDS = ",StdOut,StdErr"  # sacct 23.02+; older ones say "Invalid field" and they are dropped
# A window scan wants finished jobs; one still running (or requeued) is scanned by a later window.
UNFINISHED = ("PENDING", "RUNNING", "REQUEUED", "RESIZING", "SUSPENDED", "COMPLETING", "CONFIGURING")


SACCT_FORMS = ("auto", "json", "parsable")


def sacct_window(
    since: str, until: str, runner: Runner = run_command, clusters: str | None = None, form: str = "auto"
) -> list[JobInfo]:
    """Every job (allocation, not steps) that ended between ``since`` and ``until``, all users.
    ``form``: ``auto`` (JSON where this sacct has it, else -P), ``json`` (no fallback: an error if it
    fails) or ``parsable`` (-P only: 22.05's JSON is ~3 KB a job, -P ~0.2 KB; for big windows)."""
    base = ["sacct", "-a", "-X", "-S", since, "-E", until]
    if clusters:
        base += ["-M", clusters]
    jobs = _json_window(base, runner) if form != "parsable" else None
    if jobs is None and form == "json":
        raise SlurmError(f"{' '.join([*base, '--json'])}: no JSON answer (see --sacct auto|parsable)")
    if jobs is None:
        jobs = _parsable_window(base, runner)
    return [j for j in jobs if "." not in j.job_id and j.base_state not in UNFINISHED]


def _json_window(base: list[str], runner: Runner) -> list[JobInfo] | None:
    """``sacct --json``'s jobs, or None where this sacct cannot say it in JSON."""
    rc, out, _err = runner([*base, "--json"])
    if rc != 0 or not out.lstrip().startswith("{"):
        return None  # before 21.08: unrecognized option; without serializer/json: a plugin error
    try:
        data = json.loads(out)
        if data.get("errors") and not data.get("jobs"):
            return None  # -P will say what is wrong in its own words
        jobs = sacct_json_jobs(out)
    except (ValueError, TypeError, AttributeError, KeyError):
        return None
    fill_from_parsable(jobs, runner, base)  # exit codes and users 22.05's JSON gets wrong
    return jobs


def _parsable_window(base: list[str], runner: Runner) -> list[JobInfo]:
    fields, rc, out, err = run_sacct_parsable(runner, [*base, "-P"], FIELDS + IO_FIELDS)
    if rc != 0:
        first = next((line for line in (err or out).splitlines() if line.strip()), f"exit {rc}")
        raise SlurmError(f"{' '.join([*base, '-P'])}: {first.strip()[:200]}")
    return parse_window(out, fields)


def parse_window(text: str, fields: str) -> list[JobInfo]:
    """``sacct -P`` output with or without its header line; ``raw`` keeps Account and Partition."""
    names = fields.split(",")
    lines = [line for line in text.splitlines() if line.strip()]
    if lines and lines[0].split("|")[: len(names)] == names[: len(lines[0].split("|"))]:
        lines = lines[1:]  # the header sacct prints without -n
    lines = ["|".join(_columns(line, names)) for line in lines]  # a '|' in a job name, joined back
    jobs = parse_sacct_parsable("\n".join(lines), fields)
    for job, line in zip(jobs, lines):
        job.raw = {k: v.replace("\x00", "|") for k, v in zip(names, line.split("|"))}
        job.name = job.name.replace("\x00", "|")
        if job.job_id.endswith("+0"):  # a het job's leader is its plain id, as scontrol and JSON say
            job.job_id = job.job_id[:-2]
    return jobs


def _columns(line: str, names: list[str]) -> list[str]:
    """``sacct -P`` does not quote: a job named ``train|lr=0.1`` gives one column too many. The extra
    ones belong to the job name (the free text people put '|' in; elsewhere they cannot be placed),
    held together by a NUL until the line is split."""
    parts = line.split("|")
    extra = len(parts) - len(names)
    if extra <= 0 or "JobName" not in names:
        return parts
    at = names.index("JobName")
    return [*parts[:at], "\x00".join(parts[at : at + extra + 1]), *parts[at + extra + 1 :]]


def window_units(jobs: Sequence[JobInfo], rules: RuleSet) -> Iterator[Unit]:
    for job in jobs:
        yield Unit(job.job_id, lambda seconds, job=job: _diagnose(job, rules, seconds), lambda job=job: _meta(job))


def _diagnose(job: JobInfo, rules: RuleSet, seconds: float):
    files, _missing = job_files([job])
    max_bytes = budget_bytes(files, max(seconds * 0.8, 0.5), SCAN_BYTES_PER_SECOND)
    return diagnose_job([job], rules, job_id=job.job_id, max_bytes_per_file=max_bytes, sample_errors=True)


def _meta(job: JobInfo) -> dict[str, object]:
    return slurm_meta([job])
