"""The report: ranked findings plus what was read. ``to_json`` is the versioned public schema."""

from __future__ import annotations

from dataclasses import dataclass, field

from diag import __version__
from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule, fill, fill_action
from diag.evidence import Evidence, anchor_of, iso_time, time_key
from diag.input.sources import InputProblem, InputStats
from diag.scan.facts import Facts

SCHEMA = "slurmdiag.report/1"


@dataclass
class Finding:
    id: str
    title: str
    severity: str
    role: str
    confidence: float
    detail: str  # one sentence: what was seen, with the values from the log
    remediation: str
    hosts: list[str] = field(default_factory=list)
    ranks: list[int] = field(default_factory=list)
    tasks: list[int] = field(default_factory=list)  # srun task ids (SLURM_PROCID) from --label prefixes
    evidence: list[Evidence] = field(default_factory=list)
    settings: list[str] = field(default_factory=list)
    references: list[str] = field(default_factory=list)
    explains: list[str] = field(default_factory=list)  # ids of findings folded under this one
    explained_by: str | None = None
    count: int = 0  # matching lines in all
    assumed: list[str] = field(default_factory=list)  # what the finding took for granted that the logs did not show
    action: str = ""  # one imperative line for alerts (the rule's action, filled); "" when the rule has none

    def first_order(self) -> tuple[int, int]:
        return min((e.order for e in self.evidence), default=(1 << 30, 0))

    def first_time(self) -> tuple:
        """When its first evidence line was printed, where lines carry a wall-clock time; findings
        without one sort after those with one (their place in time is unknown)."""
        times = [t for e in self.evidence if (t := time_key(e.timestamp)) is not None]
        return min(times) if times else (99,)

    def sort_key(self) -> tuple:
        return (-severity_rank(self.severity), -self.confidence, self.first_order(), self.id)

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "title": self.title,
            "severity": self.severity,
            "role": self.role,
            "confidence": round(self.confidence, 2),
            "detail": self.detail,
            "assumed": self.assumed,
            "explains": self.explains,
            "explained_by": self.explained_by,
            "hosts": self.hosts,
            "ranks": self.ranks,
            "tasks": self.tasks,
            "count": self.count,
            "evidence": [e.to_json() for e in self.evidence],
            "remediation": self.remediation,
            "action": self.action or None,
            "settings": self.settings,
            "references": self.references,
        }


# Kinds of evidence a report can rest on, in the order reports list them, and how they are named.
EVIDENCE_KINDS = {
    "nccl_info": "NCCL INFO lines",
    "slurm_messages": "Slurm messages",  # srun, sbatch, salloc, slurmstepd lines
    "slurm_record": "Slurm record",  # slurmdiag job / epilog: scontrol or sacct
    "launcher": "launcher output",  # torchrun, torch.distributed, mpirun
}


@dataclass
class Unchecked:
    """Causes that could not be checked because one kind of evidence was missing, and how to get it."""

    missing: str  # a key of EVIDENCE_KINDS
    causes: list[str]
    how: str  # the setting or step that would let them be checked

    def to_json(self) -> dict:
        return {"missing": self.missing, "causes": self.causes, "how": self.how}

    def line(self) -> str:
        label = EVIDENCE_KINDS.get(self.missing, self.missing)
        return f"not checked without {label}: {', '.join(self.causes)}; {self.how}"


@dataclass
class Coverage:
    """What the report could see: which kinds of evidence the input held, and what that leaves unchecked.

    An all-clear means "none of the checked causes"; this says which causes were not among them."""

    present: dict[str, bool] = field(default_factory=dict)  # EVIDENCE_KINDS key -> seen
    unchecked: list[Unchecked] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)  # every cause id checked for (JUnit's test cases); not in JSON

    def to_json(self) -> dict:
        return {"evidence": dict(self.present), "unchecked": [u.to_json() for u in self.unchecked]}

    def evidence_line(self) -> str:
        seen = [EVIDENCE_KINDS.get(k, k) for k, v in self.present.items() if v]
        absent = [EVIDENCE_KINDS.get(k, k) for k, v in self.present.items() if not v]
        parts = ["evidence read: " + (", ".join(seen) if seen else "none of the kinds slurmdiag knows")]
        if absent:
            parts.append("missing: " + ", ".join(absent))
        return "; ".join(parts)

    def lines(self) -> list[str]:
        """Plain text, one line per fact: what was present, then each group of unchecked causes."""
        return [self.evidence_line(), *(u.line() for u in self.unchecked)]


def finding_from_rule(
    rule: Rule,
    *,
    confidence: float,
    detail: str,
    evidence: list[Evidence],
    values: dict[str, str],
    hosts: list[str] | None = None,
    action_values: dict[str, str] | None = None,
) -> Finding:
    """A finding that a record outside the logs proves (Slurm's JobState, a probe's report): the rule's
    text with ``values`` filled in (``action_values`` for the alert's one-line action, if they differ)."""
    return Finding(
        id=rule.id,
        title=rule.title,
        severity=rule.severity,
        role=rule.role,
        confidence=confidence,
        detail=detail,
        remediation=fill(rule.remediation.strip(), values),
        action=fill_action(rule.action, action_values or values) if rule.action else "",
        hosts=hosts or [],
        evidence=evidence,
        settings=[fill(s, values) for s in rule.settings],
        references=list(rule.references),
        count=len(evidence),
    )


@dataclass
class Report:
    findings: list[Finding]
    inputs: list[InputStats]
    facts: Facts
    problems: list[InputProblem] = field(default_factory=list)
    job: str | None = None
    slurm: list[dict] = field(default_factory=list)  # Slurm's record of the job (slurmdiag job / epilog)
    notes: list[str] = field(default_factory=list)  # where Slurm and the logs disagree, budget cuts
    coverage: Coverage | None = None  # what kinds of evidence were read; None: not assessed
    # (payload, host, times) of error lines no rule knows, when the scan sampled them (the fleet's
    # producers ask for it); never part of the report's own outputs.
    error_sample: list[tuple[str, str | None, int]] = field(default_factory=list)
    # Error-looking lines no rule knows, in file order, when nothing was found in an input the size
    # of a paste: the honest "no known cause" instead of an all-clear.
    unrecognised: list[Evidence] = field(default_factory=list)

    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    def summary(self) -> str:
        top = self.top()
        if top is None:
            if not any(i.bytes_read or i.lines for i in self.inputs):
                return "nothing could be read"
            if self.unrecognised:
                n = len(self.unrecognised)
                return f"no known problem found; {n} line{'s' if n > 1 else ''} no rule knows look{'' if n > 1 else 's'} like errors"
            return "no known problem found"
        where = _where(top)
        return f"{top.severity.upper()}: {top.title}{where}"

    def _findings_json(self) -> list[dict]:
        """Findings as JSON; each evidence line with a wall-clock stamp also gets ``time``, the
        stamp as ISO 8601 with a year (``timestamp`` keeps the text as the log printed it)."""
        out = [f.to_json() for f in self.findings]
        if not any(e.timestamp for f in self.findings for e in f.evidence):
            return out
        anchor = _time_anchor(self)
        for f, data in zip(self.findings, out):
            for e, ev_json in zip(f.evidence, data["evidence"]):
                time = iso_time(e.timestamp, anchor)
                if time:
                    ev_json["time"] = time
        return out

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "tool": {"name": "slurmdiag", "version": __version__},
            "job": self.job,
            "summary": self.summary(),
            "findings": self._findings_json(),
            "facts": self.facts.to_json(),
            "inputs": [i.to_json() for i in self.inputs],
            "problems": [{"path": p.path, "reason": p.reason} for p in self.problems],
            "slurm": self.slurm or None,
            "notes": self.notes,
            "coverage": self.coverage.to_json() if self.coverage else None,
            "unrecognised": [e.to_json() for e in self.unrecognised],
        }


def _time_anchor(report: Report):
    """A datetime with a year from the job itself, to date stamps printed without one: an ISO or
    epoch stamp of an evidence line, Slurm's start/end time, else the newest input file's time."""
    import os
    import re
    from datetime import datetime

    for f in report.findings:
        for e in f.evidence:
            anchor = anchor_of(e.timestamp)
            if anchor is not None:
                return anchor
    # A dated time inside a line (Slurm's "CANCELLED AT 2026-12-02T11:08:40").
    for f in report.findings:
        for e in f.evidence:
            m = re.search(r"\b(?:19|20)\d\d-\d\d-\d\d[T ]\d\d:\d\d:\d\d\b", e.text)
            anchor = anchor_of(m[0]) if m else None
            if anchor is not None:
                return anchor
    for job in report.slurm:
        for key in ("start_time", "end_time"):
            anchor = anchor_of(str(job.get(key) or ""))
            if anchor is not None:
                return anchor
    mtimes = []
    for i in report.inputs:
        try:
            mtimes.append(os.stat(i.path).st_mtime)
        except (OSError, ValueError):
            continue
    return datetime.fromtimestamp(max(mtimes)) if mtimes else None


def _where(f: Finding) -> str:
    parts = []
    if f.hosts:
        parts.append("on " + ", ".join(f.hosts[:4]) + (" …" if len(f.hosts) > 4 else ""))
    if f.ranks:
        parts.append("rank " + ", ".join(str(r) for r in f.ranks[:6]) + (" …" if len(f.ranks) > 6 else ""))
    elif f.tasks:
        parts.append("task " + ", ".join(str(r) for r in f.tasks[:6]) + (" …" if len(f.tasks) > 6 else ""))
    return (" (" + "; ".join(parts) + ")") if parts else ""


def where(f: Finding) -> str:
    return _where(f).strip(" ()")
