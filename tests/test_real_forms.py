"""Real message forms, gathered from public threads outside corpus/wild: the few lines a user pastes when
asking "what is this?", exactly as pasted, each with the cause its thread (or the printing software's source)
tied it to. Every one recorded here must still name that cause first, or, for a line the thread calls
harmless in a run that worked, raise nothing at error. The forms the tool still misses are counted in README
("Real forms"), not kept here: a test of a miss could only assert the miss."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diag.api import diagnose_bytes
from diag.catalog.causes import CAUSE_IDS, severity_rank

FORMS_FILE = Path(__file__).parent / "data" / "real_forms.jsonl"
HEALTHY = "healthy"


def _records() -> list[dict]:
    return [json.loads(line) for line in FORMS_FILE.read_text(encoding="utf-8").splitlines() if line.strip()]


RECORDS = _records()


def test_every_record_is_sourced_and_labelled_with_a_known_cause():
    for record in RECORDS:
        assert record["source"].startswith("https://"), record
        assert record["cause"] in CAUSE_IDS or record["cause"] == HEALTHY, record
        assert 1 <= len(record["lines"]) <= 6, record


@pytest.mark.parametrize("record", RECORDS, ids=[f"{r['cause']}-{n}" for n, r in enumerate(RECORDS)])
def test_real_form_names_its_cause(record: dict):
    report = diagnose_bytes(("\n".join(record["lines"]) + "\n").encode())
    if record["cause"] == HEALTHY:
        loud = [f.id for f in report.findings if severity_rank(f.severity) >= severity_rank("error")]
        assert not loud, f"{record['source']}: a harmless line raised {loud}"
    else:
        ids = [f.id for f in report.findings]
        assert ids[:1] == [record["cause"]], f"{record['source']}: {ids} for {record['lines']}"
