"""SARIF 2.1.0 and JUnit XML, the formats CI systems read: valid by the official SARIF schema for
every corpus case, and saying in each format what the other formats say."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest

from diag.api import diagnose_bytes
from diag.catalog.causes import severity_rank
from diag.formats.junit import render_junit
from diag.formats.sarif import render_sarif

from ..conftest import ROOT
from ..reports import CASES, corpus_report

jsonschema = pytest.importorskip("jsonschema")
SARIF_SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-schema-2.1.0.json").read_text())
VALIDATOR = jsonschema.Draft4Validator(SARIF_SCHEMA)


@pytest.mark.parametrize("case", CASES)
def test_sarif_of_every_corpus_case_is_valid_sarif_2_1_0(case):
    report = corpus_report(case)
    sarif = json.loads(render_sarif([report]))
    errors = sorted(VALIDATOR.iter_errors(sarif), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors[:5]]
    run = sarif["runs"][0]
    assert len(run["results"]) == len(report.findings)
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {f.id for f in report.findings}


def test_sarif_results_carry_level_help_and_file_line_locations():
    report = corpus_report("syn-ib-not-mounted-one-node")
    run = json.loads(render_sarif([report]))["runs"][0]
    rules = {r["id"]: r for r in run["tool"]["driver"]["rules"]}
    top = run["results"][0]
    assert top["ruleId"] == "ib-devices-not-mounted" and top["level"] == "error"
    assert "--container-mounts=/dev/infiniband:/dev/infiniband" in rules[top["ruleId"]]["help"]["text"]
    assert rules[top["ruleId"]]["helpUri"].startswith("https://")
    first = report.top().evidence[0]
    loc = top["locations"][0]["physicalLocation"]
    assert loc["artifactLocation"]["uri"].endswith(first.path.rsplit("/", 1)[-1])
    assert loc["region"]["startLine"] == first.line
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    for f in report.findings:
        assert levels[f.id] == {"critical": "error", "error": "error", "warning": "warning", "info": "note"}[f.severity]


def test_sarif_uri_of_a_path_with_spaces_is_encoded(rules):
    report = diagnose_bytes(b"sbatch: error: invalid partition specified: gpu\n", rules, names=["my logs/job 1.err"])
    sarif = json.loads(render_sarif([report]))
    assert not list(VALIDATOR.iter_errors(sarif))
    uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
    assert uri == "my%20logs/job%201.err"


def _cases(xml: str) -> dict[str, ET.Element]:
    root = ET.fromstring(xml)
    return {c.get("name"): c for c in root.iter("testcase")}


@pytest.mark.parametrize("case", CASES[::7])
def test_junit_has_one_case_per_cause_and_fails_at_error(case, rules):
    report = corpus_report(case)
    xml = render_junit([report])
    cases = _cases(xml)
    assert set(cases) == set(rules.ids())
    failing = {f.id for f in report.findings if severity_rank(f.severity) >= severity_rank("error")}
    assert {n for n, c in cases.items() if c.find("failure") is not None} == failing
    root = ET.fromstring(xml)
    assert int(root.get("failures")) == len(failing) and int(root.get("tests")) == len(cases)


def test_junit_skips_causes_the_logs_could_not_show(rules):
    report = diagnose_bytes(b"step 100 loss 2.31 tokens/s 1200\n", rules)
    cases = _cases(render_junit([report]))
    skipped = cases["nccl-tcp-fallback"].find("skipped")
    assert skipped is not None and "NCCL_DEBUG=INFO" in skipped.get("message")
    assert cases["cuda-oom"].find("skipped") is None and cases["cuda-oom"].find("failure") is None


def test_junit_is_well_formed_whatever_the_log_holds(rules):
    nasty = b'sbatch: error: bad \x01\x1b[31m <x> & "q" ]]> \xff\xfe partition\n'
    report = diagnose_bytes(nasty, rules)
    cases = _cases(render_junit([report]))
    failure = cases["unexplained-failure"].find("failure")
    assert failure is not None and "<x> & " in failure.text and "\x1b" not in failure.text
