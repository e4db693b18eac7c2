"""NCCL on TCP sockets between nodes (nccl-tcp-fallback), and NCCL_IB_DISABLE / NCCL_NET=Socket forcing it (nccl-ib-disabled)."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import attempted_in_prose, said
from diag.diagnosis.analyzers.transport.common import (
    IB_ASSUMED,
    SYSTEM_ERROR_EXPLAINED_BY,
    external_net,
    ib_evidence,
    run_finished,
)
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST


def tcp_fallback(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    if ofi := _ofi_over_tcp(rule, ctx, assumed):
        return ofi
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    plugin = any(external_net(h.nets) for h in facts.hosts.values())
    # "NET/IB : No device found." means NCCL goes on to its socket transport, unless an external
    # net plugin (IBext, AWS Libfabric) carries the traffic instead.
    no_device = [h.host for h in facts.hosts.values() if h.ib_no_device and not external_net(h.nets)]
    socket_hosts += [h for h in no_device if h not in socket_hosts and h != UNNAMED_HOST]
    shown = ctx.stats(rule, [s.name for s in rule.signatures if not s.fact and s.name != "no_ib_device"])
    if _loopback_only(rule, ctx):
        return []  # sockets over lo reach no other node: this is a one-host run
    if not shown and (plugin or not (no_device or ctx.stats(rule, ["no_ib_device"])) or _net_forced(ctx)):
        return []
    reasons = ib_evidence(ctx) + _rdma_plugin_evidence(ctx)
    job = "this job" if assumed else f"a {facts.node_count()}-node job"
    where = hosts_text(socket_hosts) if socket_hosts else "some nodes"
    ib_hosts = [h.host for h in facts.hosts.values() if h.uses_ib() and not h.uses_socket()]
    if reasons:
        detail = f"NCCL carried inter-node traffic over TCP sockets on {where} of {job}"
        if ib_hosts:
            detail += f", while {hosts_text(ib_hosts)} use{'s' if len(ib_hosts) == 1 else ''} InfiniBand"
        detail += f"; IB was expected: {'; '.join(reasons)}."
        severity = ctx.between_nodes_severity(rule.severity, assumed)
        confidence = 0.9 if shown else 0.8  # "No device found" alone: sockets are next, not yet seen in use
        if done := run_finished(ctx):
            # A run that finished over TCP was slowed, not failed (a deliberate TCP baseline looks the same).
            detail += f" The run still finished ({said(done, 80)}): this cost speed, not the job."
            severity, confidence = "warning", 0.6
        return [
            ctx.make_finding(
                rule,
                detail=detail,
                hosts=socket_hosts or None,
                confidence=confidence,
                assumed=assumed,
                severity=severity,
            )
        ]
    own_cause = any(ctx.count(r) for r in (*SYSTEM_ERROR_EXPLAINED_BY, "nccl-socket-ifname"))
    if facts.nodes_known() is None and ctx.job_failed() and not own_cause:
        # An excerpt of a failed job that says neither how many nodes nor whether the cluster has IB:
        # unknown is not "Ethernet-only", so the fallback is still named, as an assumption.
        detail = (
            f"NCCL uses TCP sockets between nodes on {where}; nothing in the excerpt shows whether these nodes "
            "have InfiniBand/RoCE: if they do, NCCL could not use it."
        )
        return [
            ctx.make_finding(
                rule,
                detail=detail,
                severity="warning",
                confidence=0.5,
                hosts=socket_hosts or None,
                assumed=[*assumed, IB_ASSUMED],
            )
        ]
    detail = (
        f"NCCL carried inter-node traffic over TCP sockets on {where}; nothing in the logs shows "
        "InfiniBand/RoCE on this cluster, so this is expected on Ethernet-only nodes."
    )
    return [
        ctx.make_finding(
            rule, detail=detail, severity="info", confidence=0.5, hosts=socket_hosts or None, assumed=assumed
        )
    ]


def _ofi_over_tcp(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """aws-ofi-nccl chose libfabric's TCP provider (ib-devices-not-mounted's ofi_tcp_provider line, the root
    it folds under): NCCL says it uses the plugin, but the plugin has no EFA device and its traffic goes over TCP."""
    devices = ctx.rules.get("ib-devices-not-mounted")
    samples = ctx.samples(devices, ["ofi_tcp_provider"]) if devices else []
    if not samples:
        return []
    hosts = sorted({h for ev, _ in samples if (h := ctx.host_for(ev))})
    detail = (
        f"The aws-ofi-nccl plugin chose libfabric's {samples[0][1]['provider']} provider"
        f"{' on ' + hosts_text(hosts) if hosts else ''}: it found no EFA device, so the traffic NCCL hands it goes "
        "over TCP (FI_PROVIDER=efa makes this fail at start instead of running slowly)"
    )
    severity = ctx.between_nodes_severity(rule.severity, assumed)
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=hosts or None, severity=severity, assumed=assumed,
            confidence=0.8, evidence=pick_evidence(ev for ev, _ in samples),
        )
    ]  # fmt: skip


def _rdma_plugin_evidence(ctx: Context) -> list[str]:
    """An RDMA net plugin (aws-ofi-nccl for EFA or Slingshot, HPC-X's IBext) that was there and could not
    start: the nodes were set up for a fabric other than TCP, so sockets are a fallback, not the design."""
    plugin = ctx.rules.get("nccl-net-plugin")
    if plugin is None:
        return []
    failed = [n for n in ctx.captures(plugin, "net", ["failed_ib"]) if "Libfabric" in n or n.startswith("IBext")]
    if ctx.stats(plugin, ["ofi_failed"]) or failed:
        return [f"the {failed[0] if failed else 'aws-ofi-nccl'} net plugin is installed for an RDMA fabric and could not start"]
    return []


def _net_forced(ctx: Context) -> bool:
    """NCCL_NET names a network other than Socket (or NCCL could not start the one asked for): NCCL then
    fails instead of falling back to sockets."""
    plugin = ctx.rules.get("nccl-net-plugin")
    named = ctx.facts.env_values("NCCL_NET") + (ctx.captures(plugin, "value", ["net_env"]) if plugin else [])
    if any(v.strip().lower() != "socket" for v in named):
        return True
    return bool(plugin and ctx.stats(plugin, ["any_failed", "network_not_found"]))


def _loopback_only(rule: Rule, ctx: Context) -> bool:
    """NCCL's socket interfaces (or NCCL_SOCKET_IFNAME) are loopback only: all ranks are on one host."""
    lists = ctx.captures(rule, "ifs", ["socket_ifs"])
    ifaces = {m.split(":", 1)[0] for v in lists for m in re.findall(r"\[\d+\]([^\s<]+)", v)}
    if ctx.facts.env_values("NCCL_SOCKET_IFNAME"):
        ifaces |= set(ctx.facts.env_values("NCCL_SOCKET_IFNAME"))
    return bool(ifaces) and ifaces <= {"lo", "=lo"}



# libibverbs' warnings about providers (libibverbs/dynamic_driver.c, init.c): one per provider listed
# in /etc/libibverbs.d that it cannot load, whichever HCA the node has.


def ib_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return _ib_found_socket_chosen(rule, ctx)
    settings = [ev for ev, _ in ctx.samples(rule, [s.name for s in rule.signatures])]
    if all(attempted_in_prose(ev.text) for ev in settings) and sum(st.count for _, st in ctx.stats(rule)) == len(settings):
        return []  # only named as a fix someone tried ("Tried `export NCCL_IB_DISABLE=1`, didn't work")
    facts = ctx.facts
    if any(n not in ("IB", "Socket") for h in facts.hosts.values() for n in h.nets):
        return []  # an external plugin (IBext, OFI) carries the traffic: nccl-net-plugin says it ignored the setting
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return [
            ctx.make_finding(
                rule,
                severity="info",
                confidence=0.6,
                detail="IB is switched off, which does not matter on a one-node job.",
            )
        ]
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    reasons = [r for r in ib_evidence(ctx) if not r.startswith("NCCL_NET")]
    told = []  # which setting did it, as the log shows it
    if disable := ctx.captures(rule, "value", ["ib_disable_echo", "ib_disable_env"]):
        told.append(f"NCCL_IB_DISABLE={disable[0]}")
    if net := ctx.captures(rule, "value", ["net_socket_env", "comm_config_socket"]):
        told.append(f"NCCL_NET={net[0]}")
    detail = f"{' and '.join(told) or 'The job'} told NCCL not to use InfiniBand, so inter-node traffic goes over TCP"
    if socket_hosts:
        detail += f" (on {hosts_text(socket_hosts)})"
    if reasons:
        detail += f"; this cluster has IB: {'; '.join(reasons)}."
        severity = ctx.between_nodes_severity(rule.severity, assumed)
        return [ctx.make_finding(rule, detail=detail, confidence=0.9, assumed=assumed, severity=severity)]
    detail += "; if these nodes have InfiniBand/RoCE, unset it."
    return [ctx.make_finding(rule, severity="warning", confidence=0.6, detail=detail, assumed=assumed)]


def _ib_found_socket_chosen(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL opened HCAs on a node ("NET/IB : Using [0]mlx5_0:1/IB") and then chose Socket ("Using network
    Socket"): it initialises every network and picks one by NCCL_NET, so Socket was asked for by name.
    NCCL_IB_DISABLE=1 would have skipped the HCAs; a plugin would have been named instead of Socket."""
    hosts = [h for h in ctx.facts.hosts.values() if h.hcas and h.nets == {"Socket"}]
    if not hosts:
        return []
    names = sorted({hca for h in hosts for hca in h.hcas})
    detail = (
        f"NCCL opened InfiniBand/RoCE devices ({', '.join(names[:4])}) on {hosts_text([h.host for h in hosts])} and "
        "still chose the Socket network: NCCL_NET=Socket (set in the environment or a config NCCL reads, such as "
        "/etc/nccl.conf or ~/.nccl.conf, which NCCL does not echo) tells it to; unset it"
    )
    assumed = ["the choice was NCCL_NET=Socket: the logs do not show the setting"]
    spans, spans_assumed = ctx.spans_nodes()
    severity = ctx.between_nodes_severity(rule.severity, spans_assumed) if spans else "info"
    named = {h.host for h in hosts}
    evidence = [
        ev
        for rid, sigs in (("ib-hca-mismatch-nodes", ["ib_using"]), ("nccl-tcp-fallback", ["using_socket"]))
        if (other := ctx.rules.get(rid))
        for ev, _ in ctx.samples(other, sigs)
        if ctx.host_for(ev) in named
    ]
    finding = ctx.make_finding(
        rule, [], detail=detail + ".", hosts=sorted(named), confidence=0.6, assumed=[*assumed, *spans_assumed],
        severity=severity, evidence=pick_evidence(evidence),
    )  # fmt: skip
    finding.count = len(evidence)
    return [finding]
