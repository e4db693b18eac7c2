"""SARIF 2.1.0: findings as static-analysis results, for CI systems and code-scanning dashboards.

One run for all reports given; its ``tool.driver.rules`` are the rule ids the findings name (with
the rule's title, fix and first reference), each result points at its evidence lines as
``file:line``. Evidence that is not a file line (Slurm's record from ``scontrol``) is left out of
the locations, never invented. Severity maps to SARIF's level: critical/error -> error,
warning -> warning, info -> note.
"""

from __future__ import annotations

import json
import os
import urllib.parse

from diag import __version__
from diag.formats.safe import safe_text
from diag.report import Finding, Report

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVEL = {"critical": "error", "error": "error", "warning": "warning", "info": "note"}
MAX_LOCATIONS = 10  # the first evidence lines; the rest are counted in properties.count


def _uri(path: str) -> str:
    """A URI reference for a log path: relative paths stay relative (CI checkouts), absolute ones
    become file:// URIs; spaces and other reserved characters are percent-encoded."""
    if os.path.isabs(path):
        return "file://" + urllib.parse.quote(path)
    return urllib.parse.quote(path.replace(os.sep, "/"))


def _rule(f: Finding) -> dict:
    rule = {
        "id": f.id,
        "name": "".join(part.capitalize() for part in f.id.split("-")),
        "shortDescription": {"text": safe_text(f.title)},
        # The one-line action first (what a code-scanning view shows), then the full remediation.
        "help": {"text": safe_text(f"{f.action}\n\n{f.remediation}" if f.action else f.remediation)},
        "defaultConfiguration": {"level": LEVEL[f.severity]},
        "properties": {"role": f.role},
    }
    if f.references:
        rule["helpUri"] = f.references[0]
    return rule


def _location(ev) -> dict:
    region: dict = {"startLine": ev.line} if ev.line >= 1 else {}
    if region:
        region["snippet"] = {"text": safe_text(ev.text.strip())}
    physical: dict = {"artifactLocation": {"uri": _uri(ev.path)}}
    if region:
        physical["region"] = region
    return {"physicalLocation": physical}


def _result(f: Finding, rule_index: int, report: Report) -> dict:
    locations = [_location(ev) for ev in f.evidence if ev.order[0] >= 0][:MAX_LOCATIONS]
    message = f"{safe_text(f.title)}: {safe_text(f.detail)}"
    if f.action:
        message += f" Fix: {safe_text(f.action)}"
    properties: dict = {"severity": f.severity, "confidence": round(f.confidence, 2), "role": f.role,
                        "count": f.count}  # fmt: skip
    if report.job:
        properties["job"] = safe_text(report.job)
    for key in ("hosts", "ranks"):
        if getattr(f, key):
            properties[key] = getattr(f, key)
    if f.explained_by:
        properties["explained_by"] = f.explained_by
    result = {"ruleId": f.id, "ruleIndex": rule_index, "level": LEVEL[f.severity], "message": {"text": message},
              "properties": properties}  # fmt: skip
    if locations:
        result["locations"] = locations
    return result


def render_sarif(reports: list[Report]) -> str:
    rules: list[dict] = []
    index: dict[str, int] = {}
    results = []
    for report in reports:
        for f in report.findings:
            if f.id not in index:
                index[f.id] = len(rules)
                rules.append(_rule(f))
            results.append(_result(f, index[f.id], report))
    artifacts = sorted({i.path for r in reports for i in r.inputs})
    run = {
        "tool": {"driver": {"name": "slurmdiag", "version": __version__, "rules": rules}},
        "artifacts": [{"location": {"uri": _uri(p)}} for p in artifacts],
        "results": results,
    }
    sarif = {"$schema": SARIF_SCHEMA, "version": "2.1.0", "runs": [run]}
    return json.dumps(sarif, indent=2, ensure_ascii=False) + "\n"
