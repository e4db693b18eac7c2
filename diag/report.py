"""The report: ranked findings plus what was read. ``to_json`` is the versioned public schema."""

from __future__ import annotations

from dataclasses import dataclass, field

from diag import __version__
from diag.catalog.causes import severity_rank
from diag.evidence import Evidence, time_key
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
            "settings": self.settings,
            "references": self.references,
        }


@dataclass
class Report:
    findings: list[Finding]
    inputs: list[InputStats]
    facts: Facts
    problems: list[InputProblem] = field(default_factory=list)
    job: str | None = None
    slurm: list[dict] = field(default_factory=list)  # Slurm's record of the job (slurmdiag job / epilog)
    notes: list[str] = field(default_factory=list)  # where Slurm and the logs disagree, budget cuts

    def top(self) -> Finding | None:
        return self.findings[0] if self.findings else None

    def summary(self) -> str:
        top = self.top()
        if top is None:
            if not any(i.bytes_read or i.lines for i in self.inputs):
                return "nothing could be read"
            return "no known problem found"
        where = _where(top)
        return f"{top.severity.upper()}: {top.title}{where}"

    def to_json(self) -> dict:
        return {
            "schema": SCHEMA,
            "tool": {"name": "slurmdiag", "version": __version__},
            "job": self.job,
            "summary": self.summary(),
            "findings": [f.to_json() for f in self.findings],
            "facts": self.facts.to_json(),
            "inputs": [i.to_json() for i in self.inputs],
            "problems": [{"path": p.path, "reason": p.reason} for p in self.problems],
            "slurm": self.slurm or None,
            "notes": self.notes,
        }


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
