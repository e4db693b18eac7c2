"""NCCL's and Gloo's sockets on an interface other nodes cannot reach: nccl-socket-ifname."""

from __future__ import annotations

import dataclasses
import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.transport.common import (
    NOT_ROUTABLE_IFACES,
    SYSTEM_ERROR_EXPLAINED_BY,
    failing_call_family,
    trail_line,
)
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST


def _loopback_advertised(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """Gloo (PyTorch's CPU group, also under vLLM and Ray) binds where the hostname resolves; when
    that is loopback (hostNetwork pods, an /etc/hosts line), every rank advertises 127.0.0.1 and a
    rank on another node then connects to its own loopback: refused."""
    peers = ctx.captures(rule, "addr", ["loopback_peer", "loopback_peer_gloo"])
    fallback = ctx.stats(rule, ["loopback_fallback", "tp_hostname_loopback"])
    if not peers and not (fallback and ctx.job_failed()):
        return _gloo_unconnected(rule, ctx, assumed)
    detail = (
        f"A rank connected to a peer at {peers[0]}: ranks advertised their loopback address"
        if peers
        else "PyTorch could not resolve the hostname to a local address and bound Gloo (or its RPC agent) to loopback"
    )
    detail += (
        " because the hostname resolves to 127.x (hostNetwork pods, an /etc/hosts entry), so ranks on other "
        "nodes cannot reach them; set GLOO_SOCKET_IFNAME (TP_SOCKET_IFNAME for RPC, and NCCL_SOCKET_IFNAME) to a "
        "routable interface"
    )
    return [
        ctx.make_finding(
            rule, ["loopback_peer", "loopback_peer_gloo", "loopback_fallback", "tp_hostname_loopback"], detail=detail + ".",
            confidence=0.8 if peers else 0.6,
            assumed=assumed,
        )
    ]  # fmt: skip


def _gloo_unconnected(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """Gloo's full mesh failed to connect, no peer address shown: with GLOO_SOCKET_IFNAME unset, Gloo
    binds the address the hostname resolves to, which other nodes often cannot reach."""
    if not ctx.stats(rule, ["gloo_fullmesh"]):
        return []
    detail = (
        "Gloo (PyTorch's CPU group, used by vLLM, Ray and torch.distributed's barriers) could not connect its ranks: "
        "without GLOO_SOCKET_IFNAME it binds the address the hostname resolves to, which other nodes may not reach; "
        "set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to the interface the nodes share"
    )
    assumed = [*assumed, "the interface Gloo picked is the problem (the message does not say why it failed)"]
    # init_process_group raises on it; a log that does not show the run stopping keeps it a warning.
    severity = None if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule, ["gloo_fullmesh"], detail=detail + ".", confidence=0.45, assumed=assumed, severity=severity
        )
    ]


# What each library's own form of the cause means, and the setting that fixes it there: the rule's
# remediation is written for NCCL, and a user reading a Gloo or Open MPI error needs that library's name.
OTHER_LIBRARIES = {
    "gloo_no_address": (
        "Gloo found no address to bind: GLOO_SOCKET_IFNAME names an interface this node lacks or one without an "
        "IP, or (unset) the hostname does not resolve to this node; set GLOO_SOCKET_IFNAME=<if> to an interface "
        "every node has (`ip -br addr`)"
    ),
    "ompi_oob_no_iface": (
        "Open MPI's launcher found no network interface for its out-of-band channel: oob_tcp_if_include names "
        "none this node has, or oob_tcp_if_exclude leaves none; set --mca oob_tcp_if_include <if> "
        "(OMPI_MCA_oob_tcp_if_include) to an interface every node has"
    ),
    "mpich_netmask": (
        "MPICH's sockets found no address of the peer on the network its netmask selects: MPICH_NETMASK (or mpiexec "
        "-iface / -netmask) names a network some nodes are not on; set it to the network every node shares "
        "(`ip -br addr`), or unset it"
    ),
    "prrte_no_iface": (
        "Open MPI 5's launcher (PRRTE) found no usable network interface for its daemons: prte_if_include names none "
        "this node has, or prte_if_exclude leaves none; set --prtemca prte_if_include <if> (PRTE_MCA_prte_if_include) "
        "to an interface every node has"
    ),
    "horovod_no_common": (
        "horovodrun found no network interface that every host has and routes: pass --network-interface <if> "
        "(and GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME) naming one they all share"
    ),
}


def _other_library(rule: Rule, ctx: Context) -> list[Finding]:
    """The cause as Gloo, Open MPI or Horovod state it: the finding names that library's setting."""
    for name, hint in OTHER_LIBRARIES.items():
        if ctx.stats(rule, [name]):
            found = ctx.make_finding(rule, [name])
            return [dataclasses.replace(found, detail=f"{found.detail}: {hint}.")]
    return []


def _ignored_setting(rule: Rule, ctx: Context) -> list[Finding]:
    """A setting the library ignores instead of failing on: TensorPipe binding 127.0.0.1 for a
    TP_SOCKET_IFNAME it cannot find, Open MPI dropping an if_include/if_exclude entry. Healthy on one
    node, so an error only in a job that failed."""
    severity = rule.severity if ctx.job_failed() else "warning"
    if ifaces := ctx.captures(rule, "iface", ["tp_iface_missing"]):
        detail = (
            f"PyTorch RPC (TensorPipe) found no address on TP_SOCKET_IFNAME={ifaces[0]} and bound 127.0.0.1, which "
            "no other node can reach; set TP_SOCKET_IFNAME=<if> to an interface every node has"
        )
        return [
            ctx.make_finding(rule, ["tp_iface_missing"], detail=detail + ".", severity=severity, confidence=0.7)
        ]
    if params := ctx.captures(rule, "param", ["ompi_if_invalid"]):
        detail = (
            f"Open MPI ignored its {params[0]} value (an interface name or subnet this node does not have) and "
            f"picks interfaces by itself; set --mca {params[0]} <if> (OMPI_MCA_{params[0]}) to an interface every "
            "node has"
        )
        return [
            ctx.make_finding(rule, ["ompi_if_invalid"], detail=detail + ".", severity=severity, confidence=0.55)
        ]
    return []


_CONTAINER_ID = re.compile(r"[0-9a-f]{12}")


def _docker_bridge(rule: Rule, ctx: Context) -> list:
    """NCCL's bootstrap on a 172.17 address in a process whose host name is a container id (Docker names
    a container's host so): the container sits on Docker's default bridge, unreachable from other nodes."""
    return [
        (ev, g)
        for ev, g in ctx.samples(rule, ["bootstrap_docker_bridge"])
        if _CONTAINER_ID.fullmatch(ctx.host_for(ev) or "")
    ]


def socket_ifname(rule: Rule, ctx: Context) -> list[Finding]:
    explicit = ctx.stats(rule)
    if explicit:
        if all(name in OTHER_LIBRARIES for name, _ in explicit):
            return _other_library(rule, ctx)
        return [ctx.make_finding(rule)]
    if ignored := _ignored_setting(rule, ctx):
        return ignored
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    loopback = _loopback_advertised(rule, ctx, assumed)
    if loopback:
        return loopback
    facts = ctx.facts
    bad = {
        h.host: iface
        for h in facts.hosts.values()
        for iface in h.bootstrap_ifaces
        if iface.startswith(NOT_ROUTABLE_IFACES)
    }
    listed = ctx.samples(rule, ["socket_bridge", "socket_docker", "socket_veth", "old_iface_on"])
    docker = _docker_bridge(rule, ctx)
    listed += [(ev, {**g, "iface": f"{g['iface']} ({g['addr']}, Docker's default bridge network)"}) for ev, g in docker]
    for ev, g in listed:
        bad.setdefault(ctx.host_for(ev) or UNNAMED_HOST, g["iface"])
    failed = ctx.stats(rule, ["connect_failed", "connect_exceeded", "connect_retrying", "bootstrap_failed"])
    if not bad:
        return (
            _ipoib_bootstrap(rule, ctx, failed, assumed)
            or _unreachable_peer(rule, ctx, assumed)
            or _bare_system_error(rule, ctx, assumed)
        )
    if assumed and not failed and not listed:
        # lo for the bootstrap is right on one node, and nothing says there are more. NCCL takes a container
        # bridge (docker0, virbr0) only when told to or when the host has no other interface but lo: an
        # excerpt that does not say how many nodes still gets it named, as a guess.
        bridges = sorted({i for i in bad.values() if not i.startswith("lo")})
        if not bridges:
            return []
        hosts = [h for h, i in bad.items() if i in bridges and h != UNNAMED_HOST]
        detail = (
            f"NCCL's bootstrap uses {', '.join(bridges)}{' on ' + hosts_text(hosts) if hosts else ''}, a container or "
            "virtual bridge whose address (172.17.0.1 on every docker host) no other node can reach: across nodes "
            "ranks cannot connect; set NCCL_SOCKET_IFNAME to the NIC the nodes share"
        )
        return [
            ctx.make_finding(
                rule, ["bootstrap_on"], detail=detail + ".", hosts=hosts or None, severity="warning", confidence=0.4,
                assumed=assumed, values={"iface": ", ".join(bridges)},
            )
        ]  # fmt: skip
    ifaces = sorted({g["iface"] for _, g in listed} | set(bad.values()))
    hosts = [h for h in bad if h != UNNAMED_HOST]
    where = f" on {hosts_text(hosts)}" if hosts else ""
    detail = f"NCCL uses {', '.join(ifaces[:6])}{where} for its sockets: container or virtual interfaces other nodes cannot reach"
    if docker:
        detail += " (start the containers with --network=host so NCCL sees the nodes' own NICs)"
    names = [
        "bootstrap_on",
        "socket_bridge",
        "socket_docker",
        "socket_veth",
        "old_iface_on",
        "connect_failed",
        "connect_exceeded",
        "connect_retrying",
        "bootstrap_failed",
    ]
    values = {"iface": ", ".join(ifaces[:6])}
    if failed:
        detail += "; connections between ranks then failed."
        return [
            ctx.make_finding(rule, names, detail=detail, hosts=hosts, values=values, confidence=0.85, assumed=assumed)
        ]
    # A virtual interface in NCCL's own NET/Socket list (not only its bootstrap) is one NCCL opens channels
    # over: positive evidence of a wrong pick, unlike the no-IB and no-plugin INFO lines every Ethernet
    # container prints, so it ranks above them on the same assumption.
    return [
        ctx.make_finding(
            rule,
            names,
            severity=ctx.between_nodes_severity("warning", assumed),
            # Docker's bridge is named by its address, not only an interface name a site might reuse.
            confidence=0.6 if docker else 0.55 if listed else 0.5,
            detail=detail + ".",
            hosts=hosts,
            values=values,
            assumed=assumed,
        )
    ]


# Causes whose own lines explain an NCCL system error better than a guess about sockets.


# Connect errors that say the peer's address cannot be reached from here (not that the peer is gone:
# "Connection refused" means it answered, with nobody listening).
UNREACHABLE_ERRORS = (
    "No route to host",
    "Network is unreachable",
    "Connection timed out",
    "Software caused connection abort",
)
# Addresses a peer may advertise that no other node can reach: loopback, docker's and libvirt's default
# bridges, IPv4 link-local.
OTHER_CONNECTS = ["ucx_connect_failed", "ompi_connect_failed", "ompi_connect_errno"]
# errno values of those: EHOSTUNREACH, ENETUNREACH, ETIMEDOUT.
UNREACHABLE_ERRNOS = ("113", "101", "110")
UNROUTABLE_PREFIXES = ("127.", "172.17.", "192.168.122.", "169.254.")


def _unreachable_peer(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """NCCL's own socket to a peer failed with an error that means "cannot get there", or the address it
    dialled is one no other node can reach: the interface NCCL picked (here or on the peer) is wrong."""
    # A retry that could not reach the peer says so as well (a refused connect may just be early).
    samples = ctx.samples(rule, ["connect_failed", "connect_exceeded", "connect_retrying"])
    # UCX's and Open MPI's TCP transports fail to connect for many reasons; to a bridge address, for one.
    others = ctx.samples(rule, OTHER_CONNECTS)
    unreachable = [
        (ev, g)
        for ev, g in samples + others
        if (g.get("err") or "").startswith(UNREACHABLE_ERRORS)
        or (g.get("errno") or g.get("errno2")) in UNREACHABLE_ERRNOS
    ]
    local_addr = [
        (ev, g) for ev, g in samples + others if g.get("addr", "").lstrip("[").startswith(UNROUTABLE_PREFIXES)
    ]
    chosen = local_addr or unreachable
    if not chosen:
        return []
    ev, g = chosen[0]
    addr = g.get("addr", "a peer")
    who = "NCCL" if (ev, g) in samples else "UCX" if "dest_addr=" in ev.text else "Open MPI's TCP transport"
    detail = f"{who} could not connect to {addr}"
    if g.get("err"):
        detail += f" ({g['err']})"
    if local_addr:
        detail += (
            ": that address is loopback, a container bridge or link-local, so a peer advertised an interface other "
            "nodes cannot reach (docker's 172.17.x, libvirt's virbr, or a hostname that resolves to 127.0.1.1)"
        )
        confidence = 0.7
    else:
        uses = "NCCL uses for its sockets" if who == "NCCL" else f"{who} uses"
        pin = "NCCL_SOCKET_IFNAME" if who == "NCCL" else "UCX_NET_DEVICES" if who == "UCX" else "btl_tcp_if_include"
        detail += (
            f": the interface {uses} does not route to that peer (another subnet, a management "
            f"NIC, or a firewall); pin {pin} to the NIC every node reaches"
        )
        confidence = 0.5
    hosts = sorted({h for e, _ in chosen if (h := ctx.host_for(e))}, key=natural_key)
    return [
        ctx.make_finding(
            rule,
            ["connect_failed", "connect_exceeded", "connect_retrying", "bootstrap_failed", *OTHER_CONNECTS],
            detail=detail + ".",
            hosts=hosts,
            confidence=confidence,
            severity=ctx.between_nodes_severity(rule.severity, assumed),
            assumed=assumed,
            evidence=pick_evidence([e for e, _ in chosen]),
        )
    ]


_SOCKET_WORDS = re.compile(r"[Ss]ocket|[Cc]onnect|[Bb]ootstrap")


def bare_system_error(ctx: Context, family: str | None = None) -> bool:
    """Whether NCCL failed with "unhandled system error" and nothing in the logs says which call failed
    (no NCCL WARN naming a call other than a socket's, no cause that explains such an error). With
    ``family`` ("socket", "shm"), also False where NCCL's return trail places the call in another part."""
    rule = ctx.rules.get("nccl-socket-ifname")
    if rule is None or not ctx.stats(rule, ["system_error"]) or any(ctx.count(r) for r in SYSTEM_ERROR_EXPLAINED_BY):
        return False
    gid = ctx.rules.get("roce-gid-index")
    if gid and ctx.stats(gid, ["modify_qp_short"]):
        return False  # the failing verbs call is quoted, if only in part
    failed = ctx.rules.get("unexplained-failure")
    warns = [ev.text for ev, _ in ctx.samples(failed, ["nccl_warn"])] if failed else []
    if any(not _SOCKET_WORDS.search(w) for w in warns):
        return False  # an NCCL WARN names the call that failed, and it is not a socket's
    # The peer answered that nothing listens: it is gone (node-failure says so), not unreachable.
    if warns and all("Connection refused" in w for w in warns):
        return False
    # The return trail may still say where the call was; a suspect of another family then stands down.
    shown = failing_call_family(ctx)
    return shown is None or family is None or shown == family


def _bare_system_error(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """NCCL failed with a bare "unhandled system error" and no line saying which call failed (the run
    had NCCL_DEBUG=INFO off). Between nodes the usual failing call is a socket NCCL cannot open or
    whose peer it cannot reach: the interface NCCL picked (a container bridge, a NIC the other node
    does not route to). A suspect to check first, not a proof: the finding says so."""
    if not bare_system_error(ctx, "socket"):
        return []
    trail = trail_line(ctx, "socket")
    said = (
        "its return trail starts in NCCL's socket code, though no NCCL WARN says which call failed"
        if trail
        else "the logs hold no NCCL WARN saying which call failed"
    )
    detail = (
        f'NCCL failed with "unhandled system error" and {said}; '
        "between nodes that is most often a socket to a peer over an interface it cannot reach (a container's "
        "bridge address such as docker0/172.17.x, or a NIC on another subnet): run with NCCL_DEBUG=INFO and "
        "check the Bootstrap/NET/Socket interface lines, or pin NCCL_SOCKET_IFNAME (with docker, --network=host)"
    )
    return [
        ctx.make_finding(
            rule,
            ["system_error"],
            detail=detail + ".",
            # The likeliest cause of a failure the logs show, named as such; a warning otherwise.
            severity="error" if ctx.job_failed() else "warning",
            # NCCL's return trail starting in its socket code says as much as a WARN naming the call would.
            confidence=0.5 if trail else 0.35,
            evidence=pick_evidence([trail] + [ev for ev, _ in ctx.samples(rule, ["system_error"])]) if trail else None,
            assumed=[*assumed] if trail else [*assumed, "the failing system call was a socket between nodes (the log does not say)"],
        )
    ]


def _ipoib_bootstrap(rule: Rule, ctx: Context, failed: list, assumed: list[str]) -> list[Finding]:
    """NCCL's bootstrap failed while its out-of-band socket ran over IPoIB: the IPoIB subnet often
    does not route between all nodes (or a container has no route on it); the Ethernet NIC does."""
    oob = ctx.samples(rule, ["oob_ipoib", "oob_ipoib_old"])
    ipoib = sorted(
        {g["iface"] for _, g in oob}
        | {i for h in ctx.facts.hosts.values() for i in h.bootstrap_ifaces if i.startswith("ib")}
    )
    if not ipoib or not ctx.stats(rule, ["bootstrap_failed"]):
        return []
    hosts = sorted({h for ev, _ in oob if (h := ctx.host_for(ev))})
    detail = (
        f"NCCL's bootstrap failed while its out-of-band socket used the IPoIB interface {', '.join(ipoib[:3])}"
        + (f" on {hosts_text(hosts)}" if hosts else "")
        + ": set NCCL_SOCKET_IFNAME to the Ethernet interface every node routes (NCCL_IB_HCA does not steer the bootstrap)."
    )
    names = ["oob_ipoib", "oob_ipoib_old", "bootstrap_on", "bootstrap_failed"]
    return [
        ctx.make_finding(
            rule,
            names,
            detail=detail,
            hosts=hosts,
            values={"iface": ", ".join(ipoib[:3])},
            confidence=0.55,
            assumed=assumed,
        )
    ]
