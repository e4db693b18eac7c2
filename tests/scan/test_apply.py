"""The compiled core's ordered apply (diag.scan._core.apply) gives what Scanner.apply's Python loop gives."""

from __future__ import annotations

import random
import subprocess
import sys
from array import array

import pytest

from diag.input.sources import InputStats, Source
from diag.scan import core, runs
from diag.scan.runs import RankRun
from diag.scan.scanner import FACTS_OWNER, MAX_SAMPLES, Scanner, ScanResult

from ..conftest import ROOT
from .test_runs import _ordered

pytestmark = pytest.mark.skipif(core.module() is None, reason="the compiled core is not built or is switched off")


def _records(rules, tmp_path, density: str, ranks: str = "32") -> tuple[Scanner, list, object]:
    log = tmp_path / "dense.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--shape", "dense", "--ranks", ranks, "--size", "1M",
         "--density", density, "--out", str(log)],
        check=True, capture_output=True,
    )  # fmt: skip
    scanner = Scanner(rules, chunk_bytes=64 << 10, jobs=1)
    folder = scanner.folder(from_start=True)
    records = list(scanner.digest_source(0, Source(str(log)), InputStats(str(log)), folder=folder))
    return scanner, records, folder


def _variants(records: list, rank_entry: int, seed: int) -> list:
    """``records`` with communicator lines in forms the Python loop takes apart: no rank of its own, another
    emitter or level, no host, no pid, a host first seen on it; some lines twice."""
    rng = random.Random(seed)
    out = []
    for record in records:
        out.append(record)
        matches = record[11]
        if not (matches and matches[0][0] == rank_entry) or rng.random() < 0.7:
            continue
        change = rng.randrange(7)
        r = list(record)
        if change == 0:
            r[5] = None
        elif change == 1:
            r[10] = rng.choice(["slurm", "ucx", None, "torch"])
        elif change == 2:
            r[8] = rng.choice(["WARN", None])
        elif change == 3:
            r[3] = rng.choice([None, ""])
        elif change == 4:
            r[4] = None
        elif change == 5:
            r[3] = f"fresh-{rng.randrange(5)}"
        else:
            out.append(tuple(r))  # the same line again: a repeat for the fold
        out.append(tuple(r))
    return out


def _apply(scanner: Scanner, records: list, with_core: bool, folder_too: bool, base: int) -> tuple:
    saved = scanner._core
    if not with_core:
        scanner._core = None
    try:
        result = ScanResult(inputs=[InputStats("x.log")])
        folder = scanner.folder(from_start=True) if folder_too else None
        half = len(records) // 2  # two calls, as a parallel apply makes one per task
        scanner.apply(records[:half], "x.log", 0, result, line_base=base, folder=folder)
        scanner.apply(iter(records[half:]), "x.log", 0, result, line_base=base, folder=folder)
        folded = (dict(folder.folded.matches), dict(folder.folded.counters)) if folder is not None else None
        return _ordered(result), folded, result.facts.nccl_info, result.facts.slurm_messages, result.facts.max_nranks
    finally:
        scanner._core = saved


@pytest.mark.parametrize("density", ["0.02", "0.30"])
@pytest.mark.parametrize("folder_too", [False, True])
@pytest.mark.parametrize("varied", [False, True])
def test_core_apply_is_the_python_loop(rules, tmp_path, density, folder_too, varied):
    scanner, records, _ = _records(rules, tmp_path, density)
    assert any(r[11] and r[11][0][0] == scanner._rank_entry and len(r[11]) == 1 for r in records)
    if varied:
        records = _variants(records, scanner._rank_entry, seed=len(records))
    assert _apply(scanner, records, True, folder_too, 7) == _apply(scanner, records, False, folder_too, 7)


def test_core_apply_before_samples_fill(rules, tmp_path):
    """Init COMPLETE lines whose rule samples are not full yet go through the Python body, in order."""
    scanner, records, _ = _records(rules, tmp_path, "0.30")
    complete = [r for r in records if r[11] and r[11][0][0] == scanner._rank_entry and len(r[11]) > 1]
    assert len(complete) > MAX_SAMPLES
    mixed = complete[: MAX_SAMPLES + 5] + records
    assert _apply(scanner, mixed, True, True, 0) == _apply(scanner, mixed, False, True, 0)
    assert _apply(scanner, mixed, True, False, 0) == _apply(scanner, mixed, False, False, 0)


def _run_form(item) -> object:
    """A condensed item with every table's order (a RankRun's dataclass equality ignores dict order)."""
    if not isinstance(item, RankRun):
        return item
    counted = [
        (key, (n, list(hosts.items()), list(ranks), [(name, list(values)) for name, values in captures.items()]))
        for key, (n, hosts, ranks, captures) in item.counted.items()
    ]
    arrays = [(a.typecode, a.tolist()) for a in (item.host_index, item.pids, item.ranks)]
    return (item.hosts, item.first_lines, arrays, item.max_nranks, item.nccl_info, item.slurm, counted)


@pytest.mark.parametrize("density", ["0.05", "0.30"])
@pytest.mark.parametrize("min_run", [1, 3, 16])
def test_core_condense_is_runs_condense(rules, tmp_path, monkeypatch, density, min_run):
    scanner, records, _ = _records(rules, tmp_path, density)
    monkeypatch.setattr(runs, "MIN_RUN", min_run)
    rank_entry = scanner._rank_entry
    rule_entries = [i for i, (owner, _) in enumerate(scanner.entries) if owner != FACTS_OWNER]
    for variant in (records, _variants(records, rank_entry, seed=min_run)):
        for start in ({}, dict.fromkeys(rule_entries, MAX_SAMPLES)):
            shipped_core, shipped_python = dict(start), dict(start)
            got = scanner.condense(variant, shipped_core)
            want = runs.condense(variant, scanner.entries, FACTS_OWNER, rank_entry, shipped_python, MAX_SAMPLES)
            assert [_run_form(item) for item in got] == [_run_form(item) for item in want]
            assert list(shipped_core.items()) == list(shipped_python.items())
            if min_run == 1 and start:
                assert any(isinstance(item, RankRun) and item.counted for item in got)


def test_core_condense_leaves_odd_records_to_python(rules, tmp_path):
    scanner, records, _ = _records(rules, tmp_path, "0.30")
    odd = [*records[:50], (1, "x", 0, b"host", 1, None, None, None, "INFO", None, "nccl", ()), *records[50:]]
    ctx = (scanner._rank_entry, scanner._rule_key_list(), {}, MAX_SAMPLES, 1, RankRun, array)
    assert scanner._core.condense(odd, ctx) is None
    assert ctx[2] == {}


def test_core_numbering_is_count_newlines():
    from diag.input.lines import count_newlines

    rng = random.Random(5)
    for _ in range(200):
        block = bytes(rng.choice(b"ab\n\r") for _ in range(rng.randrange(0, 60)))
        starts = sorted(rng.randrange(0, len(block) + 1) for _ in range(rng.randrange(0, 6)))
        shipped = [(start, (0, "text", start, None)) for start in starts]
        line_no = rng.randrange(0, 1 << 40)
        before, total = count_newlines(block, starts)
        want = [(line_no + newlines + 1, *record[1:]) for (_, record), newlines in zip(shipped, before)]
        assert core.module().number(block, shipped, line_no) == (want, total)
    with pytest.raises(ValueError):
        core.module().number(b"a\nb", [(2, (0,)), (1, (0,))], 0)
