"""NCCL_IB_HCA (or UCX_NET_DEVICES) naming HCAs or ports that are not there, down, or off the fabric: nccl-ib-hca-wrong."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.transport.common import CQE_SIGNATURES, PORT_EVENTS
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST


def ib_hca_wrong(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    # UCX says so (its own errors; not a script's export of UCX_NET_DEVICES, a fact that says nothing failed)
    explicit = ctx.stats(rule, [s.name for s in rule.signatures if s.name.startswith("ucx_") and not s.fact])
    if explicit:
        devs = ctx.captures(rule, "device")
        detail = f"UCX_NET_DEVICES names {', '.join(devs) or 'a device'} that this node does not have"
        avail = ctx.captures(rule, "available")
        if avail:
            detail += f"; available: {avail[0]}"
        return [ctx.make_finding(rule, detail=detail, values={"value": ", ".join(devs)})]
    if ignored := (
        _ompi_nonexistent(rule, ctx) or _nvshmem_hca_missing(rule, ctx) or _tool_pinned(rule, ctx)
        or _disabled_port(rule, ctx) or _ucx_every_device(rule, ctx)
    ):  # fmt: skip
        return ignored
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
        return (
            _hca_set_by_script(rule, ctx, unopenable)
            or _hca_off_fabric(rule, ctx)
            or _mixed_links(rule, ctx)
            or _prefix_matched(rule, ctx)
            or _named_unused(rule, ctx)
        )
    values = sorted({facts.hosts[h].env["NCCL_IB_HCA"] for h in bad_hosts})
    seen_elsewhere = sorted({hca for h in facts.hosts.values() for hca in h.hcas})
    detail = f"NCCL_IB_HCA={' / '.join(values)} matched no usable HCA on {hosts_text(bad_hosts)}"
    detail += ': NCCL found no IB device ("NET/IB : No device found.") and fell back to TCP sockets'
    if seen_elsewhere:
        detail += f"; HCAs NCCL used on other nodes: {', '.join(seen_elsewhere)}"
    names = [s.name for s in rule.signatures]
    evidence = [ev for ev, _ in ctx.samples(rule, names) if ev.host in bad_hosts]
    confidence, assumed = 0.85, []
    if not seen_elsewhere and all(_FIRST_HCA.search(v) for v in values):
        # mlx5_0 is what the first ConnectX HCA of any node is called: a filter holding it that matched
        # nothing more likely means the node showed NCCL no HCA at all (not mounted, RDMA not enabled).
        confidence = 0.5
        assumed = ["the names are wrong, though they include mlx5_0, which every node with a ConnectX HCA has"]
    return [
        ctx.make_finding(
            rule,
            names,
            detail=detail,
            hosts=bad_hosts,
            values={"value": ", ".join(values)},
            evidence=pick_evidence(evidence),
            confidence=confidence,
            assumed=assumed,
        )
    ]


def _ompi_nonexistent(rule: Rule, ctx: Context) -> list[Finding]:
    """Open MPI's openib BTL skips btl_openib_if_include/exclude entries it cannot find and goes on with
    the rest (or none, and then TCP): a mistake worth fixing, the cause where the job failed."""
    names = ["ompi_nonexistent", "ompi_nonexistent_head"]
    if not ctx.stats(rule, names):
        return []
    devs = ctx.captures(rule, "device", ["ompi_nonexistent"])
    detail = (
        f"Open MPI's openib BTL was told to use {', '.join(devs) or 'devices or ports'} (btl_openib_if_include or "
        "btl_openib_if_exclude), which this node does not have, and ignored them; set --mca btl_openib_if_include "
        "(OMPI_MCA_btl_openib_if_include) to devices and ports ibv_devinfo lists on every node"
    )
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", values={"value": "btl_openib_if_include=" + (", ".join(devs) or "?")},
            severity=rule.severity if ctx.job_failed() else "warning", confidence=0.6,
        )
    ]  # fmt: skip


def _nvshmem_hca_missing(rule: Rule, ctx: Context) -> list[Finding]:
    """NVSHMEM skips NVSHMEM_HCA_LIST entries it cannot find, as Open MPI does its if_include ones."""
    samples = ctx.samples(rule, ["nvshmem_hca_missing"])
    if not samples:
        return []
    devs = sorted({f"{g['device']}:{g['port']}" for _, g in samples})
    detail = (
        f"NVSHMEM_HCA_LIST names {', '.join(devs[:6])}, which this node does not have, and NVSHMEM skipped it; set "
        "NVSHMEM_HCA_LIST to HCAs and ports `ibv_devinfo` lists on every node, or unset it"
    )
    return [
        ctx.make_finding(
            rule, ["nvshmem_hca_missing"], detail=detail + ".", values={"value": "NVSHMEM_HCA_LIST=" + ",".join(devs)},
            severity=rule.severity if ctx.job_failed() else "warning", confidence=0.6,
        )
    ]  # fmt: skip


def _tool_pinned(rule: Rule, ctx: Context) -> list[Finding]:
    """perftest pinned (-d) to a device whose port is down, or to one the node does not have: the
    device chosen is the wrong one for the fabric, as an NCCL_IB_HCA naming it would be."""
    names = ["perftest_port_down", "perftest_no_such"]
    if not ctx.stats(rule, names):
        return []
    parts = []
    for _ev, g in ctx.samples(rule, ["perftest_port_down"])[:1]:
        parts.append(f"the test was pinned to a device whose port {g['port']} is {g['state']}")
    if devs := ctx.captures(rule, "device", ["perftest_no_such"]):
        parts.append(f"it was given {', '.join(devs[:3])}, which this node does not have")
    detail = (
        "; ".join(parts)
        + ": pass -d (and NCCL_IB_HCA / UCX_NET_DEVICES) only HCAs whose port ibstat shows Active and LinkUp on the "
        "fabric (ibdev2netdev, ls /sys/class/infiniband list them); a port that should be up and is not is a "
        "cable or switch-port fault"
    )
    return [ctx.make_finding(rule, names, detail=detail + ".", values={"value": ", ".join(devs) or "-d <hca>"}, confidence=0.6)]


def disabled_beside_active(ctx: Context) -> list:
    """ibstat's ports that are administratively Disabled (ib-link-fault's port_down samples), where the same
    paste shows other ports Active and no port in a state a failing link leaves (Polling, LinkErrorRecovery):
    a port switched off on purpose, not a broken link; if the job was given it, the device choice is wrong."""
    fault, hca = ctx.rules.get("ib-link-fault"), ctx.rules.get("nccl-ib-hca-wrong")
    if fault is None or hca is None or not ctx.stats(hca, ["port_active"]):
        return []
    down = ctx.samples(fault, ["port_down"])
    if not down or any(g.get("phys") != "Disabled" for _, g in down if g.get("phys")):
        return []
    return [(ev, g) for ev, g in down if g.get("phys") == "Disabled"]


def _disabled_port(rule: Rule, ctx: Context) -> list[Finding]:
    disabled = disabled_beside_active(ctx)
    fault = ctx.rules.get("ib-link-fault")
    if not disabled or fault is None or ctx.samples(fault, CQE_SIGNATURES) or ctx.samples(fault, PORT_EVENTS):
        return []  # a fabric error of its own is ib-link-fault's to explain
    detail = (
        f"ibstat shows {'a port' if len(disabled) == 1 else str(len(disabled)) + ' ports'} administratively Disabled "
        "beside ports that are Active: a port switched off on purpose, not a failing link (that reads Polling or "
        "LinkErrorRecovery); if the job or one of its ranks was given that HCA (NCCL_IB_HCA, UCX_NET_DEVICES, a "
        "per-rank device list), it cannot connect: give every rank only HCAs whose port is Active"
    )
    return [
        ctx.make_finding(
            rule, ["port_active"], detail=detail + ".", evidence=[ev for ev, _ in disabled[:2]],
            severity=None if ctx.job_failed() else "warning", confidence=0.45,
            assumed=["the Disabled port is one the job was given"], values={"value": "a Disabled port"},
        )
    ]  # fmt: skip


_SGID = re.compile(r"\bsgid_index=(\d+)")


def ucx_unlike_devices(ctx: Context) -> tuple[list[str], list[str]]:
    """UCX's failed RoCE address handles (roce-gid-index's ucx_create_ah) on several devices of a node that
    use different GID indexes, with UCX_NET_DEVICES not set: UCX takes every RDMA device by default, and
    ports whose GID tables differ are ports of different kinds or networks (a second NIC not cabled to the
    fabric), so the device list is the first suspect, the GID index the second. (devices, GID indexes)."""
    gid, hca = ctx.rules.get("roce-gid-index"), ctx.rules.get("nccl-ib-hca-wrong")
    if gid is None or hca is None or ctx.facts.env_values("UCX_NET_DEVICES") or ctx.stats(hca, ["ucx_devices_set"]):
        return [], []
    samples = ctx.samples(gid, ["ucx_create_ah"])
    devs = sorted({g["hca"] for _, g in samples if g.get("hca")}, key=natural_key)
    sgids = sorted({m.group(1) for ev, _ in samples if (m := _SGID.search(ev.text))}, key=int)
    if len(devs) < 2 or len(sgids) < 2:
        return [], []
    return devs, sgids


def _ucx_every_device(rule: Rule, ctx: Context) -> list[Finding]:
    devs, sgids = ucx_unlike_devices(ctx)
    if not devs:
        return []
    gid = ctx.rules["roce-gid-index"]
    detail = (
        f"UCX could not build RoCE address handles on {', '.join(devs)}, with different GID indexes "
        f"({', '.join(sgids)}), and UCX_NET_DEVICES is not set: UCX uses every RDMA device it finds, and ports "
        "whose GID tables differ are of different kinds or on different networks (a second NIC not cabled to the "
        "fabric); set UCX_NET_DEVICES to the port every node reaches the others by (ibdev2netdev, show_gids)"
    )
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", evidence=[ev for ev, _ in ctx.samples(gid, ["ucx_create_ah"])[:2]],
            confidence=0.55, values={"value": "UCX_NET_DEVICES unset (all devices)"},
            # UCX connects a node's own processes over the same devices: one node is enough to fail.
            severity=rule.severity if ctx.job_failed() else "warning",
        )
    ]  # fmt: skip


_FIRST_HCA = re.compile(r"(?:^|[=,^])mlx5_0(?::1)?(?:,|$)")


_LINKED_PORT = re.compile(r"\[\d+\]([\w.-]+:\d+)(?::\d+:\d+)?/(IB|RoCE)\b")


def _mixed_links(rule: Rule, ctx: Context) -> list[Finding]:
    """A process that stripes over InfiniBand and RoCE ports at once: the ports of the link layer
    fewer of them have are on another network than the rest (a bonded Ethernet NIC beside eight
    IB HCAs), and NCCL_IB_HCA should leave them out."""
    samples = ctx.samples(rule, ["mixed_links", "merge_mixed"])
    if not samples:
        return []
    ports: dict[str, list[str]] = {"IB": [], "RoCE": []}
    for _, g in samples:
        for port, link in _LINKED_PORT.findall(g.get("devs", "")):
            if port not in ports[link]:
                ports[link].append(port)
    odd, main = ("RoCE", "IB") if len(ports["RoCE"]) <= len(ports["IB"]) else ("IB", "RoCE")
    names = ", ".join(ports[odd])
    uses = "was asked to merge" if ctx.stats(rule, ["merge_mixed"]) else "uses"
    detail = (
        f"NCCL {uses} {names} ({odd}) beside {len(ports[main])} {main} port(s) in one process: the {odd} port is on "
        f"another network than the others, and traffic striped over it runs slow or fails; leave it out with "
        f"NCCL_IB_HCA=^{','.join(p.split(':')[0] for p in ports[odd])}"
    )
    # Queue pairs that would not connect, or a job that failed, are what striping over the odd port does;
    # NCCL refusing to merge them fails the communicator's init.
    failed_qps = bool(qp_failures(ctx))
    # A bootstrap that failed first (its TCP socket could not reach a peer) is over before any HCA carries data.
    at_bootstrap = bool(ctx.count("nccl-socket-ifname", ["bootstrap_failed"])) and not failed_qps
    broke = failed_qps or (ctx.job_failed() and not at_bootstrap) or bool(ctx.stats(rule, ["merge_mixed"]))
    if broke:
        detail += "; queue pairs failed to connect" if failed_qps else "; the job failed"
    return [
        ctx.make_finding(
            rule, ["mixed_links", "merge_mixed"], detail=detail, severity=None if broke else "warning",
            confidence=0.7 if broke else 0.6,
            values={"value": "no filter that leaves it out"}, evidence=pick_evidence(ev for ev, _ in samples),
        )
    ]  # fmt: skip


def qp_failures(ctx: Context) -> list:
    """roce-gid-index's failed queue-pair transitions (not 2.24+'s INFO lines before a retry)."""
    gid = ctx.rules.get("roce-gid-index")
    if gid is None:
        return []
    names = ["modify_qp_gid", "modify_qp_old", "modify_qp_short"]
    return [(ev, g) for ev, g in ctx.samples(gid, names) if "retrying" not in ev.text]


def mixed_links(ctx: Context) -> bool:
    """Whether a process stripes over InfiniBand and RoCE ports at once (nccl-ib-hca-wrong's mixed_links)."""
    hca = ctx.rules.get("nccl-ib-hca-wrong")
    return bool(hca and ctx.stats(hca, ["mixed_links"]))


UNREACHABLE_QP_ERRORS = ("Connection timed out", "Network is unreachable", "No route to host")


def _prefix_matched(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL_IB_HCA without a leading '=' matches device names by prefix: "mlx5_1" also takes mlx5_10 and
    mlx5_11, which NCCL then uses without a word (NCCL's environment variable documentation)."""
    extra: dict[str, list[str]] = {}
    value = ""
    for h in ctx.facts.hosts.values():
        filt = h.env.get("NCCL_IB_HCA", "")
        if not filt or filt[0] in "=^":
            continue
        names = {e.split(":")[0] for e in filt.split(",") if e}
        for dev in dict.fromkeys(hca.split(":")[0] for hca in h.hcas):
            # Only where the name given ends a number that the device's name goes on (mlx5_1 -> mlx5_10): a
            # prefix such as "mlx5" is meant to take every HCA of that kind.
            if dev not in names and any(dev.startswith(n) and n[-1:].isdigit() and dev[len(n):][:1].isdigit() for n in names):
                extra.setdefault(h.host, []).append(dev)
                value = filt
    if not extra:
        return []
    hosts = sorted(extra, key=natural_key)
    devs = sorted({d for ds in extra.values() for d in ds}, key=natural_key)
    detail = (
        f"NCCL_IB_HCA={value} matches device names by prefix, so NCCL also uses {', '.join(devs)} on "
        f"{hosts_text(hosts)}, which the setting did not name; NCCL_IB_HCA=={value} (a leading '=') matches the "
        "names exactly"
    )
    evidence = [ev for ev, _ in ctx.samples(rule, ["hca_set", "hca_assign"]) if ctx.host_for(ev) in (*hosts, None)]
    return [
        ctx.make_finding(
            rule, ["hca_set", "hca_assign"], detail=detail + ".", hosts=hosts, severity="warning", confidence=0.6,
            values={"value": value}, evidence=pick_evidence(evidence) or None,
        )
    ]  # fmt: skip


def hca_filter_values(ctx: Context) -> list[str]:
    """NCCL_IB_HCA as the job set it (NCCL's echo, the script, an env dump)."""
    rule = ctx.rules.get("nccl-ib-hca-wrong")
    found = ctx.captures(rule, "value", ["hca_assign", "hca_set", "hca_prose"]) if rule else []
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
            ["hca_assign", "hca_set", "hca_prose"],
            detail=detail + ".",
            values={"value": values[0]},
            confidence=0.6,
            evidence=pick_evidence(
                [ev for ev, _ in ctx.samples(rule, ["hca_assign", "hca_set", "hca_prose"])] + [ev for ev, _ in stuck]
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


def _filter_entries(value: str) -> tuple[bool, list[tuple[str, str | None]]]:
    """NCCL_IB_HCA's entries as (device, port or None), and whether they match names exactly ('=')."""
    exact = value.startswith("=")
    entries = []
    for entry in value.lstrip("=").split(","):
        dev, _, port = entry.strip().partition(":")
        if dev:
            entries.append((dev, port or None))
    return exact, entries


def _named_unused(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL_IB_HCA names several HCAs or ports and NCCL uses some of them but not all: NCCL skips a named
    device it does not find and a port that is not ACTIVE without a word (net_ib init), so the missing
    ones are absent on that node or their link is down, and the job runs on fewer rails than asked."""
    missing: dict[str, list[str]] = {}
    value = ""
    for h in ctx.facts.hosts.values():
        filt = h.env.get("NCCL_IB_HCA", "")
        if not filt or filt.startswith("^") or not h.hcas:
            continue
        exact, entries = _filter_entries(filt)
        used = [hca.split(":") for hca in h.hcas]
        for dev, port in entries:
            if not any((d == dev if exact else d.startswith(dev)) and (port is None or p == port) for d, p in used):
                missing.setdefault(h.host, []).append(f"{dev}:{port}" if port else dev)
                value = filt
    if not missing:
        return []
    hosts = sorted(missing, key=natural_key)
    names = sorted({n for ns in missing.values() for n in ns}, key=natural_key)
    where = f" on {hosts_text(hosts)}" if UNNAMED_HOST not in missing else ""
    detail = (
        f"NCCL_IB_HCA={value} names {', '.join(names)}, which NCCL did not use{where}: that device is not there or its "
        "port is not active (NCCL skips both without a word), so the job runs on fewer HCAs than it asks for; "
        "check ibstat / ibdev2netdev on that node"
    )
    failed = ctx.job_failed()
    evidence = [ev for ev, _ in ctx.samples(rule, ["hca_set", "hca_assign"])]
    return [
        ctx.make_finding(
            rule, ["hca_set", "hca_assign"], detail=detail + ".", hosts=[h for h in hosts if h != UNNAMED_HOST] or None,
            severity=None if failed else "warning", confidence=0.55, values={"value": value},
            evidence=pick_evidence(evidence) or None,
        )
    ]  # fmt: skip
