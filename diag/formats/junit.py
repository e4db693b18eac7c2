"""JUnit XML: one test case per cause slurmdiag checked, so a CI job's test view shows the job's
health cause by cause.

A finding at or above ``error`` is a ``<failure>``; a lower one passes with its text in
``<system-out>``; a cause the logs gave no evidence kind for (see the report's coverage) is
``<skipped>`` with the reason, never a silent pass. Without coverage (a report built by hand)
only the causes found are listed.
"""

from __future__ import annotations

import re
from xml.sax.saxutils import escape, quoteattr

from diag.catalog.causes import severity_rank
from diag.formats.safe import safe_text
from diag.report import EVIDENCE_KINDS, Finding, Report, where

FAIL_AT = "error"
_NOT_XML = re.compile("[\ud800-\udfff\ufffe\uffff]")  # XML 1.0 forbids these even escaped


def _x(text: str) -> str:
    return escape(_NOT_XML.sub("\ufffd", safe_text(text)))


def _a(text: str) -> str:
    return quoteattr(_NOT_XML.sub("\ufffd", safe_text(text)))


def _body(f: Finding) -> str:
    lines = [f"{f.severity.upper()}: {f.title} [{f.id}]", f"what: {f.detail}"]
    if where(f):
        lines.append(f"where: {where(f)}")
    lines.append(f"fix: {f.action or f.remediation}")
    lines += [f"set: {s}" for s in f.settings]
    lines += [f"{ev.path}:{ev.line}: {ev.text.strip()}" for ev in f.evidence[:10]]
    return "\n".join(lines)


def _suite(report: Report) -> tuple[str, int, int, int]:
    """One <testsuite> and its (tests, failures, skipped)."""
    by_id: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_id.setdefault(f.id, []).append(f)
    skipped: dict[str, str] = {}
    ids = list(by_id)
    if report.coverage is not None:
        for u in report.coverage.unchecked:
            for cause in u.causes:
                skipped[cause] = f"not checked: no {EVIDENCE_KINDS.get(u.missing, u.missing)}; {u.how}"
        ids = sorted(set(report.coverage.rules) | set(by_id))
    name = (
        f"slurmdiag: job {report.job}" if report.job else "slurmdiag: " + ", ".join(i.path for i in report.inputs[:3])
    )
    cases, failures = [], 0
    for cause in ids:
        head = f'    <testcase classname="slurmdiag" name={_a(cause)}'
        found = by_id.get(cause)
        if found:
            worst = max(found, key=lambda f: severity_rank(f.severity))
            text = _x("\n\n".join(_body(f) for f in found))
            if severity_rank(worst.severity) >= severity_rank(FAIL_AT):
                failures += 1
                message = _a(f"{worst.severity.upper()}: {worst.title}")
                cases.append(f"{head}>\n      <failure message={message} type={_a(worst.severity)}>{text}</failure>\n"
                             "    </testcase>")  # fmt: skip
            else:
                cases.append(f"{head}>\n      <system-out>{text}</system-out>\n    </testcase>")
        elif cause in skipped:
            cases.append(f"{head}>\n      <skipped message={_a(skipped[cause])}/>\n    </testcase>")
        else:
            cases.append(f"{head}/>")
    n_skipped = sum(1 for c in ids if c in skipped and c not in by_id)
    suite = (
        f'  <testsuite name={_a(name)} tests="{len(ids)}" failures="{failures}" errors="0" '
        f'skipped="{n_skipped}">\n' + "\n".join(cases) + "\n  </testsuite>"
    )
    return suite, len(ids), failures, n_skipped


def render_junit(reports: list[Report]) -> str:
    suites = [_suite(r) for r in reports]
    tests = sum(s[1] for s in suites)
    failures = sum(s[2] for s in suites)
    skipped = sum(s[3] for s in suites)
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<testsuites name="slurmdiag" tests="{tests}" failures="{failures}" errors="0" skipped="{skipped}">\n'
        + "\n".join(s[0] for s in suites)
        + "\n</testsuites>\n"
    )
