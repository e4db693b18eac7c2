"""Condensed runs of communicator lines (diag.scan.runs) apply as their lines do, orders included."""

from __future__ import annotations

import subprocess
import sys

import pytest

from diag.input.sources import InputStats, Source
from diag.scan import parallel, runs
from diag.scan.runs import RankRun
from diag.scan.scanner import Scanner, ScanResult

from ..conftest import ROOT


def _ordered(result: ScanResult) -> tuple:
    """What the scan found, with the insertion order of every table (a full table keeps its first entries)."""
    facts = result.facts
    stats = [
        (key, s.count, s.samples, list(s.hosts.items()), sorted(s.ranks), [(k, list(v)) for k, v in s.captures.items()])
        for key, s in result.stats.items()
    ]
    hosts = [(name, h.first, sorted(h.ranks)) for name, h in facts.hosts.items()]
    return (stats, hosts, list(facts.rank_of_process.items()), list(facts.host_of_rank.items()), facts)


@pytest.mark.parametrize("density", ["0.05", "0.30"])
@pytest.mark.parametrize("min_run", [1, 3, 16])
@pytest.mark.parametrize("only_communicators", [False, True])
def test_condensed_runs_apply_as_their_lines(rules, tmp_path, monkeypatch, density, min_run, only_communicators):
    """Also on the communicator lines alone: then the runs are what first sees hosts, ranks and values."""
    log = tmp_path / "dense.log"
    subprocess.run(
        [sys.executable, str(ROOT / "bench" / "gen_log.py"), "--shape", "dense", "--ranks", "32", "--size", "1M",
         "--density", density, "--out", str(log)],
        check=True, capture_output=True,
    )  # fmt: skip
    monkeypatch.setattr(runs, "MIN_RUN", min_run)
    scanner = Scanner(rules, chunk_bytes=64 << 10, jobs=1)
    folder = scanner.folder(from_start=True)
    records = list(scanner.digest_source(0, Source(str(log)), InputStats(str(log)), folder=folder))
    if only_communicators:
        records = [r for r in records if r[11] and r[11][0][0] == scanner._rank_entry]
    found = []
    for condensed in (False, True):
        result = ScanResult(inputs=[InputStats(str(log))])
        if condensed:
            items = scanner.condense(records, {})
            assert min_run > 3 or sum(isinstance(item, RankRun) for item in items) > 0
            parallel.apply_condensed(scanner, items, str(log), 0, 7, result, scanner.folder(from_start=True))
        else:
            scanner.apply(records, str(log), 0, result, line_base=7, folder=scanner.folder(from_start=True))
        if not only_communicators:  # the folded lines' first sightings are not all there
            scanner.apply_folded(folder.folded, result)
        found.append(_ordered(result))
    assert found[0] == found[1]
