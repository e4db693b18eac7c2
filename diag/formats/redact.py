"""Redaction: mask what must never leave the cluster in an alert (tokens, keys, e-mail addresses and,
on request, IP addresses and host names) in every piece of log-derived text of a report.

Patterns favour masking too much over too little: a redacted alert is still useful, a leaked token
is not. Host names are replaced by stable pseudonyms (``[host-1]``...) so "the odd node" survives.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable

from diag.report import Finding, Report

MASK = "[REDACTED]"

# Order matters: specific shapes first, so a generic rule does not eat half of a specific match.
_SECRET_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    # Authorization: Bearer xyz / Authorization: Basic xyz (header dumps, curl -v)
    (
        re.compile(r"(?i)(\bauthorization\s*[:=]\s*)(?:(bearer|basic|token)\s+)?[^\s,;'\"]+"),
        lambda m: m[1] + (m[2] + " " if m[2] else "") + MASK,
    ),
    (re.compile(r"(?i)(\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"), r"\1" + MASK),
    (re.compile(r"https://hooks\.slack\.com/\S+"), "https://hooks.slack.com/" + MASK),
    (re.compile(r"(?i)(\b[a-z][a-z0-9+.-]*://)[^\s/:@]+:[^\s/@]+@"), r"\1" + MASK + "@"),  # URL credentials
    (re.compile(r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)[0-9A-Z]{16}\b"), MASK),  # AWS access key ids
    (re.compile(r"\bhf_[A-Za-z0-9]{30,}\b"), MASK),  # Hugging Face
    (re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b"), MASK),  # GitHub
    (re.compile(r"\bxox[abprse]-[A-Za-z0-9-]{10,}"), MASK),  # Slack
    (re.compile(r"\bsk-[A-Za-z0-9_-]{20,}"), MASK),  # OpenAI-style API keys
    # NAME=value / NAME: value where NAME ends in a secret-ish word (HF_TOKEN, WANDB_API_KEY,
    # aws_secret_access_key, DB_PASSWORD, password=...). Quoted values are masked whole.
    (
        re.compile(
            r"(?i)(\b(?:[a-z0-9]+[_.-])*(?:token|api[_-]?key|access[_-]?key|secret[_-]?key|key|secret|password|passwd"
            r"|pwd|credentials?)\b[\"']?\s*(?:=|:|\s+set\s+by\s+environment\s+to\s+)\s*)(\"[^\"]*\"|'[^']*'|[^\s,;'\"]+)"
        ),
        r"\1" + MASK,
    ),
    (re.compile(r"\b[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}\b"), "[email]"),
)

_IPV4 = re.compile(r"(?<![\d.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\d.]*\d)")
# Full 8-group form, or a compressed form with '::' and at least one hex group after it (so C++
# scopes like ``c10d::ProcessGroup`` and times like ``10:49:31`` are left alone).
_IPV6 = re.compile(
    r"(?<![\w:])(?:(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}"
    r"|(?:[0-9a-fA-F]{1,4}(?::[0-9a-fA-F]{1,4})*)?::(?:[0-9a-fA-F]{1,4}:)*(?:[0-9a-fA-F]{1,4}|\d+\.\d+\.\d+\.\d+))(?![\w:])"
)
_SECRET_NAME = re.compile(r"(?i)(?:token|key|secret|password|passwd|pwd|credential)s?$")


class Redactor:
    """Masks secrets (always) and hosts/IPs (``hosts=True``) in text; counts what it masked."""

    def __init__(self, hosts: bool = False, known_hosts: Iterable[str] = ()) -> None:
        self.hosts = hosts
        self.count = 0
        names = sorted({h for h in known_hosts if h})
        self.pseudonyms = {name: f"[host-{i}]" for i, name in enumerate(names, 1)}
        self._host_re = None
        if hosts and names:
            # Longest first so "node1" does not eat the front of "node10"; whole names only, a
            # domain suffix (node1.cluster.local) goes with the name.
            alts = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
            self._host_re = re.compile(rf"(?<![\w.-])({alts})(?:\.[A-Za-z][\w-]*)*(?![\w-])")

    def _sub(self, pattern: re.Pattern[str], repl, text: str) -> str:
        new, n = pattern.subn(repl, text)
        self.count += n
        return new

    def text(self, text: str | None) -> str | None:
        if not text:
            return text
        for pattern, repl in _SECRET_PATTERNS:
            text = self._sub(pattern, repl, text)
        if self.hosts:
            if self._host_re is not None:
                text = self._sub(self._host_re, lambda m: self.pseudonyms[m[1]], text)
            text = self._sub(_IPV6, "[ip]", text)
            text = self._sub(_IPV4, "[ip]", text)
        return text

    def host(self, name: str | None) -> str | None:
        if name is None or not self.hosts:
            return name
        if name in self.pseudonyms:
            self.count += 1
            return self.pseudonyms[name]
        return self.text(name)

    def env_value(self, var: str, value: str) -> str:
        if _SECRET_NAME.search(var):
            self.count += 1
            return MASK
        return self.text(value) or value


def _finding(f: Finding, r: Redactor) -> Finding:
    evidence = [
        dataclasses.replace(e, text=r.text(e.text), path=r.text(e.path), host=r.host(e.host)) for e in f.evidence
    ]
    return dataclasses.replace(
        f,
        detail=r.text(f.detail),
        remediation=r.text(f.remediation),
        action=r.text(f.action) or "",
        settings=[r.text(s) for s in f.settings],
        hosts=[r.host(h) for h in f.hosts],
        evidence=evidence,
    )


def _slurm_entry(entry: dict, r: Redactor) -> dict:
    out = {}
    for key, value in entry.items():
        if isinstance(value, str):
            out[key] = r.text(value)
        elif isinstance(value, list):
            out[key] = [r.host(v) if isinstance(v, str) else v for v in value]
        else:
            out[key] = value
    return out


def redact_report(report: Report, hosts: bool = False) -> tuple[Report, int]:
    """A copy of ``report`` with every log-derived string redacted, and how many items were masked."""
    known = set(report.facts.hosts) | {h for f in report.findings for h in f.hosts}
    known |= {e.host for f in report.findings for e in f.evidence if e.host}
    known |= set(report.facts.slurm_task_hosts) | set(report.facts.host_of_rank.values())
    known |= {h for j in report.slurm for h in j.get("nodes") or []}
    r = Redactor(hosts=hosts, known_hosts=known)
    findings = [_finding(f, r) for f in report.findings]
    facts = copy.deepcopy(report.facts)
    facts.env = {var: [r.env_value(var, v) for v in values] for var, values in facts.env.items()}
    for hf in facts.hosts.values():
        hf.env = {var: r.env_value(var, v) for var, v in hf.env.items()}
    if hosts:
        renamed = {}
        for name, hf in facts.hosts.items():
            hf.host = r.host(name) or name
            renamed[hf.host] = hf
        facts.hosts = renamed
        facts.slurm_task_hosts = {r.host(h) or h for h in facts.slurm_task_hosts}
        facts.host_of_rank = {k: r.host(v) or v for k, v in facts.host_of_rank.items()}
        facts.rank_of_process = {(r.host(h) or h, pid): rank for (h, pid), rank in facts.rank_of_process.items()}
    inputs = [dataclasses.replace(i, path=r.text(i.path) or i.path) for i in report.inputs]
    problems = [dataclasses.replace(p, path=r.text(p.path) or p.path) for p in report.problems]
    job = r.text(report.job) if report.job else report.job
    # Slurm's record and the notes go into alerts too: the same masking as the log text.
    slurm = [_slurm_entry(j, r) for j in report.slurm]
    notes = [r.text(n) or n for n in report.notes]
    out = dataclasses.replace(
        report, findings=findings, facts=facts, inputs=inputs, problems=problems, job=job, slurm=slurm, notes=notes
    )
    return out, r.count
