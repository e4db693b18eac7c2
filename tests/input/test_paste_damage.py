"""Paste damage never changes the answer: every bundled case whose log is small enough to be pasted
keeps its top finding after the damage real pastes show (issue threads, chat, terminal copies)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from diag.api import diagnose_bytes
from diag.damage import DAMAGES

from ..conftest import case_logs, corpus_cases

_HOST = re.compile(rb"\b(?:node|gpu|slinky|host|compute|dgx|worker)[-_]?\d+[\w-]*\b")


# Every kind of damage slurmdiag eval --damage applies (diag.damage), on the bundled cases.
DAMAGE = {d.name: d.apply for d in DAMAGES}


def _pasteable() -> list[tuple[str, bytes, str]]:
    cases = []
    for case in corpus_cases():
        expected = yaml.safe_load((case / "expected.yaml").read_text())
        logs = case_logs(case)
        top = expected.get("top")
        if not top or len(logs) != 1:
            continue
        data = Path(logs[0]).read_bytes()
        if len(data) <= 200_000:
            cases.append((case.name, data, top, expected.get("expected") or []))
    return cases


@pytest.fixture(scope="module")
def pasteable(rules):
    kept = []
    for name, data, top, expected in _pasteable():
        found = diagnose_bytes(data, rules).findings
        if found and found[0].id == top:  # tests/test_corpus.py holds each case to its label
            kept.append((name, data, top, expected))
    assert len(kept) >= 50
    return kept


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_paste_damage_keeps_the_top_finding(damage, pasteable, rules):
    changed = []
    for name, data, top, _ in pasteable:
        found = diagnose_bytes(DAMAGE[damage](data), rules).findings
        got = found[0].id if found else None
        if got != top:
            changed.append(f"{name}: {top} -> {got}")
    assert not changed, f"{damage} changed {len(changed)} of {len(pasteable)}: {changed[:5]}"


def test_hosts_redacted_to_one_placeholder_raise_no_false_alarm(pasteable, rules):
    """Redaction destroys what tells nodes apart (a mismatch between nodes, the one node that failed),
    so the answer may become less specific (a symptom, or no cause), never a cause the log does not
    support."""
    wrong = []
    for name, data, top, expected in pasteable:
        found = diagnose_bytes(_HOST.sub(b"xxxxx", data), rules).findings
        got = found[0] if found else None
        if got is not None and got.role != "symptom" and got.id not in (top, "unexplained-failure", *expected):
            wrong.append(f"{name}: {top} -> {got.id}")
    assert not wrong, wrong[:5]
