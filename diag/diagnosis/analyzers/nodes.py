"""Node-to-node differences and faults: HCA sets, NCCL versions, GPUs shared by two ranks, IB link faults."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import plural, timeline_key
from diag.diagnosis.analyzers.transport.common import CQE_SIGNATURES, PORT_EVENTS
from diag.diagnosis.analyzers.transport.hca import disabled_beside_active
from diag.diagnosis.analyzers.transport.roce import (
    addressing_suspect,
    empty_gid,
    link_local_completions,
    work_before,
)
from diag.diagnosis.analyzers.transport.sockets import UNROUTABLE_PREFIXES
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.evidence import Evidence
from diag.report import Finding

WC_STATUS = {
    1: "local length error",
    2: "local QP operation error",
    4: "local protection error, often ACS or peermem",
    5: "work request flushed",
    9: "remote invalid request",
    10: "remote access error",
    11: "remote operation error",
    12: "transport retry counter exceeded: the peer stopped answering",
    13: "RNR retry counter exceeded",
}

LOCAL_PROTECTION = "4"  # IBV_WC_LOC_PROT_ERR: the HCA was refused the memory of the work request

# Events whose captured words need a sentence to be read.
EVENT_TEXT = {
    "UD endpoint": "UCX's UD endpoint to a peer timed out (the peer stopped acknowledging: its node or link)",
    "Endpoint timeout": "UCX gave up on a peer that stopped acknowledging (endpoint timeout: its node, port or link)",
    "per-peer": 'Open MPI\'s "receiver not ready" retry count ran out on a connection (the fabric or the peer stalled)',
    "shared receive": 'Open MPI\'s "receiver not ready" retry count ran out on a shared receive queue '
    "(btl_openib_ib_rnr_retry below 7, or the fabric)",
}
FAULT_EVENTS = ("port error", "catastrophic", "CQ error", "QP", "path migration")


# ------------------------------------------------------------------------------------- HCA mismatch
# The signatures whose lines NCCL prints before it connects over fewer devices anyway.
CONNECTED_ANYWAY = frozenset({"physical_mismatch", "merged_mismatch"})


def hca_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    table = _per_host_fabric(ctx)
    explicit = ctx.stats(rule)
    if explicit and {n for n, _ in explicit} <= set(UNREACHABLE):
        return _unreachable(rule, ctx, table)
    if explicit and {n for n, _ in explicit} <= {"mixed_counts"} and _unopenable_hosts(ctx) and not _odd_hosts(table):
        return []  # NCCL 2.30's count check on a node that could not open some HCAs: ib-devices-not-mounted
    if explicit:
        counts = ctx.captures(rule, "min") + ctx.captures(rule, "max")
        detail = "NCCL found different network devices on the nodes of this job"
        if "ib_and_socket_peers" in {n for n, _ in explicit}:
            detail += _ib_and_socket_text(ctx)
        if counts:
            detail += f" (local NIC counts from {min(counts, key=int)} to {max(counts, key=int)})"
        odd = _odd_hosts(table) if table else []
        if table:
            detail += "; per node: " + _table_text(table)
        # NCCL_IGNORE_NET_MISMATCH=1 turns 2.30's count check into an INFO note and NCCL carries on.
        ignored = all("Ignoring due to" in ev.text for ev, _ in ctx.samples(rule, ["mixed_counts"]))
        notes = CONNECTED_ANYWAY | ({"mixed_counts"} if ignored else set())
        if {n for n, _ in explicit} <= notes and not (ctx.job_failed() or ctx.count("nccl-timeout")):
            # NCCL's notes that a connection pairs unequal device sets (net_ib connect: the rail-local
            # note, an INFO; the merged-device count, a WARN in 2.20-2.23 and an INFO since) come
            # before a connection that goes ahead on the devices both sides share: fewer rails, slower,
            # but no failure of their own.
            detail += " (NCCL went on anyway, over the devices both sides share: slower, not failed)"
            return [ctx.make_finding(rule, detail=detail + ".", hosts=odd or None, severity="warning", confidence=0.6)]
        return [ctx.make_finding(rule, detail=detail + ".", hosts=odd or None)]
    if len(table) < 2 or not facts.multi_node():
        return []
    odd = _odd_hosts(table)
    if not odd:
        return []
    detail = "The nodes offer NCCL different HCAs or settings: " + _table_text(table)
    detail += f". {hosts_text(odd)} differ{'s' if len(odd) == 1 else ''} from the rest."
    evidence = [ev for ev, _ in ctx.samples(rule, ["ib_using", "hca_env"]) if ctx.host_for(ev) in odd]
    failed = ctx.job_failed()
    return [
        ctx.make_finding(
            rule,
            ["ib_using", "hca_env"],
            detail=detail,
            hosts=odd,
            evidence=pick_evidence(evidence),
            severity=None if failed else "warning",
            confidence=0.75 if failed else 0.6,
        )
    ]


# UCX's and Open MPI's word that a peer's port cannot be reached from this one at all.
UNREACHABLE = ("ucx_unreachable", "ucx_ep_unreachable", "ompi_mixed_transport")
# UCX's reasons (uct/ib/base/ib_iface.c) that the two ports are on different fabrics.
_FABRIC_REASONS = (
    ("local IB remote RoCE", "this node's port is InfiniBand, the peer's RoCE"),
    ("local RoCE remote IB", "this node's port is RoCE, the peer's InfiniBand"),
    ("IB subnet local", "the two ports are on different IB subnets"),
    ("pkey local", "the two ports are in different IB partitions (P_Key)"),
    ("partial member pkey", "neither port is a full member of the IB partition"),
)


def _unreachable(rule: Rule, ctx: Context, table: dict[str, str]) -> list[Finding]:
    """UCX (or Open MPI over it) could not reach a peer's port with any transport of a kind. With
    UCX 1.15+'s reason ("local IB remote RoCE", "IB subnet local ... remote ...", "pkey local ...")
    the nodes' ports are on different fabrics; RoCE addressing reasons are roce-gid-index's; older
    UCX only says "Destination is unreachable", which different device sets, fabrics or partitions all give."""
    roce = ctx.rules.get("roce-gid-index")
    if roce is not None and ctx.stats(roce, ["ucx_roce_unreachable"]):
        return []
    samples = ctx.samples(rule, ["ucx_unreachable"])
    reasons = " ".join(g.get("reasons", "") for _, g in samples)
    named = [text for key, text in _FABRIC_REASONS if key in reasons]
    ompi = ctx.samples(rule, ["ompi_mixed_transport"])
    peer = samples[0][1]["peer"] if samples else None
    if named or ompi:
        what = "; ".join(named) or "one node's port is InfiniBand, the peer's RoCE (Open MPI's openib transport types differ)"
        detail = f"A peer{' (' + peer + ')' if peer else ''} is unreachable from this node's port: {what}"
        conf, assumed = 0.8, []
    elif samples and "Destination is unreachable" not in reasons:
        return []  # a reason of another kind (the same device expected, no ndev): not a difference between nodes
    elif _dialled_unroutable(ctx):
        return []  # UCX's TCP transport dialled a bridge or loopback address: nccl-socket-ifname says why
    else:
        detail = (
            f"UCX found no transport to {'peer ' + peer if peer else 'a peer'} (Destination is unreachable): the nodes "
            "offer it ports it cannot pair (different devices or UCX_NET_DEVICES, link types, subnets or partitions)"
        )
        conf, assumed = 0.5, ["UCX's unreachable verdict comes from the nodes' ports, not a peer that had already died"]
    if table:
        detail += "; per node: " + _table_text(table)
    return [ctx.make_finding(rule, list(UNREACHABLE), detail=detail + ".", confidence=conf, assumed=assumed)]


def _dialled_unroutable(ctx: Context) -> bool:
    """UCX's own TCP connect went to an address no other node can reach (docker's bridge, loopback): old
    UCX then reports the peer as unreachable, which is that address's doing, not the nodes' ports."""
    ifname = ctx.rules.get("nccl-socket-ifname")
    if ifname is None:
        return False
    dialled = ctx.samples(ifname, ["ucx_connect_failed"])
    return any(g.get("addr", "").lstrip("[").startswith(UNROUTABLE_PREFIXES) for _, g in dialled)


def _ib_and_socket_text(ctx: Context) -> str:
    """Which side of an IB-to-Socket connection is which, as far as the logs say."""
    text = (
        ": ranks that use NET/IB connected to ranks that use NET/Socket (socketFinalizeAccept: wrong type), "
        "so some nodes have no usable IB device (driver, HCA, or a container without /dev/infiniband) or set "
        "NCCL_IB_DISABLE while the others use IB"
    )
    mounted = ctx.rules.get("ib-devices-not-mounted")
    none = sorted({h for ev, _ in ctx.samples(mounted, ["no_device"]) if (h := ctx.host_for(ev))}) if mounted else []
    return text + (f"; NCCL found no IB device on {hosts_text(none)}" if none else "")


def _per_host_fabric(ctx: Context) -> dict[str, str]:
    """host -> what NCCL's IB transport saw there (HCA list, link type, NCCL_IB_HCA), IB hosts only.

    Hosts where some verbs devices could not be opened are left out: ib-devices-not-mounted names them,
    and the shorter HCA list there is its consequence, not a second root cause."""
    out = {}
    unopenable = _unopenable_hosts(ctx)
    for host in sorted(ctx.facts.hosts, key=natural_key):
        hf = ctx.facts.hosts[host]
        if not hf.hcas or host in unopenable:
            continue
        text = f"{len(hf.hcas)} HCA{'s' if len(hf.hcas) != 1 else ''} {_hca_range(hf.hcas)}"
        text += "/RoCE" if hf.roce else "/IB"
        if "NCCL_IB_HCA" in hf.env:
            text += f" (NCCL_IB_HCA={hf.env['NCCL_IB_HCA']})"
        out[host] = text
    return out


def _unopenable_hosts(ctx: Context) -> set[str]:
    mounted = ctx.rules.get("ib-devices-not-mounted")
    return {h for _, st in ctx.stats(mounted) for h in st.hosts} if mounted else set()


def _hca_range(hcas: list[str]) -> str:
    if len(hcas) <= 3:
        return ",".join(hcas)
    return f"{hcas[0]}..{hcas[-1]}"


def _odd_hosts(table: dict[str, str]) -> list[str]:
    groups: dict[str, list[str]] = {}
    for host, text in table.items():
        groups.setdefault(text, []).append(host)
    if len(groups) < 2:
        return []
    biggest = max(len(h) for h in groups.values())
    if list(len(h) for h in groups.values()).count(biggest) > 1:
        return sorted(table, key=natural_key)  # no majority: every node is a suspect
    return sorted((h for hs in groups.values() if len(hs) < biggest for h in hs), key=natural_key)


def _table_text(table: dict[str, str]) -> str:
    groups: dict[str, list[str]] = {}
    for host, text in table.items():
        groups.setdefault(text, []).append(host)
    return "; ".join(f"{hosts_text(hosts)}: {text}" for text, hosts in groups.items())


# ------------------------------------------------------------------------------------------- IB faults
def port_faults(rule: Rule, ctx: Context) -> list[tuple]:
    """The asynchronous events of ``rule`` (ib-link-fault) that report a fault of the port or device."""
    events = ctx.samples(rule, PORT_EVENTS)
    faults = [(ev, g) for ev, g in events if any(f in g.get("event", "") for f in FAULT_EVENTS)]
    return faults + [(ev, g) for ev, g in events if ev.text and "fatal event" in ev.text.lower() and (ev, g) not in faults]


def link_fault(rule: Rule, ctx: Context) -> list[Finding]:
    cqe = ctx.samples(rule, CQE_SIGNATURES)
    faults = port_faults(rule, ctx)
    # A RoCE link-local GID on the failing queue pairs is roce-gid-index's to explain.
    misaddressed = link_local_completions(ctx)
    real = [(ev, g) for ev, g in cqe if g.get("status") != "5" and (ev, g) not in misaddressed]
    flushes = [(ev, g) for ev, g in cqe if g.get("status") == "5"]
    if real and not faults and all(g.get("status") == LOCAL_PROTECTION for _, g in real):
        return []  # the HCA could not reach the (GPU) memory it was given: gdr-disabled explains it
    if not real and not faults and not flushes:
        return _speed_drop(rule, ctx) or _port_down(rule, ctx)
    ordered = sorted(real + faults, key=lambda s: timeline_key(s[0])) or sorted(
        flushes, key=lambda s: timeline_key(s[0])
    )
    first, g = ordered[0]
    host = ctx.host_for(first) or "an unnamed node"
    hca = g.get("hca") or _hca_of_host_events(ctx, faults, host) or "its HCA"
    if g.get("status"):
        status = int(g["status"])
        what = f"completion error status {status} ({WC_STATUS.get(status, 'see ibv_wc_status')})"
        if g.get("peer"):
            what += f" talking to peer {g['peer']}"
        if g.get("rgid"):
            what += f" (remote GID {g['rgid']})"
    else:
        what = g.get("event", "").strip() or "an HCA failure"
        what = EVENT_TEXT.get(what, what)
    detail = f"First fabric error at {first.timestamp or 'line ' + str(first.line)}: {hca} on {host}: {what}"
    later = len(real) + len(faults) - 1
    if later > 0:
        detail += f"; {plural(later, 'later error')} follow{'s' if later == 1 else ''}"
    if flushes:
        if real or faults:
            detail += f"; {plural(len(flushes), 'flush error')} (status 5) are consequences of it"
        else:
            detail = (
                f"Only flush errors (status 5, work request flushed) on {host}: a queue pair was already in "
                "error, and the first error was not logged; every surviving rank sees these once a peer process "
                "died or aborted its connection, so they name no link"
            )
    hosts = sorted(
        {h for ev, _ in real + faults if (h := ctx.host_for(ev))} or {host} - {"an unnamed node"}, key=natural_key
    )
    hosts = [host] + [h for h in hosts if h != host] if host != "an unnamed node" else hosts
    evidence = pick_evidence([ev for ev, _ in ordered[:6]] + [ev for ev, _ in flushes[:2]])
    conf = 0.9
    assumed: list[str] = []
    if not (real or faults):
        # Thin and ambiguous: worth a look at the fabric, not a cause shown (a failed job's unexplained
        # failure, if any, ranks above it).
        return [
            ctx.make_finding(
                rule, detail=detail + ".", hosts=hosts, evidence=evidence, confidence=0.4, values={"hca": hca},
                severity="warning", assumed=["the queue pair failed on the fabric, not because its peer process ended"],
            )  # fmt: skip
        ]
    done = work_before(ctx, first)
    if done:
        # The same words at start-up can be a RoCE address the peer cannot reach; after work was done
        # the addressing had worked, so the link (or the peer node) is what changed.
        detail += f"; the job had done work before it ({_work_text(done)}), so a link or peer failed mid-run"
    elif empty_gid(ctx) and not faults:
        # The GID entry the queue pairs are addressed from is empty: nothing can answer them, whatever the link.
        detail += "; NCCL's queue pairs use a GID entry that is empty (0/0) on this port, which explains these errors (roce-gid-index)"
        conf = 0.5
        assumed = ["the errors are a fabric fault rather than the empty GID entry the queue pairs use"]
    else:
        at_start, assumed = addressing_suspect(ctx)
        if at_start:
            # Every connection failing before any work is what a RoCE GID index, RoCE version or traffic
            # class the peers cannot route gives (roce-gid-index); a link that broke is the second reading.
            detail += "; every failed connection failed before any work was done, which a link that broke mid-run does not explain"
            conf = 0.55
            assumed = assumed + ["the errors are a fabric fault rather than an address (GID/traffic class) the peers cannot route"]
    return [
        ctx.make_finding(
            rule, detail=detail + ".", hosts=hosts, evidence=evidence, confidence=conf, values={"hca": hca},
            assumed=assumed,
        )  # fmt: skip
    ]


def _work_text(done: list[Evidence]) -> str:
    if any("|" in ev.text and "iteration" in ev.text for ev in done):
        return f"{plural(len(done), 'training iteration')} logged"
    if any("'loss'" in ev.text for ev in done):
        return f"{plural(len(done), 'training log line')} with a loss"
    return f"{plural(len(done), 'nccl-tests result row')} measured"


def _hca_of_host_events(ctx: Context, events: list, host: str) -> str | None:
    for ev, g in events:
        if ctx.host_for(ev) == host and g.get("hca"):
            return g["hca"]
    return None


def _port_down(rule: Rule, ctx: Context) -> list[Finding]:
    """ibv_devinfo/ibstat output with a port that is not up, and no error of the fabric's own: worth a
    look (a port NCCL or UCX wanted may be down), but unused ports are down on healthy nodes too."""
    down = ctx.samples(rule, ["port_down", "ompi_no_active_ports"])
    if not down or disabled_beside_active(ctx):
        return []  # a Disabled port beside Active ones: switched off, nccl-ib-hca-wrong says so
    states = sorted({g.get("state") or g.get("phys") for _, g in down} - {None})
    if states:
        detail = f"An HCA port is not up ({', '.join(states)}, as ibv_devinfo/ibstat show it)"
    else:
        detail = "Open MPI found OpenFabrics devices but no active port on them"
    detail += "; if it is a port the job uses, its link (cable, switch port, subnet manager) is down"
    return [
        ctx.make_finding(
            rule,
            ["port_down", "ompi_no_active_ports"],
            detail=detail + ".",
            severity="warning",
            confidence=0.4,
            evidence=[e for e, _ in down[:4]],
            assumed=["the port that is down is one the job uses"],
        )
    ]


def _speed_drop(rule: Rule, ctx: Context) -> list[Finding]:
    drops = [(ev, g) for ev, g in ctx.samples(rule, ["speed_change"]) if int(g["new"]) < int(g["old"])]
    if not drops:
        return []
    ev, g = drops[0]
    host = ctx.host_for(ev) or "a node"
    detail = (
        f"{g['hca']}:{g['port']} on {host} trained down from {int(g['old']) // 1000} to {int(g['new']) // 1000} Gb/s"
    )
    return [
        ctx.make_finding(
            rule,
            ["speed_change"],
            detail=detail + ".",
            severity="warning",
            confidence=0.7,
            evidence=[e for e, _ in drops[:4]],
            hosts=[host],
            values={"hca": g["hca"]},
        )
    ]


# ----------------------------------------------------------------------------------- version mismatch
def _decode_version(code: str) -> str:
    n = int(code)
    return f"{n // 10000}.{n % 10000 // 100}.{n % 100}" if n >= 10000 else f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


def version_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    by_version: dict[str, list[str]] = {}
    for h in facts.hosts.values():
        for v in h.versions:
            by_version.setdefault(v, []).append(h.host)
    per_host = "; ".join(f"{hosts_text(hs)}: NCCL {v}" for v, hs in sorted(by_version.items()))
    odd = []
    if len(by_version) > 1:
        biggest = max(len(hs) for hs in by_version.values())
        odd = sorted({h for hs in by_version.values() if len(hs) < biggest for h in hs}, key=natural_key)
    samples = ctx.samples(rule, ["mismatch"])
    if samples:
        _, g = samples[0]
        detail = (
            f"NCCL refused to start: rank {g['rank_a']} runs NCCL {_decode_version(g['va'])}, "
            f"rank {g['rank_b']} runs {_decode_version(g['vb'])}"
        )
        ranks = sorted({int(x) for _, g in samples for x in (g["rank_a"], g["rank_b"])})
        minority = _minority_ranks(samples)
        if minority:
            ranks = minority
            if not odd:  # the odd node printed no version line of its own (<= 2.21 only rank 0 does)
                odd = sorted({h for r in minority if (h := facts.host_of_rank.get(r))}, key=natural_key)
        if per_host and len(by_version) > 1:
            detail += f"; per node: {per_host}"
        return [
            ctx.make_finding(
                rule,
                detail=detail + ".",
                ranks=ranks,
                hosts=odd or None,
                values={"versions": per_host or "one NCCL version"},
            )
        ]
    ras = ctx.samples(rule, ["ras_mismatch"])
    if ras:
        _, g = ras[0]
        detail = f"NCCL {g['local']} here, NCCL {g['remote']} on peer {g['peer']}"
        if per_host and len(by_version) > 1:
            detail += f"; per node: {per_host}"
        return [
            ctx.make_finding(
                rule,
                detail=detail + ".",
                hosts=odd or None,
                values={"versions": per_host or f"{g['local']} vs {g['remote']}"},
            )
        ]
    split = sorted({h for hs in by_version.values() for h in hs}, key=natural_key)
    # As many nodes on each version (two nodes, one each) is as certain a split, only which side is
    # the odd one is not: name them all. (NCCL <= 2.22 has no check of its own and fails later with a
    # truncated message or an internal error, or hangs.) One node printing two versions is two
    # programs run one after the other, no split.
    tie = len(by_version) > 1 and all(len(h.versions) == 1 for h in facts.hosts.values() if h.versions)
    if odd or tie:
        detail = f"The nodes load different NCCL libraries: {per_host}"
        if not odd:
            detail += "; no version is the majority, so either may be the odd one"
        return [
            ctx.make_finding(
                rule,
                [],
                detail=detail + ".",
                hosts=odd or split,
                confidence=0.85 if odd else 0.75,
                evidence=_version_evidence(ctx, odd or split),
                values={"versions": per_host},
            )
        ]
    # Banners without a host (a paste, or NCCL <= 2.21's bare "NCCL version" line of rank 0 of
    # each communicator): two versions in one job's output still mean two libraries.
    unplaced = sorted({g["version"] for ev, g in ctx.samples(rule, ["version_line"]) if not ctx.host_for(ev)})
    if len(unplaced) > 1 and len(by_version) <= 1:
        detail = f"This job's output shows more than one NCCL version: {', '.join(unplaced)}"
        return [
            ctx.make_finding(
                rule,
                ["version_line"],
                detail=detail + ".",
                confidence=0.6,
                values={"versions": ", ".join(unplaced)},
                assumed=["the version lines come from ranks of one job, not from separate runs pasted together"],
            )
        ]
    return []


def _minority_ranks(samples: list) -> list[int]:
    """The ranks of the version fewer ranks run, from the mismatch lines (each names two ranks and their versions)."""
    by_code: dict[str, set[int]] = {}
    for _, g in samples:
        by_code.setdefault(g["va"], set()).add(int(g["rank_a"]))
        by_code.setdefault(g["vb"], set()).add(int(g["rank_b"]))
    sizes = sorted(len(r) for r in by_code.values())
    if len(sizes) < 2 or sizes[0] == sizes[1]:
        return []  # no clear minority: do not guess
    return sorted(min(by_code.values(), key=len))


def _version_evidence(ctx: Context, hosts: list[str]) -> list[Evidence]:
    rule = ctx.rules.get("nccl-version-mismatch")
    if rule is None:
        return []
    return pick_evidence(ev for ev, _ in ctx.samples(rule, ["version_line"]) if ctx.host_for(ev) in hosts)


# ------------------------------------------------------------------------------------- duplicate GPU
def duplicate_gpu(rule: Rule, ctx: Context) -> list[Finding]:
    fatal = ["duplicate", "multi_rank", "multi_rank_node", "multi_nvls"]
    if ctx.stats(rule, fatal):
        # 2.30.3-2.30.4 name the pair on an INFO line of their own ("Detected ranks 0 and 1 sharing GPU with bus ...").
        named = ["duplicate", "sharing_pair"]
        pairs = sorted({(int(g["rank"]), int(g["other"])) for _, g in ctx.samples(rule, named)})
        ranks = sorted({r for p in pairs for r in p})
        bus = sorted(set(ctx.captures(rule, "busid", named)))
        if pairs:
            shown = ", ".join(f"{a} and {b}" for a, b in pairs if a < b) or f"{pairs[0][0]} and {pairs[0][1]}"
            detail = f"Ranks {shown} share one GPU (CUDA device {', '.join(bus)})"
        else:
            detail = "Several ranks use the same GPU"
        return [ctx.make_finding(rule, fatal, detail=detail + "; NCCL refuses to run.", ranks=ranks or None)]
    if ctx.stats(rule, ["allowed"]):
        detail = "Several ranks share one GPU; this NCCL allows it silently and switches NVLS off (slow)"
        return [ctx.make_finding(rule, ["allowed"], detail=detail + ".", severity="warning", confidence=0.7)]
    if ctx.stats(rule, ["device_busy"]) and not ctx.count("gpu-xid"):  # a faulted GPU also refuses new work
        detail = (
            "CUDA found the GPU busy or unavailable: in exclusive-process mode it is already held by another "
            "process, usually a second task on the same GPU (more tasks than GPUs per node, or a --gpus-per-task / "
            "CUDA_VISIBLE_DEVICES mapping that gives two tasks one GPU; nvidia-smi -q | grep 'Compute Mode' shows the mode)"
        )
        assumed = ["the other process on that GPU is this job's own: another job's or a stale process would do the same"]
        return [ctx.make_finding(rule, ["device_busy"], detail=detail + ".", confidence=0.6, assumed=assumed)]
    return []
