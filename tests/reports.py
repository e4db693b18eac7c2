"""Corpus cases diagnosed once per test session, for the report-format tests."""

from __future__ import annotations

import functools

from diag.api import diagnose_paths, load_rules
from diag.report import Report
from diag.slurm.jobid import guess_job_id

from .conftest import case_logs, corpus_cases

CASES = [c.name for c in corpus_cases()]


@functools.cache
def _rules():
    return load_rules()


@functools.cache
def corpus_report(name: str) -> Report:
    from .conftest import CORPUS

    logs = case_logs(CORPUS / name)
    reports, _ = diagnose_paths(logs, _rules())
    report = reports[0]
    report.job = guess_job_id(logs)
    return report
