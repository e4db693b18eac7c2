"""Verbs devices and libraries the job cannot open: ib-verbs-library-missing and ib-devices-not-mounted."""

from __future__ import annotations

import dataclasses
import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import said
from diag.diagnosis.analyzers.transport.common import IB_ASSUMED, ib_asked_and_failed, ib_evidence, run_finished
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST

PROVIDER_WARNINGS = frozenset({"provider_missing", "no_userspace_driver", "no_config_dir", "provider_abi"})


def verbs_missing(rule: Rule, ctx: Context) -> list[Finding]:
    """ib-verbs-library-missing, less libibverbs' provider warnings that did not stop IB: where every
    node that shows NCCL's network opened its HCAs, or where the provider missing is ConnectX-3's
    libmlx4 and every HCA NCCL lists is an mlx5 one, the warning is about hardware these nodes lack."""
    hit = {n for n, _ in ctx.stats(rule)}
    if ctx.count("nccl-net-plugin", ["ofi_failed"]):
        # The job's network is the OFI plugin's (EFA), and it failed: NCCL's built-in IB transport,
        # tried next, missing libibverbs is what follows, not the cause (nccl-net-plugin says it).
        return []
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
    if ib_asked_and_failed(ctx) and hit - PROVIDER_WARNINGS:
        # NCCL_NET names IB, NCCL could not load the verbs library, and it stopped at init (on any number of
        # nodes): the library is the step that failed; on nodes without IB the setting is the mistake.
        found = ctx.make_finding(rule)
        detail = (
            f"NCCL was told to use IB (NCCL_NET=IB) and could not start it, so communicator init failed: {found.detail}; "
            "install the verbs user space (rdma-core) in the image, or unset NCCL_NET where the nodes have no IB"
        )
        return [dataclasses.replace(found, detail=detail)]
    return ib_expected(rule, ctx)


def ib_expected(rule: Rule, ctx: Context) -> list[Finding]:
    """A fabric problem that matters only where IB was expected: a warning when nothing shows IB."""
    if not ctx.stats(rule):
        return []
    reasons = ib_evidence(ctx)
    known = ctx.facts.nodes_known()
    if reasons:
        # Only between nodes does a missing IB cost anything: a warning on one node, or on an excerpt that
        # says neither how many nodes nor that the job failed.
        single = known is False or (known is None and not ctx.job_failed())
        if not single and (done := run_finished(ctx)):
            # The run finished over TCP: a slower job, not a failed one (a deliberate TCP baseline looks the same).
            found = ctx.make_finding(rule, severity="warning", confidence=0.6)
            detail = f"{found.detail}; the run still finished ({said(done, 80)}), over TCP between nodes"
            return [dataclasses.replace(found, detail=detail)]
        return [ctx.make_finding(rule, severity="warning" if single else None)]
    if known is False:
        # One node: NCCL moves data between its GPUs over NVLink, PCIe or shared memory, never the network.
        detail = (
            "InfiniBand is unavailable to NCCL, but this job ran on one node, where NCCL does not use the "
            "network: harmless here; a job across nodes in the same image would fall back to TCP."
        )
        return [ctx.make_finding(rule, severity="info", confidence=0.5, detail=detail)]
    if ctx.stats(rule, ["lib_not_loadable"]) and ctx.job_failed():
        # A program that links the verbs library died loading it: the failure itself, not a quiet fallback.
        return [ctx.make_finding(rule, confidence=0.75)]
    if known is None and ctx.count("unexplained-failure", ["nccl_error", "nccl_tests_failure", "nccl_warn"]):
        # NCCL itself then failed: the verbs stack it could not load is the likeliest reason.
        severity = None if ctx.job_failed() else "warning"
        return [ctx.make_finding(rule, confidence=0.6, assumed=[IB_ASSUMED], severity=severity)]
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
    hca = ctx.rules.get("nccl-ib-hca-wrong")
    pinned = hca is not None and ctx.stats(hca, ["perftest_port_down", "perftest_no_such"])
    if pinned and {n for n, _ in ctx.stats(rule)} <= {"tool_open_failed"}:
        return []  # perftest could not open the device it was pinned to because that port is down or absent
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
    if ctx.stats(rule, ["gloo_no_device"]):
        detail = (
            "Gloo's ibverbs transport found no verbs device: in a container or pod /dev/infiniband was not passed in, "
            "or the host has no RDMA driver loaded (ibv_devices lists none)"
        )
        return [ctx.make_finding(rule, ["gloo_no_device"], detail=detail + ".", confidence=0.55)]
    if ctx.stats(rule, ["k8s_rdma_none", "k8s_sriov_rdma_none"]):
        res = ctx.captures(rule, "res", ["k8s_rdma_none"])
        detail = (
            "Kubernetes' RDMA device plugin found no RDMA device on the node"
            + (f" for resource {res[0]}" if res else "")
            + " (the RDMA kernel modules are not loaded, or its selectors match no NIC): pods asking for it get no "
            "/dev/infiniband"
        )
        return [ctx.make_finding(rule, ["k8s_rdma_none", "k8s_sriov_rdma_none"], detail=detail + ".", confidence=0.55)]
    if ctx.stats(rule, ["ngc_no_ib"]):
        detail = (
            "the NGC container found no InfiniBand device: /dev/infiniband is not inside it. Where the nodes have "
            "InfiniBand, pass it in (--container-mounts=/dev/infiniband:/dev/infiniband, docker "
            "--device=/dev/infiniband --cap-add=IPC_LOCK) or traffic between nodes goes over TCP"
        )
        assumed = ["the nodes have InfiniBand HCAs: a node without them prints the same banner"]
        return [
            ctx.make_finding(
                rule, ["ngc_no_ib"], detail=detail + ".", severity="warning", confidence=0.45, assumed=assumed
            )
        ]
    if mpi := _mpi_ofi_no_device(rule, ctx):
        return mpi
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
    spans, assumed = ctx.spans_nodes()
    assumed = [*assumed, DEVICES_UNSEEN_ASSUMED]
    confidence = 0.6
    if not wanted:
        # Unknown whether the nodes have IB: in a job that failed inside a pyxis container that was not
        # given /dev/infiniband it is still the likeliest reason, said at lower confidence with the
        # assumption spelled out. A run that went on is an Ethernet cluster doing what it should.
        mounts = ctx.captures(rule, "mounts", ["container_mounts"])
        docker = ctx.captures(rule, "args", ["docker_run", "podman_run"])
        in_container = ctx.stats(rule, ["in_container", "pyxis_notice"])
        passed_in = any("/dev/infiniband" in m for m in mounts) or any(
            "/dev/infiniband" in a or "--privileged" in a for a in docker
        )
        if not (in_container or docker) or not ctx.job_failed() or passed_in:
            return []
        if in_container:
            how = "pyxis container" + (" whose --container-mounts leave out /dev/infiniband" if mounts else "")
        else:
            how = "Docker container started without --device=/dev/infiniband"
        assumed.insert(0, IB_ASSUMED)
        confidence = 0.55
        detail = (
            f'NCCL found no IB device ("NET/IB : No device found.") on {hosts_text(unseen)} and the job runs in a '
            f"{how}: if the nodes have InfiniBand/RoCE, its verbs devices are not visible in the container"
        )
    else:
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
            confidence=confidence,
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


def _mpi_no_hca(rule: Rule, ctx: Context) -> list[Finding]:
    """MVAPICH2 or MPICH's UCX netmod stopped in MPI_Init finding no RDMA device."""
    names = ["mpi_ucx_no_device", "mpi_no_hca"]
    if not ctx.stats(rule, names):
        return []
    who = "MVAPICH2" if ctx.stats(rule, ["mpi_no_hca"]) else "MPICH's UCX transport"
    detail = (
        f"MPI_Init failed: {who} found no RDMA device where the rank ran: in a container the devices were not "
        "passed in (/dev/infiniband), the host has no RDMA driver loaded, or MV2_IBA_HCA / UCX_NET_DEVICES names "
        "none this node has (ibv_devinfo in the job lists what it sees)"
    )
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.6)]


def _mpi_ofi_no_device(rule: Rule, ctx: Context) -> list[Finding]:
    """MPICH or Intel MPI stopped in MPI_Init because libfabric offered no provider (FI_ENODATA): no RDMA
    device is visible to it, or FI_PROVIDER / I_MPI_OFI_PROVIDER asks for one that has no device here.
    Both are checked the same way (`fi_info -l` in the container), and the finding names both."""
    names = ["mpi_ofi_enodata", "mpi_ofi_no_provider", "mpi_ofi_getinfo_stack"]
    if not ctx.stats(rule, names):
        return _mpi_no_hca(rule, ctx)
    providers = ctx.captures(rule, "provider", ["mpi_ofi_provider_env"])
    asked = f" (the job asks for {', '.join(providers[:3])})" if providers else ""
    detail = (
        "MPI_Init failed: libfabric found no provider with a usable device (FI_ENODATA). In a container the RDMA "
        "devices were not passed in (/dev/infiniband), or FI_PROVIDER / I_MPI_OFI_PROVIDER names a provider this "
        f"node cannot run{asked}; `fi_info -l` inside the job lists the ones it can"
    )
    return [
        ctx.make_finding(
            rule, names, detail=detail + ".", confidence=0.5,
            severity=rule.severity if ctx.job_failed() else "warning",
            assumed=["the nodes have RDMA devices and the provider is right for them"] if not providers else [],
        )
    ]  # fmt: skip
