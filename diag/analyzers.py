"""Analyzers: correlation a rule's YAML cannot express, registered by name.

A rule names one with ``condition.analyzer``; it receives the rule and the diagnosis context
and returns the findings (usually zero or one). Keep each small and about one cause.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from diag.diagnosis import Context
    from diag.report import Finding
    from diag.rules import Rule

Analyzer = Callable[["Rule", "Context"], list["Finding"]]
ANALYZERS: dict[str, Analyzer] = {}

NODE_LOCAL_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/", "/scratch/local/", "/local/", "/raid/", "/run/user/")
NOT_ROUTABLE_IFACES = ("lo", "docker", "virbr", "veth", "br-")
SIGNAL_ENDINGS = (": Terminated", ": Killed")  # srun's task lines for tasks a cancel ended
IB_ROOT_IDS = ("ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong", "nccl-ib-disabled")


def register(name: str) -> Callable[[Analyzer], Analyzer]:
    def wrap(fn: Analyzer) -> Analyzer:
        ANALYZERS[name] = fn
        return fn

    return wrap


def _hosts_text(hosts: list[str]) -> str:
    from diag.diagnosis import natural_key

    hosts = sorted(hosts, key=natural_key)
    return ", ".join(hosts[:6]) + (f" (+{len(hosts) - 6} more)" if len(hosts) > 6 else "")


def ib_evidence(ctx: Context) -> list[str]:
    """Why InfiniBand/RoCE was expected on this job, as short reasons (empty: no sign of IB)."""
    facts = ctx.facts
    reasons = []
    ib_hosts = [h.host for h in facts.hosts.values() if h.uses_ib()]
    if ib_hosts:
        reasons.append(f"{_hosts_text(ib_hosts)} use{'s' if len(ib_hosts) == 1 else ''} IB")
    if facts.env_values("NCCL_IB_HCA"):
        reasons.append(f"NCCL_IB_HCA is set ({', '.join(facts.env_values('NCCL_IB_HCA'))})")
    if ctx.count("ib-devices-not-mounted"):
        reasons.append("verbs devices exist but cannot be opened")
    ipoib = sorted({i for h in facts.hosts.values() for i in h.bootstrap_ifaces if i.startswith("ib")})
    if ipoib:
        reasons.append(f"nodes have IPoIB interfaces ({', '.join(ipoib)})")
    if any(v.upper().startswith("IB") for v in facts.env_values("NCCL_NET")):
        reasons.append("NCCL_NET asks for IB")
    return reasons


@register("tcp_fallback")
def tcp_fallback(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    if not facts.multi_node():
        return []
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    if not socket_hosts and not ctx.stats(rule):
        return []
    reasons = ib_evidence(ctx)
    nodes = facts.node_count()
    where = _hosts_text(socket_hosts) if socket_hosts else "some nodes"
    ib_hosts = [h.host for h in facts.hosts.values() if h.uses_ib() and not h.uses_socket()]
    if reasons:
        detail = f"NCCL carried inter-node traffic over TCP sockets on {where} of a {nodes}-node job"
        if ib_hosts:
            detail += f", while {_hosts_text(ib_hosts)} use{'s' if len(ib_hosts) == 1 else ''} InfiniBand"
        detail += f"; IB was expected: {'; '.join(reasons)}."
        return [ctx.make_finding(rule, detail=detail, hosts=socket_hosts or None, confidence=0.9)]
    detail = (
        f"NCCL carried inter-node traffic over TCP sockets on {where}; nothing in the logs shows "
        "InfiniBand/RoCE on this cluster, so this is expected on Ethernet-only nodes."
    )
    return [ctx.make_finding(rule, detail=detail, severity="info", confidence=0.5, hosts=socket_hosts or None)]


@register("ib_expected")
def ib_expected(rule: Rule, ctx: Context) -> list[Finding]:
    """A fabric problem that matters only where IB was expected: a warning when nothing shows IB."""
    if not ctx.stats(rule):
        return []
    reasons = ib_evidence(ctx)
    if reasons or not ctx.facts.multi_node():
        return [ctx.make_finding(rule)]
    return [
        ctx.make_finding(
            rule,
            severity="info",  # the same lines are on every healthy Ethernet-only job
            confidence=0.5,
            detail="InfiniBand is unavailable to NCCL, and nothing in the logs shows this cluster has IB; "
            "if it has, this is why NCCL uses TCP between nodes.",
        )
    ]


@register("ib_hca_wrong")
def ib_hca_wrong(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    explicit = ctx.stats(rule, [s.name for s in rule.signatures if not s.fact])
    if explicit:
        devs = ctx.captures(rule, "device")
        detail = f"UCX_NET_DEVICES names {', '.join(devs) or 'a device'} that this node does not have"
        avail = ctx.captures(rule, "available")
        if avail:
            detail += f"; available: {avail[0]}"
        return [ctx.make_finding(rule, detail=detail, values={"value": ", ".join(devs)})]
    mounted = ctx.rules.get("ib-devices-not-mounted")
    unopenable = set()
    if mounted:
        for _, st in ctx.stats(mounted):
            unopenable |= set(st.hosts)
    bad_hosts = [
        h.host
        for h in facts.hosts.values()
        if "NCCL_IB_HCA" in h.env and (h.ib_no_device or (not h.hcas and h.uses_socket())) and h.host not in unopenable
    ]
    if not bad_hosts:
        return []
    values = sorted({facts.hosts[h].env["NCCL_IB_HCA"] for h in bad_hosts})
    seen_elsewhere = sorted({hca for h in facts.hosts.values() for hca in h.hcas})
    detail = f"NCCL_IB_HCA={' / '.join(values)} matched no usable HCA on {_hosts_text(bad_hosts)}"
    detail += ': NCCL found no IB device ("NET/IB : No device found.") and fell back to TCP sockets'
    if seen_elsewhere:
        detail += f"; HCAs NCCL used on other nodes: {', '.join(seen_elsewhere)}"
    names = [s.name for s in rule.signatures]
    evidence = [ev for ev, _ in ctx.samples(rule, names) if ev.host in bad_hosts]
    from diag.diagnosis import pick_evidence

    return [
        ctx.make_finding(
            rule,
            names,
            detail=detail,
            hosts=bad_hosts,
            values={"value": ", ".join(values)},
            evidence=pick_evidence(evidence),
            confidence=0.85,
        )
    ]


@register("ib_disabled")
def ib_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    facts = ctx.facts
    if not facts.multi_node():
        return [ctx.make_finding(rule, severity="info", confidence=0.6,
                                 detail="IB is switched off, which does not matter on a one-node job.")]  # fmt: skip
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    reasons = [r for r in ib_evidence(ctx) if not r.startswith("NCCL_NET")]
    told = []  # which setting did it, as the log shows it
    if disable := ctx.captures(rule, "value", ["ib_disable_echo", "ib_disable_env"]):
        told.append(f"NCCL_IB_DISABLE={disable[0]}")
    if net := ctx.captures(rule, "value", ["net_socket_env", "comm_config_socket"]):
        told.append(f"NCCL_NET={net[0]}")
    detail = f"{' and '.join(told) or 'The job'} told NCCL not to use InfiniBand, so inter-node traffic goes over TCP"
    if socket_hosts:
        detail += f" (on {_hosts_text(socket_hosts)})"
    if reasons:
        return [ctx.make_finding(rule, detail=detail + f"; this cluster has IB: {'; '.join(reasons)}.",
                                 confidence=0.9)]  # fmt: skip
    detail += "; if these nodes have InfiniBand/RoCE, unset it."
    return [ctx.make_finding(rule, severity="warning", confidence=0.6, detail=detail)]


@register("socket_ifname")
def socket_ifname(rule: Rule, ctx: Context) -> list[Finding]:
    explicit = ctx.stats(rule)
    if explicit:
        return [ctx.make_finding(rule)]
    facts = ctx.facts
    if not facts.multi_node():
        return []
    bad = {
        h.host: iface
        for h in facts.hosts.values()
        for iface in h.bootstrap_ifaces
        if iface.startswith(NOT_ROUTABLE_IFACES)
    }
    if not bad:
        return []
    failures = ctx.stats(rule, ["connect_failed", "connect_exceeded"])
    ifaces = sorted(set(bad.values()))
    detail = (
        f"NCCL bootstrap uses {', '.join(ifaces)} on {_hosts_text(list(bad))}, an interface other nodes cannot reach"
    )
    names = ["bootstrap_on", "connect_failed", "connect_exceeded"]
    if failures:
        return [ctx.make_finding(rule, names, detail=detail + "; connections between ranks then failed.",
                                 hosts=list(bad), values={"iface": ", ".join(ifaces)}, confidence=0.85)]  # fmt: skip
    return [ctx.make_finding(rule, names, severity="warning", confidence=0.5, detail=detail + ".",
                             hosts=list(bad), values={"iface": ", ".join(ifaces)})]  # fmt: skip


@register("node_local_path")
def node_local_path(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.facts.multi_node():
        return []
    missing = [(ev, g) for ev, g in ctx.samples(rule, ["missing", "pyxis_name", "chdir"])]
    local_missing = [(ev, g) for ev, g in missing if "name" in g or g.get("path", "").startswith(NODE_LOCAL_PREFIXES)]
    written = [(ev, g) for ev, g in ctx.samples(rule, ["written"]) if g.get("path", "").startswith(NODE_LOCAL_PREFIXES)]
    from diag.diagnosis import pick_evidence

    if local_missing:
        paths = sorted({g.get("path") or f'container "{g["name"]}"' for _, g in local_missing})
        evidence = pick_evidence([ev for ev, _ in local_missing] + [ev for ev, _ in written])
        hosts = sorted({h for ev, _ in local_missing if (h := ctx.host_for(ev))})
        if not hosts and any("name" in g for _, g in local_missing):
            # pyxis' line names no node; the tasks that then failed say which nodes lack the container.
            hosts = sorted(ctx.facts.slurm_task_hosts)
        ranks = sorted({ev.rank for ev, _ in local_missing if ev.rank is not None})
        detail = (
            f"{', '.join(paths[:4])} is node-local storage: it was not found on "
            f"{_hosts_text(hosts) if hosts else 'other nodes'} of this {ctx.facts.node_count()}-node job"
        )
        return [ctx.make_finding(rule, ["missing", "pyxis_name", "chdir", "written"], detail=detail,
                                 evidence=evidence, values={"path": ", ".join(paths[:4])},
                                 hosts=hosts or None, ranks=ranks or None, confidence=0.85)]  # fmt: skip
    if written:
        paths = sorted({g["path"] for _, g in written})
        detail = (
            f"{', '.join(paths[:4])} is on node-local storage in a {ctx.facts.node_count()}-node job: "
            "other nodes cannot read it"
        )
        return [ctx.make_finding(rule, ["written"], severity="warning", confidence=0.5, detail=detail,
                                 values={"path": ", ".join(paths[:4])})]  # fmt: skip
    return []


@register("pmix_not_used")
def pmix_not_used(rule: Rule, ctx: Context) -> list[Finding]:
    if ctx.stats(rule):
        return [ctx.make_finding(rule)]
    facts = ctx.facts
    singles = [h for h in facts.hosts.values() if h.ranks == {0}]
    if len(singles) > 1 and facts.max_nranks == 1:
        detail = (
            f"every process is rank 0 of a world of 1 on {_hosts_text([h.host for h in singles])}: "
            "the ranks were started without PMI/PMIx wiring or without RANK/WORLD_SIZE"
        )
        return [ctx.make_finding(rule, detail=detail, hosts=[h.host for h in singles], confidence=0.6)]
    return []


@register("pmix_runtime")
def pmix_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    if ctx.job_failed():
        hosts = _awaited_hosts(rule, ctx)
        return [ctx.make_finding(rule, hosts=hosts or None, values={"host": ", ".join(hosts) or "the nodes named"})]
    return [ctx.make_finding(rule, severity="info", confidence=0.4,
                             detail="PMIx reported errors but the job shows no failure: harmless noise.")]  # fmt: skip


def _awaited_hosts(rule: Rule, ctx: Context) -> list[str]:
    """The nodes PMIx waited for: common to every "wait contrib" list (a ring dump lists the
    laggard and everything after it), plus those named by timeouts and failed connections."""
    from diag.hostlist import expand

    waits = [set(expand(v)) for v in ctx.captures(rule, "host", ["wait_contrib"])]
    hosts = set.intersection(*waits) if waits else set()
    hosts |= set(ctx.captures(rule, "host", ["dmdx_timeout", "cannot_connect", "unexpected_contrib"]))
    from diag.diagnosis import natural_key

    return sorted(hosts, key=natural_key)


@register("unexplained_failure")
def unexplained_failure(rule: Rule, ctx: Context) -> list[Finding]:
    from diag.causes import severity_rank
    from diag.diagnosis import pick_evidence

    failed = ctx.stats(rule, [s.name for s in rule.signatures if not s.fact])
    if not failed:
        return []
    for f in ctx.findings.values():
        if f.role == "root" and severity_rank(f.severity) >= severity_rank("error"):
            return []
    # A plain scancel (reported as info by `preempted` only when nothing failed before it): the
    # CANCELLED banner and the terminated tasks are its consequences, not an unexplained failure.
    if "preempted" in ctx.findings:
        return []
    # A collective timeout that names the rank which fell behind is the better answer when every
    # error line is only that timeout's cascade (watchdog abort, ncclRemoteError, DistBackendError).
    errors = [ev.text for ev, _ in ctx.samples(rule, ["exception", "exception_other", "terminate", "mpi_abort"])]
    if errors and analyzers_fabric.failure_is_timeout_cascade(ctx, errors):
        return []
    # The most telling line per host/rank: the exception or exit line, not "Traceback".
    telling = [
        ev
        for ev, _ in ctx.samples(
            rule,
            [
                "exception",
                "exception_other",
                "task_exit",
                "agent_exit",
                "banner",
                "banner_failed",
                "terminate",
                "mpi_abort",
            ],
        )
    ]
    evidence = pick_evidence(telling or [ev for _, st in failed for ev, _ in st.samples], limit=10)
    hosts = {h for e in evidence if (h := ctx.host_for(e))} | set(
        ctx.captures(rule, "host", ["task_exit", "banner", "banner_failed"])
    )
    ranks = sorted({e.rank for e in evidence if e.rank is not None})
    # srun's cancel banner and the tasks it ended follow the failure: name the failure itself first.
    causes = [e for e in evidence if "CANCELLED AT" not in e.text and not e.text.rstrip().endswith(SIGNAL_ENDINGS)]
    first = (causes or evidence)[0].text.strip() if evidence else ""
    detail = f"The job failed and no known cause matched. First error: {first[:200]}"
    return [ctx.make_finding(rule, detail=detail, evidence=evidence, hosts=sorted(hosts), ranks=ranks)]


# Catalogue analyzers live in their own modules; importing them registers them.
from diag import analyzers_fabric, analyzers_launch  # noqa: E402,F401
