"""RoCE connections that fail on the GID index: roce-gid-index."""

from __future__ import annotations

import ipaddress

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import timeline_key
from diag.diagnosis.analyzers.transport.common import CQE_SIGNATURES, PORT_EVENTS, failing_call
from diag.diagnosis.analyzers.transport.hca import hca_filter_values, mixed_links, qp_failures, ucx_unlike_devices
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.evidence import Evidence, time_key
from diag.report import Finding


def roce_gid(rule: Rule, ctx: Context) -> list[Finding]:
    names = ["modify_qp_gid", "modify_qp_old", "modify_qp_short", "hint", "roce_version_unread", "gid_empty"]
    if not ctx.stats(rule, names):
        return (
            _ucx_gid(rule, ctx)
            or _ucx_roce_unreachable(rule, ctx)
            or _ompi_gid(rule, ctx)
            or _link_local_completions(rule, ctx)
            or _addr_range(rule, ctx)
            or _retry_exceeded(rule, ctx)
            or _ud_timeout(rule, ctx)
            or _gid_settings_then_ib_error(rule, ctx)
        )
    facts = ctx.facts
    forced = ctx.captures(rule, "gid", ["gid_env", "gid_export"]) + facts.env_values("NCCL_IB_GID_INDEX")
    roce = any(h.roce for h in facts.hosts.values())
    hint = bool(ctx.stats(rule, ["hint"]))
    samples = qp_failures(ctx)  # 2.24+'s INFO before a retry that may succeed left out
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
    mixed = mixed_links(ctx)  # IB and RoCE ports in one process: the RoCE one is the suspect, not its GID
    ib_ports = mixed or any(h.hcas and not h.roce for h in facts.hosts.values())
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
    several = unresolved and len([p for v in hca_filter_values(ctx)[:1] for p in v.split(",") if p]) > 1
    if (several and not (forced or hint)) or (mixed and not (forced or hint or no_data)):
        # The port list is the likelier suspect (nccl-ib-hca-wrong says so); the GID stays a candidate,
        # weighed like that finding: an excerpt that shows neither several nodes nor a failed job makes
        # both candidates warnings.
        if several and not (forced or hint):
            detail += "; NCCL_IB_HCA lists several ports, which nccl-ib-hca-wrong checks first"
        else:
            detail += "; NCCL stripes over InfiniBand and RoCE ports at once, which nccl-ib-hca-wrong checks first"
        quiet = ctx.facts.nodes_known() is None and not ctx.job_failed()
        return [
            ctx.make_finding(rule, names, detail=detail + ".", confidence=0.45, severity="warning" if quiet else None)
        ]
    if unresolved and not (forced or hint or no_device or no_data or einval or unread) and _v2_ipv4_both(samples):
        # Both ends used a RoCE v2 IPv4-mapped GID, the entry NCCL picks by itself: the index is likely right,
        # and the timeout says the peer's address does not route from this port (a pairing of ports of
        # different rails on a rail-only fabric, another subnet or VLAN). A lead, not a cause shown.
        detail += (
            "; both the local and the remote GID are RoCE v2 IPv4 entries (::ffff:a.b.c.d), the kind NCCL picks by "
            "itself, so the index is likely right and the peer's address does not route from this port: ports of "
            "different rails paired on a rail-only fabric (NCCL_CROSS_NIC=0), ports on another subnet or VLAN, or a "
            "node whose port holds several IPv4 GIDs of which another is on the fabric's subnet (show_gids)"
        )
        return [ctx.make_finding(rule, names, detail=detail + ".", severity="info", confidence=0.3)]
    if unresolved and not (forced or roce or hint or no_device or no_data or einval):
        detail += (
            "; on RoCE this step resolves the peer's GID address, so the GID NCCL used does not route to the peer "
            "(nothing here says whether the ports are RoCE or InfiniBand)"
        )
        return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.55)]
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.85 if (forced or hint or no_data) else 0.7)]


def _v2_ipv4_both(samples: list) -> bool:
    """Whether every failed transition names IPv4-mapped (RoCE v2) GIDs on both ends (NCCL 2.21+ prints them).
    One line may be read by the full and the cut-short signature both: a line counts where either read it so."""
    lines: dict[str, bool] = {}
    for ev, g in samples:
        v2 = (g.get("lgid") or "").startswith("::ffff:") and (g.get("rgid") or "").startswith("::ffff:")
        lines[ev.text] = lines.get(ev.text, False) or v2
    return bool(lines) and all(lines.values())


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
    if ctx.stats(rule, ["ucx_invalid_gid"]) and not ctx.stats(rule, ["ucx_gid", "ucx_gid_type"]):
        # UCS_ERR_INVALID_ADDR from uct_ib_device_query_gid: the entry's interface id is all zeros.
        detail = f"UCX could not use GID index {gid}{where}: the GID table entry there is empty"
    elif ctx.stats(rule, ["ucx_gid", "ucx_gid_type"]):
        detail = f"UCX could not use GID index {gid}{where}" if gid else f"UCX could not read a GID entry{where}"
        detail += f" ({g['err']})" if g.get("err") else " (its sysfs RoCE type is unreadable or empty)"
    else:
        detail = f"UCX could not build a RoCE address handle{where} ({g.get('err', 'error')}): the GID it uses does not reach the peer"
    forced = ctx.captures(rule, "ucx_gid", ["ucx_gid_export"]) + ctx.facts.env_values("UCX_IB_GID_INDEX")
    if forced:
        detail += f"; UCX_IB_GID_INDEX={forced[0]} is set"
    elif ucx_unlike_devices(ctx)[0]:
        # Failures on several devices with different GID indexes: the device list (nccl-ib-hca-wrong) first.
        detail += "; they fail on several devices with different GID indexes, which nccl-ib-hca-wrong checks first"
        # Weighed like that finding, which one node's failure leaves a warning.
        return [ctx.make_finding(rule, UCX_GID, detail=detail + ".", confidence=0.45, severity="warning")]
    return [ctx.make_finding(rule, UCX_GID, detail=detail + ".", confidence=0.8 if forced else 0.65)]


UCX_GID = ["ucx_gid", "ucx_gid_type", "ucx_invalid_gid", "ucx_create_ah"]


def _addr_range(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL_IB_ADDR_RANGE that NCCL cannot parse for the address family: ignored, so the GID is chosen
    without the range the user meant it to select. The run goes on; a warning unless it then fails."""
    samples = ctx.samples(rule, ["addr_range_invalid"])
    if not samples:
        return []
    g = samples[0][1]
    given = ctx.facts.env_values("NCCL_IB_ADDR_RANGE")
    detail = (
        f"NCCL_IB_ADDR_RANGE{'=' + given[-1] if given else ''} is not valid for {g['af']} ('{g['value']}'), so NCCL "
        "ignores it and picks the RoCE GID without it; give a range of the family NCCL_IB_ADDR_FAMILY names "
        "(AF_INET by default: a.b.c.d/n, n <= 32)"
    )
    severity = None if ctx.job_failed() else "warning"
    return [ctx.make_finding(rule, ["addr_range_invalid"], detail=detail + ".", severity=severity, confidence=0.55)]


# The settings by which NCCL chooses a RoCE GID (2.21+ adds family, range and version to the index).
GID_SETTINGS = ("NCCL_IB_GID_INDEX", "NCCL_IB_ADDR_FAMILY", "NCCL_IB_ADDR_RANGE", "NCCL_IB_ROCE_VERSION_NUM")


def _gid_settings_then_ib_error(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL failed with a system error whose return trail starts in its IB transport, and the job set
    how NCCL picks the RoCE GID: the GID lookup (sysfs gid_attrs, the address family and range it filters
    by) is the IB transport's system call that such settings decide. Without the settings, no guess."""
    socket = ctx.rules.get("nccl-socket-ifname")
    call = failing_call(ctx)
    if socket is None or not ctx.stats(socket, ["system_error"]) or call is None or call[0] != "ib":
        return []
    given = {var: values[-1] for var in GID_SETTINGS if (values := ctx.facts.env_values(var))}
    if not given:
        return []
    settings = ", ".join(f"{var}={value}" for var, value in given.items())
    detail = (
        f"NCCL failed with a system error inside its IB transport (its return trail starts in net_ib) while "
        f"{settings} told it which RoCE GID to use: no GID on the port matched them, or the one matched cannot "
        "be used; unset them to let NCCL choose (2.21+), or set them to what show_gids lists on every node"
    )
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", confidence=0.45,
            evidence=pick_evidence([call[1]] + [ev for ev, _ in ctx.samples(socket, ["system_error"])]),
            values={"gid": given.get("NCCL_IB_GID_INDEX", "")} if "NCCL_IB_GID_INDEX" in given else None,
        )
    ]  # fmt: skip


def _ucx_roce_unreachable(rule: Rule, ctx: Context) -> list[Finding]:
    """UCX's wire-up judging a RoCE peer unreachable by the address its GID gives: RoCE versions,
    address families or IP subnets that differ between the nodes' chosen GID entries."""
    samples = ctx.samples(rule, ["ucx_roce_unreachable"])
    if not samples:
        return []
    ev, g = samples[0]
    host = ctx.host_for(ev)
    detail = (
        f"UCX{' on ' + host if host else ''} found peer {g['peer']} unreachable over RoCE: {g['reason']}; the GID "
        "entries the nodes use differ in RoCE version, address family or subnet (set UCX_IB_GID_INDEX to the RoCE v2 "
        "index every node has, show_gids)"
    )
    hosts = sorted({h for ev, _ in samples if (h := ctx.host_for(ev))}, key=natural_key)
    return [ctx.make_finding(rule, ["ucx_roce_unreachable"], detail=detail + ".", hosts=hosts or None, confidence=0.8)]


def _ompi_gid(rule: Rule, ctx: Context) -> list[Finding]:
    """Open MPI's openib BTL told to use a GID index the port does not have."""
    if not ctx.stats(rule, ["ompi_gid_too_large"]):
        return []
    gid = ctx.captures(rule, "gid", ["ompi_gid_requested"])
    detail = (
        f"Open MPI was told to use GID index {gid[0] if gid else '<n>'} (btl_openib_gid_index), which this port's "
        "GID table does not have: pick an index `show_gids` lists with the RoCE v2 address"
    )
    return [ctx.make_finding(rule, ["ompi_gid_too_large", "ompi_gid_requested"], detail=detail + ".", confidence=0.8)]


# --------------------------------------------------------------------------------------- GDR disabled


# ib-link-fault's NCCL completion-error signatures (they carry the GIDs NCCL 2.19+ prints with them).
NCCL_CQE = ["cqe_v1", "cqe_v2", "cqe_v3", "cqe_v4", "cqe_elided"]


def ethernet_link_local(gid: str | None) -> bool:
    """Whether a GID is an IPv6 link-local address made from an Ethernet MAC (fe80:: with the EUI-64
    ff:fe in its middle): the RoCE GID entry at index 0/1. InfiniBand GIDs start fe80:: too, but end
    in the port GUID, which has no ff:fe there."""
    if not gid or not gid.lower().startswith("fe80:"):
        return False
    try:
        packed = ipaddress.IPv6Address(gid.split("%")[0]).packed
    except ValueError:
        return False
    return packed[11:13] == b"\xff\xfe"


def wc_status(g: dict[str, str]) -> str | None:
    """A completion error's ibv_wc_status number, also where a line names it in words (UCX's "Transport
    retry count exceeded", ibv_wc_status_str's "transport retry counter exceeded")."""
    if g.get("status"):
        return g["status"]
    event = (g.get("event") or "").lower()
    if "transport retry" in event:
        return "12"
    if "receive-no-ready" in event or "rnr retry" in event:
        return "13"
    return None


def completions_all_of(ctx: Context, status: str) -> list:
    """ib-link-fault's completion errors (flushes aside) when every one has ``status``, else []."""
    fault = ctx.rules.get("ib-link-fault")
    if fault is None:
        return []
    cqe = [(ev, g) for ev, g in ctx.samples(fault, CQE_SIGNATURES) if g.get("status") != "5"]
    return cqe if all(wc_status(g) == status for _, g in cqe) else []


def infiniband_by_line(ctx: Context) -> bool:
    """Whether the error lines themselves say the ports are InfiniBand. NCCL 2.18+ prints the local and
    remote GIDs of a failed completion only where the port's link layer is Ethernet (RoCE), so a 2.18+
    completion line without them comes from an InfiniBand port; UCX ends the device name with /IB or /RoCE."""
    fault = ctx.rules.get("ib-link-fault")
    if fault is None:
        return False
    for name, st in ctx.stats(fault, ["cqe_v2", "cqe_v3", "cqe_v4", "ucx_retry", "ucx_wc_error"]):
        for _, g in st.samples:
            if g.get("link"):
                if g["link"] == "IB":
                    return True
            elif g.get("lgid"):
                return False
            elif name != "cqe_v2" or g.get("type"):  # 2.10-2.17's form printed no GIDs at all
                return True
    return False


def empty_gid(ctx: Context) -> list:
    """roce-gid-index's QP lines saying the GID entry NCCL uses is empty (0/0) on the port: queue pairs
    addressed from it cannot be answered, so completion errors that follow are its consequence."""
    rule = ctx.rules.get("roce-gid-index")
    return ctx.samples(rule, ["gid_empty"]) if rule is not None else []


# Work the job had done: lines whose presence before a fabric error says the addressing worked.
PROGRESS = ["progress_iteration", "progress_loss"]


def _before(a: Evidence, b: Evidence) -> bool:
    ta, tb = time_key(a.timestamp), time_key(b.timestamp)
    if ta and tb:
        return ta < tb
    return a.order[0] == b.order[0] and a.order < b.order


def work_before(ctx: Context, first: Evidence) -> list[Evidence]:
    """Lines that show collective work done before ``first``: nccl-tests result rows measured, training
    iterations logged. A GID or traffic-class mismatch fails the first transfer; a job that moved data
    before the error had its addressing right."""
    out = [
        ctx.evidence_at(row.order, row.text)
        for row in ctx.facts.busbw_rows
        if row.order[0] == first.order[0] and row.order < first.order
    ]
    fault = ctx.rules.get("ib-link-fault")
    if fault is not None:
        out += [ev for ev, _ in ctx.samples(fault, PROGRESS) if _before(ev, first)]
    return sorted(out, key=lambda ev: ev.order)


def shows_start(ctx: Context) -> bool:
    """Whether the logs hold the job's start-up (NCCL's IB device or version lines, nccl-tests' device
    list, ucx_perftest waiting for its peer): an excerpt of the error alone does not."""
    facts = ctx.facts
    fault = ctx.rules.get("ib-link-fault")
    return (
        any(h.hcas or h.versions for h in facts.hosts.values())
        or bool(facts.tests_gpus)
        or bool(fault is not None and ctx.stats(fault, ["perftest_start"]))
    )


def unanswered_at_start(ctx: Context, samples: list) -> tuple[bool, list[str]]:
    """Timing and scope of errors that all say a peer never answered (retry exceeded, UD/endpoint
    timeouts): (True, what was assumed) when they read as every connection failing at start-up (the
    logs show the start and no work done before the first error, or several nodes or peers fail with
    nothing done before), which on RoCE is the addressing (GID index, RoCE version, traffic class),
    not a link that broke."""
    if not samples:
        return False, []
    first = min((ev for ev, _ in samples), key=timeline_key)
    if work_before(ctx, first):
        return False, []
    reporters = {h for ev, _ in samples if (h := ctx.host_for(ev))}
    peers = {g["peer"] for _, g in samples if g.get("peer")}
    several = len(reporters) > 1 or len(peers) > 1
    if shows_start(ctx) or several:
        assumed = [] if shows_start(ctx) else ["the excerpt begins near the job's start: nothing before the errors shows work done"]
        return True, assumed
    return False, []


def link_local_completions(ctx: Context) -> list:
    """Completion errors (ib-link-fault's lines) whose local GID is a RoCE link-local one: the queue
    pairs were addressed by a GID that no router forwards, not broken by a failing link."""
    fault = ctx.rules.get("ib-link-fault")
    if fault is None:
        return []
    return [
        (ev, g)
        for ev, g in ctx.samples(fault, NCCL_CQE)
        if g.get("status") != "5" and ethernet_link_local(g.get("lgid"))
    ]


def addressing_suspect(ctx: Context) -> tuple[bool, list[str]]:
    """For ib-link-fault: whether roce-gid-index reads the same errors as every connection failing at
    start-up on ports that may be RoCE (then the link is the second suspect), and what that assumed."""
    fault = ctx.rules.get("ib-link-fault")
    if fault is None or ctx.stats(fault, PORT_EVENTS) or infiniband_by_line(ctx):
        return False, []
    if any(h.hcas and not h.roce for h in ctx.facts.hosts.values()):
        return False, []
    unanswered = completions_all_of(ctx, RETRY_EXCEEDED)
    if not unanswered:
        # UCX's UD timeouts, when they are the only errors
        errors = [(ev, g) for ev, g in ctx.samples(fault, CQE_SIGNATURES) if g.get("status") != "5"]
        ud = ctx.samples(fault, ["ucx_ud_timeout", "ucx_transport_timeout"])
        unanswered = ud if len(ud) == len(errors) else []
    return unanswered_at_start(ctx, unanswered)


RETRY_EXCEEDED = "12"  # IBV_WC_RETRY_EXC_ERR: the peer's NIC never acknowledged


def _retry_exceeded(rule: Rule, ctx: Context) -> list[Finding]:
    """Completion errors that are all "transport retry counter exceeded" (status 12) on ports not known
    to be InfiniBand: the peer's NIC never acknowledged. On a failing link that happens mid-run; on RoCE
    it is also what a GID the peer cannot route to gives at the first transfer. ib-link-fault reports
    the errors; this is the second suspect it does not name, weighed below it."""
    cqe = completions_all_of(ctx, RETRY_EXCEEDED)
    if not cqe:
        return []
    hosts = ctx.facts.hosts.values()
    if any(h.hcas and not h.roce for h in hosts) or ctx.stats(ctx.rules["ib-link-fault"], PORT_EVENTS):
        return []  # InfiniBand addresses peers by LID; a port's own event points at the link
    if infiniband_by_line(ctx):
        return []  # the completion lines themselves come from InfiniBand ports
    if work_before(ctx, min((ev for ev, _ in cqe), key=timeline_key)):
        return []  # data moved before the first error: the addressing worked, a link or peer failed later
    roce = any(h.roce for h in hosts) or any((g.get("lgid") or "").startswith("::ffff:") for _, g in cqe)
    forced = ctx.captures(rule, "gid", ["gid_env", "gid_export"]) + ctx.facts.env_values("NCCL_IB_GID_INDEX")
    at_start, assumed = unanswered_at_start(ctx, cqe)
    detail = (
        "Every completion error is status 12 (transport retry counter exceeded: the peer's NIC never answered)"
        + ("; the HCAs are RoCE" if roce else "")
        + (f"; NCCL_IB_GID_INDEX={'/'.join(sorted(set(forced)))} is forced" if forced else "")
        + ("; they came before any work was done, on every connection the logs show" if at_start else "")
        + ". On RoCE the GID index decides the address a queue pair sends to: an index the peer cannot route to "
        "(RoCE v1, link-local, another VLAN) or a traffic class the switches do not carry fails exactly like this "
        "at the first transfer"
    )
    hosts_named = sorted({h for ev, _ in cqe if (h := ctx.host_for(ev))}, key=natural_key)
    if not roce:
        assumed = assumed + ["the ports are RoCE (nothing here says RoCE or InfiniBand)"]
    # Before any work, on every connection: the addressing leads; otherwise it stays the second suspect.
    conf = (0.8 if (roce or forced) else 0.7) if at_start else (0.6 if (roce or forced) else 0.45)
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=hosts_named or None, evidence=[e for e, _ in cqe[:2]],
            confidence=conf, assumed=assumed,
        )  # fmt: skip
    ]


def _ud_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    """UCX's UD transport timing out on a peer ("Fatal: UD endpoint ... unhandled timeout error", older
    "transport error: Endpoint timeout") on ports not known to be InfiniBand: a peer that stopped
    answering (ib-link-fault reports it) or, on RoCE, one never reachable at the GID its address
    names (UCX_IB_GID_INDEX). The second suspect, weighed below the first."""
    fault = ctx.rules.get("ib-link-fault")
    if fault is None:
        return []
    timeouts = ctx.samples(fault, ["ucx_ud_timeout", "ucx_transport_timeout"])
    hosts = ctx.facts.hosts.values()
    if not timeouts or any(h.hcas and not h.roce for h in hosts) or ctx.stats(fault, PORT_EVENTS):
        return []
    if infiniband_by_line(ctx):
        return []
    roce = any(h.roce for h in hosts)
    at_start, assumed = unanswered_at_start(ctx, timeouts)
    detail = (
        "UCX's UD transport gave up on a peer that never acknowledged (endpoint timeout)"
        + ("; the HCAs are RoCE" if roce else "")
        + ("; it came before any work was done" if at_start else "")
        + ". On RoCE the GID index decides the address UCX sends to: an index the peer cannot route to (RoCE v1, "
        "link-local, GID tables that differ between nodes) times out like this; set UCX_IB_GID_INDEX to the RoCE v2 "
        "index every node has (show_gids)"
    )
    named = sorted({h for ev, _ in timeouts if (h := ctx.host_for(ev))}, key=natural_key)
    if not roce:
        assumed = assumed + ["the ports are RoCE (nothing here says RoCE or InfiniBand)"]
    conf = (0.75 if roce else 0.7) if at_start else (0.55 if roce else 0.4)
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=named or None, evidence=[e for e, _ in timeouts[:2]],
            confidence=conf, assumed=assumed,
        )  # fmt: skip
    ]


def _link_local_completions(rule: Rule, ctx: Context) -> list[Finding]:
    samples = link_local_completions(ctx)
    if not samples:
        return []
    ev, g = samples[0]
    detail = (
        f"RoCE completions failed (status {g.get('status')}) on queue pairs whose local GID {g['lgid']} is the "
        "link-local entry made from the port's MAC: NCCL used GID index 0/1 (RoCE v1 or link-local), which "
        "cannot be routed to a peer in another subnet or VLAN, so the peer never answered"
    )
    hosts = sorted({h for ev, _ in samples if (h := ctx.host_for(ev))}, key=natural_key)
    finding = ctx.make_finding(
        rule, [], detail=detail + ".", hosts=hosts or None, evidence=[e for e, _ in samples[:4]], confidence=0.75
    )
    finding.count = len(samples)
    return [finding]
