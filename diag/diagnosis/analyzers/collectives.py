"""Collectives: watchdog timeouts and the rank behind them, nccl-tests bandwidth, verbose NCCL logging."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import group_store_waits, plural
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.evidence import time_key
from diag.report import Finding

INFO_VERBOSE_RANKS = 64

INFO_VERBOSE_LINES = 1_000_000

# Large-message all_reduce busbw of one node's NVLink domain, by GPU name (conservative figures).
NVLINK_BUSBW = (
    ("B200", 650.0),
    ("GB200", 650.0),
    ("H200", 360.0),
    ("H100", 360.0),
    ("H800", 170.0),
    ("A100", 220.0),
    ("A800", 150.0),
    ("V100", 130.0),
)


# ------------------------------------------------------------------------------------ NCCL_DEBUG=INFO
def debug_verbose(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    info_ranks = max(len(facts.host_of_rank), sum(st.count for _, st in ctx.stats(rule, ["init_complete"])))
    lines = sum(i.lines for i in ctx.scan.inputs)
    if info_ranks == 0:
        return []
    if facts.max_nranks >= INFO_VERBOSE_RANKS and info_ranks >= INFO_VERBOSE_RANKS:
        detail = f"NCCL_DEBUG=INFO is on for all {facts.max_nranks} ranks of this job ({lines:,} log lines)"
    elif lines >= INFO_VERBOSE_LINES:
        detail = f"NCCL_DEBUG=INFO output fills this job's log ({lines:,} lines)"
    else:
        return []
    samples = [ev for ev, _ in ctx.samples(rule, ["init_complete"])][:3]
    return [
        ctx.make_finding(
            rule, ["init_complete", "debug_env"], detail=detail + ".", evidence=samples, hosts=[], ranks=[]
        )
    ]


# ------------------------------------------------------------------------------------ collective timeout
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
            _work_timeout, _desync, _blocking_wait, _ras_mismatch, _ras_missing, _flight_recorder, _rank_monitor,
            _jax_fate, _ucc_timeout, _ras_peer, _store_timeout, _tests_timeout,
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


def _ras_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's RAS report of a hung job: the ranks of a communicator launched different numbers of one
    collective. The ranks with the lower count never called the next one: they stopped outside NCCL
    (data loading, a branch only some ranks take, a crash), and the others wait for them in it. The
    report lists a group's ranks under its "N ranks have launched up to operation X" line, or gives a
    lone rank's count on its own line ("Rank 9 has launched up to operation 5212 -- ... on node n3")."""
    samples = ctx.samples(rule, ["ras_count_mismatch"])
    if not samples:
        return _ras_status(rule, ctx)
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


def _ras_status(rule: Rule, ctx: Context) -> list[Finding]:
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


def _ras_missing(rule: Rule, ctx: Context) -> list[Finding]:
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


def _ras_peer(rule: Rule, ctx: Context) -> list[Finding]:
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


def _blocking_wait(rule: Rule, ctx: Context) -> list[Finding]:
    """TORCH_NCCL_BLOCKING_WAIT: the calling thread timed out on a collective (no watchdog line)."""
    samples = ctx.samples(rule, ["blocking_wait"])
    if not samples:
        return []
    ranks = sorted({int(g["rank"]) if g.get("rank") else ev.rank for ev, g in samples} - {None})
    _, g = samples[0]
    what = f"{g['op']}" + (f" (SeqNum {g['seq']})" if g.get("seq") else "")
    who = f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "a rank"
    detail = (
        f"A collective timed out in a blocking wait (TORCH_NCCL_BLOCKING_WAIT) on {who}: {what} did not finish; "
        "the rank that never reached it is the cause"
    )
    values = {"culprits": "the rank that did not reach " + what}
    return [ctx.make_finding(rule, ["blocking_wait"], detail=detail + ".", values=values, ranks=ranks)]


def _flight_recorder(rule: Rule, ctx: Context) -> list[Finding]:
    """PyTorch's flight-recorder analysis: a collective some ranks of the group never entered."""
    samples = ctx.samples(rule, ["fr_not_joined"])
    if not samples:
        return []
    ranks = sorted({int(r) for _, g in ctx.samples(rule, ["missing_ranks"]) for r in re.findall(r"\d+", g["ranks"])})
    seq = next((g["seq"] for _, g in samples if g.get("seq")), None)
    detail = "PyTorch's flight recorder: not all ranks entered " + (f"collective {seq}" if seq else "a collective")
    if ranks:
        detail += f"; rank {', '.join(map(str, ranks[:8]))} never joined it: look at what {'it' if len(ranks) == 1 else 'they'} did instead"
    values = {"culprits": f"rank {', '.join(map(str, ranks[:8]))}" if ranks else "the ranks missing from it"}
    return [
        ctx.make_finding(rule, ["fr_not_joined", "missing_ranks"], detail=detail + ".", values=values, ranks=ranks or None)
    ]


_MONITOR_NAME = re.compile(r"RankMonitorServer\d*@(?P<host>[\w.-]+):(?P<rank>\d+)\]")


def _rank_monitor(rule: Rule, ctx: Context) -> list[Finding]:
    """NVRx fault tolerance: the rank monitor saw a rank stop sending heartbeats, or stay in one
    section past its timeout, and kills it as hung; its logger names the rank and host."""
    names = ["rank_monitor", "rank_monitor_section"]
    samples = ctx.samples(rule, names)
    if not samples:
        return []
    ranks: set[int] = set()
    hosts: set[str] = set()
    for ev, _ in samples:
        if m := _MONITOR_NAME.search(ev.text):
            ranks.add(int(m["rank"]))
            hosts.add(m["host"])
    ev, g = samples[0]
    if g.get("which"):
        what = f"sent no {g['which']} heartbeat for {float(g['secs']):g} s"
    elif g.get("section"):
        what = f"stayed in section '{g['section']}' for {float(g['secs']):g} s, past its timeout"
    else:
        what = f"stayed outside any section for {float(g['secs']):g} s, past its timeout"
    who = f"rank {', '.join(map(str, sorted(ranks)[:8]))}" if ranks else "a rank"
    if hosts:
        who += f" on {hosts_text(sorted(hosts, key=natural_key))}"
    detail = (
        f"The fault-tolerance rank monitor (NVIDIA Resiliency Extension) found {who} hung: it {what}, and is "
        "terminated for it. Look at what that rank was doing (a collective the others never entered, data "
        "loading, a checkpoint)"
    )
    values = {"culprits": who}
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", values=values, ranks=sorted(ranks) or None,
            hosts=sorted(hosts) or None,
        )
    ]  # fmt: skip


def _jax_fate(rule: Rule, ctx: Context) -> list[Finding]:
    """JAX's coordination service: a task stopped sending heartbeats (or the leader went away) and
    every other task terminates with it; the task it names is the one to look at."""
    names = ["jax_fatal", "jax_unhealthy", "jax_heartbeat", "jax_polled", "jax_not_connected"]
    samples = ctx.samples(rule, names)
    if not samples:
        return []
    tasks = sorted({int(g["task"]) for _, g in ctx.samples(rule, ["jax_task", "jax_heartbeat"])})
    leader = any(g.get("leader") for _, g in samples)
    strong = ctx.stats(rule, ["jax_fatal", "jax_unhealthy", "jax_heartbeat"])
    if tasks:
        detail = (
            f"JAX's coordination service stopped hearing from task {', '.join(map(str, tasks[:8]))} (no heartbeats) "
            "and ended the other tasks with it: that task crashed or its node went away first; its own log has "
            "the cause"
        )
    elif leader:
        detail = (
            "JAX's tasks lost the coordination service's leader (task 0): it was preempted, died or restarted, "
            "or the network to it failed; task 0's log has the cause"
        )
    elif ctx.stats(rule, ["jax_not_connected"]) and not strong:
        detail = "A JAX collective was cancelled because one of its tasks is no longer connected (it died)"
    else:
        detail = "JAX's coordination service reported a fatal error of another task; that task's log has the cause"
    values = {"culprits": f"task {', '.join(map(str, tasks[:8]))}" if tasks else ("task 0" if leader else "the task that died")}
    if strong:
        return [ctx.make_finding(rule, names, detail=detail + ".", values=values, hosts=[])]
    # The agent's "Polled an error" or a cancelled collective alone: thin, an error only when the job failed.
    severity = None if ctx.job_failed() else "warning"
    return [ctx.make_finding(rule, names, detail=detail + ".", values=values, confidence=0.5, severity=severity, hosts=[])]


def _ucc_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    samples = ctx.samples(rule, ["ucc_timeout"])
    if not samples:
        return []
    _, g = samples[0]
    detail = (
        f"A UCC {g['coll']} collective ran past its timeout ({float(g['secs']):g} s): a rank never joined it "
        "(it exited, hung or fell behind)"
    )
    return [ctx.make_finding(rule, ["ucc_timeout"], detail=detail + ".", values={"culprits": "the rank that never joined"})]


def _tests_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    samples = ctx.samples(rule, ["tests_timeout"])
    if not samples:
        return []
    hosts = sorted({g["host"] for _, g in samples if g.get("host")})
    detail = (
        f"An nccl-tests collective did not complete within its --timeout of {samples[0][1]['secs']} s"
        + (f" on {hosts_text(hosts)}" if hosts else "")
        + ": the collective hung (a rank that never joined it, or a transport that connected but moves no data)"
    )
    return [ctx.make_finding(rule, ["tests_timeout"], detail=detail + ".", hosts=hosts,
                             values={"culprits": "the host named"})]


# ------------------------------------------------------------------------------------------- busbw
def _store_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    samples = ctx.samples(rule, ["store_timeout"])
    if not samples:
        return _group_store_wait(rule, ctx) or _barrier_wait(rule, ctx)
    waited = sorted({ev.rank for ev, _ in samples if ev.rank is not None})
    ms = max(int(g["ms"]) for _, g in samples)
    who = f"Rank {', '.join(map(str, waited[:8]))}" if waited else "A rank"
    detail = (
        f"{who} waited {ms / 60000:g} min on the c10d store and gave up: a rank that had not reached the same "
        "point (often rank 0 preprocessing, tokenizing or saving for longer than the process group's timeout) "
        "held the others at a barrier"
    )
    return [ctx.make_finding(rule, ["store_timeout"], detail=detail + ".", confidence=0.6)]


_WAITED_MS = re.compile(r"after (\d+)\s*ms")


def _group_store_wait(rule: Rule, ctx: Context) -> list[Finding]:
    """Ranks whose store read timed out inside a process group that existed (the NCCL unique id of its
    first collective, a key under the group's prefix): the store answered, so the processes had met;
    one of them (rank 0 for the unique id) had not reached that point within the group's timeout."""
    waits = group_store_waits(ctx)
    if not waits:
        return []
    waited = sorted({ev.rank for ev, _ in waits if ev.rank is not None})
    who = f"Rank {', '.join(map(str, waited[:8]))}" if waited else "A rank"
    ms = [int(m) for ev, _ in waits for m in _WAITED_MS.findall(ev.text)]
    took = f" for {max(ms) / 60000:g} min" if ms else ""
    unique_id = any("ncclUniqueId" in ev.text or "//cuda//" in ev.text for ev, _ in waits)
    what = "the NCCL unique id rank 0 publishes at the group's first collective" if unique_id else "a key of the group"
    detail = (
        f"{who} waited{took} in the c10d store for {what} and gave up. The store answered the wait, so the "
        "processes had met at MASTER_ADDR:MASTER_PORT; the rank that sets the key had not reached the same point "
        "in time: still working on its own (tokenizing or preprocessing a dataset, loading or saving a model on "
        "rank 0 only) past the process group's timeout, hung, or stopped without its store going away"
    )
    assumed = ["the rank that sets the key was late or hung: its own log, not here, says which"]
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", evidence=pick_evidence(ev for ev, _ in waits), confidence=0.6,
            ranks=waited, values={"culprits": "rank 0 (the one that sets the key)"}, assumed=assumed,
        )
    ]  # fmt: skip


def _barrier_wait(rule: Rule, ctx: Context) -> list[Finding]:
    frames = ctx.samples(rule, ["barrier_frame"])
    if not frames:
        return _cpp_barrier_frame(rule, ctx) or _other_collective_waits(rule, ctx)
    detail = (
        "The ranks failed inside main_process_first, where they wait for the main process to finish "
        "preprocessing (tokenizing, caching a dataset): the wait outlasted the process group's timeout "
        "(ddp_timeout, 30 min by default), or the main process died first"
    )
    return [ctx.make_finding(rule, ["barrier_frame"], detail=detail + ".", confidence=0.45)]


def _cpp_barrier_frame(rule: Rule, ctx: Context) -> list[Finding]:
    """A C++ stack through a process group's barrier with no exception line kept: the process failed in
    a barrier, where ranks wait for each other; a wait that outlasted the timeout is the usual end."""
    frames = ctx.samples(rule, ["cpp_barrier_frame"])
    if not frames:
        return []
    backend = frames[0][1].get("backend") or ""
    detail = (
        "A process failed inside a distributed barrier (its C++ stack goes through "
        f"ProcessGroup{backend}::barrier) and the excerpt left the exception out: the barrier most often ends "
        "so when one rank (the main process preprocessing or tokenizing a dataset) stays away past the process "
        "group's timeout (ddp_timeout, 30 min by default); the first collective's NCCL setup failing fails there too"
    )
    assumed = ["the exception was a timeout: the excerpt keeps only the stack frames, not what was raised"]
    return [
        ctx.make_finding(
            rule, ["cpp_barrier_frame"], detail=detail + ".", evidence=[frames[0][0]], severity="warning",
            confidence=0.35, assumed=assumed,
        )
    ]  # fmt: skip


def _other_collective_waits(rule: Rule, ctx: Context) -> list[Finding]:
    """Collective timeouts outside ProcessGroupNCCL's watchdog: monitored_barrier naming the ranks
    that never came, Gloo, Horovod's stall inspector, PyTorch's teardown after an NCCL failure."""
    for _ev, g in ctx.samples(rule, ["monitored_barrier"])[:1]:
        ranks = [int(r) for r in g["ranks"].replace(" ", "").split(",") if r]
        detail = f"Rank {', '.join(map(str, ranks[:8]))} never reached the monitored barrier within {g['ms']} ms"
        hosts = sorted({ctx.facts.host_of_rank[r] for r in ranks if r in ctx.facts.host_of_rank}, key=natural_key)
        values = {"culprits": "rank " + ", ".join(map(str, ranks[:8]))}
        return [
            ctx.make_finding(
                rule, ["monitored_barrier"], detail=detail + ".", ranks=ranks, hosts=hosts or None, values=values
            )
        ]
    for _ev, g in ctx.samples(rule, ["gloo_timeout"])[:1]:
        detail = f"A Gloo collective waited {int(g['ms']) / 60000:g} min for a peer's {g['op']} and gave up"
        return [ctx.make_finding(rule, ["gloo_timeout"], detail=detail + ".", confidence=0.6)]
    if ctx.stats(rule, ["gloo_closure", "gloo_read_timeout", "gloo_mr_timeout"]):
        detail = "A Gloo collective ran out of time waiting for a peer and closed its connection"
        if peers := ctx.captures(rule, "peer", ["gloo_read_timeout", "gloo_mr_timeout"]):
            detail = f"A Gloo collective ran out of time waiting for its peer {', '.join(peers[:4])}"
        return [
            ctx.make_finding(
                rule, ["gloo_closure", "gloo_read_timeout", "gloo_mr_timeout"], detail=detail + ".", confidence=0.55
            )
        ]
    if ctx.stats(rule, ["horovod_stall", "horovod_shutdown"]):
        detail = "Horovod's stall inspector: some ranks submitted a collective the others never reached"
        missing = sorted({int(r) for _, g in ctx.samples(rule, ["missing_ranks"]) for r in re.findall(r"\d+", g["ranks"])})
        if missing:
            detail += f" (rank {', '.join(map(str, missing[:8]))} did not submit it)"
        if secs := ctx.captures(rule, "secs", ["horovod_shutdown"]):
            detail += f", and Horovod shut the job down after {secs[0]} s of it"
        return [ctx.make_finding(rule, ["horovod_stall", "horovod_shutdown"], detail=detail + ".", confidence=0.6)]
    if ctx.stats(rule, ["ops_failed", "taking_down"]):
        detail = "PyTorch took the process down after NCCL operations failed or timed out"
        return [ctx.make_finding(rule, ["ops_failed", "taking_down"], detail=detail + ".", confidence=0.5)]
    return []


def busbw_low(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    rows = list(facts.busbw_rows) + _old_rows(rule, ctx)
    oob = ctx.stats(rule, ["oob_failed"])
    below = ctx.captures(rule, "avg", ["avg_failed"])
    checked = ctx.samples(rule, ["nhc_busbw"])
    if not rows and not oob and not below and not checked:
        return []
    wrong_rows = [r for r in rows if r.wrong]
    problems = []
    severity = None
    if wrong_rows or oob:
        n = sum(r.wrong or 0 for r in wrong_rows) or int(
            max(ctx.captures(rule, "wrong", ["oob_failed"]) or ["0"], key=int)
        )
        problems.append(
            f"nccl-tests counted {plural(n, 'wrong result')} (#wrong): data corruption, an error of its own"
        )
        severity = "error"
    measured = expected = None
    largest = None
    assumed: list[str] = []
    if rows:
        largest = max(rows, key=lambda r: (r.size, r.order))
        # Several tests in one log: judge each by its own largest size, report the worst.
        measured = largest.busbw
        expected, source = _expected_busbw(ctx, largest.size, rule)
        threshold = 0.8 if source == "--expect-busbw" else 0.6
        if expected and measured < threshold * expected:
            low = (
                f"busbw at the largest size ({_size_text(largest.size)}) is {measured:g} GB/s, "
                f"{measured / expected:.0%} of the {expected:g} GB/s expected ({source})"
            )
            suspects = _busbw_suspects(ctx)
            problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
            if source == RDMA_FLOOR_SOURCE and not suspects and not any(h.hcas for h in facts.hosts.values()):
                # Only the guess of the fabric calls it slow: nothing in the log says what the nodes have.
                assumed.append("the nodes have an RDMA fabric of 100 Gb/s or more (nothing here says which fabric)")
            if not ctx.stats(rule, ["avg_busbw", "table_end"]):
                # An excerpt may stop before the largest size: only the table's end proves it was the last.
                assumed.append(
                    "the largest message size shown is the run's largest: the end of the results table "
                    '("Avg bus bandwidth") is not in the logs'
                )
    if below and not any("busbw at the largest size" in p for p in problems):
        # The user gave nccl-tests its own floor (NCCL_TESTS_MIN_BW) and the run fell short of it.
        low = f"nccl-tests' own bandwidth check failed: average busbw {below[0]} GB/s is under 90% of NCCL_TESTS_MIN_BW"
        suspects = _busbw_suspects(ctx)
        problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
        severity = "error"
    if checked and not problems:
        # A node health check ran all_reduce_perf itself and compared it with its own expectation.
        g = checked[0][1]
        hosts = sorted({h for ev, _ in checked if (h := ctx.host_for(ev))})
        low = (
            f"a node health check measured {g['measured']} GB/s all-reduce busbw against the {g['expected']} GB/s it "
            "expects" + (f" on {hosts_text(hosts)}" if hosts else "")
        )
        suspects = _busbw_suspects(ctx)
        problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
        measured, expected = float(g["measured"]), float(g["expected"])
        severity = "error"
    if not problems:
        return []
    if assumed and severity is None:
        severity = "warning"
    values = {
        "measured": f"{measured:g}" if measured is not None else "?",
        "expected": f"{expected:g}" if expected else "?",
        "size": _size_text(largest.size) if largest else "the largest size",
    }
    evidence = []
    for r in ([largest] if largest else []) + wrong_rows[:3]:
        evidence.append(ctx.evidence_at(r.order, r.text))
    evidence += [ev for ev, _ in ctx.samples(rule, ["oob_failed", "avg_failed", "nhc_busbw"])][:2]
    finding = ctx.make_finding(
        rule,
        ["oob_failed", "avg_failed", "nhc_busbw"],
        detail="; ".join(problems) + ".",
        evidence=pick_evidence(evidence),
        values=values,
        severity=severity,
        assumed=assumed,
    )
    finding.count = max(finding.count, len(wrong_rows) + (1 if largest else 0))
    if (wrong_rows or oob) and len(problems) == 1:
        # Bandwidth was not the problem: busbw-low (a slow fabric) would name the wrong cause, and no cause id
        # is data corruption, so it is the honest unexplained failure, with what to do about wrong values.
        unexplained = ctx.rules.get("unexplained-failure")
        if unexplained is None:
            finding.remediation = _CORRUPTION_FIX
            return [finding]
        detail = problems[0].replace(", an error of its own", "") + (
            f", while the bandwidth was not what failed ({values['measured']} GB/s at {values['size']})"
            if measured is not None
            else ""
        )
        corrupted = ctx.make_finding(
            unexplained, [], detail=detail + ".", evidence=finding.evidence, severity="error", confidence=0.6
        )
        corrupted.remediation = _CORRUPTION_FIX
        return [corrupted]
    return [finding]


_CORRUPTION_FIX = (
    "nccl-tests found wrong values: data was corrupted on a GPU or in transit (bandwidth is not what failed). Rerun "
    "all_reduce_perf -c 1 on halves of the nodes to find the one that corrupts; check its `dmesg` for Xid and "
    "`nvidia-smi nvlink -e` / `ibstat` error counters. On HPE Slingshot through the aws-ofi-nccl plugin, a NCCL "
    "build or container without the site module's FI_CXI_* and NCCL_* settings corrupts data: set them as the "
    "module does."
)


def _old_rows(rule: Rule, ctx: Context) -> list:
    """nccl-tests 2.0-2.12's result rows (no root column; a deviation, not a count, where later ones
    count wrong values). A table longer than the samples kept is judged only if its largest size is
    among them."""
    from diag.scan.facts import BusbwRow

    rows = []
    for ev, g in ctx.samples(rule, ["row_old"]):
        busbw = max(float(g["busbw1"]), float(g.get("busbw2") or 0))
        rows.append(BusbwRow(ev.order, ev.text[:300], int(g["size"]), busbw, None))
    sizes = ctx.captures(rule, "size", ["row_old"])
    if rows and sizes and max(int(x) for x in sizes) > max(r.size for r in rows):
        return []
    return rows


def _tests_hosts_gpus(ctx: Context, rule: Rule | None) -> tuple[set[str], set[str]]:
    """The hosts and GPUs nccl-tests listed ("# Using devices"), in its 2.13+ and 2.0-2.12 forms."""
    hosts, gpus = set(ctx.facts.tests_hosts), set(ctx.facts.tests_gpus)
    if rule is not None:
        for _, g in ctx.samples(rule, ["device_old"]):
            hosts.add(g["host"])
            gpus.add(g["gpu"])
    return hosts, gpus


def _port_speeds(ctx: Context, rule: Rule | None) -> list[tuple[int, float]]:
    """(ports, GB/s per port) of each host from NCCL 2.28+'s per-port "provider=... speed=<Mb/s>" lines."""
    if rule is None:
        return []
    per_host: dict[str, dict[str, float]] = {}
    for ev, g in ctx.samples(rule, ["ib_speed"]):
        host = ctx.host_for(ev) or ""
        per_host.setdefault(host, {})[f"{g['hca']}:{g['port']}"] = int(g["speed"]) / 8000
    return [(len(ports), min(ports.values())) for ports in per_host.values() if ports]


def _busbw_suspects(ctx: Context) -> list[str]:
    """What the NCCL INFO lines of the same log show that caps bandwidth (so the finding says why)."""
    hosts = ctx.facts.hosts.values()
    out = []
    tcp = [h.host for h in hosts if h.uses_socket()]
    if tcp and ctx.facts.multi_node():
        out.append(f"inter-node traffic over TCP sockets on {hosts_text(tcp)}")
    no_gdr = [h.host for h in hosts if h.plain_ib_channels and not h.gdr_channels]
    if no_gdr:
        out.append(f"no GPUDirect RDMA on {hosts_text(no_gdr)} (gdr-disabled)")
    return out


def _size_text(size: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"


RDMA_FLOOR_BUSBW = 12.5  # GB/s: one 100 Gb/s port per node
RDMA_FLOOR_SOURCE = "inferred: the slowest RDMA fabric of a data-centre GPU cluster, 100 Gb/s per node"
FLOOR_MIN_SIZE = 64 << 20  # smaller messages need not reach line rate


def _expected_busbw(ctx: Context, largest_size: int = 0, rule: Rule | None = None) -> tuple[float | None, str]:
    given = getattr(ctx, "expect_busbw", None)
    if given:
        return float(given), "--expect-busbw"
    facts = ctx.facts
    tests_hosts, tests_gpus = _tests_hosts_gpus(ctx, rule)
    hosts = tests_hosts or {h for h in facts.hosts}
    ib = [h for h in facts.hosts.values() if h.hcas]
    if len(hosts) > 1 or facts.multi_node():
        if facts.hosts and any(h.uses_socket() for h in facts.hosts.values()):
            return None, ""  # TCP between nodes: tcp-fallback says why; no line rate to compare with
        rates = [(len(h.hcas), h.nic_rate_gbs) for h in ib if h.nic_rate_gbs] or _port_speeds(ctx, rule)
        if rates:
            n, rate = min(rates)
            # ~90% of line rate per rail for large all_reduce (45 GB/s per 400 Gb/s NDR rail)
            return round(n * rate * 0.9, 1), f"inferred: {n} HCAs x {rate:g} GB/s per node"
        if largest_size >= FLOOR_MIN_SIZE and any(name in gpu for gpu in tests_gpus for name, _ in NVLINK_BUSBW):
            # Nothing says what the fabric is, but data-centre GPUs across nodes sit on an RDMA fabric of
            # 100 Gb/s per node at the very least: far below that is no RDMA fabric at work (sockets, a
            # disabled plugin or hook), whatever the fabric.
            return RDMA_FLOOR_BUSBW, RDMA_FLOOR_SOURCE
        return None, ""
    for name, bw in NVLINK_BUSBW:
        if any(name in gpu for gpu in tests_gpus):
            return bw, f"inferred: NVLink on one node of {name} GPUs"
    return None, ""


# ----------------------------------------------------------------------------------- /dev/shm
