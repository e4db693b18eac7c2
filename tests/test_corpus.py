"""slurmdiag over every labelled corpus case, through the same harness `slurmdiag eval` and
`slurmdiag test-rules` use: the right top finding, the right culprits, no false alarms."""

from __future__ import annotations

from collections import Counter

import pytest

from diag.harness import check_case, load_case

from .conftest import corpus_cases

CASES = corpus_cases()
RESULTS: Counter = Counter()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_corpus_case(case, rules):
    result = check_case(load_case(case), rules)
    RESULTS[(result.case.label or "(no constraint)", result.passed)] += 1
    assert result.passed, "; ".join(result.problems)


def test_corpus_is_not_empty():
    assert len(CASES) >= 10


def teardown_module(module):
    if not RESULTS:
        return
    print("\ncorpus results per expected top id:")
    for top in sorted({t for t, _ in RESULTS}):
        ok, bad = RESULTS[(top, True)], RESULTS[(top, False)]
        print(f"  {top:<28} {ok}/{ok + bad}")
