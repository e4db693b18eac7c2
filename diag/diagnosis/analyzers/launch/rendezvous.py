"""Rendezvous and the master port: rendezvous-failure, port-in-use.

Reads how processes meet: PyTorch's TCPStore and c10d rendezvous (the address, the errno, who timed out
first), Ray's GCS, JAX's coordination service and gRPC peers, and the master port already taken, to name
the address or the launch that kept the processes from meeting.
"""

from __future__ import annotations

import re

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or, group_store_waits
from diag.diagnosis.analyzers.launch.common import (
    PEER_STORE_ERRORS,
    STORE_TIMEOUT_SIGNATURES,
    clients_joined,
    only_rank0_came,
    store_overfull,
)
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.report import Finding

LOCAL_ADDRS = ("localhost", "127.0.0.1", "::1", "127.0.1.1")


def _earlier_roots(ctx: Context, first: tuple[int, int], exclude: str) -> list[Finding]:
    """Error-level roots found before ``first``: what a later failure is probably a consequence of."""
    return [
        f
        for f in ctx.findings.values()
        if f.id != exclude
        and f.role == "root"
        and severity_rank(f.severity) >= severity_rank("error")
        and f.first_order() < first
    ]


def _failed_before(ctx: Context, first: tuple[int, int]) -> bool:
    """Whether a process's own exception, or its launcher's report of its failing exit, comes before ``first``."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return False
    own = ctx.samples(unexplained, ["exception", "exception_other", "agent_exit", "hydra_app_error", "hydra_full_error"])
    return any(ev.order < first for ev, _ in own)


NO_SUCH_FAMILY = ("-9", "-5")


# The store (or the rendezvous) went away under processes that had met: its host exited or crashed.
STORE_LOST = frozenset({"store_closed", "store_socket", "rdzv_closed", "agent_store_lost", "stop_waiting"})


# What the other agents say beside a lost store (their next call to it fails to connect): the same loss.
LOST_WITH_STORE = frozenset({"rdzv_connection", "store_connection"})

# Connection attempts c10d repeats until the store answers: a failure only if it never did.
RETRIED_CONNECTS = frozenset({"connect_refused", "cannot_init", "store_retry"})

# Ray's GCS client and gRPC core (TensorFlow 1.x) retrying a head or peer that is not up yet: a worker
# started before its head logs these and joins once it is.
RETRIED_PEER_CONNECTS = frozenset({"ray_gcs_connect", "ray_cluster_id", "grpc_connect_failed"})

# Ray's forms of not reaching the head's GCS, each with the address it was given.
RAY_GCS = ["ray_gcs_unable", "ray_gcs_connect", "ray_gcs_reconnect"]


# Names whose first address is the IPv6 loopback: c10d tries ::1 before 127.0.0.1.
LOOPBACK_NAMES = frozenset({"localhost", "::1", "ip6-localhost", "ip6-loopback"})


def _unexpanded_hostlist(rule: Rule, ctx: Context) -> str | None:
    """A name c10d could not resolve that is a Slurm host list ("node[01,05]", "gpu[1-4]"): it never
    resolves, so no retry or later start of a peer makes it work."""
    return next((a for a in ctx.captures(rule, "addr", ["gai"]) if re.search(r"\[\d[\d,\-]*\]", a)), None)


def _ipv6_attempt(g: dict) -> bool:
    """Whether a client connect that c10d logged (as a warning) is its IPv6 try before IPv4: EAFNOSUPPORT
    (errno 97) on a host without IPv6, or EADDRNOTAVAIL (errno 99) reaching localhost where the loopback has
    no ::1 (PyTorch 1.11-2.2 print "failed to connect to [localhost]:29500 (errno: 99 - Cannot assign
    requested address)" in runs that then train). It goes on with the next address either way."""
    errno, addr = g.get("errno"), (g.get("addr") or "").lower()
    return errno == "97" or (errno == "99" and addr in LOOPBACK_NAMES)


def _rendezvous_passed(rule: Rule, ctx: Context) -> bool:
    """Whether the logs show the processes met after all: the store's barrier passed, a client
    connected, or NCCL built a communicator (its unique id travels through the store)."""
    met = ctx.stats(rule, ["barrier_done", "client_connected", "ray_joined", "ray_connected"])
    return bool(met) or ctx.count("nccl-net-plugin", ["init_complete"]) > 0


def rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if "gai" in chosen and all(
        "IPv6 network addresses" in ev.text and g.get("gai") in NO_SUCH_FAMILY for ev, g in ctx.samples(rule, ["gai"])
    ):
        # The name resolves, only not to an IPv6 address (EAI_ADDRFAMILY, EAI_NODATA): PyTorch warns
        # and goes on with IPv4. A name that does not resolve at all (-2, -3) is the failure.
        chosen.discard("gai")
    if "addr_not_avail" in chosen and all("client socket" in ev.text for ev, _ in ctx.samples(rule, ["addr_not_avail"])):
        # errno 99 on a client's connect is not the store failing to bind MASTER_ADDR: the connect
        # signatures below judge those lines.
        chosen.discard("addr_not_avail")
    for name in ("cannot_init", "connect_refused"):
        # An IPv6 attempt before IPv4: socket.cpp records it as a warning and tries the next address.
        if name in chosen and all(_ipv6_attempt(g) for _, g in ctx.samples(rule, [name])):
            chosen.discard(name)
    if _rendezvous_passed(rule, ctx):
        chosen.discard("store_barrier_wait")  # it waited, then every process came
    if not chosen:
        return _store_socket_error(rule, ctx) or _stopped_in_rendezvous(rule, ctx) or _cut_in_rendezvous(rule, ctx)
    retried = RETRIED_CONNECTS | RETRIED_PEER_CONNECTS | {"ray_gcs_unable"}  # `ray start` warns so while it retries
    if chosen <= retried and not ctx.job_failed() and _rendezvous_passed(rule, ctx):
        return []  # the workers started before rank 0's store (Ray's head) and retried until it was up
    if chosen <= STORE_LOST | {"rdzv_connection"} and ctx.stats(rule, ["agent_succeeded"]):
        return []  # this node's workers succeeded; the endpoint's agent, and its store, left first at the end
    if chosen <= {"store_socket", "store_closed"} and not ctx.job_failed():
        return []  # TCPStore's client warns so at teardown too, when rank 0's store exits before the others
    if (
        chosen & STORE_LOST
        and chosen <= STORE_LOST | LOST_WITH_STORE
        and _failed_before(ctx, min(ev.order for ev, _ in ctx.samples(rule, list(chosen))))
    ):
        return []  # a process raised or exited first: the others then lost the store it served
    socket_sigs = ["client_timeout", "connect_any", "connect_refused", "gai", "store_socket", *RAY_GCS]
    addrs = ctx.captures(rule, "addr", socket_sigs)
    ports = ctx.captures(rule, "port", socket_sigs)
    target = f"{', '.join(addrs[:3])}:{', '.join(ports[:3])}" if addrs else "MASTER_ADDR:MASTER_PORT"
    parts = []
    if "gai" in chosen:
        hosts = sorted({h for ev, _ in ctx.samples(rule, ["gai"]) if (h := ctx.host_for(ev))})
        where = f" on {hosts_text(hosts)}" if hosts else ""
        reason = first_or(ctx.captures(rule, "reason", ["gai"]))
        parts.append(f"{', '.join(ctx.captures(rule, 'addr', ['gai'])[:3])} cannot be resolved{where} ({reason})")
        if hostlist := _unexpanded_hostlist(rule, ctx):
            parts.append(
                f"{hostlist} is a Slurm host list, not a host name: MASTER_ADDR was set from $SLURM_JOB_NODELIST "
                'unexpanded; set MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)'
            )
    for _ev, g in ctx.samples(rule, ["host_not_found"])[:1]:
        parts.append(
            f"the store's host (MASTER_ADDR) could not be resolved ({g['reason']}): a wrong name, or a name that "
            "does not resolve yet when the ranks start (a pod or node still coming up)"
        )
    if chosen & {"addr_not_avail", "addr_not_avail_uv"}:
        parts.append(
            "the store could not listen on MASTER_ADDR: that address is not one of this host's (rank 0 runs on "
            "another node than MASTER_ADDR names, or it is a login/head node address)"
        )
    for _ev, g in ctx.samples(rule, ["port_privileged"])[:1]:
        parts.append(
            f"the store could not listen on port {g['port']}: ports below 1024 are root's; set MASTER_PORT to a free "
            "port from 1024 to 65535 (29500 is torchrun's default)"
        )
    for _ev, g in [(e, g) for e, g in ctx.samples(rule, ["cannot_init"]) if "cannot_init" in chosen][:1]:
        parts.append(f"no socket to {g['addr']}:{g['port']} could be opened ({g['reason']})")
    if "connect_refused" in chosen:
        parts.append(f"nothing listened at {target} (connection refused): the store on rank 0 was not up")
    if chosen & {"client_timeout", "connect_any", "connect_timed_out"}:
        timeout = first_or(ctx.captures(rule, "timeout", ["client_timeout"]))
        parts.append(f"no connection to {target}" + (f" within {timeout}" if timeout else ""))
    if store := clients_joined(ctx):
        secs, joined, world = store
        if joined == 1 < world:
            # Nobody but rank 0 came: the others were never started, or all went elsewhere.
            parts.append(
                f"rank 0's store waited {secs} s for a world of {world} and no other process joined: the other "
                "ranks were never started (the program run once instead of under srun or torchrun on every node, "
                "fewer tasks or nodes than the world it computed) or were all given another MASTER_ADDR/PORT"
            )
        else:
            parts.append(
                f"rank 0's store waited {secs} s and only {joined} of {world} processes joined: "
                f"{world - joined} never started, crashed first, or used another MASTER_ADDR/PORT or --nnodes"
            )
    barrier = [n for n in ("store_barrier", "store_barrier_wait") if n in chosen][:1]
    for _ev, g in ctx.samples(rule, barrier)[:1]:
        world, joined = int(g["world"]), int(g["joined"])
        if joined > world:
            parts.append(
                f"{joined} processes joined a store barrier meant for {world}: another job uses the same "
                "MASTER_ADDR:MASTER_PORT, or the processes disagree on the world size"
            )
        else:
            waited = "was still waiting" if barrier == ["store_barrier_wait"] else f"waited {g['timeout']}"
            parts.append(
                f"init_process_group {waited} and only {joined} of {world} processes reached rank 0's "
                "store: the others never started, crashed first, or were given another MASTER_ADDR/PORT"
            )
    retries = ctx.samples(rule, ["store_retry"])
    if retries:
        ev, g = retries[0]
        parts.append(
            f"the store client kept retrying {g['addr']}:{g['port']} while nothing listened there: the master "
            "endpoint is an address of no running store (a stale or wrong IP for the master host, PADDLE_MASTER / "
            "MASTER_ADDR / --master set wrong), or the store on the master never started"
        )
    if "env_missing" in chosen:
        var = ", ".join(ctx.captures(rule, "var", ["env_missing"]))
        parts.append(f"{var} not set: the script uses env:// but was not started by torchrun (or the job script)")
    if chosen & {"jax_barrier", "jax_registration"}:
        parts.append(_jax_registration_part(rule, ctx))
    parts.extend(_ray_gcs_parts(rule, ctx, chosen))
    for _ev, g in ctx.samples(rule, ["grpc_unreachable", "grpc_connect_failed"])[:1]:
        said = f" ({g['target']}: {g['reason']})" if g.get("target") else f" ({g['reason']})" if g.get("reason") else ""
        parts.append(
            f"a gRPC peer (a TensorFlow cluster task, JAX's coordinator) could not be connected at any address{said}: "
            "its server was not up (yet), or the address in the cluster spec / coordinator_address is not one this "
            "node can reach (a name resolving elsewhere, another interface, a firewall)"
        )
    for _ev, g in ctx.samples(rule, ["ray_node_address"])[:1]:
        parts.append(
            f"the driver pinned its placement group's first bundle to the Ray node at {g['node_addr']}, and no Ray "
            "node has that address: the driver detected another address of its host than the one its Ray node "
            "registered with (several interfaces, a container's address); set VLLM_HOST_IP (and ray start "
            "--node-ip-address) to the address `ray status` / `ray list nodes` shows for that node"
        )
    for _ev, g in ctx.samples(rule, ["ssh_svc_unresolved"])[:1]:
        parts.append(
            f"the launcher could not resolve its worker's service name {g['svc']} ({g['reason']}): the pods' DNS "
            "does not know the headless service (launcher and worker pods need dnsPolicy: ClusterFirst, the "
            "service must exist and select the workers), or the worker pod was not ready yet"
        )
    for _ev, g in ctx.samples(rule, ["k8s_master_unresolved"])[:1]:
        parts.append(
            f"the workers' init container could not resolve the master's service name {g['svc']}: the master pod is "
            "not up (pending, crashed or still pulling its image) or its service is missing, so no worker can reach "
            "MASTER_ADDR"
        )
    if chosen & {"rdzv_timeout", "store_connection"}:
        parts.append("torchrun's rendezvous failed: fewer nodes than --nnodes joined, or they used different endpoints")
    if "store_get" in chosen:
        err = first_or(ctx.captures(rule, "error", ["store_get"]))
        part = f"ranks could not fetch the NCCL unique id from rank 0 through the store ({err})"
        if "timeout" in err.lower():
            # The store answered; rank 0 had not put the id there yet when the wait ran out.
            part += (
                ": rank 0 had not published it in time, still busy (data preprocessing or model loading on rank 0 "
                "alone) or dead; preprocess before init_process_group or raise its timeout"
            )
        parts.append(part)
    if chosen & {"nccl_comm_id", "nccl_comm_id_pair"}:
        value = first_or(ctx.facts.env_values("NCCL_COMM_ID"))
        parts.append(
            f"NCCL_COMM_ID{f'={value}' if value else ''} is not an address NCCL's bootstrap can use: it must be "
            "<host or IPv4>:<port> (or [<IPv6>]:<port>) of rank 0's node, the same on every rank"
        )
    if "stop_waiting" in chosen:
        parts.append("a wait on the store got no stop-waiting reply: the connection to the store broke under it")
    if chosen & {"store_closed", "store_socket"} and "store_get" not in chosen:
        at = f" at {target}" if "store_socket" in chosen else ""
        parts.append(
            f"the store{at} closed the connection (failed to recv, got 0 bytes): the process serving it (rank 0, or "
            "torchrun's agent on the rendezvous endpoint's node) exited or crashed, and its own log holds the first failure"
        )
    for _ev, g in ctx.samples(rule, ["agent_store_lost"])[:1]:
        what = "keep-alive heartbeat" if "heartbeat" in g["what"] else "shutdown"
        parts.append(
            f"torchrun's agent {g['node']} lost the rendezvous store ({what}: {g['err']}): the agent hosting it, on the "
            "rendezvous endpoint's node, exited (its workers failed, or it finished first)"
        )
    if "rdzv_closed" in chosen:
        parts.append(
            "another node's torchrun agent closed the rendezvous (its workers failed past --max-restarts, or it "
            "stopped): the cause is in that node's log"
        )
    for _ev, g in ctx.samples(rule, ["jax_connect"])[:1]:
        parts.append(
            f"a JAX process could not connect to the coordinator ({g['status'][:80]}): jax.distributed.initialize's "
            "coordinator_address is not reachable from this node, or process 0 never started the service"
        )
    if "jax_register" in chosen and "jax_connect" not in chosen:
        parts.append(
            "a JAX process could not register with the coordination service (jax.distributed.initialize): "
            "process 0 had not started it, or coordinator_address is not reachable from this node"
        )
    for _ev, g in ctx.samples(rule, ["horovod_unreachable"])[:1]:
        parts.append(
            f"horovodrun could not reach its {g['service']} on any of {g['addrs'][:80]}: no interface with the same "
            "name routes between the hosts (name one with --network-interface)"
        )
    for _ev, g in ctx.samples(rule, ["store_wait"])[:1]:
        parts.append(
            f"a key in the store ({g['keys'][:60]}) was not set within {int(g['ms']) // 1000} s: the process "
            "that sets it (rank 0) never got there, crashed first, or used another store"
        )
    local = [a for a in addrs if a.strip("[]") in LOCAL_ADDRS]
    if local and ctx.facts.multi_node():
        parts.append(f"MASTER_ADDR is {local[0]}, which every node resolves to itself in a multi-node job")
    detail = "Rendezvous failed: " + "; ".join(parts) + "."
    first = min((ev.order for ev, _ in ctx.samples(rule, list(chosen))), default=(1 << 30, 0))
    values = {"addr": target}
    if chosen <= PEER_STORE_ERRORS and any(_earlier_roots(ctx, (1 << 62, 0), rule.id)):
        # Rank 0 died of something else: the others then cannot reach its store. Whether the store
        # error's line comes first in the file depends on how the processes' output interleaved.
        return []
    earlier = _earlier_roots(ctx, first, rule.id)
    if earlier:
        detail += f" It followed {', '.join(sorted(f.id for f in earlier))}, which may be the cause."
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values)]
    if chosen <= {"store_get", "store_wait"} and group_store_waits(ctx):
        # The store answered these reads: the processes had met in a process group, and the wait ran out on
        # a rank that had not reached the same point (nccl-timeout says so). Only processes given different
        # stores would make it a rendezvous fault, so it stays the second answer.
        detail += " The store answered, though: the processes had met, and a rank was late rather than unreachable."
        assumed = ["some ranks were given another MASTER_ADDR/MASTER_PORT than the rank that sets the key"]
        return [
            ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.35, values=values, assumed=assumed)
        ]
    if chosen <= RETRIED_PEER_CONNECTS and not ctx.job_failed() and "" not in ctx.captures(rule, "addr", RAY_GCS):
        # Ray's worker nodes and gRPC retry a head or peer that is still starting; the failure is where the run
        # stops there (ray start exiting, a task's error), or where it never gets further. An address with no
        # host is no head that is still starting: that never connects.
        assumed = ["the run stopped there: Ray and gRPC retry a head or peer that is still starting"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"grpc_unreachable"}:
        # gRPC says the same of a peer that went away mid-run; only the start makes it a rendezvous fault.
        assumed = ["the peers had not met yet: gRPC says the same of a peer that went away mid-run"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen == {"ray_no_instance"}:
        # The same words end a single-node run that simply forgot `ray start`: no peer is shown failing to meet.
        assumed = ["this driver was meant to join a Ray cluster the job starts across its nodes"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen <= {"ray_gcs_reconnect"}:
        # A GCS that answered before and stopped: its head may have gone away for a reason of its own.
        assumed = ["this node had reached the head before: the head (its GCS) may have gone away for a reason not shown"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen <= {"connect_refused", "cannot_init"} and not ctx.job_failed():
        # c10d logs each refused connect as a warning and retries until rank 0's store listens; it gives
        # up with an error of its own ("failed to connect to any network address", a timeout).
        assumed = ["the run stopped there: c10d retries a refused connect until rank 0's store is up"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"gai"} and not ctx.job_failed() and not _unexpanded_hostlist(rule, ctx):
        # c10d's warning ([W socket.cpp]) repeats while a peer's name does not resolve yet, as pods or
        # nodes come up one after the other; it is the failure only where the run then stops.
        assumed = ["the run stopped there: c10d repeats this warning while peers still start, and goes on once they resolve"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if (
        chosen == {"ray_node_address"}
        and not ctx.job_failed()
        and not any("fulfill" in ev.text for ev, _ in ctx.samples(rule, ["ray_node_address"]))
    ):
        # `ray status` listing the pinned bundle as a pending demand: Ray still waits, and the autoscaler has
        # not yet said that no node can take it.
        assumed = ["the placement group never formed: `ray status` lists it as pending while Ray still waits"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"store_barrier_wait"} and not ctx.job_failed():
        assumed = ["the run hung in init_process_group: the log ends while rank 0's store still waits"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.55, values=values, assumed=assumed)]
    if chosen == {"store_retry"} and not ctx.job_failed():
        # Retries are the client waiting: the run may yet connect (the store's host was slow to start).
        assumed = ["the run hung retrying: the log ends while the client still tries"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen <= STORE_LOST and _timed_out_before(ctx, first):
        # The ranks' watchdogs gave up on a collective first, then aborted their processes, the store's
        # among them: the store going away is the timeout's consequence.
        detail += " It followed a collective timeout (nccl-timeout): the processes aborted on their watchdog, the store's among them."
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.4, values=values)]
    if chosen <= STORE_LOST:
        # Only the consequence is in these files: the store's host went away, its reason is elsewhere.
        assumed = ["the process that served the store (rank 0 or the endpoint's torchrun agent) failed first, in a log not here"]
        severity = None if ctx.job_failed() else "warning"
        return [ctx.make_finding(rule, detail=detail, severity=severity, confidence=0.5, values=values, assumed=assumed)]
    if chosen <= {"store_barrier", "store_barrier_wait"} and store_overfull(ctx):
        # More processes joined than the world: world-size-mismatch names the cause; this stays the second answer.
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values)]
    if chosen <= STORE_TIMEOUT_SIGNATURES and only_rank0_came(ctx):
        # world-size-mismatch names the likelier cause (nobody else was started); this stays the second answer.
        return [ctx.make_finding(rule, detail=detail, confidence=0.7, values=values)]
    return [ctx.make_finding(rule, detail=detail, values=values)]


def _timed_out_before(ctx: Context, first: tuple[int, int]) -> bool:
    """Whether a collective's watchdog timeout was printed before ``first``."""
    timeout = ctx.rules.get("nccl-timeout")
    if timeout is None:
        return False
    said = ctx.samples(timeout, ["watchdog", "work_timeout", "blocking_wait", "async_exception"])
    return bool(said) and said[0][0].order < first


def _jax_registration_part(rule: Rule, ctx: Context) -> str:
    """What JAX's coordination service says of tasks that never registered, with its count where it gives one."""
    reached = ctx.samples(rule, ["jax_reached"])
    count = ""
    for _ev, g in reached[:1]:
        count = f" ({g['joined']} of {g['world']} tasks reached it)"
    return (
        f"JAX's coordination service (jax.distributed.initialize) timed out waiting for every task to register{count}: "
        "some processes crashed before connecting, were never started (fewer tasks than num_processes), started too "
        "late for the initialization timeout, or could not reach the coordinator address; the lines after it name them"
    )


def _ray_gcs_parts(rule: Rule, ctx: Context, chosen: set[str]) -> list[str]:
    """Ray's nodes or driver not reaching the head's GCS, and what the address they were given says."""
    parts = []
    for _ev, g in ctx.samples(rule, [n for n in RAY_GCS if n in chosen])[:1]:
        where = f"{g['addr']}:{g['port']}"
        if not g["addr"]:
            parts.append(
                f"a Ray node was pointed at the head address '{where}', which has no host: the variable meant to "
                "hold the head's address (MASTER_ADDR, the head's IP) was empty where `ray start --address` ran"
            )
        elif "ray_gcs_reconnect" in chosen and len(chosen & set(RAY_GCS)) == 1:
            parts.append(
                f"the head's GCS at {where} stopped answering this node: the head node went away (crashed, preempted) "
                "or is reachable only badly from here (a slow or lossy link)"
            )
        else:
            parts.append(
                f"a Ray node or driver could not reach the head's GCS at {where}: the head was not running (yet) at "
                "that address, --address / RAY_ADDRESS names a host or port this node cannot reach (a firewall, "
                "another interface), or the head runs another Ray version"
            )
    if "ray_no_instance" in chosen:
        parts.append(
            "the driver found no Ray cluster to join on its node (ray.init(address='auto') or RAY_ADDRESS): `ray start` "
            "(--head, or a worker with --address=<head>:6379) did not run on that node before the driver, or it had "
            "exited; a stale /tmp/ray/ray_current_cluster can also name a cluster that is gone"
        )
    if "ray_gcs_down" in chosen and not parts:
        parts.append("Ray could not connect to its GCS: the GCS server did not come up (its gcs_server.out on the head says why)")
    return parts


# The bare errno text PyTorch 1.x's TCPStore client raised, and what it says about the store.
_STORE_ERRNO = {
    "Connection refused": "nothing listened there (rank 0's store was not up yet or had exited, or another port)",
    "Connection reset by peer": "the store's end dropped the connection (its process exited or crashed)",
}
_STORE_ERRNO_DEFAULT = "nothing answered (an address other nodes cannot route to, a firewall, or rank 0 never started)"


def _store_socket_error(rule: Rule, ctx: Context) -> list[Finding]:
    """PyTorch 1.x's TCPStore constructor raising the socket's errno text bare ("RuntimeError: Connection timed
    out", "No route to host") right under its traceback frame: the client never reached MASTER_ADDR:MASTER_PORT."""
    frames = [ev for ev, _ in ctx.samples(rule, ["store_ctor", "rendezvous_frame"])]
    raised = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["store_errno"])
        if any(f.path == ev.path and 0 < ev.line - f.line <= 2 for f in frames)
    ]
    if not raised or _earlier_roots(ctx, (1 << 62, 0), rule.id):
        return []  # a bare errno elsewhere is not the store's; after another root cause it is a consequence
    ev, g = raised[0]
    why = _STORE_ERRNO.get(g["reason"], _STORE_ERRNO_DEFAULT)
    detail = (
        f"Rendezvous failed: the TCPStore client could not connect to MASTER_ADDR:MASTER_PORT ({g['reason']}): {why}."
    )
    return [ctx.make_finding(rule, ["store_errno"], detail=detail, evidence=[ev], confidence=0.8)]


def _stopped_in_rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    """A process stopped (Ctrl-C, the time limit) while its traceback shows it still inside
    init_process_group's rendezvous: the processes waited there and never all met."""
    frames = ctx.samples(rule, ["rendezvous_frame"])
    if not frames or not (ctx.samples(rule, ["interrupted"]) or ctx.count("job-time-limit")):
        return []
    detail = (
        "The processes were stopped while still waiting in init_process_group's rendezvous, so they never all "
        "met at one store: every process must get the same MASTER_ADDR and MASTER_PORT (chosen once before they "
        "start, not a free port each process picks for itself) and WORLD_SIZE processes must be started"
    )
    assumed = ["the run hung in the rendezvous: it was stopped there, it did not fail with an error"]
    return [
        ctx.make_finding(
            rule, ["rendezvous_frame", "interrupted"], detail=detail + ".", evidence=pick_evidence(ev for ev, _ in frames),
            confidence=0.45, assumed=assumed,
        )
    ]  # fmt: skip


def _cut_in_rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    """An excerpt that ends inside a traceback whose innermost frames are the rendezvous' store calls:
    the exception line itself was left out, but where the process failed is known."""
    last = ctx.last_lines()
    frames = [ev for ev, _ in ctx.samples(rule, ["rendezvous_frame"]) if ev.line >= last.get(ev.path, 0) - 2]
    if not frames or any(severity_rank(f.severity) >= severity_rank("error") for f in ctx.findings.values()):
        return []
    detail = (
        "The excerpt ends in a traceback inside the rendezvous (its store calls), without the exception: the "
        "processes could not reach or use the rendezvous store (MASTER_ADDR/MASTER_PORT or --rdzv-endpoint "
        "not reachable from every node, a port the network does not let through)"
    )
    assumed = ["the exception the traceback ends in was left out of the excerpt; it failed where its last frames are"]
    return [
        ctx.make_finding(
            rule, ["rendezvous_frame"], detail=detail + ".", evidence=frames[-1:], confidence=0.35, assumed=assumed,
            severity="warning",
        )
    ]  # fmt: skip


def port_in_use(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    ports = ctx.captures(rule, "port") or [
        a.rsplit(":", 1)[-1] for a in ctx.captures(rule, "addr") if ":" in a and a.rsplit(":", 1)[-1].isdigit()
    ]
    by_host: dict[str, set] = {}
    for ev, _ in ctx.samples(rule, [s.name for s in rule.signatures]):
        host = ctx.host_for(ev) or "?"
        by_host.setdefault(host, set()).add((ev.task, ev.pid, ev.local_rank, ev.rank))
    crowded = {h: len(v) for h, v in by_host.items() if len(v) > 1}
    port = ", ".join(dict.fromkeys(ports)) or "MASTER_PORT"
    detail = f"Port {port} was already in use"
    chosen = {n for n, _ in ctx.stats(rule)}
    if chosen <= {"port_range", "horovod_port"}:
        span = first_or([f"{g['lo']}..{g['hi']}" for _, g in ctx.samples(rule, ["port_range"])], "")
        port = span or "any port"
        detail = f"No free port {'in ' + span if span else 'to listen on'} was left"
    elif chosen == {"nccl_bind"}:
        comm_id = first_or(ctx.facts.env_values("NCCL_COMM_ID"))
        port = comm_id.rsplit(":", 1)[-1] if comm_id else "NCCL_COMM_ID's port"
        detail = f"NCCL could not bind its bootstrap port ({comm_id or 'NCCL_COMM_ID'}): it was already in use"
    hosts = [h for h in by_host if h != "?"]
    if hosts:
        detail += f" on {hosts_text(hosts)}"
    if chosen <= {"port_range", "horovod_port"}:
        detail += ": the range the launcher may use is full (other jobs or leftover processes on that node), or set too narrow"
    elif chosen == {"nccl_bind"}:
        # init.cc: with NCCL_COMM_ID set, rank 0 of every communicator starts a bootstrap root on that address.
        detail += (
            ": with NCCL_COMM_ID set, rank 0 of every communicator listens on that one address, so a second "
            "communicator created while the first still bootstraps (or another job on the node) cannot; unset "
            "NCCL_COMM_ID and let the framework pass NCCL its unique id"
        )
    elif crowded:
        where = ", ".join(f"{n} on {h}" if h != "?" else f"{n}" for h, n in crowded.items())
        detail += (
            f": {where} launchers tried to serve the store on one node, so more than one torchrun ran per node "
            "(srun started it once per GPU instead of once per node)"
        )
    else:
        detail += ": another process on that node (a second launcher or job, or a leftover run) holds it"
    return [ctx.make_finding(rule, detail=detail + ".", values={"port": port}, hosts=hosts)]
