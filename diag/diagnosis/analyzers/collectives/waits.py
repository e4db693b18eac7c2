"""nccl-timeout said in other words: blocking waits, flight recorder and rank monitor dumps, the c10d store, barriers,
Gloo, Horovod, JAX, UCC and nccl-tests timeouts."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import group_store_waits
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding


def blocking_wait(rule: Rule, ctx: Context) -> list[Finding]:
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


def flight_recorder(rule: Rule, ctx: Context) -> list[Finding]:
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


def rank_monitor(rule: Rule, ctx: Context) -> list[Finding]:
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


def jax_fate(rule: Rule, ctx: Context) -> list[Finding]:
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


def ucc_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    samples = ctx.samples(rule, ["ucc_timeout"])
    if not samples:
        return []
    _, g = samples[0]
    detail = (
        f"A UCC {g['coll']} collective ran past its timeout ({float(g['secs']):g} s): a rank never joined it "
        "(it exited, hung or fell behind)"
    )
    return [ctx.make_finding(rule, ["ucc_timeout"], detail=detail + ".", values={"culprits": "the rank that never joined"})]


def tests_timeout(rule: Rule, ctx: Context) -> list[Finding]:
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


def store_timeout(rule: Rule, ctx: Context) -> list[Finding]:
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
