"""slurmdiag over every labelled corpus case: the right top finding, the right culprits, no false alarms."""

from __future__ import annotations

from collections import Counter

import pytest
import yaml

from diag.api import diagnose
from diag.catalog.causes import CAUSE_IDS, severity_rank

from .conftest import case_logs, corpus_cases

CASES = corpus_cases()
RESULTS: Counter = Counter()


def _expectation(case):
    return yaml.safe_load((case / "expected.yaml").read_text())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case, rules):
    exp = _expectation(case)
    # expect_busbw: the site's known busbw (GB/s), as `slurmdiag --expect-busbw` would be given it
    report = diagnose(case_logs(case), rules=rules, expect_busbw=exp.get("expect_busbw"))
    ids = [f.id for f in report.findings]
    for key in ("expected", "absent"):
        for cid in exp.get(key) or []:
            assert cid in CAUSE_IDS, f"{case.name}: {cid} is not a cause id"
    try:
        if exp.get("top") is not None:
            assert ids and ids[0] == exp["top"], f"top finding {ids[:1]} != {exp['top']} (all: {ids})"
        expected = exp.get("expected") or []
        positions = [ids.index(cid) if cid in ids else -1 for cid in expected]
        assert -1 not in positions, f"missing {[c for c, p in zip(expected, positions) if p < 0]} (got {ids})"
        assert positions == sorted(positions), f"rank order {ids} does not follow {expected}"
        present = set(ids) & set(exp.get("absent") or [])
        assert not present, f"must not report {sorted(present)} (got {ids})"
        if exp.get("healthy"):
            bad = [
                f"{f.id}:{f.severity}" for f in report.findings if severity_rank(f.severity) >= severity_rank("error")
            ]
            assert not bad, f"healthy case reports {bad}"
        for cid, want in (exp.get("culprits") or {}).items():
            finding = next((f for f in report.findings if f.id == cid), None)
            assert finding is not None, f"no {cid} finding to name culprits"
            for host in want.get("hosts", []):
                assert host in finding.hosts, f"{cid} should name host {host} (names {finding.hosts})"
            for task in want.get("tasks", []):
                assert task in finding.tasks, f"{cid} should name srun task {task} (names {finding.tasks})"
            for rank in want.get("ranks", []):
                assert rank in finding.ranks, f"{cid} should name rank {rank} (names {finding.ranks})"
    except AssertionError:
        RESULTS[(exp.get("top") or "healthy", False)] += 1
        raise
    RESULTS[(exp.get("top") or "healthy", True)] += 1


def test_corpus_is_not_empty():
    assert len(CASES) >= 10


def teardown_module(module):
    if not RESULTS:
        return
    print("\ncorpus results per expected top id:")
    for top in sorted({t for t, _ in RESULTS}):
        ok, bad = RESULTS[(top, True)], RESULTS[(top, False)]
        print(f"  {top:<28} {ok}/{ok + bad}")
