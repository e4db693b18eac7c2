"""Runs of communicator lines, condensed by a worker into their net effect on the job.

On a dense NCCL log nearly every record a worker ships is a communicator line (``comm 0x.. rank 54
nranks 256``, possibly with a rule's ``Init COMPLETE`` match): each gives a process its rank in the
next communicator, so it changes a last-wins fact and cannot fold into a count (diag.scan.fold).
Applied one by one in the main process they were its whole cost: on a 256 MB log at 30% candidate
lines the main process spent 0.41 s of CPU on 140,000 records while two workers spent 0.56 s each,
and the scan took as long as on one core.

A run of such lines between two other records only sets facts and counts matches, and what it sets
can be summed up exactly: the rank of each process and the host of each rank (the last one
written), the hosts in the order first seen, each host's ranks and each rule match's hosts, ranks
and captured values in first-seen order (every table keeps its first N distinct entries, so that
order decides what a full table holds). :func:`condense` makes that summary in the worker;
:func:`apply_run` applies it in the main process, with the same result as applying every line of
the run with diag.scan.scanner.Scanner.apply (tests/scan/test_runs.py compares the two).

A rule match is condensed only once this worker has shipped ``MAX_SAMPLES`` records with it: those
are applied before the run, so its evidence samples are full and the line would only count.
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass

from diag.scan.facts import HOST_OF, RANK_OF

MIN_RUN = 16  # shorter runs are shipped as they are: a run costs a few objects of its own
_HOST_OF_RANK_CAP = 100_000  # Facts.observe_rank_line keeps at most this many ranks' hosts
_HOST_RANKS_CAP = 4096  # ... and this many ranks per host
MAX_DISTINCT = 256  # SigStats keeps this many distinct hosts, ranks and values
_NCCL_EMITTERS = ("nccl", "ucx", "ompi")


@dataclass
class RankRun:
    """The net effect of consecutive communicator lines (see the module's docstring)."""

    hosts: list[str]  # distinct, in first-seen order
    first_lines: list[int]  # the line (of the task) where each host was first seen
    host_index: array  # per line: its host, as an index into ``hosts``
    pids: array  # per line
    ranks: array  # per line: the rank it writes
    max_nranks: int
    nccl_info: bool
    slurm: bool
    # Per statistics key (rule, signature): (matches, hosts -> count, distinct ranks, group -> distinct values).
    counted: dict[tuple[str, str], tuple[int, dict[str, int], dict[int, None], dict[str, dict[str, None]]]]


def condense(records: list, entries: list, facts_owner: str, rank_entry: int, shipped: dict[int, int], max_samples: int) -> list:
    """``records`` (one task's, in order) with each long run of communicator lines replaced by a
    :class:`RankRun`. ``shipped``: rule entry -> records this worker shipped with it before these
    (Folder._shipped as it was when the task began); updated as the records are walked."""
    out: list = []
    run: list = []
    rule_owner = [owner != facts_owner for owner, _ in entries]

    def close() -> None:
        if len(run) >= MIN_RUN:
            out.append(_summarise(run, entries))
        else:
            out.extend(run)
        run.clear()

    for record in records:
        host, pid, matches = record[3], record[4], record[11]
        if host and pid is not None and matches and matches[0][0] == rank_entry:
            rest = matches[1:]
            # The rule matches of a condensed line must be ones whose samples are full.
            if all(rule_owner[i] and shipped.get(i, 0) >= max_samples for i, _ in rest):
                run.append(record)
                for i, _ in rest:
                    shipped[i] += 1
                continue
        close()
        out.append(record)
        for i, _ in matches:
            if i >= 0 and rule_owner[i]:
                shipped[i] = shipped.get(i, 0) + 1
    close()
    return out


def _summarise(run: list, entries: list) -> RankRun:
    hosts: dict[str, int] = {}
    first_lines: list[int] = []
    host_index, pids, ranks = array("l"), array("q"), array("q")
    max_nranks = 0
    nccl_info = slurm = False
    counted: dict = {}
    for line_no, _text, _cut, host, pid, rank, _local, _task, level, _ts, emitter, matches in run:
        at = hosts.get(host)
        if at is None:
            at = hosts[host] = len(first_lines)
            first_lines.append(line_no)
        groups = matches[0][1]
        written = int(groups["rank"])
        host_index.append(at)
        pids.append(pid)
        ranks.append(written)
        max_nranks = max(max_nranks, int(groups["nranks"]))
        if emitter == "nccl" and level == "INFO":
            nccl_info = True
        elif emitter == "slurm":
            slurm = True
        if len(matches) == 1:
            continue
        ev_rank = rank if rank is not None else written  # the rank this very line just gave the process
        for i, match_groups in matches[1:]:
            owner, sig = entries[i]
            key = (owner, sig.name)
            agg = counted.get(key)
            if agg is None:
                agg = counted[key] = [0, {}, {}, {}]
            agg[0] += 1
            agg[1][host] = agg[1].get(host, 0) + 1
            agg[2][ev_rank] = None
            captures = agg[3]
            for name, value in match_groups.items():
                if value is not None:
                    captures.setdefault(name, {})[value] = None
    return RankRun(
        list(hosts), first_lines, host_index, pids, ranks, max_nranks, nccl_info, slurm,
        {key: tuple(agg) for key, agg in counted.items()},
    )  # fmt: skip


def apply_run(run: RankRun, index: int, line_base: int, result, folder) -> None:
    """Apply ``run`` to ``result`` (a ScanResult) as applying its lines in order would; tell
    ``folder`` (the main process's) the last-wins values the run wrote, as shipping them would."""
    facts = result.facts
    if run.nccl_info:
        facts.nccl_info = True
    if run.slurm:
        facts.slurm_messages = True
    for host, line_no in zip(run.hosts, run.first_lines):
        facts.host(host, (index, line_no + line_base))
    facts.max_nranks = max(facts.max_nranks, run.max_nranks)
    names = run.hosts
    line_hosts = [names[i] for i in run.host_index]
    ranks = run.ranks.tolist()
    processes = dict(zip(zip(line_hosts, run.pids.tolist()), ranks))  # the last rank of each, first-seen order
    facts.rank_of_process.update(processes)
    of_rank = dict(zip(ranks, line_hosts))
    host_of_rank = facts.host_of_rank
    if len(host_of_rank) + len(of_rank) < _HOST_OF_RANK_CAP:
        host_of_rank.update(of_rank)
    else:  # the table may fill during the run: from then on nothing more is written
        for rank, host in zip(ranks, line_hosts):
            if len(host_of_rank) < _HOST_OF_RANK_CAP:
                host_of_rank[rank] = host
    hosts = facts.hosts
    for at, rank in dict.fromkeys(zip(run.host_index, ranks)):
        hf = hosts[names[at]]
        if len(hf.ranks) < _HOST_RANKS_CAP:
            hf.ranks.add(rank)
    for key, (n, by_host, ev_ranks, captures) in run.counted.items():
        stats = result.stats[key]  # its samples are full: it exists
        stats.count += n
        for host, count in by_host.items():
            if host in stats.hosts or len(stats.hosts) < MAX_DISTINCT:
                stats.hosts[host] = stats.hosts.get(host, 0) + count
        for rank in ev_ranks:
            if len(stats.ranks) < MAX_DISTINCT:
                stats.ranks.add(rank)
        for name, values in captures.items():
            kept = stats.captures.setdefault(name, {})
            for value in values:
                if len(kept) < MAX_DISTINCT:
                    kept[value] = None
    if folder is not None:
        folder.wrote(((RANK_OF, host, pid), rank) for (host, pid), rank in processes.items())
        folder.wrote(((HOST_OF, rank), host) for rank, host in of_rank.items())
