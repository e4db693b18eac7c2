"""Every engine finds the same candidates, so the diagnosis never depends on which one ran."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from diag.api import diagnose_bytes
from diag.input.framing import frame
from diag.scan import core
from diag.scan.engines import (
    Pattern,
    PythonEngine,
    available_engines,
    engine_expression,
    make_engine,
    prefilter_regex,
    trim_tail,
)
from diag.scan.facts import FACT_SIGNATURES

from ..conftest import case_logs, corpus_cases

ENGINES = available_engines()
CASES = corpus_cases()


def _report(rules, case, engine, chunk=1 << 20):
    blobs = [open(p, "rb").read() for p in case_logs(case)]  # noqa: SIM115
    data = diagnose_bytes(blobs, rules, names=case_logs(case), engine=engine, chunk_bytes=chunk).to_json()
    return json.dumps(data["findings"], sort_keys=True), data["facts"]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_every_engine_gives_the_same_report(rules, case, monkeypatch):
    """The reference: the pure-Python engine without the compiled core (diag.scan.core)."""
    monkeypatch.setenv(core.NO_CORE_ENV, "1")
    reference = _report(rules, case, "python")
    for no_core in ("1", "") if core.built() else ("1",):
        monkeypatch.setenv(core.NO_CORE_ENV, no_core)
        for engine in ENGINES:
            assert _report(rules, case, engine) == reference, (engine, no_core)
        # and however the input is chunked
        assert _report(rules, case, ENGINES[0], chunk=4093) == reference, no_core


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


@pytest.mark.parametrize("name", ENGINES)
def test_anchors_inside_groups_do_not_hide_lines(name):
    """Hyperscan and RE2 would tie ^ and $ to the block: a signature anchored inside a group must
    still find lines in the middle of a block, behind a prefix."""
    engine = make_engine(name, [Pattern(r"(?:^|[\s;])(?:export )?NCCL_NET=(?P<v>\w+)(?:$|\s)", "NCCL_NET=")])
    block = b"first line\n 3: export NCCL_NET=Socket\nlast\n"
    assert [block[:p].count(b"\n") for p in engine.positions(block)] == [1]


def test_prefilter_drops_anchors_and_open_tails():
    assert prefilter_regex(r"^Using network (?P<net>.+)$") == "Using network "
    assert prefilter_regex(r"^NET/IB ?: No device found") == "NET/IB ?: No device found"
    assert prefilter_regex(r"[^/]+x(?:a|$)") == r"[^/\n\r]+x(?:a|)"  # negated class confined to the line


@pytest.mark.parametrize("name", ENGINES)
def test_a_match_never_runs_into_the_next_line(name):
    """A pattern whose tail could swallow line ends (\\s*, [^x], .) must not hide the next lines."""
    engine = make_engine(
        name,
        [
            Pattern(r"^(?P<var>[A-Z_]+) set by environment to (?P<value>.*?)\.?\s*$", " set by environment to "),
            Pattern(r"^Using network Socket\b", "Using network Socket"),
        ],
    )
    block = b"NCCL_X set by environment to 1.\n\nUsing network Socket\nNCCL_Y set by environment to 0\n"
    assert [block[:p].count(b"\n") for p in engine.positions(block)] == [0, 2, 3]


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
COMMON = {"Error", "error", "failed", "Exception", "Using", "set to", "onnect", "Warning", "warning"}
# Kept on purpose: an uncaught exception's last line ("ValueError: ...") has no other constant part;
# a checkpoint path under /tmp: "checkpoint" itself is on every save line, the directory far rarer;
# NCCL's topology dump and nccl-tests result rows have only punctuation and numbers to go on, and
# appear only when those are printed; "]br-" opens a docker bridge in NCCL's interface list and
# nowhere else.
ACCEPTED_WEAK = {
    "unexplained-failure/exception",
    "unexplained-failure/exception_other",
    # Exception lines that name a missing path: the same shape as unexplained-failure's exception lines.
    "node-local-path/exc_missing_path",
    "node-local-path/exc_missing_path_other",
    "node-local-path/written",
    "node-local-path/written_shm",
    "node-local-path/written_dir",
    "nccl-socket-ifname/socket_bridge",
    # The kernel's OOM report task rows (mm/oom_kill.c dump_task) hold no word: the nine spaces its format
    # puts before oom_score_adj are their one constant; the regex fails fast on its leading "[ pid]".
    "job-oom/oom_task_table",
    # NCCL's error-return trail ("init.cc:840 -> 2", checks.h's NCCLCHECK): a source file, a line and a code,
    # nothing else; " -> " narrows the INFO lines to it and the channel lines, and the regex fails fast on those.
    "unexplained-failure/nccl_return_trail",
    # TensorFlow's / XLA's logger at FATAL ("<date> <time>.<us>: F <file>:<line>] ..."): the level letter between
    # ": " and " " is its only constant; the regex is anchored at the date that opens the line and fails fast.
    "unexplained-failure/tf_fatal",
    "@facts/nic_rate",
    "@facts/busbw_row",
}


def _weak(literal: str) -> bool:
    # Counted in bytes, as the prefilter reads them: a CJK word of three characters ("已杀死") is nine.
    return sum(len(ch.encode()) for ch in literal if ch.isalnum()) < 4 or literal.strip(" :/[]()'\"") in COMMON


def test_literals_are_strong(rules):
    sigs = [(f"{r.id}/{s.name}", s.literal) for r in rules.rules for s in r.signatures]
    sigs += [(f"@facts/{s.name}", s.literal) for s in FACT_SIGNATURES]
    weak = [f"{name}: {lit!r}" for name, lit in sigs if _weak(lit) and name not in ACCEPTED_WEAK]
    assert not weak, weak


def test_engine_expressions_end_on_a_fixed_part():
    """Hyperscan reports every offset where an expression can end, and each report is a Python
    call: an expression ending in ``\\S+`` reported a line once per character of its value."""
    assert trim_tail(r"NCCL_IB_HCA set (?:by environment )?to (?:\S+)") == r"NCCL_IB_HCA set (?:by environment )?to \S"
    assert trim_tail(r"via NET/IB/\d+(?:/Shared)?[ \t]*") == r"via NET/IB/\d"
    assert trim_tail(r"Using network (?:[^\n\r]+?)\s*") == r"Using network [^\n\r]"
    assert trim_tail(r"Could not find: (?:a|b\S+|c(?:d)?)") == r"Could not find: (?:a|b\S|c)"
    assert trim_tail(r"ax{2,3}") == "ax" and trim_tail(r"ab{0,3}") == "a"


def test_trimmed_expressions_still_find_every_line_the_signature_matches(rules):
    """Trimming only widens: on every example of every rule, the engine's expression matches
    wherever the signature does (engines may over-report, never under-report)."""
    checked = 0
    signatures = [s for rule in rules.rules for s in rule.signatures] + list(FACT_SIGNATURES)
    examples = [line for rule in rules.rules for ex in rule.examples_match for line in ex.splitlines()]
    for sig in signatures:
        expr = re.compile(engine_expression(Pattern(sig.pattern, sig.literal)))
        for line in examples:
            framed = frame(line)
            if sig.levels and framed.level not in sig.levels:
                continue  # the signature never looks at this line (a WARN-only one at an error line)
            # A signature matches a line that holds its literal (every engine requires it, wherever
            # it is: UCX's "UCX  ERROR" is in the prefix framing peels) and whose payload its regex matches.
            if sig.literal in line and re.search(sig.pattern, framed.payload):
                checked += 1
                assert expr.search(line), (sig.name, line)
    assert checked > 50


@pytest.mark.skipif("hyperscan" not in ENGINES, reason="needs hyperscan")
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["", "x NCCL_IB_HCA set to mlx5_0", "[send] via NET/IB/0/GDRDMA and via NET/IB/1", "z"]),
            st.sampled_from(["\n", "\r", "\r\n", "\n\n"]),
        ),
        max_size=60,
    )
)
def test_lines_found_with_numpy_are_the_ones_found_line_by_line(monkeypatch_lines):
    """The vectorised line lookup (NumPy installed) gives exactly line_span's lines and members."""
    from diag.scan import engines

    block = "".join(a + b for a, b in monkeypatch_lines).encode()
    engine = make_engine("hyperscan", [Pattern(r"NCCL_IB_HCA set to (?P<v>\S+)", "NCCL_IB_HCA set to "),
                                       Pattern(r"via NET/(?P<n>\w+)/\d+", "via NET/"),
                                       Pattern(r"\[send\] via NET/IB/\d+", "[send] via NET/IB/")])  # fmt: skip
    saved = engines._VECTOR_MIN_MATCHES
    try:
        engines._VECTOR_MIN_MATCHES = 1
        vectorised = engine.lines(block)
        engines._VECTOR_MIN_MATCHES = 1 << 60
        one_by_one = engine.lines(block)
    finally:
        engines._VECTOR_MIN_MATCHES = saved
    assert vectorised == one_by_one


@pytest.mark.parametrize("density", ["0.005", "0.02"])
def test_engine_expressions_pick_no_more_lines_than_a_dense_nccl_log_has_candidates(rules, tmp_path, density):
    """An expression the engine cannot anchor on a literal start is looked for by its literal alone:
    a signature like ``\\b(?P<f>nccl[A-Z]\\w+)\\(`` then picked every line holding "nccl", 4x the
    candidates of an NCCL-dense log, and the scan paid for each. The generator knows how many lines
    of its log any signature may match; the engine must stay near that."""
    import subprocess
    import sys

    from ..conftest import ROOT

    log = tmp_path / "dense.log"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--shape", "dense", "--ranks", "64", "--size", "2M",
         "--density", density, "--out", str(log)],
        check=True, capture_output=True, text=True,
    )  # fmt: skip
    estimated = int(re.search(r"candidate lines estimated ([\d,]+)", done.stderr + done.stdout)[1].replace(",", ""))
    patterns = [Pattern(s.pattern, s.literal) for r in rules.rules for s in r.signatures]
    candidates = len(make_engine("auto", patterns).lines(log.read_bytes()))
    assert candidates <= 1.5 * estimated + 50, (candidates, estimated)


def _catalogue_patterns(rules) -> list[Pattern]:
    sigs = [*FACT_SIGNATURES, *(s for rule in rules.rules for s in rule.signatures)]
    return [Pattern(s.pattern, s.literal) for s in sigs]


def test_cached_grouping_is_the_derived_one(rules, tmp_path, monkeypatch):
    """The engine expressions kept in the cache (engines._grouped) are the ones derived afresh: from the
    disk, from this process's memory, and rebuilt when the cached entry is damaged or foreign."""
    from diag import cache
    from diag.scan import engines

    monkeypatch.setenv("SLURMDIAG_CACHE", str(tmp_path))
    monkeypatch.setattr(engines, "_GROUPED", {})
    patterns = _catalogue_patterns(rules)
    derived = engines._derive_grouped(patterns)
    assert engines._grouped(patterns) == derived  # derived, then stored
    (stored,) = list(tmp_path.iterdir())
    engines._GROUPED.clear()
    assert engines._grouped(patterns) == derived  # read back from the disk
    assert engines._grouped(patterns) == derived  # from memory
    other = patterns[:-1]  # other patterns: another key, not the cached grouping
    assert engines._grouped(other) == engines._derive_grouped(other)
    for damaged in (b"not a pickle", None, ((), ()), (tuple(derived[0]), tuple(derived[1][:-1]))):
        engines._GROUPED.clear()
        if damaged is None or isinstance(damaged, bytes):
            stored.write_bytes(damaged or b"")
        else:
            cache.store_object(stored.name, damaged)
        assert engines._grouped(patterns) == derived
    swapped = (tuple(derived[0]), tuple(reversed(derived[1])))  # the right shape, but for other patterns
    assert engines._valid_grouping(swapped, len(patterns))  # shape only: the key tells the patterns apart


def test_grouping_key_holds_the_patterns_and_the_deriving_code(rules, tmp_path, monkeypatch):
    from diag.scan import engines

    monkeypatch.setenv("SLURMDIAG_CACHE", str(tmp_path))
    monkeypatch.setattr(engines, "_GROUPED", {})
    patterns = _catalogue_patterns(rules)
    engines._grouped(patterns)
    engines._grouped([Pattern(patterns[0].regex + "x", patterns[0].literal), *patterns[1:]])
    engines._grouped([Pattern(patterns[0].regex, patterns[0].literal + "x"), *patterns[1:]])
    monkeypatch.setattr(engines, "_SOURCE_KEY", engines._SOURCE_KEY + b" changed")
    engines._grouped(patterns)
    assert len(list(tmp_path.iterdir())) == 4


@settings(max_examples=300, deadline=None)
@given(data=st.data(), cap=st.integers(0, 6))
def test_lines_of_several_matches_get_the_union_of_their_members(data, cap):
    """The NumPy path builds a line's members once per distinct combination of expressions
    (engines._Combos, its table starting over between blocks when full): the lines and members of
    the reference loop, for matches ending anywhere inside a line, many to a line, out of order."""
    from diag.scan import engines

    np = pytest.importorskip("numpy")
    members = [frozenset({0}), frozenset({1, 2}), frozenset({2}), frozenset({3, 4, 5}), frozenset({0, 5})]
    combos = engines._Combos(members)
    saved = engines._MAX_COMBOS
    engines._MAX_COMBOS = cap
    try:
        for _ in range(3):  # one table across blocks
            block = data.draw(st.binary(min_size=1, max_size=60).map(lambda b: b.replace(b"x", b"\n")))
            inside = [end for end in range(1, len(block) + 1) if block[end - 1] not in b"\r\n"]
            if not inside:
                continue
            ends = data.draw(st.lists(st.sampled_from(inside), min_size=1, max_size=40))
            exprs = data.draw(st.lists(st.integers(0, len(members) - 1), min_size=len(ends), max_size=len(ends)))
            got = engines._lines_of_matches(np, block, ends, exprs, members, combos)
            assert got == engines.lines_of_ends(block, ends, exprs, members)
    finally:
        engines._MAX_COMBOS = saved
