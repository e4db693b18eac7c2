"""Folding repeated lines into counts leaves every statistic and fact as applying them all would."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diag.input.sources import InputStats, MemorySource
from diag.scan.scanner import Scanner, ScanResult

from ..conftest import case_logs, corpus_cases

CASES = corpus_cases()


def _scan(rules, blob: bytes, fold: bool, from_start: bool = False):
    scanner = Scanner(rules, chunk_bytes=1 << 16, jobs=1)
    source = MemorySource("job.log", blob)
    result = ScanResult()
    result.inputs = [InputStats(source.path)]
    folder = scanner.folder(from_start) if fold else None
    scanner.apply(scanner.digest_source(0, source, result.inputs[0]), source.path, 0, result, folder=folder)
    if folder is not None:
        scanner.apply_folded(folder.folded, result)
    return result.stats, result.facts, result.inputs, folder


def test_folding_the_corpus_changes_nothing(rules):
    for case in CASES:
        blob = b"\n".join(open(p, "rb").read() for p in case_logs(case))  # noqa: SIM115
        assert _scan(rules, blob, True)[:3] == _scan(rules, blob, False)[:3], case.name


def _init(host: str, pid: int, rank: int, nranks: int, comm: int) -> list[str]:
    head = f"{host}:{pid}:{pid} [{rank % 8}] NCCL INFO"
    return [
        f"{head} ncclCommInitRank comm 0x{comm:x} rank {rank} nranks {nranks} cudaDev {rank % 8} busId 1000 - Init START",
        f"{head} NCCL_IB_DISABLE set by environment to 0.",
        f"{head} Channel 00/0 : {rank}[0] -> {(rank + 1) % nranks}[0] [send] via NET/IB/0",
        f"{head} Channel 01/0 : {rank}[0] -> {(rank + 1) % nranks}[0] [send] via NET/IB/1/GDRDMA",
        f"{head} comm 0x{comm:x} rank {rank} nranks {nranks} cudaDev {rank % 8} busId 1000 commId 0x1 - Init COMPLETE",
    ]


def test_a_long_job_folds_most_lines_and_keeps_every_count(rules):
    lines = []
    for n in range(200):
        for r in range(8):
            lines += _init(f"node{r // 4}", 100 + r, r, 8, 0x1000 * n + r)
    blob = "\n".join(lines).encode()
    folded = _scan(rules, blob, True)
    assert folded[:3] == _scan(rules, blob, False)[:3]
    stats, facts = folded[0], folded[1]
    assert sum(folded[3].folded.matches.values()) > 1000  # most repeats never reached the apply
    assert facts.hosts["node0"].plain_ib_channels == 4 * 200
    assert stats[("nccl-debug-verbose", "init_complete")].count == 8 * 200


# Lines whose effect depends on what came before: ranks that move between communicators, a
# setting that changes, hosts without a rank of their own, and order-dependent collectives.
VOCABULARY = [
    *_init("node0", 100, 0, 2, 1),
    *_init("node0", 100, 1, 2, 2),  # the same process, another rank in a sub-communicator
    *_init("node1", 200, 1, 2, 3),
    "node0:100:100 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0",
    "node0:100:100 [0] NCCL INFO NCCL_IB_HCA set to mlx5_1",
    "node0:100:100 [0] NCCL INFO NET/IB : No device found.",
    "node1:200:200 [1] NCCL INFO NET/IB : No device found.",
    "node0:100:100 [0] NCCL INFO Using network Socket",
    "[rank1]:[E ProcessGroupNCCL.cpp:1] [PG 0 Rank 1] Watchdog caught collective operation timeout: "
    "WorkNCCL(SeqNum=7, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600001 milliseconds before timing out.",
    "srun: error: node1: task 1: Exited with exit code 1",
    "slurmstepd: error: *** STEP 1.0 ON node0 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***",
]


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(picks=st.lists(st.integers(0, len(VOCABULARY) - 1), max_size=400), from_start=st.booleans())
def test_any_order_of_repeats_folds_exactly(rules, picks, from_start):
    blob = "\n".join(VOCABULARY[i] for i in picks).encode()
    assert _scan(rules, blob, True, from_start)[:3] == _scan(rules, blob, False)[:3]


def test_ranks_moving_between_communicators_do_not_stop_folding(rules):
    """A large job: every process joins several communicators with another rank in each, so its
    rank changes all the time. Only the lines whose rank changed need the ordered apply; the
    channel lines every rank prints again fold, across processes too."""
    lines = []
    for restart in range(3):
        for comm in range(12):
            for r in range(32):
                pid = 1000 * restart + r
                sub_rank = r % 8 if comm % 2 else r  # the tensor-parallel group, then the world
                lines += _init(f"node{r // 8}", pid, sub_rank, 8 if comm % 2 else 32, 0x10000 * comm + r)
    blob = "\n".join(lines).encode()
    folded = _scan(rules, blob, True, from_start=True)
    assert folded[:3] == _scan(rules, blob, False)[:3]
    ran = sum(folded[3].folded.matches.values()) + sum(folded[3].folded.counters.values())
    assert ran > len(lines) // 2


def test_long_captured_values_are_not_kept_in_the_fold_tables(rules):
    """Memory stays bounded by line count, not line length: a repeat capturing kilobytes is
    shipped every time (and counted the same) rather than remembered."""
    line = "node0:100:100 [0] NCCL INFO NCCL_IB_HCA set to " + "mlx5_0:1," * 400
    blob = "\n".join([line] * 200).encode()
    folded = _scan(rules, blob, True, from_start=True)
    assert folded[:3] == _scan(rules, blob, False)[:3]
    assert not folded[3]._seen and not folded[3].folded.matches


def _stats_and_facts(rules, blob: bytes, short_path: bool):
    scanner = Scanner(rules, chunk_bytes=1 << 16, jobs=1)
    if not short_path:
        scanner._rank_entry = -1  # no record takes the communicator line's short path
    source = MemorySource("job.log", blob)
    result = ScanResult()
    result.inputs = [InputStats(source.path)]
    folder = scanner.folder(True)
    scanner.apply(scanner.digest_source(0, source, result.inputs[0]), source.path, 0, result, folder=folder)
    scanner.apply_folded(folder.folded, result)
    return result.stats, result.facts


def test_init_complete_lines_counted_without_a_frame_give_what_the_general_path_gives(rules):
    """Hundreds of processes on 4 hosts, with and without a rank in their prefix, taking new ranks in
    every communicator: once the rules' 64 samples are full, their "Init COMPLETE" lines are counted
    on the short path, and every count, host, rank, captured value and fact is the general path's."""
    lines = []
    for comm in range(6):
        size = 8 if comm % 2 else 96
        for p in range(96):
            rank = p % 8 if comm % 2 else (p * 7 + comm) % 96
            init = _init(f"node{p // 24}", 1000 + p, rank, size, 0x100 * comm + p)
            prefix = f"[rank{p}]: " if p % 3 == 0 else ""  # torchrun's rank prefix: the line's own rank
            lines += [prefix + line for line in init]
    blob = "\n".join(lines).encode()
    short = _stats_and_facts(rules, blob, True)
    assert short == _stats_and_facts(rules, blob, False)
    complete = short[0][("nccl-debug-verbose", "init_complete")]
    assert complete.count == 6 * 96
    assert sum(complete.hosts.values()) == 6 * 96 and len(complete.hosts) == 4
    assert set(complete.captures["nranks"]) == {"8", "96"}


def test_a_later_span_of_the_same_worker_folds_what_its_earlier_span_shipped(rules):
    """A worker's second span starts from the lines its first span shipped (all applied before it):
    a channel line folds at once, but a rule match whose evidence rank is "whatever the process had
    when the span began" ships again, since another worker's span in between may have changed it."""
    scanner = Scanner(rules, jobs=1)
    everything = frozenset(range(len(scanner.entries)))

    def line(text: str) -> tuple:
        record = scanner.digest(text.encode(), 1, everything)  # described as a worker describes it
        return record[3], record[4], record[5], record[10], scanner._describe(record[11])

    channel = line("node0:7:7 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[0] [send] via NET/IB/0/GDRDMA")
    version = line("node0:7:7 [0] NCCL INFO NCCL version 2.28.9+cuda12.9")
    assert channel[4][0] is not None and version[4][1]  # remembered values; a rule match
    first = scanner.folder(from_start=False)  # a span after the job's start
    for _ in range(70):  # the version rule's samples fill
        first.keep_described(*version)
    assert first.keep_described(*channel)
    second = scanner.folder(from_start=False)
    second.adopt(first.carry())
    assert not second.keep_described(*channel)  # folded: its first sighting is applied before this span
    assert second.keep_described(*version)  # shipped: process 7's rank may differ here
    assert not second.keep_described(*version)  # then a repeat within this span folds


@pytest.mark.parametrize("in_c", [False, True])
def test_carry_drops_inherited_keys_and_copies_nothing_without_them(rules, in_c):
    """carry() filters the seen lines only when one may hold an (INHERITED, pid) token, whether Python's
    keep_described or the core's keep_in_c remembered it; otherwise the next span starts from the same set."""
    from diag.scan import core

    if in_c and not core.built():
        pytest.skip("the compiled core is not built")
    scanner = Scanner(rules, jobs=1)
    everything = frozenset(range(len(scanner.entries)))
    record = scanner.digest(b"node0:7:7 [0] NCCL INFO NCCL version 2.28.9+cuda12.9", 1, everything)
    version = (record[3], record[4], record[5], record[10], scanner._describe(record[11]))
    assumed = scanner.folder(from_start=False)
    assumed.assume()  # a worker's span: no inherited token, nothing to filter
    assumed.keep_described(*version)
    assert not assumed._inherited_keys and assumed.carry()[0] is assumed._seen
    unknown = scanner.folder(from_start=False)  # neither from the start nor assuming
    keep = core.module().Keeper(unknown) if in_c else unknown.keep_described
    assert keep(*version)
    assert unknown._inherited_keys
    kept = unknown.carry()[0]
    assert kept is not unknown._seen and not any(type(key[2]) is tuple for key in kept)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(steps=st.lists(st.tuples(st.sampled_from(["n0", "n1", ""]), st.integers(0, 3), st.integers(0, 5)), max_size=80))
def test_a_lone_communicator_line_writes_what_overwrites_says(rules, steps):
    """keep_described takes a lone ``comm_rank`` observation's writes from its description (the rank
    ``describe`` read) instead of asking facts.overwrites: the same decisions and last-wins values."""
    scanner = Scanner(rules, jobs=1)
    entry = scanner._rank_entry
    folders = [scanner.folder(), scanner.folder()]
    for host, pid, rank in steps:
        matches = ((entry, {"rank": str(rank), "nranks": "8"}),)
        desc = folders[0].describe(matches)
        assert desc[6] == rank
        kept = [folders[0].keep_described(host, pid, None, "nccl", desc),
                folders[1].keep_described(host, pid, None, "nccl", (*desc[:6], None))]  # fmt: skip
        assert kept[0] == kept[1]
        assert folders[0]._shadow == folders[1]._shadow
        assert folders[0].folded == folders[1].folded
