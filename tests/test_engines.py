"""Every engine finds the same candidates, so the diagnosis never depends on which one ran."""

from __future__ import annotations

import json
import re

import pytest

from diag.api import diagnose_bytes
from diag.engines import Pattern, PythonEngine, available_engines, make_engine, prefilter_regex
from diag.facts import FACT_SIGNATURES

from .conftest import case_logs, corpus_cases

ENGINES = available_engines()
CASES = corpus_cases()


def _report(rules, case, engine, chunk=1 << 20):
    blobs = [open(p, "rb").read() for p in case_logs(case)]  # noqa: SIM115
    data = diagnose_bytes(blobs, rules, names=case_logs(case), engine=engine, chunk_bytes=chunk).to_json()
    return json.dumps(data["findings"], sort_keys=True), data["facts"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_engine_gives_the_same_report(rules, case):
    reference = _report(rules, case, "python")
    for engine in ENGINES:
        assert _report(rules, case, engine) == reference, engine
    # and however the input is chunked
    assert _report(rules, case, ENGINES[0], chunk=4093) == reference


def test_ci_has_every_engine():
    """CI installs the optional engine too, so the equivalence above covers all three there."""
    import os

    if os.environ.get("CI"):
        assert set(ENGINES) == {"hyperscan", "re2", "python"}


def test_auto_picks_the_fastest_installed():
    engine = make_engine("auto", [Pattern("probe literal", "probe literal")])
    assert engine.name == ENGINES[0]


@pytest.mark.parametrize("name", ENGINES)
def test_candidates_are_found_on_cr_and_lf_lines(name):
    engine = make_engine(name, [Pattern(r"^Using network (?P<net>\S+)", "Using network ")])
    block = b"x\r10%|#\rUsing network IB\r\nnothing\nUsing network Socket"
    hits = engine.positions(block)
    lines = {block[:p].count(b"\n") for p in hits}
    assert lines == {0, 2}


def test_prefilter_drops_anchors_and_open_tails():
    assert prefilter_regex(r"^Using network (?P<net>.+)$") == "Using network "
    assert prefilter_regex(r"^NET/IB ?: No device found") == "NET/IB ?: No device found"


def test_python_engine_skips_literals_that_contain_others():
    engine = PythonEngine([Pattern("a", "Using network "), Pattern("b", "Using network Socket")])
    assert engine.literals == [b"Using network "]


def test_signatures_stay_in_the_shared_regex_subset(rules):
    """Every signature must compile in each engine (lint): RE2 and Hyperscan reject what they cannot
    do in linear time, and the scan would silently fall back."""
    patterns = [Pattern(s.pattern, s.literal) for r in rules.rules for s in r.signatures]
    patterns += [Pattern(s.pattern, s.literal) for s in FACT_SIGNATURES]
    for engine in ENGINES:
        make_engine(engine, patterns)
    for p in patterns:
        assert "\\n" not in p.regex and "(?s" not in p.regex, p.regex
        assert not re.search(r"\(\?[=!<]|\\[1-9]", p.regex), p.regex


# Literals that many healthy lines contain make most lines candidates and cost the scan its speed.
WEAK = re.compile(r"^[\s\W]|[\s\W]$|^(?:Error|error|failed|Exception|Using |set to|onnect)$")
# Kept on purpose: an uncaught exception's last line ("ValueError: ...") has no other constant part,
# and the full-pattern engines only wake on "Error" at the end of a dotted name followed by ":".
ACCEPTED_WEAK = {"unexplained-failure/exception"}


def test_rule_literals_are_strong(rules):
    weak = [
        f"{r.id}/{s.name}: {s.literal!r}"
        for r in rules.rules
        for s in r.signatures
        if WEAK.search(s.literal) and len(s.literal.strip(" :/[]'\"")) < 8 and f"{r.id}/{s.name}" not in ACCEPTED_WEAK
    ]
    assert not weak, weak
