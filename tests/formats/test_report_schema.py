"""The published JSON Schema of slurmdiag.report/1 describes what --format json prints: every corpus
report, a Slurm-record report and an empty one validate; ISO times carry a year."""

from __future__ import annotations

import json

import pytest

from diag.api import diagnose_bytes, diagnose_job
from diag.formats import report_schema
from diag.slurm.query import parse_scontrol

from ..conftest import ROOT
from ..reports import CASES, corpus_report

jsonschema = pytest.importorskip("jsonschema")
VALIDATOR = jsonschema.Draft202012Validator(report_schema())
SLURM_DATA = ROOT / "tests" / "data" / "slurm"


def _errors(data: dict) -> list[str]:
    return [f"{list(e.path)}: {e.message}" for e in VALIDATOR.iter_errors(data)][:5]


def test_the_schema_is_a_valid_json_schema():
    jsonschema.Draft202012Validator.check_schema(report_schema())


@pytest.mark.parametrize("case", CASES)
def test_every_corpus_report_validates(case):
    data = json.loads(json.dumps(corpus_report(case).to_json()))
    assert not _errors(data)


def test_slurm_record_report_validates(rules):
    jobs = parse_scontrol((SLURM_DATA / "task-nonzero-exit.scontrol.txt").read_text())
    logs = [str(SLURM_DATA / "task-fail-28.out"), str(SLURM_DATA / "task-fail-28.err")]
    data = diagnose_job(jobs, rules, job_id="28", extra_paths=logs).to_json()
    assert data["slurm"] and data["slurm"][0]["partition"] == "debug"
    assert not _errors(data)


def test_a_report_that_breaks_the_contract_is_caught(rules):
    data = diagnose_bytes(b"sbatch: error: invalid partition specified: gpu\n", rules).to_json()
    assert not _errors(data)
    data["findings"][0]["severity"] = "fatal"
    del data["summary"]
    assert len(_errors(data)) == 2


def test_times_without_a_year_get_one_from_the_job(rules):
    log = (
        b"[2026-12-02 11:14:30] job starting\n"
        b"E1202 11:14:33.189526546 696 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
        b"local_rank: 0 (pid: 717) of binary: /usr/bin/python\n"
        b"slurmstepd: error: *** JOB 26 ON n1 CANCELLED AT 2026-12-02T11:14:40 ***\n"
    )
    data = diagnose_bytes(log, rules).to_json()
    assert not _errors(data)
    times = {e["timestamp"]: e.get("time") for f in data["findings"] for e in f["evidence"] if "timestamp" in e}
    assert times["1202 11:14:33.189526546"] == "2026-12-02T11:14:33.189527"


def test_times_are_not_guessed_without_a_year(rules):
    log = (
        b"E1202 11:14:33.189526546 696 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
        b"local_rank: 0 (pid: 717) of binary: /usr/bin/python\n"
    )
    data = diagnose_bytes(log, rules).to_json()  # in memory: no file time, no ISO stamp, no Slurm record
    evidence = [e for f in data["findings"] for e in f["evidence"]]
    assert evidence and all("time" not in e for e in evidence)
