"""What the transport analyzers share: whether the job expected InfiniBand, and the interfaces no other node can reach."""

from __future__ import annotations

import re

from diag.diagnosis.analyzers.common import SUCCESS_RUN
from diag.diagnosis.context import Context, hosts_text
from diag.evidence import Evidence

NOT_ROUTABLE_IFACES = ("lo", "docker", "virbr", "veth", "br-")

IB_ASSUMED = "the cluster has InfiniBand/RoCE that the job should use (nothing in the logs shows it)"

IB_ROOT_IDS = ("ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong", "nccl-ib-disabled")


def run_finished(ctx: Context) -> Evidence | None:
    """The line where a training run or benchmark reports finishing its work, where nothing shows the job
    failing: NCCL's transport then cost speed, not the job. nccl-tests' data check does not count: the
    bandwidth over the transport is what that run is for."""
    rule = ctx.rules.get("unexplained-failure")
    if rule is None or ctx.job_failed():
        return None
    names = [n for n in SUCCESS_RUN if n != "success_nccl_tests"]
    return max((ev for ev, _ in ctx.samples(rule, names)), key=Evidence.file_order, default=None)


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
    ifname = ctx.rules.get("nccl-socket-ifname")
    if ifname:  # the bootstrap's or NCCL 2.3's socket interface, and 2.3-2.5's IB side channel
        ipoib |= set(ctx.captures(ifname, "iface", ["oob_ipoib", "oob_ipoib_old", "old_iface_ipoib"]))
    ipoib = sorted(ipoib)
    if ipoib:
        reasons.append(f"nodes have IPoIB interfaces ({', '.join(ipoib)})")
    if any(v.upper().startswith("IB") for v in facts.env_values("NCCL_NET")):
        reasons.append("NCCL_NET asks for IB")
    return reasons


def ib_asked_and_failed(ctx: Context) -> bool:
    """NCCL stopped because the network NCCL_NET names is NCCL's own IB and it could not start: 2.19-2.26
    "Error: network IB not found.", 2.27+ "Failed to initialize NET plugin IB" then "Failed to initialize
    any NET plugin" (with NCCL_NET set only the plugin of that name is initialised; unset, Socket would start)."""
    plugin = ctx.rules.get("nccl-net-plugin")
    if plugin is None:
        return False
    if any(n.strip().upper() == "IB" for n in ctx.captures(plugin, "net", ["network_not_found"])):
        return True
    return bool(ctx.stats(plugin, ["any_failed"])) and "IB" in ctx.captures(plugin, "net", ["failed_ib"])


def external_net(nets: set[str]) -> bool:
    """A network NCCL chose that is neither its own IB nor its Socket transport: a net plugin's."""
    return any(n not in ("IB", "Socket") for n in nets)


# What an NCCL "unhandled system error" is already explained by, when one of these was found.
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


# Failed work completions and device failures as NCCL, UCX, Open MPI, perftest and the verbs provider print them.
CQE_SIGNATURES = [
    "cqe_v1",
    "cqe_v2",
    "cqe_v3",
    "cqe_v4",
    "cqe_elided",
    "cqe_resilient",
    "fatal_error",
    "fatal_devices",
    "ucx_retry",
    "ucx_wc_error",
    "ompi_cq",
    "mvapich_cqe",
    "ompi_retry",
    "verbs_wc",
    "perftest_cqe",
    "mlx5_cqe",
    "cable_event",
    "mlx5_link_down",
    "mlx5_health",
    "ompi_async",
    "query_failed",
    "device_failed",
    "comm_fatal",
    "poll_cq_failed",
    "ucx_ud_timeout",
    "ucx_transport_timeout",
    "ucx_ep_timeout",
    "ompi_rnr",
]

PORT_EVENTS = ["async_event", "async_error_event", "async_nonfatal_event", "async_fatal", "ucx_async", "mvapich_async"]


# Source files of NCCL whose frame, innermost in a system error's return trail, names the call family.
_IB_FILES = ("net_ib", "ibvwrap", "ibvcore")
_SOCKET_FILES = ("socket", "bootstrap")
_SHM_FILES = ("shm",)


def failing_call(ctx: Context) -> tuple[str, Evidence] | None:
    """Which part of NCCL a system error came from, and the line that says so: ("ib" | "socket" | "shm",
    the trail's first line) when the return trail of that error (code 2, "file.cc:line -> 2", printed from
    the innermost frame outwards) starts in that part of NCCL. The trail names where the failing call was
    even when no WARN says which call it was; None when it does not."""
    failed = ctx.rules.get("unexplained-failure")
    if failed is None:
        return None
    for ev, g in ctx.samples(failed, ["nccl_return_trail"]):
        if g.get("code") != "2":
            continue
        where = "/".join(g.get("file", "").rsplit("/", 2)[-2:])
        for family, files in (("ib", _IB_FILES), ("socket", _SOCKET_FILES), ("shm", _SHM_FILES)):
            if any(f in where for f in files):
                return family, ev
        return None
    return None


def failing_call_family(ctx: Context) -> str | None:
    found = failing_call(ctx)
    return found[0] if found else None


def trail_line(ctx: Context, family: str) -> Evidence | None:
    """The return trail's first line when it places a system error in ``family``'s code, else None."""
    call = failing_call(ctx)
    return call[1] if call is not None and call[0] == family else None
