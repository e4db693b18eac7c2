"""--format prometheus: text exposition lines node_exporter's textfile collector accepts."""

from __future__ import annotations

import re

import pytest

from diag.formats.prometheus import escape_label, render_prometheus

from ..reports import CASES, corpus_report

NAME = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
LABEL = r'[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\[\\"n])*"'
SAMPLE = re.compile(
    rf"^(?P<name>{NAME})(?:\{{(?P<labels>{LABEL}(?:,{LABEL})*)\}})? (?P<value>[-+0-9.eE]+|NaN|[+-]Inf)$"
)


def parse(text: str) -> list[tuple[str, dict[str, str], float]]:
    """A strict reader of the exposition format: HELP and TYPE once per family, before its samples."""
    assert text.endswith("\n")
    samples, typed, helped = [], {}, set()
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name = line.split()[2]
            assert name not in helped
            helped.add(name)
        elif line.startswith("# TYPE "):
            _, _, name, kind = line.split()
            assert kind in ("gauge", "counter", "untyped") and name not in typed
            typed[name] = kind
        else:
            m = SAMPLE.match(line)
            assert m, f"not an exposition line: {line!r}"
            assert m["name"] in typed and m["name"] in helped
            labels = dict(re.findall(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"', m["labels"] or ""))
            samples.append((m["name"], labels, float(m["value"])))
    keys = [(n, tuple(sorted(lab.items()))) for n, lab, _ in samples]
    assert len(keys) == len(set(keys)), "duplicate series"
    return samples


@pytest.mark.parametrize("case", CASES)
def test_every_corpus_report_exports_its_findings_per_node(case):
    report = corpus_report(case)
    samples = parse(render_prometheus([report], duration_s=0.25, now=1.7e9))
    findings = [s for s in samples if s[0] == "slurmdiag_finding"]
    expected = {(f.id, f.severity, h) for f in report.findings for h in (f.hosts or [""])}
    assert {(lab["id"], lab["severity"], lab["node"]) for _, lab, _ in findings} == expected
    assert all(v == 1 for _, _, v in findings)
    totals = {lab["severity"]: v for n, lab, v in samples if n == "slurmdiag_findings_total"}
    assert sum(totals.values()) == len(report.findings)
    assert ("slurmdiag_scan_duration_seconds", {"job": report.job or report.inputs[0].path}, 0.25) in samples


def test_label_values_are_escaped():
    report = corpus_report("syn-ib-not-mounted-one-node")
    report = type(report)(**{**report.__dict__, "job": 'a"b\\c\nd'})
    text = render_prometheus([report])
    parse(text)
    assert 'job="a\\"b\\\\c\\nd"' in text
    assert escape_label('x"\\\n') == 'x\\"\\\\\\n'
