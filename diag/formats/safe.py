"""Make untrusted log text safe to print: no escape sequences, no control characters."""

from __future__ import annotations

import re

from diag.input.framing import strip_ansi

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str) -> str:
    """Strip ANSI sequences, then show any other control character as a visible escape."""
    text = strip_ansi(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)


SLURM_FIELDS = (("name", "name"), ("user", "user"), ("partition", "partition"), ("state", "state"),
                ("exit code", "exit_code"), ("start", "start_time"), ("end", "end_time"))  # fmt: skip


def slurm_fields(report, keys: tuple[str, ...] | None = None) -> list[tuple[str, str]]:
    """Who and which job, from Slurm's record (slurmdiag job / epilog): (label, value) pairs, safe
    text; the job id leads each label when the report holds several jobs (a het job)."""
    out: list[tuple[str, str]] = []
    for job in report.slurm[:2]:
        prefix = f"{job.get('job_id')} " if len(report.slurm) > 1 else ""
        for label, key in SLURM_FIELDS:
            value = job.get(key)
            if (keys is None or key in keys) and value not in (None, ""):
                out.append((prefix + label, safe_text(str(value))))
    return out


def slurm_lines(report) -> list[str]:
    """Slurm's record of the job and the report's notes, as plain text lines safe for any output."""
    out = [f"slurm: {safe_text(j.get('record') or j.get('job_id', ''))}" for j in report.slurm]
    out += [f"note: {safe_text(n)}" for n in report.notes]
    return out


def coverage_lines(report) -> list[str]:
    """What kinds of evidence the report rests on and which causes it could not check (plain text)."""
    coverage = getattr(report, "coverage", None)
    return [safe_text(line) for line in coverage.lines()] if coverage else []
