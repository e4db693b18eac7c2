"""Fabric and NCCL transport: why NCCL is on TCP, and the settings, images and plugins behind it."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or, plural
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST

NOT_ROUTABLE_IFACES = ("lo", "docker", "virbr", "veth", "br-")

IB_ASSUMED = "the cluster has InfiniBand/RoCE that the job should use (nothing in the logs shows it)"

IB_ROOT_IDS = ("ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong", "nccl-ib-disabled")


def ib_evidence(ctx: Context) -> list[str]:
    """Why InfiniBand/RoCE was expected on this job, as short reasons (empty: no sign of IB)."""
    facts = ctx.facts
    reasons = []
    ib_hosts = [h.host for h in facts.hosts.values() if h.uses_ib()]
    if ib_hosts:
        reasons.append(f"{hosts_text(ib_hosts)} use{'s' if len(ib_hosts) == 1 else ''} IB")
    if facts.env_values("NCCL_IB_HCA"):
        reasons.append(f"NCCL_IB_HCA is set ({', '.join(facts.env_values('NCCL_IB_HCA'))})")
    if ctx.count("ib-devices-not-mounted"):
        reasons.append("verbs devices exist but cannot be opened")
    ipoib = {i for h in facts.hosts.values() for i in h.bootstrap_ifaces if i.startswith("ib")}
    # Sockets over IPoIB (ib0) are still TCP, and say the nodes have InfiniBand.
    fallback = ctx.rules.get("nccl-tcp-fallback")
    if fallback:
        ipoib |= {
            i for v in ctx.captures(fallback, "ifs", ["socket_ifs"]) for i in re.findall(r"\[\d+\](ib[\w.]*):", v)
        }
    ipoib = sorted(ipoib)
    if ipoib:
        reasons.append(f"nodes have IPoIB interfaces ({', '.join(ipoib)})")
    if any(v.upper().startswith("IB") for v in facts.env_values("NCCL_NET")):
        reasons.append("NCCL_NET asks for IB")
    return reasons


def tcp_fallback(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    plugin = any(_external_net(h.nets) for h in facts.hosts.values())
    # "NET/IB : No device found." means NCCL goes on to its socket transport, unless an external
    # net plugin (IBext, AWS Libfabric) carries the traffic instead.
    no_device = [h.host for h in facts.hosts.values() if h.ib_no_device and not _external_net(h.nets)]
    socket_hosts += [h for h in no_device if h not in socket_hosts and h != UNNAMED_HOST]
    shown = ctx.stats(rule, [s.name for s in rule.signatures if not s.fact and s.name != "no_ib_device"])
    if _loopback_only(rule, ctx):
        return []  # sockets over lo reach no other node: this is a one-host run
    if not shown and (plugin or not (no_device or ctx.stats(rule, ["no_ib_device"])) or _net_forced(ctx)):
        return []
    reasons = ib_evidence(ctx)
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


def _external_net(nets: set[str]) -> bool:
    return any(n not in ("IB", "Socket") for n in nets)


# libibverbs' warnings about providers (libibverbs/dynamic_driver.c, init.c): one per provider listed
# in /etc/libibverbs.d that it cannot load, whichever HCA the node has.
PROVIDER_WARNINGS = frozenset({"provider_missing", "no_userspace_driver", "no_config_dir", "provider_abi"})


def verbs_missing(rule: Rule, ctx: Context) -> list[Finding]:
    """ib-verbs-library-missing, less libibverbs' provider warnings that did not stop IB: where every
    node that shows NCCL's network opened its HCAs, or where the provider missing is ConnectX-3's
    libmlx4 and every HCA NCCL lists is an mlx5 one, the warning is about hardware these nodes lack."""
    hit = {n for n, _ in ctx.stats(rule)}
    if hit and hit <= PROVIDER_WARNINGS:
        shown = [h for h in ctx.facts.hosts.values() if h.hcas or h.nets or h.channel_nets or h.ib_no_device]
        works = bool(shown) and all(h.hcas and not h.ib_no_device and not h.uses_socket() for h in shown)
        drivers = ctx.captures(rule, "driver", ["provider_missing"])
        hcas = [hca for h in shown for hca in h.hcas]
        other_hw = (
            hit == {"provider_missing"}
            and hcas
            and all("mlx4" in d for d in drivers)
            and not any(hca.startswith("mlx4") for hca in hcas)
        )
        if works or other_hw:
            return []
    return ib_expected(rule, ctx)


def ib_expected(rule: Rule, ctx: Context) -> list[Finding]:
    """A fabric problem that matters only where IB was expected: a warning when nothing shows IB."""
    if not ctx.stats(rule):
        return []
    reasons = ib_evidence(ctx)
    known = ctx.facts.nodes_known()
    if reasons or known is False:
        return [ctx.make_finding(rule)]
    if ctx.stats(rule, ["lib_not_loadable"]) and ctx.job_failed():
        # A program that links the verbs library died loading it: the failure itself, not a quiet fallback.
        return [ctx.make_finding(rule, confidence=0.75)]
    if known is None and ctx.count("unexplained-failure", ["nccl_error", "nccl_tests_failure", "nccl_warn"]):
        # NCCL itself then failed: the verbs stack it could not load is the likeliest reason.
        return [ctx.make_finding(rule, confidence=0.6, assumed=[IB_ASSUMED])]
    if known is None:
        # An excerpt that shows neither IB nor how many nodes: the same lines are on every job in a
        # container without RDMA, where nothing needs IB.
        return [ctx.make_finding(rule, severity="warning", confidence=0.5, assumed=[IB_ASSUMED])]
    return [
        ctx.make_finding(
            rule,
            severity="info",  # the same lines are on every healthy Ethernet-only job
            confidence=0.5,
            detail="InfiniBand is unavailable to NCCL, and nothing in the logs shows this cluster has IB; "
            "if it has, this is why NCCL uses TCP between nodes.",
        )
    ]


DEVICES_UNSEEN_ASSUMED = (
    "the nodes have InfiniBand/RoCE HCAs, which NCCL did not see (as when /dev/infiniband is not in the container)"
)


def ib_not_mounted(rule: Rule, ctx: Context) -> list[Finding]:
    """Verbs devices that cannot be opened; or, with less certainty, no IB device at all where the
    job asked for IB and no HCA filter, image or switch explains it: the devices are not visible."""
    found = ib_expected(rule, ctx)
    if found and (partial := _opened_the_rest(rule, ctx)):
        return partial
    if found or ctx.count("ib-verbs-library-missing"):
        return found
    facts = ctx.facts
    if ctx.stats(rule, ["perftest_no_device"]):
        detail = (
            "perftest found no InfiniBand/RoCE device where it ran: in a container or pod the verbs devices "
            "(/dev/infiniband/uverbs*) were not passed in, or the host has no RDMA driver loaded"
        )
        return [ctx.make_finding(rule, ["perftest_no_device"], detail=detail + ".", confidence=0.55)]
    if ctx.stats(rule, ["ofi_no_provider"]) and not ctx.count("ib-verbs-library-missing"):
        detail = (
            "libfabric found no provider with a usable device for the aws-ofi-nccl plugin (FI_ENODATA): the EFA "
            "device is not visible to the job (in a container /dev/infiniband was not passed in), or the host "
            "has no EFA driver (fi_info -p efa shows which)"
        )
        return [ctx.make_finding(rule, ["ofi_no_provider"], detail=detail + ".", confidence=0.65)]
    if providers := ctx.captures(rule, "provider", ["ofi_tcp_provider"]):
        spans, assumed = ctx.spans_nodes()
        if spans:
            assumed = [*assumed, "the job should use EFA: aws-ofi-nccl is there for it"]
            detail = (
                f"aws-ofi-nccl runs over libfabric's {providers[0]} provider, not EFA: it found no EFA device "
                "(in a container /dev/infiniband was not passed in, e.g. docker run --device=/dev/infiniband/uverbs0, "
                "or the host has no EFA driver; fi_info -p efa shows which), so traffic between nodes goes over TCP"
            )
            return [
                ctx.make_finding(
                    rule, ["ofi_tcp_provider"], detail=detail + ".", confidence=0.55, assumed=assumed,
                    severity=ctx.between_nodes_severity(rule.severity, assumed),
                )
            ]  # fmt: skip
    ucx = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["ucx_no_ib_transport"])
        if not re.search(r"\b(?:rc|ud|dc)(?:_x|_mlx5|_verbs)?\b", g.get("available", ""))
    ]
    if ucx:
        offered = ucx[0][1].get("available", "").strip()
        detail = (
            f"UCX was asked for InfiniBand transports ({ucx[0][1]['tls']}) and offers only {offered[:80]}: it sees no "
            "verbs device (in a container or pod, /dev/infiniband was not passed in, or the host has no RDMA driver)"
        )
        return [
            ctx.make_finding(
                rule, ["ucx_no_ib_transport"], detail=detail + ".", confidence=0.5, evidence=[e for e, _ in ucx[:4]]
            )
        ]
    if ucx := _ucx_no_verbs(rule, ctx):
        return ucx
    unseen = [h.host for h in facts.hosts.values() if h.ib_no_device and "NCCL_IB_HCA" not in h.env]
    if not unseen or "1" in facts.env_values("NCCL_IB_DISABLE"):
        return []
    wanted = [r for r in ib_evidence(ctx) if not r.startswith("NCCL_IB_HCA")]
    if "0" in facts.env_values("NCCL_IB_DISABLE"):
        wanted.append("NCCL_IB_DISABLE=0 is set")
    if facts.env_values("NCCL_IB_GID_INDEX"):
        wanted.append("NCCL_IB_GID_INDEX is set")
    if not wanted:
        return []
    spans, assumed = ctx.spans_nodes()
    assumed = [*assumed, DEVICES_UNSEEN_ASSUMED]
    detail = (
        f'NCCL found no IB device ("NET/IB : No device found.") on {hosts_text(unseen)} although IB was wanted '
        f"({'; '.join(wanted)}): the verbs devices are not visible to the job"
    )
    ev = [e for e, _ in ctx.samples(rule, ["no_device"]) if (ctx.host_for(e) or UNNAMED_HOST) in unseen]
    return [
        ctx.make_finding(
            rule,
            ["no_device"],
            detail=detail + ".",
            hosts=unseen,
            confidence=0.6,
            assumed=assumed,
            severity=ctx.between_nodes_severity(rule.severity, assumed),
            evidence=pick_evidence(ev),
        )
    ]


def _opened_the_rest(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL opens every verbs device before it applies NCCL_IB_HCA (net_ib init), so a device left out
    of the container (a bond, a storage HCA) is reported on healthy nodes too. Where every node that
    could not open one opened as many HCAs as the others and carries its traffic over IB, in a run
    that went on, that is a warning."""
    unopened = ctx.stats(rule, ["open_failed", "unable_to_open"])
    hosts = {h for _, st in unopened for h in st.hosts}
    facts = ctx.facts
    if not hosts or UNNAMED_HOST in hosts or any(h not in facts.hosts for h in hosts):
        return []
    nodes = [facts.hosts[h] for h in hosts]
    if not all(hf.hcas and not hf.ib_no_device and not hf.uses_socket() for hf in nodes):
        return []
    # Fewer HCAs there than on another node makes the rails unequal, which can hang a collective; and
    # in a job that failed the missing devices stay a suspect: both keep the rule's error.
    if len({len(hf.hcas) for hf in facts.hosts.values() if hf.hcas}) > 1 or ctx.job_failed() or ctx.count("nccl-timeout"):
        return []
    devices = ctx.captures(rule, "hca", ["unable_to_open"])
    detail = (
        f"NCCL could not open {', '.join(devices) or 'some verbs devices'} on {hosts_text(sorted(hosts, key=natural_key))} "
        "(not passed into the container), but opened as many HCAs there as on the other nodes and runs over "
        "InfiniBand: no fallback, and the run went on"
    )
    return [ctx.make_finding(rule, detail=detail + ".", severity="warning", confidence=0.5)]


def _ucx_no_verbs(rule: Rule, ctx: Context) -> list[Finding]:
    """UCX asked for verbs transports (UCX_TLS=rc,ud,dc...) and found them on no device: it sees no RDMA
    device at all. Where UCX also says a device named in UCX_NET_DEVICES is not there, that setting is
    the cause (nccl-ib-hca-wrong), not the mount."""
    asked = [
        (ev, g["asked"])
        for ev, g in ctx.samples(rule, ["ucx_no_usable"])
        if re.match(r"\s*(?:(?:rc|ud|dc|ib)(?:_\w+)?[, ])+", g.get("asked", ""))
    ]
    if not asked or ctx.count("nccl-ib-hca-wrong"):
        return []
    detail = (
        f"UCX found none of the InfiniBand transports it was asked for ({asked[0][1].strip()}): it sees no verbs "
        "device (in a container or pod /dev/infiniband was not passed in, or the host has no RDMA driver)"
    )
    return [ctx.make_finding(rule, ["ucx_no_usable"], detail=detail + ".", confidence=0.5, evidence=[asked[0][0]])]


def ib_hca_wrong(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    explicit = ctx.stats(rule, [s.name for s in rule.signatures if s.name.startswith("ucx_")])  # UCX says so
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
        return _hca_set_by_script(rule, ctx, unopenable) or _hca_off_fabric(rule, ctx) or _mixed_links(rule, ctx)
    values = sorted({facts.hosts[h].env["NCCL_IB_HCA"] for h in bad_hosts})
    seen_elsewhere = sorted({hca for h in facts.hosts.values() for hca in h.hcas})
    detail = f"NCCL_IB_HCA={' / '.join(values)} matched no usable HCA on {hosts_text(bad_hosts)}"
    detail += ': NCCL found no IB device ("NET/IB : No device found.") and fell back to TCP sockets'
    if seen_elsewhere:
        detail += f"; HCAs NCCL used on other nodes: {', '.join(seen_elsewhere)}"
    names = [s.name for s in rule.signatures]
    evidence = [ev for ev, _ in ctx.samples(rule, names) if ev.host in bad_hosts]
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


_LINKED_PORT = re.compile(r"\[\d+\]([\w.-]+:\d+)(?::\d+:\d+)?/(IB|RoCE)\b")


def _mixed_links(rule: Rule, ctx: Context) -> list[Finding]:
    """A process that stripes over InfiniBand and RoCE ports at once: the ports of the link layer
    fewer of them have are on another network than the rest (a bonded Ethernet NIC beside eight
    IB HCAs), and NCCL_IB_HCA should leave them out."""
    samples = ctx.samples(rule, ["mixed_links"])
    if not samples:
        return []
    ports: dict[str, list[str]] = {"IB": [], "RoCE": []}
    for _, g in samples:
        for port, link in _LINKED_PORT.findall(g.get("devs", "")):
            if port not in ports[link]:
                ports[link].append(port)
    odd, main = ("RoCE", "IB") if len(ports["RoCE"]) <= len(ports["IB"]) else ("IB", "RoCE")
    names = ", ".join(ports[odd])
    detail = (
        f"NCCL uses {names} ({odd}) beside {len(ports[main])} {main} port(s) in one process: the {odd} port is on "
        f"another network than the others, and traffic striped over it runs slow or fails; leave it out with "
        f"NCCL_IB_HCA=^{','.join(p.split(':')[0] for p in ports[odd])}"
    )
    return [
        ctx.make_finding(
            rule, ["mixed_links"], detail=detail, severity="warning", confidence=0.6,
            values={"value": "no filter that leaves it out"}, evidence=pick_evidence(ev for ev, _ in samples),
        )
    ]  # fmt: skip


UNREACHABLE_QP_ERRORS = ("Connection timed out", "Network is unreachable", "No route to host")


def hca_filter_values(ctx: Context) -> list[str]:
    """NCCL_IB_HCA as the job set it (NCCL's echo, the script, an env dump)."""
    rule = ctx.rules.get("nccl-ib-hca-wrong")
    found = ctx.captures(rule, "value", ["hca_assign", "hca_set"]) if rule else []
    return list(dict.fromkeys(found + ctx.facts.env_values("NCCL_IB_HCA")))


def qp_unreachable(ctx: Context) -> list:
    """Failed QP transitions (the final WARN, not 2.24+'s retries) whose error says the peer cannot be reached."""
    rule = ctx.rules.get("roce-gid-index")
    if rule is None:
        return []
    return [
        (ev, g)
        for ev, g in ctx.samples(rule, ["modify_qp_gid", "modify_qp_old", "modify_qp_short"])
        if "retrying" not in ev.text and (g.get("err") or "").strip().startswith(UNREACHABLE_QP_ERRORS)
    ]


def _hca_off_fabric(rule: Rule, ctx: Context) -> list[Finding]:
    """The job lists several HCA ports in NCCL_IB_HCA and queue pairs then cannot reach the peer: a listed
    port that is not on the other nodes' network (a direct-connect or unwired port) gets paired with one
    that is. Nothing forced the GID index, so the port list is the setting to check first."""
    values = [v for v in hca_filter_values(ctx) if not v.startswith("^")]
    ports = [p for v in values[:1] for p in v.split(",") if p]
    stuck = qp_unreachable(ctx)
    if len(ports) < 2 or not stuck or ctx.facts.env_values("NCCL_IB_GID_INDEX"):
        return []
    gid = ctx.rules.get("roce-gid-index")
    if gid and ctx.captures(gid, "gid", ["gid_env", "gid_export"]):
        return []
    devs = sorted({g["hca"] for _, g in stuck if g.get("hca")})
    detail = (
        f"NCCL_IB_HCA={values[0]} lists {len(ports)} ports and connecting queue pairs then failed "
        f"({stuck[0][1].get('err', '').strip()}{' on ' + ', '.join(devs) if devs else ''}): a listed port that is not on "
        "the network the other nodes share (a direct-connect or unwired port, a link-local address) is paired "
        "with one that is; list only the ports every node reaches"
    )
    return [
        ctx.make_finding(
            rule,
            ["hca_assign", "hca_set"],
            detail=detail + ".",
            values={"value": values[0]},
            confidence=0.6,
            evidence=pick_evidence(
                [ev for ev, _ in ctx.samples(rule, ["hca_assign", "hca_set"])] + [ev for ev, _ in stuck]
            ),
        )
    ]


def _hca_set_by_script(rule: Rule, ctx: Context, unopenable: set[str]) -> list[Finding]:
    """NCCL_IB_HCA as a script or env dump set it (old NCCL does not echo it, an excerpt may not
    show the echo), and NCCL found no IB device: the filter is the likeliest reason, not a proof."""
    values = list(dict.fromkeys(ctx.captures(rule, "value", ["hca_assign", "hca_set"])))
    if not values or ctx.count("nccl-ib-disabled") or ctx.count("ib-devices-not-mounted"):
        return []
    no_ib = [h for h in ctx.facts.hosts.values() if h.ib_no_device and h.host not in unopenable]
    if not no_ib and not ctx.stats(rule, ["no_device"]):
        return []
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    hosts = sorted(h.host for h in no_ib if h.host != UNNAMED_HOST)
    where = f" on {hosts_text(hosts)}" if hosts else ""
    detail = (
        f"The job sets NCCL_IB_HCA={values[0]} and NCCL found no IB device{where} "
        '("NET/IB : No device found."): the filter names HCAs or ports that are not there or not active, '
        "so NCCL fell back to TCP sockets"
    )
    names = ["hca_assign", "hca_set", "no_device"]
    severity = ctx.between_nodes_severity(rule.severity, assumed)
    return [
        ctx.make_finding(
            rule,
            names,
            detail=detail + ".",
            hosts=hosts or None,
            values={"value": values[0]},
            confidence=0.6,
            assumed=assumed,
            severity=severity,
        )
    ]


def ib_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
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


def _loopback_advertised(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """Gloo (PyTorch's CPU group, also under vLLM and Ray) binds where the hostname resolves; when
    that is loopback (hostNetwork pods, an /etc/hosts line), every rank advertises 127.0.0.1 and a
    rank on another node then connects to its own loopback: refused."""
    peers = ctx.captures(rule, "addr", ["loopback_peer"])
    fallback = ctx.stats(rule, ["loopback_fallback"])
    if not peers and not (fallback and ctx.job_failed()):
        return []
    detail = (
        f"A rank connected to a peer at {peers[0]}: ranks advertised their loopback address"
        if peers
        else "PyTorch could not resolve the hostname to a local address and bound Gloo to loopback"
    )
    detail += (
        " because the hostname resolves to 127.x (hostNetwork pods, an /etc/hosts entry), so ranks on other "
        "nodes cannot reach them; set GLOO_SOCKET_IFNAME (and NCCL_SOCKET_IFNAME) to a routable interface"
    )
    return [
        ctx.make_finding(
            rule, ["loopback_peer", "loopback_fallback"], detail=detail + ".", confidence=0.8 if peers else 0.6,
            assumed=assumed,
        )
    ]  # fmt: skip


def socket_ifname(rule: Rule, ctx: Context) -> list[Finding]:
    explicit = ctx.stats(rule)
    if explicit:
        return [ctx.make_finding(rule)]
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
        return []  # lo for the bootstrap is right on one node, and nothing says there are more
    ifaces = sorted({g["iface"] for _, g in listed} | set(bad.values()))
    hosts = [h for h in bad if h != UNNAMED_HOST]
    where = f" on {hosts_text(hosts)}" if hosts else ""
    detail = f"NCCL uses {', '.join(ifaces[:6])}{where} for its sockets: container or virtual interfaces other nodes cannot reach"
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
    return [
        ctx.make_finding(
            rule,
            names,
            severity=ctx.between_nodes_severity("warning", assumed),
            confidence=0.5,
            detail=detail + ".",
            hosts=hosts,
            values=values,
            assumed=assumed,
        )
    ]


# Causes whose own lines explain an NCCL system error better than a guess about sockets.
SYSTEM_ERROR_EXPLAINED_BY = (
    "shm-too-small",
    "ib-devices-not-mounted",
    "ib-verbs-library-missing",
    "ib-link-fault",
    "roce-gid-index",
    "nccl-net-plugin",
    "nccl-ib-hca-wrong",
    "ib-hca-mismatch-nodes",
    "nccl-version-mismatch",
    "nccl-duplicate-gpu",
    "port-in-use",
    "rendezvous-failure",
    "job-oom",
    "gpu-xid",
)


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
UNROUTABLE_PREFIXES = ("127.", "172.17.", "192.168.122.", "169.254.")


def _unreachable_peer(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """NCCL's own socket to a peer failed with an error that means "cannot get there", or the address it
    dialled is one no other node can reach: the interface NCCL picked (here or on the peer) is wrong."""
    samples = ctx.samples(rule, ["connect_failed"])
    unreachable = [(ev, g) for ev, g in samples if (g.get("err") or "").startswith(UNREACHABLE_ERRORS)]
    local_addr = [(ev, g) for ev, g in samples if g.get("addr", "").lstrip("[").startswith(UNROUTABLE_PREFIXES)]
    chosen = local_addr or unreachable
    if not chosen:
        return []
    ev, g = chosen[0]
    addr = g.get("addr", "a peer")
    detail = f"NCCL could not connect to {addr}"
    if g.get("err"):
        detail += f" ({g['err']})"
    if local_addr:
        detail += (
            ": that address is loopback, a container bridge or link-local, so a peer advertised an interface other "
            "nodes cannot reach (docker's 172.17.x, libvirt's virbr, or a hostname that resolves to 127.0.1.1)"
        )
        confidence = 0.7
    else:
        detail += (
            ": the interface NCCL uses for its sockets does not route to that peer (another subnet, a management "
            "NIC, or a firewall); pin NCCL_SOCKET_IFNAME to the NIC every node reaches"
        )
        confidence = 0.5
    hosts = sorted({h for e, _ in chosen if (h := ctx.host_for(e))}, key=natural_key)
    return [
        ctx.make_finding(
            rule,
            ["connect_failed", "connect_exceeded", "connect_retrying", "bootstrap_failed"],
            detail=detail + ".",
            hosts=hosts,
            confidence=confidence,
            severity=ctx.between_nodes_severity(rule.severity, assumed),
            assumed=assumed,
            evidence=pick_evidence([e for e, _ in chosen]),
        )
    ]


_SOCKET_WORDS = re.compile(r"[Ss]ocket|[Cc]onnect|[Bb]ootstrap")


def _bare_system_error(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """NCCL failed with a bare "unhandled system error" and no line saying which call failed (the run
    had NCCL_DEBUG=INFO off). Between nodes the usual failing call is a socket NCCL cannot open or
    whose peer it cannot reach: the interface NCCL picked (a container bridge, a NIC the other node
    does not route to). A suspect to check first, not a proof: the finding says so."""
    if not ctx.stats(rule, ["system_error"]) or any(ctx.count(r) for r in SYSTEM_ERROR_EXPLAINED_BY):
        return []
    gid = ctx.rules.get("roce-gid-index")
    if gid and ctx.stats(gid, ["modify_qp_short"]):
        return []  # the failing verbs call is quoted, if only in part
    failed = ctx.rules.get("unexplained-failure")
    warns = [ev.text for ev, _ in ctx.samples(failed, ["nccl_warn"])] if failed else []
    if any(not _SOCKET_WORDS.search(w) for w in warns):
        return []  # an NCCL WARN names the call that failed, and it is not a socket's
    detail = (
        'NCCL failed with "unhandled system error" and the logs hold no NCCL WARN saying which call failed; '
        "between nodes that is most often a socket to a peer over an interface it cannot reach (a container's "
        "bridge address such as docker0/172.17.x, or a NIC on another subnet): run with NCCL_DEBUG=INFO and "
        "check the Bootstrap/NET/Socket interface lines, or pin NCCL_SOCKET_IFNAME (with docker, --network=host)"
    )
    return [
        ctx.make_finding(
            rule,
            ["system_error"],
            detail=detail + ".",
            severity="warning",
            confidence=0.35,
            assumed=[*assumed, "the failing system call was a socket between nodes (the log does not say)"],
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


DEFAULT_PLUGIN_NAMES = {"libnccl-net.so", ""}


# ----------------------------------------------------------------------------------------- net plugin
# A plugin that is there but cannot be used (built for another NCCL, or missing a library it needs).
BROKEN_PLUGIN = ["symbol_missing", "unsupported", "broken", "unpack_incompatible", "dep_missing"]


def net_plugin(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    plugin_env = ctx.captures(rule, "plugin", ["plugin_env"]) + facts.env_values("NCCL_NET_PLUGIN")
    missing = [
        v
        for g in ("plugin_a", "plugin_b", "plugin_c", "plugin_d", "plugin_e")
        for v in ctx.captures(rule, g, ["not_found"])
    ]
    missing = sorted({n.strip().rstrip(".") for v in missing for n in v.split()} - DEFAULT_PLUGIN_NAMES)
    net_env = ctx.captures(rule, "value", ["net_env"]) + facts.env_values("NCCL_NET")
    failed_nets = ctx.captures(rule, "net", ["failed_ib"])
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    # Three-valued: sockets on an excerpt that does not say how many nodes still count, as an assumption.
    spans, spans_assumed = ctx.spans_nodes()
    fell_back = spans and bool(socket_hosts)
    assumed = spans_assumed if fell_back else []
    if ctx.stats(rule, ["any_failed", "network_not_found"]):
        wanted = ctx.captures(rule, "net", ["network_not_found"]) or net_env
        what = f"NCCL_NET={'/'.join(wanted)}" if wanted else "NCCL_NET (or the plugin list)"
        detail = f"{what} asks for a network NCCL could not start, so communicator init failed"
        if failed_nets:
            detail += f'; NCCL tried {", ".join(failed_nets)}: "Failed to initialize NET plugin {failed_nets[0]}"'
        if any(h.ib_no_device for h in facts.hosts.values()):
            detail += ' ("NET/IB : No device found.": this node has no usable HCA)'
        if plugin_env and missing:
            detail += f"; NCCL_NET_PLUGIN={plugin_env[0]} was not found"
        values = {"what": f"{what} could not be satisfied."}
        return [ctx.make_finding(rule, ["any_failed", "network_not_found"], detail=detail + ".", values=values)]
    if ctx.stats(rule, ["ofi_failed"]):
        return _ofi_failed(rule, ctx, socket_hosts)
    if sharp := ctx.samples(rule, ["sharp_failed"]):
        why = sharp[0][1].get("why", "").strip()
        detail = (
            f'The HPC-X net plugin could not start SHARP (CollNet in-network reductions): "{why[:120]}"; NCCL runs '
            "without CollNet, or fails where NCCL_COLLNET_ENABLE=1 requires it (check sharpd/sharp_am, or unset "
            "NCCL_COLLNET_ENABLE)"
        )
        severity = None if ctx.job_failed() else "warning"
        return [
            ctx.make_finding(
                rule,
                ["sharp_failed"],
                detail=detail + ".",
                severity=severity,
                confidence=0.6,
                values={"what": "SHARP (CollNet) could not start."},
            )
        ]
    broken = ctx.stats(rule, BROKEN_PLUGIN)
    if broken:
        names = ctx.captures(rule, "plugin", ["unsupported", "broken"]) or plugin_env
        why = ctx.captures(rule, "dlerror", ["broken"])
        plugin = f"The net plugin {names[0]}" if names else "The net plugin NCCL found"
        detail = f"{plugin} exists but cannot be used"
        if ctx.stats(rule, ["symbol_missing"]):
            detail += " (it is built for an older NCCL: no ncclNetPlugin_v5+ symbol)"
        elif unpack := ctx.samples(rule, ["unpack_incompatible"]):
            g = unpack[0][1]
            detail = (
                f"The device-unpack plugin (GPUDirect-TCPX) speaks version {g['have']}, this NCCL wants "
                f"{g['want']}: NCCL does not use it"
            )
        elif why:
            detail += f" ({why[0][:120]})"
        elif dep := ctx.captures(rule, "dep", ["dep_missing"]):
            detail += f" (a library it links to is missing: {dep[0]})"
        detail += "; NCCL skipped it and used its built-in transport"
        severe = fell_back or ctx.job_failed()
        confidence = 0.85 if severe else 0.6
        if len(facts.versions) > 1:
            # One plugin, several NCCLs: the plugin fits one of them; the version split is the cause.
            detail += f" (this job runs NCCL {', '.join(sorted(facts.versions))}: the plugin fits only one of them)"
            confidence = 0.35
        if fell_back:
            detail += f" and fell back to TCP sockets on {hosts_text(socket_hosts)}"
        return [
            ctx.make_finding(
                rule,
                BROKEN_PLUGIN,
                detail=detail + ".",
                severity=ctx.between_nodes_severity(rule.severity, assumed) if severe else "warning",
                confidence=confidence,
                assumed=assumed,
                values={"what": f"{plugin} could not be used."},
            )
        ]
    expected = plugin_env or missing
    if expected and ctx.stats(rule, ["not_found"]) and not ctx.stats(rule, ["loaded"]):
        name = (plugin_env or missing)[0]
        nets = sorted({n for h in facts.hosts.values() for n in h.nets}) or ["its built-in transport"]
        detail = f"A net plugin was asked for ({name}), but NCCL could not find it and used {', '.join(nets)} instead"
        if fell_back:
            detail += f"; inter-node traffic went over TCP sockets on {hosts_text(socket_hosts)}"
        return [
            ctx.make_finding(
                rule,
                ["not_found", "plugin_env"],
                detail=detail + ".",
                severity=ctx.between_nodes_severity(rule.severity, assumed) if fell_back else "warning",
                confidence=0.8 if fell_back else 0.6,
                assumed=assumed,
                values={"what": f"NCCL_NET_PLUGIN={name} was not found."},
            )
        ]
    return _plugin_on_some_nodes(rule, ctx) or _plugin_override(rule, ctx)


def _ofi_failed(rule: Rule, ctx: Context, socket_hosts: list[str]) -> list[Finding]:
    """aws-ofi-nccl could not start (no libfabric provider fits, or its protocol failed): NCCL then
    quietly uses its built-in IB or, on EFA nodes that have none, TCP sockets."""
    ofi = ctx.samples(rule, ["ofi_failed"])
    why = ofi[0][1].get("why", "").strip()
    # FI_ENODATA ("No data available", v0.9's "Could not find any optimal provider"): no provider found a
    # device, which ib-devices-not-mounted names as the likelier root; the plugin itself is not broken.
    no_device = why.endswith("No data available") or "optimal provider" in why
    hosts = sorted({h for ev, _ in ofi if (h := ctx.host_for(ev))}, key=natural_key)
    nets = sorted(
        {n for h in ctx.facts.hosts.values() for n in h.nets if "ofi" not in n.lower() and "libfabric" not in n.lower()}
    )
    detail = f'The aws-ofi-nccl net plugin (libfabric, e.g. EFA) could not start: "NET/OFI {why}"'
    if nets:
        detail += f"; NCCL used {', '.join(nets)} instead"
    if socket_hosts:
        detail += f"; inter-node traffic went over TCP sockets on {hosts_text(socket_hosts)}"
    spans, assumed = ctx.spans_nodes()
    severity = ctx.between_nodes_severity(rule.severity, assumed) if spans else "warning"
    return [
        ctx.make_finding(
            rule,
            ["ofi_failed"],
            detail=detail + ".",
            hosts=hosts or None,
            severity=severity,
            confidence=0.55 if no_device else 0.8,
            assumed=assumed,
            values={"what": "The aws-ofi-nccl plugin found no usable libfabric provider."},
        )
    ]


def _plugin_on_some_nodes(rule: Rule, ctx: Context) -> list[Finding]:
    """Some nodes load an external net plugin and others find none: the nodes then speak different
    transports (IBext vs built-in IB or sockets), and connections between the two kinds hang or fail."""
    with_plugin = {h for ev, _ in ctx.samples(rule, ["loaded", "plugin_path"]) if (h := ctx.host_for(ev))}
    without = {h for ev, _ in ctx.samples(rule, ["not_found"]) if (h := ctx.host_for(ev))} - with_plugin
    if not with_plugin or not without:
        return []
    plugin = first_or(
        ctx.captures(rule, "path", ["plugin_path"]) + ctx.captures(rule, "plugin", ["loaded"]), "a net plugin"
    )
    detail = (
        f"{hosts_text(sorted(with_plugin))} load{'s' if len(with_plugin) == 1 else ''} the external net plugin {plugin}, "
        f"but {hosts_text(sorted(without))} find{'s' if len(without) == 1 else ''} none and use NCCL's internal transport: "
        "the nodes of one job must run the same network plugin"
    )
    return [
        ctx.make_finding(
            rule,
            ["loaded", "plugin_path", "not_found"],
            detail=detail + ".",
            hosts=sorted(without),
            confidence=0.7,
            values={"what": f"{plugin} is installed on some nodes only."},
        )
    ]


def _plugin_override(rule: Rule, ctx: Context) -> list[Finding]:
    """An external plugin replaces NCCL's built-in IB transport: NCCL_IB_* meant for it may not apply."""
    facts = ctx.facts
    external = ctx.captures(rule, "plugin", ["loaded", "p2p_plugin"]) + sorted(
        {n for h in facts.hosts.values() for n in h.nets if n not in ("IB", "Socket")}
    )
    if external and "1" in facts.env_values("NCCL_IB_DISABLE"):
        detail = (
            f"NCCL_IB_DISABLE=1 is set, but the external net plugin {external[0]} still carries inter-node "
            "traffic over RDMA: the variable only switches off NCCL's built-in IB transport (HPC-X's IBext "
            "ignores it); NCCL_NET=Socket forces sockets, unsetting NCCL_NET_PLUGIN drops the plugin"
        )
        return [
            ctx.make_finding(
                rule,
                ["loaded"],
                detail=detail + ".",
                severity=None if ctx.job_failed() else "warning",
                confidence=0.7,
                values={"what": f"The plugin {external[0]} ignores NCCL_IB_DISABLE=1."},
            )
        ]
    ib_vars = sorted(v for v in facts.env if v.startswith("NCCL_IB_") and v != "NCCL_IB_DISABLE")
    if not external:
        return []
    if not ib_vars:
        return _plugin_unproven(rule, ctx, external[0])
    settings = ", ".join(f"{v}={facts.env[v][0]}" for v in ib_vars)
    detail = (
        f"NCCL uses the external net plugin {external[0]} instead of its built-in IB transport; {settings} "
        f"{'is' if len(ib_vars) == 1 else 'are'} read by the built-in transport and apply only if the plugin "
        "implements them (aws-ofi-nccl ignores them; HPC-X's IBext has its own defaults)"
    )
    return [
        ctx.make_finding(
            rule,
            ["loaded"],
            detail=detail + ".",
            severity="warning",
            confidence=0.5,
            values={"what": f"The plugin {external[0]} overrides {settings}."},
        )
    ]


def _plugin_unproven(rule: Rule, ctx: Context, plugin: str) -> list[Finding]:
    """An external plugin carries the traffic in an excerpt that never shows NCCL get going (no
    "Init COMPLETE") or shows the job failing: the plugin, not NCCL's built-in transport, is what
    chose the NICs, and NCCL_IB_DISABLE / NCCL_IB_HCA do not steer it. A suspect, not a proof."""
    connected = any(_external_net(h.channel_nets) for h in ctx.facts.hosts.values())
    if (connected or ctx.stats(rule, ["init_complete"])) and not ctx.job_failed():
        return []  # channels over the plugin or a completed init: it works
    others = [r for r in SYSTEM_ERROR_EXPLAINED_BY if r != rule.id] + ["nccl-socket-ifname", "nccl-ib-disabled"]
    if any(ctx.count(r) for r in others):
        return []  # the excerpt names a cause of its own
    socket = ctx.rules.get("nccl-socket-ifname")
    if socket and ctx.stats(socket, ["bootstrap_failed", "connect_failed", "connect_exceeded", "connect_retrying"]):
        return []  # NCCL's own sockets failed (bootstrap), which no net plugin carries
    facts = ctx.facts
    path = first_or(ctx.captures(rule, "path", ["plugin_path"]), "")
    detail = f"NCCL hands inter-node traffic to the external net plugin {plugin}"
    if path:
        detail += f" ({path})"
    detail += (
        ", not to its built-in IB transport: the plugin picks the NICs, and settings for the built-in transport "
        "(NCCL_IB_DISABLE, NCCL_IB_HCA) do not steer it (HPC-X's IBext has NCCL_IBEXT_DISABLE)"
    )
    probes = sorted(ctx.captures(rule, "api", ["version_probe"]), key=int)
    if probes:
        detail += f"; it is older than this NCCL (no net API v{probes[-1]})"
    if any(h.roce for h in facts.hosts.values()):
        detail += "; it runs over RoCE ports"
    detail += "; the excerpt does not show NCCL starting, so check the run without it (NCCL_NET_PLUGIN=none)"
    return [
        ctx.make_finding(
            rule,
            ["p2p_plugin", "plugin_path", "loaded", "version_probe", "using_external"],
            evidence=pick_evidence(
                ev
                for ev, g in ctx.samples(rule, ["p2p_plugin", "plugin_path", "loaded", "using_external"])
                if g.get("net") not in ("IB", "Socket")
            ),
            detail=detail + ".",
            severity="warning",
            confidence=0.45,
            assumed=["the failure is in the network path the plugin chose"],
            values={"what": f"The external plugin {plugin} carries the traffic."},
        )
    ]


# ------------------------------------------------------------------------------------- RoCE GID index
def roce_gid(rule: Rule, ctx: Context) -> list[Finding]:
    names = ["modify_qp_gid", "modify_qp_old", "modify_qp_short", "hint", "roce_version_unread", "gid_empty"]
    if not ctx.stats(rule, names):
        return _ucx_gid(rule, ctx)
    facts = ctx.facts
    forced = ctx.captures(rule, "gid", ["gid_env", "gid_export"]) + facts.env_values("NCCL_IB_GID_INDEX")
    roce = any(h.roce for h in facts.hosts.values())
    hint = bool(ctx.stats(rule, ["hint"]))
    samples = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["modify_qp_gid", "modify_qp_old", "modify_qp_short"])
        if "retrying" not in ev.text  # 2.24+ INFO before a retry that may succeed
    ]
    empty = ctx.samples(rule, ["gid_empty"])
    if empty and not samples:
        gids = sorted({g["gid"] for _, g in empty})
        hosts = sorted({h for ev, _ in empty if (h := ctx.host_for(ev))}, key=natural_key)
        detail = (
            f"NCCL's queue pairs use GID index {', '.join(gids)}, and the GID there is empty (0/0)"
            + (f" on {hosts_text(hosts)}" if hosts else "")
            + ": that index holds no address on this port, so peers cannot reach it"
        )
        return [ctx.make_finding(rule, ["gid_empty"], detail=detail + ".", hosts=hosts or None, confidence=0.8)]
    if not samples and not ctx.stats(rule, ["hint", "roce_version_unread"]):
        return []
    errs = sorted({g.get("err", "").strip() for _, g in samples if g.get("err")})
    ib_ports = any(h.hcas and not h.roce for h in facts.hosts.values())
    # An IPv4-mapped GID (::ffff:a.b.c.d) is a RoCE v2 GID, and rdma-core names RoCE devices roce<pci>
    # (InfiniBand ones ibp<pci>): the port is RoCE even where no "NET/IB : Using" line says so.
    roce = roce or (
        not ib_ports
        and any(
            (g.get("lgid") or "").startswith("::ffff:") or (g.get("hca") or "").lower().startswith("roce")
            for _, g in samples
        )
    )
    # ENODEV from a QP transition: the GID the QP was given names no device/port. A timeout on an
    # IB fabric, by contrast, is not about GID indexes.
    no_device = any(e.startswith("No such device") for e in errs)
    # ENODATA: the GID table entry at that index is empty on this port (often on one node only).
    no_data = any(e.startswith("No data available") for e in errs)
    # EINVAL moving a QP to RTR: the address vector (GID index) is what the transition checks; NCCL
    # 2.30.7 prints its GID-index HINT for exactly this error.
    # (Unless the ports are known to be InfiniBand, which addresses peers by LID, not by GID.)
    einval = not ib_ports and (
        any(e.startswith("Invalid argument") for e in errs)
        or any(g.get("errno") == "22" and g.get("next") == "RTR" for _, g in samples)
    )
    unread = bool(ctx.stats(rule, ["roce_version_unread"]))  # NCCL could not tell RoCE v1 from v2 GIDs
    # On RoCE the RTR step resolves the peer GID's IP address to a MAC (on IB it does no such thing): a
    # timeout or "unreachable" there means the GID chosen is not routable to the peer (wrong index, VLAN,
    # subnet). Unless the ports are known to be IB, that is the likeliest reading of a thin paste.
    unresolved = not ib_ports and any(
        e.startswith(("Connection timed out", "Network is unreachable", "No route to host")) for e in errs
    )
    if not (forced or roce or hint or no_device or no_data or unread or einval or unresolved):
        return []
    if not samples and not hint:
        detail = (
            "NCCL could not read the RoCE version of the HCA's GID entries from sysfs (gid_attrs, often hidden in "
            "a container), so it cannot pick the RoCE v2 GID itself"
        )
        if forced:
            detail += f"; NCCL_IB_GID_INDEX={'/'.join(sorted(set(forced)))} is forced"
        return [
            ctx.make_finding(rule, names, detail=detail + ".", severity="warning", confidence=0.5 if forced else 0.6)
        ]
    gids = sorted({g["gid"] for _, g in samples if g.get("gid")})
    hcas = sorted({g["hca"] for _, g in samples if g.get("hca")})
    detail = f"Queue pairs could not be connected: ibv_modify_qp failed ({', '.join(errs) or 'error'})"
    if hcas:
        detail += f" on {', '.join(hcas)}"
    if gids:
        detail += f" with local GID index {', '.join(gids)}"
    if forced:
        detail += f"; NCCL_IB_GID_INDEX={'/'.join(sorted(set(forced)))} is forced"
    if any((g.get("lgid") or "").startswith("fe80") for _, g in samples) or any(
        "local GID fe80" in ev.text for ev, _ in samples
    ):
        detail += "; the local GID is link-local (fe80::), which RoCE v2 cannot route between nodes"
    if no_data:
        detail += "; ENODATA means the GID entry at that index is empty on this port"
    if roce:
        detail += "; the HCAs are RoCE"
    if unread:
        detail += (
            "; NCCL could not read the GIDs' RoCE version from sysfs (gid_attrs), so it cannot pick the RoCE v2 entry"
        )
    if (
        unresolved
        and len([p for v in hca_filter_values(ctx)[:1] for p in v.split(",") if p]) > 1
        and not (forced or hint)
    ):
        # The port list is the likelier suspect (nccl-ib-hca-wrong says so); the GID stays a candidate.
        detail += "; NCCL_IB_HCA lists several ports, which nccl-ib-hca-wrong checks first"
        # Weighed like that finding: an excerpt that shows neither several nodes nor a failed job
        # makes both candidates warnings.
        quiet = ctx.facts.nodes_known() is None and not ctx.job_failed()
        return [
            ctx.make_finding(rule, names, detail=detail + ".", confidence=0.45, severity="warning" if quiet else None)
        ]
    if unresolved and not (forced or roce or hint or no_device or no_data or einval):
        detail += (
            "; on RoCE this step resolves the peer's GID address, so the GID NCCL used does not route to the peer "
            "(nothing here says whether the ports are RoCE or InfiniBand)"
        )
        return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.55)]
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.85 if (forced or hint or no_data) else 0.7)]


def _ucx_gid(rule: Rule, ctx: Context) -> list[Finding]:
    """UCX's own view of a GID entry it cannot use: the index it was given (UCX_IB_GID_INDEX) or picked
    is past the table, empty, or of no RoCE type; or the address handle built from it cannot reach
    the peer (on RoCE, creating it resolves the GID's IP address)."""
    samples = ctx.samples(rule, UCX_GID)
    if not samples:
        return []
    g = samples[0][1]
    hca, port, gid = g.get("hca"), g.get("port"), g.get("gid")
    where = f" on {hca}" + (f":{port}" if port else "") if hca else ""
    if ctx.stats(rule, ["ucx_gid", "ucx_gid_type"]):
        detail = f"UCX could not use GID index {gid}{where}" if gid else f"UCX could not read a GID entry{where}"
        detail += f" ({g['err']})" if g.get("err") else " (its sysfs RoCE type is unreadable or empty)"
    else:
        detail = f"UCX could not build a RoCE address handle{where} ({g.get('err', 'error')}): the GID it uses does not reach the peer"
    forced = ctx.captures(rule, "ucx_gid", ["ucx_gid_export"]) + ctx.facts.env_values("UCX_IB_GID_INDEX")
    if forced:
        detail += f"; UCX_IB_GID_INDEX={forced[0]} is set"
    return [ctx.make_finding(rule, UCX_GID, detail=detail + ".", confidence=0.8 if forced else 0.65)]


UCX_GID = ["ucx_gid", "ucx_gid_type", "ucx_create_ah"]


# --------------------------------------------------------------------------------------- GDR disabled
def gdr_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    ib_hosts = {h.host for h in facts.hosts.values() if h.uses_ib() and not h.uses_socket()}
    no_gdr = {h.host for h in facts.hosts.values() if h.plain_ib_channels and not h.gdr_channels}
    ring0 = {ctx.host_for(ev) for ev, _ in ctx.samples(rule, ["rings_gdr0"])} & ib_hosts
    explicit = ctx.samples(
        rule, ["disabled_hca", "disabled_gpu", "disabled_gpu_hca", "disabled_gpu_v23", "peermem_missing", "ucx_gdr"]
    )
    said = {h for ev, _ in explicit if (h := ctx.host_for(ev))}
    hosts = sorted((no_gdr | ring0 | said) - {None}, key=natural_key)
    if not hosts and not explicit:
        return _gdr_switched_off(rule, ctx, assumed)
    parts = []
    if no_gdr:
        n = sum(facts.hosts[h].plain_ib_channels for h in no_gdr)
        parts.append(f"{plural(n, 'via NET/IB channel line')} without /GDRDMA")
    if ring0:
        parts.append('"Connected all rings ... GDR 0"')
    missing = ctx.captures(rule, "why", ["peermem_missing"])
    if missing:
        parts.append(f"the {missing[0]} kernel module is not installed")
    said_disabled = [(ev, g) for ev, g in explicit if g.get("hca") and UCX_GDR not in ev.text]
    if ucx := [ev.text for ev, _ in explicit if UCX_GDR in ev.text]:
        # UCX's framing keeps the device name ("mlx5_0: Couldn't ...") out of the payload.
        dev = re.search(r"([\w.-]+): " + UCX_GDR, ucx[0])
        on = f" on {dev.group(1)}" if dev else ""
        parts.append(f"UCX could not enable it{on} (no nv_peer_mem/nvidia-peermem and no dmabuf)")
    if said_disabled:
        ev, g = said_disabled[0]
        why = f" ({g['why']})" if g.get("why") else ""
        parts.append(f'"GPU Direct RDMA Disabled for {g["hca"]}{why}"')
    level = ctx.captures(rule, "level", ["gdr_level_env"]) or facts.env_values("NCCL_NET_GDR_LEVEL")
    detail = f"GPUDirect RDMA is not used on {hosts_text(hosts) if hosts else 'this job'}: {'; '.join(parts)}"
    if level:
        detail += f"; NCCL_NET_GDR_LEVEL={level[0]} is set"
    detail += ". Inter-node data is staged through host memory."
    evidence = [ev for ev, _ in explicit] + [
        ev for ev, _ in ctx.samples(rule, ["plain_ib_channel", "rings_gdr0"]) if ctx.host_for(ev) in hosts
    ]
    return [
        ctx.make_finding(rule, detail=detail, hosts=hosts or None, evidence=pick_evidence(evidence), assumed=assumed)
    ]


UCX_GDR = "Couldn't enable GPUDirect RDMA"

# NCCL_NET_GDR_LEVEL values that allow GPUDirect RDMA nowhere (LOC: same GPU only; 0 is its number).
GDR_OFF_LEVELS = ("LOC", "0")


def _gdr_switched_off(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """No channel lines to judge by, but the job itself sets NCCL_NET_GDR_LEVEL so that no GPU/NIC pair
    qualifies: GPUDirect RDMA is off by configuration wherever IB is used."""
    levels = ctx.captures(rule, "level", ["gdr_level_env"]) + ctx.facts.env_values("NCCL_NET_GDR_LEVEL")
    off = [lv for lv in levels if lv.strip().upper() in GDR_OFF_LEVELS]
    if not off or any(h.uses_socket() for h in ctx.facts.hosts.values()):
        return []
    detail = (
        f"NCCL_NET_GDR_LEVEL={off[0]} is set: no GPU and NIC are ever close enough for GPUDirect RDMA, so "
        "inter-node data is staged through host memory"
    )
    return [
        ctx.make_finding(
            rule, ["gdr_level_env"], detail=detail + ".", severity="warning", confidence=0.6, assumed=assumed
        )
    ]


# --------------------------------------------------------------------------------------------- /dev/shm
def shm_too_small(rule: Rule, ctx: Context) -> list[Finding]:
    clean = ["extend", "create_segment", "create_file", "map", "posix_fallocate"]
    if ctx.stats(rule, clean):
        paths = ctx.captures(rule, "path", clean)
        sizes = ctx.captures(rule, "size", clean)
        err = next((ev.text.split("error: ")[-1] for ev, _ in ctx.samples(rule, clean) if "error: " in ev.text), None)
        detail = f"NCCL could not allocate its shared-memory segment {paths[0] if paths else 'in /dev/shm'}"
        if sizes:
            detail += f" ({int(sizes[0]):,} bytes)"
        if err:
            detail += f": {err.strip()[:80]}"
        return [ctx.make_finding(rule, clean + ["attach_segment"], detail=detail + ".")]
    # The worker's own line and the main process's re-raise name the same death; either will do.
    loader = ["dataloader_bus", "dataloader_killed_bus"]
    if ctx.stats(rule, loader):
        detail = "A DataLoader worker died of SIGBUS: its shared memory did not fit in /dev/shm"
        return [ctx.make_finding(rule, [*loader, "bus_error"], detail=detail + ".", confidence=0.75)]
    if ctx.stats(rule, ["attach_segment"]):
        detail = "Ranks could not attach to a peer's /dev/shm segment: its creator failed to allocate it"
        return [ctx.make_finding(rule, ["attach_segment"], detail=detail + ".", confidence=0.6)]
    bus = ["bus_error", "sigbus", "exitcode_sigbus"]
    if not ctx.stats(rule, bus):
        return []
    versions = sorted(ctx.facts.versions)
    old = [v for v in versions if v.startswith("2.") and 12 <= int(v.split(".")[1]) <= 18]
    shared_node = ctx.facts.max_nranks > max(1, ctx.facts.node_count()) or any(
        len(h.ranks) > 1 for h in ctx.facts.hosts.values()
    )
    if not old or len(old) != len(versions) or not shared_node:
        return []  # 2.19+ fail cleanly, and one rank per node never uses the SHM transport
    detail = (
        f"Processes died of SIGBUS (Bus error) with NCCL {', '.join(old)}: NCCL 2.12-2.18 size /dev/shm "
        "segments with ftruncate, so a /dev/shm too small for them shows up as SIGBUS, not as an NCCL error"
    )
    return [ctx.make_finding(rule, bus, detail=detail + ".", confidence=0.6)]
