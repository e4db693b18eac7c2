"""What the launch analyzers share: whether a line is the last its log says, and rank 0's store as
rendezvous-failure's signatures read it (the processes that joined, the peers that could not reach it), which
world_size weighs too: a store that timed out with only rank 0, or counted more processes than its world, is a
launch layout at fault rather than an address."""

from __future__ import annotations

from diag.diagnosis.context import Context
from diag.evidence import Evidence


def _ends_its_log(ctx: Context, evidence: list) -> bool:
    """Whether one of these lines is the last of its file that says something (a paste's closing
    fence, a blank line or a bare prompt after it do not count)."""
    lines = ctx.last_lines()
    return any(ev.line >= lines.get(ev.path, 0) for ev in evidence)


def _cancelled_right_after(ctx: Context, evidence: list) -> bool:
    """Whether the next line after one of these, in its file, is Slurm's cancel of the job: the run printed
    nothing more until someone cancelled it, so it hung at that line (the log ends there in all but name)."""
    cancelled = ctx.rules.get("job-cancelled")
    if cancelled is None:
        return False
    stops = {(ev.path, ev.line) for ev, _ in ctx.samples(cancelled, ["cancelled"])}
    return any((ev.path, ev.line + 1) in stops for ev in evidence)


# What the other ranks say when rank 0 (the store's host) is gone or never set its keys.
PEER_STORE_ERRORS = (
    frozenset(
        {"store_get", "store_wait", "store_connection", "connect_refused", "client_timeout", "connect_any", "connect_timed_out"}
    )
    | frozenset({"store_closed", "store_socket", "rdzv_closed", "agent_store_lost", "stop_waiting"})
    # Ray's nodes and TensorFlow's / JAX's gRPC peers say the same of a head or peer that died of something else.
    | frozenset({"ray_gcs_connect", "ray_cluster_id", "ray_gcs_reconnect", "grpc_unreachable"})
)


# Rank 0's own store timeout, in one line or wrapped over two.
STORE_TIMEOUT_SIGNATURES = frozenset({"clients_joined", "clients_wait", "clients_count"})


def clients_joined(ctx: Context) -> tuple[str, int, int] | None:
    """(seconds waited, processes joined, world size) from rank 0's store timeout, on one line or wrapped."""
    rule = ctx.rules.get("rendezvous-failure")
    if rule is None:
        return None
    for _ev, g in ctx.samples(rule, ["clients_joined"])[:1]:
        return g["secs"], int(g["joined"]), int(g["world"])
    waits = ctx.samples(rule, ["clients_wait"])
    counts = ctx.samples(rule, ["clients_count"])
    if waits and counts:
        return waits[0][1]["secs"], int(counts[0][1]["joined"]), int(counts[0][1]["world"])
    return None


def only_rank0_came(ctx: Context) -> tuple[str, int, int] | None:
    """Rank 0's store timed out with 1 of N processes joined and no other process was heard trying to
    reach it: the others were never started (a launch-layout fault) rather than sent elsewhere."""
    store = clients_joined(ctx)
    rule = ctx.rules.get("rendezvous-failure")
    if store is None or rule is None or not store[1] == 1 < store[2]:
        return None
    return None if ctx.stats(rule, sorted(PEER_STORE_ERRORS)) else store


def store_overfull(ctx: Context) -> tuple[Evidence, int, int] | None:
    """(line, processes joined, world size) where PyTorch's store-based barrier counted more processes than
    the world it was given: its count only stops at exactly the world size, so extra processes make it wait
    until it times out. More joined than the world is always extra launches (torchrun under srun with one
    task per GPU, two launchers per node), never a late or lost rank."""
    rule = ctx.rules.get("rendezvous-failure")
    if rule is None:
        return None
    for ev, g in ctx.samples(rule, ["store_barrier", "store_barrier_wait"]):
        if int(g["joined"]) > int(g["world"]):
            return ev, int(g["joined"]), int(g["world"])
    return None
