"""nccl-timeout from NCCL's RAS report of a hung job (NCCL 2.24+): the ranks that launched fewer operations,
the ranks missing from it."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.context import Context, hosts_text, natural_key
from diag.report import Finding


def ras_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's RAS report of a hung job: the ranks of a communicator launched different numbers of one
    collective. The ranks with the lower count never called the next one: they stopped outside NCCL
    (data loading, a branch only some ranks take, a crash), and the others wait for them in it. The
    report lists a group's ranks under its "N ranks have launched up to operation X" line, or gives a
    lone rank's count on its own line ("Rank 9 has launched up to operation 5212 -- ... on node n3")."""
    samples = ctx.samples(rule, ["ras_count_mismatch"])
    if not samples:
        return ras_status(rule, ctx)
    op = samples[0][1]["op"]
    # Each count with its ranks, in report order: a heading line, then the ranks listed under it.
    groups: dict[int, list[int]] = {}  # count -> number of ranks
    members: dict[int, list[tuple[int, str]]] = {}  # count -> (rank, host)
    heading: int | None = None
    lines = ctx.samples(rule, ["ras_launched", "ras_not_launched", "ras_rank"])
    for _ev, g in sorted(lines, key=lambda s: s[0].order):
        if "count" in g and g.get("count"):
            heading = int(g.get("seq") or 0)
            groups[heading] = [int(g["count"])]
            continue
        state = (g.get("state") or "").strip()
        if m := _RAS_LAUNCHED.match(state):
            seq = int(m[1] or 0)
            groups.setdefault(seq, [0])[0] += 1
        elif not state and heading is not None:
            seq = heading
        else:
            continue
        members.setdefault(seq, []).append((int(g["rank"]), g["host"]))
    detail = f"NCCL's RAS report: the ranks of a communicator launched different numbers of {op} operations"
    ranks: list[int] = []
    hosts: list[str] = []
    if len(groups) > 1:
        order = sorted(groups)
        counts = ", ".join(
            f"{n[0]} {'rank' if n[0] == 1 else 'ranks'} " + (f"up to {seq}" if seq else "with none launched")
            for seq, n in ((k, groups[k]) for k in order)
        )
        low, n_low = order[0], groups[order[0]][0]
        named = members.get(low, [])
        ranks = sorted({r for r, _ in named})
        hosts = sorted({h for _, h in named}, key=natural_key)
        who = f"the {n_low} {'rank' if n_low == 1 else 'ranks'}"
        if ranks:
            who = f"rank {', '.join(map(str, ranks[:8]))}" + (f" on {hosts_text(hosts)}" if hosts else "")
        where = f"at operation {low}" if low else "with no operation launched"
        detail += (
            f" ({counts}): the job hangs because {who} {where} never called the next {op}; look at what "
            "they do instead (data loading, a code path only some ranks take, an error of their own), not at "
            "the ranks waiting in NCCL"
        )
    else:
        detail += ": the job hangs because some ranks never called the collective the others wait in"
    culprits = f"rank {', '.join(map(str, ranks[:8]))}" if ranks else f"the ranks with the lowest {op} count"
    # NCCL lists this under "Warnings": collectives outpace RAS's query, so one snapshot of a job that
    # runs on may show it; it means a hang when the counts stay the same, or when the job failed.
    failed = ctx.job_failed()
    assumed = [] if failed else ["the counts stayed the same: one RAS snapshot is shown and the job is not shown failing"]
    return [
        ctx.make_finding(
            rule, ["ras_count_mismatch"], detail=detail + ".", values={"culprits": culprits}, confidence=0.7,
            ranks=ranks or None, hosts=hosts or None, severity=None if failed else "warning", assumed=assumed,
        )
    ]  # fmt: skip


_RAS_LAUNCHED = re.compile(r"has (?:launched up to operation (\d+)|not launched any operations)$")


def ras_status(rule: Rule, ctx: Context) -> list[Finding]:
    """RAS: the ranks of one communicator are in different states (INIT, RUNNING, FINALIZE, ABORT). NCCL's
    guide shows this while communicators are created or torn down and says to ignore it if a repeated
    query no longer shows it: one snapshot is a warning; the ranks listed apart are the ones to watch."""
    if not ctx.stats(rule, ["ras_status_mismatch"]):
        return []
    odd = [(int(g["rank"]), g["host"], g["state"].strip()) for _, g in ctx.samples(rule, ["ras_rank"])]
    odd = [(r, h, st.removeprefix("has status ")) for r, h, st in odd if st.startswith("has status")]
    detail = "NCCL's RAS report: the ranks of a communicator are not all in the same state"
    ranks = sorted({r for r, _, _ in odd})
    hosts = sorted({h for _, h, _ in odd}, key=natural_key)
    if odd:
        states = ", ".join(f"rank {r} {st}" for r, _, st in odd[:8])
        detail += f" ({states} on {hosts_text(hosts)})"
    detail += (
        "; during a communicator's creation or teardown this is transitional: if a repeated ncclras query still "
        "shows it, the ranks in the other state are stuck (an ABORT is an error of their own)"
    )
    values = {"culprits": f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "the ranks in another state"}
    assumed = ["the state persists: one RAS snapshot is shown, and NCCL calls such a mismatch transitional"]
    return [
        ctx.make_finding(
            rule, ["ras_status_mismatch"], detail=detail + ".", values=values, confidence=0.35, severity="warning",
            ranks=ranks or None, hosts=hosts or None, assumed=assumed,
        )
    ]  # fmt: skip


def ras_missing(rule: Rule, ctx: Context) -> list[Finding]:
    """RAS: processes the RAS network lost ("considered dead") or that sent nothing about their
    communicators ("Missing communicator data"): a process that exited, hung hard or whose node went
    away; the processes and ranks listed under the heading say which, and where."""
    names = ["ras_missing", "ras_missing_rank", "ras_event_dead"]
    heads = ctx.samples(rule, names)
    if not heads:
        return []
    start = min(ev.order for ev, _ in heads)
    procs = [g for ev, g in ctx.samples(rule, ["ras_process"]) if ev.order >= start]
    procs += [g for _, g in ctx.samples(rule, ["ras_event_dead"]) if g.get("host")]
    listed = [g for ev, g in ctx.samples(rule, ["ras_rank"]) if ev.order > start and not g["state"].strip()]
    hosts = sorted({g["host"] for g in procs + listed}, key=natural_key)
    ranks = {int(g["rank"]) for g in listed}
    ranks |= {int(r) for _, g in ctx.samples(rule, ["ras_missing_list"]) for r in re.findall(r"\d+", g["ranks"])}
    ranks = sorted(ranks)
    dead = any(g.get("dead") for _, g in heads) or bool(ctx.stats(rule, ["ras_event_dead"]))
    who = "some processes"
    if hosts:
        pids = ", ".join(dict.fromkeys(g["pid"] for g in (procs or listed)[:8]))
        who = f"rank {', '.join(map(str, ranks[:8]))} (process {pids})" if ranks else f"process {pids}"
        who += f" on {hosts_text(hosts)}"
    elif ranks:
        who = f"rank {', '.join(map(str, ranks[:8]))}"
    what = "lost" if dead else "got no communicator data from"
    detail = f"NCCL's RAS report: the RAS network {what} {who}" + (" (unreachable, considered dead)" if dead else "")
    detail += (
        "; the other ranks wait for them in NCCL. Look at what ended or stopped those processes (an error of "
        "their own, the OOM killer, the node)"
    )
    shown = (f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "") or (hosts_text(hosts) if hosts else "")
    values = {"culprits": shown or "the processes RAS lists"}
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", values=values, confidence=0.65, ranks=ranks or None, hosts=hosts or None,
        )
    ]  # fmt: skip


def ras_peer(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's RAS thread (NCCL_DEBUG_SUBSYS=RAS) gave up on a peer: no keep-alive for 20 s, then the
    peer declared dead. INFO lines only: an error when the job failed, else a warning."""
    names = ["ras_peer_timeout", "ras_peer_dead"]
    samples = ctx.samples(rule, names)
    if not samples:
        return []
    peers = list(dict.fromkeys(g["peer"] for _, g in samples))
    detail = (
        f"NCCL's RAS thread lost its peer {', '.join(peers[:4])}: no keep-alive answer, then declared dead. "
        "That process exited, hung hard or its node became unreachable; the ranks that wait for it in NCCL "
        "are its consequence"
    )
    failed = ctx.job_failed()
    assumed = [] if failed else ["the job stopped or hung: these are NCCL INFO lines, and no failure is shown"]
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", values={"culprits": f"the process at {peers[0]}"},
            severity=None if failed else "warning", confidence=0.55, assumed=assumed, hosts=[],
        )
    ]  # fmt: skip
