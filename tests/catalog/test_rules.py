"""Every rule's own examples, checked through the real scanner (SQLFluff-style, one test per line)."""

from __future__ import annotations

import re

import pytest

from diag.api import diagnose_bytes, load_rules
from diag.input.framing import frame
from diag.input.sources import MemorySource
from diag.scan.scanner import Scanner


def pytest_generate_tests(metafunc):
    if "rule_example" not in metafunc.fixturenames:
        return
    params, ids = [], []
    for rule in load_rules().rules:
        for i, line in enumerate(rule.examples_match):
            params.append((rule.id, line, True))
            ids.append(f"{rule.id}-match-{i}")
        for i, line in enumerate(rule.examples_no_match):
            params.append((rule.id, line, False))
            ids.append(f"{rule.id}-no_match-{i}")
    metafunc.parametrize("rule_example", params, ids=ids)


def test_rule_example(rule_example, rules):
    rule_id, line, should_match = rule_example
    scan = Scanner(rules).scan([MemorySource("example.log", (line + "\n").encode())])
    hit = sorted(name for (rid, name), st in scan.stats.items() if rid == rule_id and st.count)
    if not should_match:  # a fact signature is evidence for a condition: a healthy line may carry it
        facts = {s.name for s in rules.by_id()[rule_id].signatures if s.fact}
        hit = [name for name in hit if name not in facts]
    if should_match:
        assert hit, f"{rule_id} should match: {line!r} (payload {frame(line).payload!r})"
    else:
        assert not hit, f"{rule_id} must not match {line!r}, but {hit} did"


def test_every_rule_has_examples_of_both_kinds(rules):
    for rule in rules.rules:
        assert rule.examples_match, rule.id
        assert rule.examples_no_match, rule.id


def test_every_signature_is_exercised_by_an_example(rules):
    """An untested signature is a guess about a log format: each must match one example line."""
    scanner = Scanner(rules)
    for rule in rules.rules:
        data = "\n".join(rule.examples_match).encode() + b"\n"
        scan = scanner.scan([MemorySource("examples.log", data)])
        hit = {name for (rid, name), st in scan.stats.items() if rid == rule.id and st.count}
        missing = [s.name for s in rule.signatures if not s.fact and s.name not in hit]
        assert not missing, f"{rule.id}: no match example exercises {missing}"


def test_a_single_line_never_crashes_diagnosis(rules):
    for rule in rules.rules:
        for line in rule.examples_match:
            diagnose_bytes(line.encode(), rules)


@pytest.mark.parametrize("rule_id", sorted(load_rules().ids()))
def test_rule_literals_are_not_trivial(rules, rule_id):
    for sig in rules.by_id()[rule_id].signatures:
        # The prefilter looks for the literal's bytes: a CJK word of three characters is nine of them.
        assert len(sig.literal.encode()) >= 4 or sig.literal in {"Error"}, (rule_id, sig.name, sig.literal)


# A pattern that opens with an unanchored run of a character class (`\S+ invoked`, `(?P<x>[\w.-]+): `) is
# tried from every character of a long run of that class and rescans the run each time: a 64 KB line holding
# the literal then costs minutes. Such a run must start at a boundary: `(?:^|\s)\S+`, `(?:^|[^\w.-])[\w.-]+`.
_LEADING_RUN = re.compile(r"^(?:\(\?:|\(\?P<\w+>|\()*(?:\\S|\\w|\\d|\[[^\]]+\]|\.)[+*]")
# A lazy capture before trailing blanks and the end (`(?P<why>.+?)\s*$`) rescans the blanks from every
# character before them; `(?P<why>.*\S)\s*$` captures the same in one pass.
_LAZY_BEFORE_END = re.compile(r"\.\+\?\)\\s\*\$")


def test_no_signature_rescans_a_long_run_from_every_character(rules):
    slow = [
        (rule.id, sig.name)
        for rule in rules.rules
        for sig in rule.signatures
        if _LEADING_RUN.match(sig.pattern) or _LAZY_BEFORE_END.search(sig.pattern)
    ]
    assert not slow


def test_a_line_of_long_runs_holding_every_literal_is_diagnosed(rules):
    # Bounded, not timed: the adversarial line must come back with a report (the bench measures speed).
    for rule in rules.rules:
        for sig in rule.signatures[:3]:
            line = sig.literal + "9" * 20_000 + " /" + "a/" * 5_000 + sig.literal
            assert diagnose_bytes((line + "\n").encode(), rules).inputs
