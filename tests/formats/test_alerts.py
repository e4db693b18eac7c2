"""Alerts worth a channel: a short action that names the setting, the first error, who and which
job (Slurm's record), where the full report is, and no post at all for a healthy job."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from diag.api import diagnose_job
from diag.catalog.model import _PLACEHOLDER, fill_action
from diag.formats.chat import _first_sentence, build_alert, render_chat
from diag.formats.html import render_html
from diag.formats.markdown import render_markdown
from diag.slurm.query import parse_scontrol

from ..conftest import CORPUS, ROOT
from ..reports import CASES, corpus_report
from .test_webhook import SECRET, hook  # noqa: F401 - the fixture

SLURM_DATA = ROOT / "tests" / "data" / "slurm"


def test_every_rule_has_a_short_one_line_action(rules):
    for rule in rules.rules:
        assert rule.action, rule.id
        assert len(rule.action) <= 200 and "\n" not in rule.action, rule.id
        # Placeholders sit in parentheses, so an unknown value drops a clause, not half a sentence.
        bare = re.sub(r"\([^()]*\)", "", rule.action)
        assert not _PLACEHOLDER.search(bare), (rule.id, rule.action)
        empty = fill_action(rule.action, {})
        assert "{" not in empty.replace("$((", "") and "<hosts>" not in empty and ".." not in empty, (rule.id, empty)


def test_fill_action_fills_known_values_and_drops_unknown_clauses():
    template = "Drain the node (nodename={hosts}) and resubmit excluding it (--exclude={hosts})"
    assert fill_action(template, {"hosts": "n1,n2"}) == (
        "Drain the node (nodename=n1,n2) and resubmit excluding it (--exclude=n1,n2)"
    )
    assert fill_action(template, {}) == "Drain the node and resubmit excluding it"


@pytest.mark.parametrize("case", CASES)
def test_summary_fix_is_the_whole_action_never_a_cut(case):
    report = corpus_report(case)
    text = render_chat(report, "summary")
    top = report.top()
    if top is None:
        return
    assert top.action, top.id
    fix = next(line for line in text.splitlines() if line.startswith("  fix:"))
    assert fix == f"  fix:   {top.action}"
    for line in text.splitlines():
        if line.startswith(("  fix:", "  where:", "✖", "‼", "▲", "ℹ")):
            assert ".." not in line, line


def test_first_sentence_keeps_abbreviations_parentheses_and_code_whole():
    assert _first_sentence("Put it on the parallel file system, e.g. /pfs. Then rerun.") == (
        "Put it on the parallel file system, e.g. /pfs."
    )
    assert _first_sentence("The job set mlx5_0:1,mlx5_1:1.. Set it right.") == "The job set mlx5_0:1,mlx5_1:1."
    assert _first_sentence("Use `a.b. c` (see x. y) now; later more.") == "Use `a.b. c` (see x. y) now."


def _slurm_report(rules):
    jobs = parse_scontrol((SLURM_DATA / "task-nonzero-exit.scontrol.txt").read_text())
    logs = [str(SLURM_DATA / "task-fail-28.out"), str(SLURM_DATA / "task-fail-28.err")]
    return diagnose_job(jobs, rules, job_id="28", extra_paths=logs)


def test_alerts_carry_slurm_record_notes_first_error_and_report_path(rules):
    report = _slurm_report(rules)
    assert report.notes, "Slurm says COMPLETED while a task failed: a note"
    alert = build_alert(report, report_url="/pfs/reports/28.html")
    labels = dict(alert.slurm)
    assert labels["name"] == "task-fail" and labels["user"] == "root" and labels["partition"] == "debug"
    assert labels["state"] == "COMPLETED" and labels["exit code"] == "0:0"
    assert alert.first_error and alert.what
    for fmt in ("slack", "teams", "mattermost", "summary"):
        blob = render_chat(report, fmt, report_url="/pfs/reports/28.html")
        for needle in ("task-fail", "debug", "COMPLETED", "/pfs/reports/28.html", alert.fix[:40]):
            assert needle in blob, (fmt, needle)
        assert report.notes[0][:40] in blob.replace("\\", ""), fmt


def test_html_and_markdown_show_slurm_record_and_notes(rules):
    report = _slurm_report(rules)
    page = render_html(report)
    markdown = render_markdown(report)
    for text in (page, markdown):
        for needle in (
            "COMPLETED",
            "task-fail",
            "<dt>partition</dt><dd>debug</dd>" if text is page else "| partition | debug |",
        ):
            assert needle in text, needle
    assert report.notes[0][:30].replace("'", "&#x27;") in page
    assert report.notes[0][:30] in markdown


def _cli(url: str, case: str, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "SLURMDIAG_WEBHOOK": url, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    return subprocess.run([sys.executable, "-m", "diag", str(CORPUS / case), *args], capture_output=True, env=env,
                          timeout=60)  # fmt: skip


def test_no_alert_is_posted_for_a_healthy_job(hook):  # noqa: F811
    h = hook()
    proc = _cli(h.url(), "syn-healthy-ib-gdr")
    assert proc.returncode == 0
    assert not h.requests
    assert b"not posted" in proc.stderr


def test_notify_on_sets_the_threshold(hook):  # noqa: F811
    warning_only = "syn-gdr-disabled-no-peermem-one-node"
    assert corpus_report(warning_only).top().severity == "warning"
    h = hook()
    _cli(h.url(), warning_only)
    assert not h.requests, "a warning is below the default (error)"
    _cli(h.url(), warning_only, "--notify-on", "warning")
    _cli(h.url(), warning_only, "--min-severity", "warning")
    assert len(h.requests) == 2


def test_posted_alert_names_the_action_and_the_report_file(hook, tmp_path):  # noqa: F811
    h = hook()
    out = tmp_path / "report.html"
    proc = _cli(h.url(), "syn-ib-not-mounted-one-node", "--format", "html", "-o", str(out))
    assert proc.returncode == 1 and len(h.requests) == 1
    payload = json.loads(h.requests[0]["body"])
    fields = {f["title"]: f["value"] for f in payload["attachments"][0]["fields"]}
    assert "--container-mounts=/dev/infiniband:/dev/infiniband" in fields["Fix"]
    assert str(out) in fields["Report"].replace("\\", "")
    assert SECRET.encode() not in proc.stdout + proc.stderr
