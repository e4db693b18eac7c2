"""Prometheus text exposition for node_exporter's textfile collector: one series per finding and
node, so a cluster can graph fallbacks and failures per node over time.

Written by an epilog to ``<textfile dir>/slurmdiag-<job>.prom`` (see README). Every series carries
the job label, so files of many jobs merge without clashing.
"""

from __future__ import annotations

import time

from diag.catalog.causes import SEVERITIES
from diag.report import Report

METRICS = (
    ("slurmdiag_finding", "gauge", "A finding slurmdiag reported for a job: 1 per finding and node it names."),
    ("slurmdiag_findings_total", "gauge", "Number of findings in the job's report, by severity."),
    ("slurmdiag_scan_duration_seconds", "gauge", "Seconds slurmdiag took to read and diagnose the job's logs."),
    ("slurmdiag_log_lines", "gauge", "Log lines slurmdiag read for the job."),
    ("slurmdiag_report_timestamp_seconds", "gauge", "When the report was written (Unix time)."),
)


def escape_label(value: str) -> str:
    """Label value escaping of the text exposition format: backslash, double quote, line feed."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _labels(**labels: str) -> str:
    return "{" + ",".join(f'{k}="{escape_label(v)}"' for k, v in labels.items()) + "}"


def render_prometheus(reports: list[Report], duration_s: float = 0.0, now: float | None = None) -> str:
    now = time.time() if now is None else now
    samples: dict[str, list[str]] = {name: [] for name, _, _ in METRICS}
    seen: set[str] = set()
    for report in reports:
        job = report.job or (report.inputs[0].path if report.inputs else "unknown")
        for f in report.findings:
            for node in f.hosts or [""]:
                line = "slurmdiag_finding" + _labels(job=job, id=f.id, severity=f.severity, role=f.role, node=node)
                if line not in seen:  # one series per label set, as the format requires
                    seen.add(line)
                    samples["slurmdiag_finding"].append(f"{line} 1")
        for sev in SEVERITIES:
            n = sum(1 for f in report.findings if f.severity == sev)
            samples["slurmdiag_findings_total"].append(f"slurmdiag_findings_total{_labels(job=job, severity=sev)} {n}")
        lines = sum(i.lines for i in report.inputs)
        samples["slurmdiag_scan_duration_seconds"].append(
            f"slurmdiag_scan_duration_seconds{_labels(job=job)} {duration_s:.6f}"
        )
        samples["slurmdiag_log_lines"].append(f"slurmdiag_log_lines{_labels(job=job)} {lines}")
        samples["slurmdiag_report_timestamp_seconds"].append(
            f"slurmdiag_report_timestamp_seconds{_labels(job=job)} {now:.3f}"
        )
    out = []
    for name, kind, help_text in METRICS:
        out += [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}", *samples[name]]
    return "\n".join(out) + "\n"
