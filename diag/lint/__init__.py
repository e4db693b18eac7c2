"""Preflight: read an sbatch script before it runs and name the causes it would meet.

Each check is the ``lint:`` twin of a diagnosis rule (same cause id, so ``slurmdiag explain ID``
shows both sides); findings are :class:`diag.report.Finding` with the script's ``file:line`` as
evidence, so every report format and exit code works unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence

from diag.catalog.causes import severity_rank
from diag.catalog.model import RuleSet
from diag.evidence import MAX_EVIDENCE_TEXT, Evidence
from diag.input.sources import InputStats
from diag.lint.checks import CHECKS
from diag.lint.context import Hit, LintContext
from diag.lint.profile import SiteProfile
from diag.lint.script import parse_script
from diag.report import Finding, Report
from diag.scan.facts import Facts

UNCERTAIN_FACTOR = 0.6  # "may be wrong": what the script alone cannot settle
COMMAND_LINE = "<command line>"


class LintError(Exception):
    """The script cannot be read (one line for the user)."""


def lint_text(path: str, text: str, rules: RuleSet, overrides: Sequence[str] = (),
              profile: SiteProfile | None = None) -> Report:  # fmt: skip
    """The report on the script ``text`` (shown as ``path``), ``overrides`` as sbatch arguments."""
    script = parse_script(path, text, list(overrides))
    ctx = LintContext(script, profile)
    findings = []
    for rule in rules.rules:
        if rule.lint is None or rule.lint.check not in CHECKS:
            continue
        hits = CHECKS[rule.lint.check](ctx)
        if hits:
            findings.append(_finding(rule, hits, ctx, overrides))
    findings.sort(key=Finding.sort_key)
    stats = InputStats(path, bytes_read=len(text.encode()), lines=len(script.lines))
    facts = Facts()
    facts.slurm_nodes = ctx.nodes or 0
    return Report(findings=findings, inputs=[stats], facts=facts)


def lint_file(path: str, rules: RuleSet, overrides: Sequence[str] = (), profile: SiteProfile | None = None) -> Report:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as exc:
        raise LintError(f"{path}: {exc.strerror or exc}") from None
    return lint_text(path, text, rules, overrides, profile)


def _finding(rule, hits: list[Hit], ctx: LintContext, overrides: Sequence[str]) -> Finding:
    advice = all(h.advice for h in hits)
    certain = any(h.certain for h in hits)
    if advice:
        severity, role, confidence = "info", "advice", rule.confidence
    elif certain:
        severity, role, confidence = rule.severity, rule.role, rule.confidence
    else:
        severity = "warning" if severity_rank(rule.severity) >= severity_rank("warning") else rule.severity
        role, confidence = rule.role, rule.confidence * UNCERTAIN_FACTOR
    shown = [h for h in hits if h.certain == certain or advice] or hits
    shown.sort(key=lambda h: min(h.lines, default=0))  # the detail names what the first evidence line shows
    evidence = []
    for hit in shown:
        for line in hit.lines or [0]:
            if line:
                evidence.append(Evidence(ctx.script.path, line, ctx.text(line)[:MAX_EVIDENCE_TEXT], (0, line)))
            else:
                evidence.append(Evidence(COMMAND_LINE, 0, " ".join(overrides)[:MAX_EVIDENCE_TEXT], (1, 0)))
    evidence = sorted(set(evidence), key=Evidence.file_order)
    detail = shown[0].detail + (f" (and {len(shown) - 1} more)" if len(shown) > 1 else "")
    assumed = list(dict.fromkeys(a for h in shown for a in h.assumed)) if not certain else []
    return Finding(
        id=rule.id, title=rule.title, severity=severity, role=role, confidence=confidence, detail=detail,
        remediation=rule.lint.text, evidence=evidence, settings=list(rule.settings),
        references=list(rule.references), count=len(shown), assumed=assumed,
    )  # fmt: skip
