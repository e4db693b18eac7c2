"""nccl-timeout: a collective timed out; the rank that exited, fell behind or never joined first."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.collectives.ras import ras_mismatch, ras_missing, ras_peer
from diag.diagnosis.analyzers.collectives.waits import (
    blocking_wait,
    flight_recorder,
    jax_fate,
    rank_monitor,
    store_timeout,
    tests_timeout,
    ucc_timeout,
)
from diag.diagnosis.context import Context, natural_key, pick_evidence
from diag.evidence import time_key
from diag.report import Finding

# The watchdog thread itself stopped making progress (blocked in an NCCL or CUDA call), not a collective.
WATCHDOG_BLOCKED = ["heartbeat", "heartbeat_missing", "watchdog_stuck", "terminate_watchdog_hang"]


def nccl_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    names = ["watchdog", "async_exception", *WATCHDOG_BLOCKED, "comm_aborted"]
    # A timeout said only in other words: a rank's dump signal, PyTorch 1.x's exception, the PG status line,
    # the heartbeat monitor's last words.
    told = [
        "op_timed_out", "dump_signal", "failed_trace", "pg_status", "watchdog_cut", "xla_termination", "init_timeout",
        "terminate_after_dump", "remote_error_rank",
    ]  # fmt: skip
    if not ctx.stats(rule, names + told):
        for reader in (
            _work_timeout, _desync, blocking_wait, ras_mismatch, ras_missing, flight_recorder, rank_monitor,
            jax_fate, ucc_timeout, ras_peer, store_timeout, tests_timeout,
        ):  # fmt: skip
            if found := reader(rule, ctx):
                return found
        return []
    cols = facts.collectives
    reporters = {r: c for r, c in cols.items() if c.kind}
    if not reporters:
        names = names + told
        if at_exit := _stuck_at_exit(rule, ctx, names):
            return at_exit
        stuck = sorted({ev.rank for ev, _ in ctx.samples(rule, names) if ev.rank is not None})
        detail = "The PyTorch NCCL watchdog itself was blocked (an NCCL/CUDA call hung)"
        if not ctx.stats(rule, WATCHDOG_BLOCKED):
            detail = "A collective timed out or failed (PyTorch's watchdog said so; its own timeout line is not here)"
            if ctx.stats(rule, ["init_timeout"]) and not ctx.stats(rule, [n for n in names if n != "init_timeout"]):
                detail = (
                    "NCCL's communicator initialization timed out (PyTorch's nonblocking init): a rank never "
                    "joined, or its bootstrap connection never came"
                )
            if ctx.stats(rule, ["watchdog_cut"]):
                detail = "A collective timed out (PyTorch's watchdog caught it; its line is wrapped, the collective on the next)"
            if src := ctx.captures(rule, "from", ["dump_signal"]):
                detail += f"; rank {src[0]} was the first to report the timeout"
        if stuck:
            detail += f" on rank {', '.join(map(str, stuck[:8]))}"
        culprits = "the ranks named"
        if src := ctx.captures(rule, "from", ["remote_error_rank"]):
            detail += f"; rank {src[0]} failed first (PyTorch passed its error on to the others)"
            culprits = f"rank {src[0]}"
        return [ctx.make_finding(rule, names, detail=detail + ".", values={"culprits": culprits})]

    def when(r: int) -> tuple:
        c = reporters[r]
        tk = time_key(c.timestamp)
        return (0, tk, c.order) if tk else (1, (), c.order)

    first = min(reporters, key=when)
    max_seq = max(c.seq for c in reporters.values() if c.seq is not None)
    behind = sorted(
        r
        for r, c in cols.items()
        if (c.min_enqueued is not None and c.min_enqueued < max_seq) or (c.seq is not None and c.seq < max_seq)
    )
    known = set(facts.host_of_rank) | set(cols)
    silent = sorted(known - set(cols))
    if len(silent) > max(1, len(known) // 2):
        silent = []  # most ranks said nothing: their logs are probably not here, not proof they left
    peer_lost = ctx.count(rule.id, ["remote_exited", "closed_by_peer"]) > 0
    c0 = reporters[first]
    what = f"{c0.op or 'a collective'} (SeqNum {c0.seq})"
    if c0.kind == "timeout":
        seen = f"rank {first} timed out" + (f" after {c0.timeout_ms} ms" if c0.timeout_ms else "") + f" in {what}"
    else:
        seen = f"rank {first} lost its peer in {what}"
    if c0.timestamp:
        seen += f" at {c0.timestamp}"
    lagging, lag_text = _desync_verdict(rule, ctx)
    culprits = sorted(set(behind) | set(silent) | set(lagging))
    behind_only = [r for r in behind if r not in silent and r not in lagging]
    parts = []
    if silent:
        one = len(silent) == 1
        parts.append(
            f"Rank {', '.join(map(str, silent[:8]))} exited or stopped first: {'it' if one else 'they'} reported "
            f"no collective error of {'its' if one else 'their'} own, then {seen}"
        )
    else:
        parts.append(seen[0].upper() + seen[1:])
    if behind_only:
        one = len(behind_only) == 1
        parts.append(
            f"rank {', '.join(map(str, behind_only[:8]))} fell behind: {'it' if one else 'they'} had not reached "
            f"collective {max_seq} when the others waited there"
        )
    if lag_text:
        parts.append(lag_text)
    if not culprits:
        parts.append(
            f"every reporting rank waited in the same collective (SeqNum {max_seq}): no reporting rank fell "
            "behind, so suspect a rank that is not shown doing work of its own past the timeout (validation or "
            "checkpointing on rank 0 only), the network, or a hang inside NCCL"
        )
    detail = "; ".join(parts)
    later = sorted(r for r in reporters if r != first)
    if later:
        detail += (
            f". The errors rank {', '.join(map(str, later[:8]))} printed afterwards (ncclRemoteError, connection "
            "closed) are consequences"
        )
    elif peer_lost and silent:
        detail += f". Rank {first}'s ncclRemoteError / 'Connection closed by remote peer' are consequences"
    hosts = sorted({facts.host_of_rank[r] for r in culprits if r in facts.host_of_rank}, key=natural_key)
    shown = culprits or sorted(reporters)
    values = {"culprits": "rank " + ", ".join(map(str, shown[:8])) + (" (+more)" if len(shown) > 8 else "")}
    evidence = pick_evidence(ev for ev, _ in ctx.samples(rule, names + ["pg_status"]))
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", ranks=shown, hosts=hosts or None, values=values, evidence=evidence
        )
    ]


def _desync_verdict(rule: Rule, ctx: Context) -> tuple[list[int], str]:
    """PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG): the ranks it blames, and a sentence saying so."""
    never, started, left = set(), set(), set()
    for ev, g in ctx.samples(rule, ["desync_report"]):
        if g.get("missing"):
            never |= {int(r) for r in re.findall(r"\d+", g["missing"])}
            continue
        ranks = {int(r) for r in re.findall(r"\d+", g.get("ranks") or "")} or ({ev.rank} - {None})
        (started if g.get("seq") else left).update(ranks)
    said = []
    if never:
        said.append(f"rank {', '.join(map(str, sorted(never)[:8]))} never joined any collective")
    if started:
        said.append(f"rank {', '.join(map(str, sorted(started)[:8]))} entered the collective but did not finish it")
    if left:
        said.append(f"rank {', '.join(map(str, sorted(left)[:8]))} never entered it")
    lagging = sorted(never | started | left)
    if not said:
        return lagging, ""
    return lagging, "PyTorch's desync report (TORCH_NCCL_DESYNC_DEBUG) names the ranks behind: " + "; ".join(said)


def _desync(rule: Rule, ctx: Context) -> list[Finding]:
    """The desync report without the watchdog's own line (an excerpt): the ranks it blames."""
    lagging, text = _desync_verdict(rule, ctx)
    if not text:
        return []
    detail = "A collective timed out, and " + text
    values = {"culprits": f"rank {', '.join(map(str, lagging[:8]))}" if lagging else "the ranks named"}
    return [ctx.make_finding(rule, ["desync_report"], detail=detail + ".", values=values, ranks=lagging or None)]


def _stuck_at_exit(rule: Rule, ctx: Context, names: list[str]) -> list[Finding]:
    """The watchdog stuck only after the processes reached their end (ProcessGroupNCCL's exit warning
    came first) and nothing failed before: the process groups were torn down unordered at interpreter
    exit, after the work was done; not a collective that timed out."""
    stuck = ctx.samples(rule, ["watchdog_stuck"])
    exits = ctx.samples(rule, ["exit_without_destroy"])
    if not stuck or not exits or ctx.stats(rule, [n for n in names if n != "watchdog_stuck"]) or ctx.job_failed():
        return []
    if min(ev.order for ev, _ in exits) > min(ev.order for ev, _ in stuck):
        return []
    detail = (
        "The PyTorch NCCL watchdog got stuck after the processes had reached their end (\"destroy_process_group() "
        "was not called before program exit\" came first) and nothing failed before it: the process groups were "
        "torn down unordered at exit, after the work was done. Call torch.distributed.destroy_process_group() at "
        "the end of the program"
    )
    return [
        ctx.make_finding(
            rule, ["watchdog_stuck", "exit_without_destroy"], detail=detail + ".", severity="warning", confidence=0.5,
            values={"culprits": "the teardown at exit"},
        )
    ]  # fmt: skip


def _work_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    """The watchdog's own account of a timeout, without its 'Watchdog caught' line (an excerpt, or a
    PyTorch that prints only this): the rank that timed out and how far each rank got."""
    samples = ctx.samples(rule, ["work_timeout"])
    told = ctx.samples(rule, ["global_timeout"])
    if not samples and not told:
        return []
    progress: dict[int, int] = {}
    for ev, g in samples:
        rank = int(g["rank"]) if g.get("rank") else ev.rank
        if rank is not None:
            progress[rank] = min(progress.get(rank, 1 << 62), int(g["completed"]))
    if samples:
        ranks = sorted(progress)
        who = f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "a rank"
        _, g = samples[0]
        detail = (
            f"A collective timed out on {who}: NCCL work {g['seq']} did not finish (last enqueued "
            f"{g['enqueued']}, last completed {g['completed']})"
        )
        behind = [r for r in ranks if progress[r] < max(progress.values())]
        if behind:
            detail += f"; rank {', '.join(map(str, behind[:8]))} completed fewer collectives than the others"
    else:
        ranks = sorted({int(g["rank"]) if g.get("rank") else ev.rank for ev, g in told} - {None})
        detail = "Another rank timed out in a collective and told " + (
            f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "this rank"
        ) + " (its flight-recorder dump follows); the rank that timed out first has the watchdog's own error"
    shown = behind if samples and behind else ranks
    lagging, lag_text = _desync_verdict(rule, ctx)
    if lag_text:
        detail += "; " + lag_text
        shown = lagging
    values = {"culprits": ("rank " + ", ".join(map(str, shown[:8]))) if shown else "the ranks named"}
    return [
        ctx.make_finding(
            rule, ["work_timeout", "global_timeout"], detail=detail + ".", ranks=shown, values=values,
            evidence=pick_evidence(ev for ev, _ in samples + told),
        )  # fmt: skip
    ]
