"""GPUDirect RDMA not used between GPU and NIC: gdr-disabled."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import plural
from diag.diagnosis.analyzers.nodes import LOCAL_PROTECTION, port_faults
from diag.diagnosis.analyzers.transport.roce import completions_all_of
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST


def gdr_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    refused = _gpu_memory_refused(rule, ctx)
    if refused:
        return refused
    facts = ctx.facts
    spans, assumed = ctx.spans_nodes()
    if not spans:
        return []
    ib_hosts = {h.host for h in facts.hosts.values() if h.uses_ib() and not h.uses_socket()}
    no_gdr = {h.host for h in facts.hosts.values() if h.plain_ib_channels and not h.gdr_channels}
    ring0 = {ctx.host_for(ev) for ev, _ in ctx.samples(rule, ["rings_gdr0"])} & ib_hosts
    explicit = ctx.samples(
        rule,
        [
            "disabled_hca", "disabled_gpu", "disabled_gpu_hca", "disabled_gpu_v23", "disabled_gpu_net", "peermem_missing",
            "ucx_gdr", "ofi_gdr", "ompi_gdr", "gpu_mr_refused",
        ],  # fmt: skip
    )
    said = {h for ev, _ in explicit if (h := ctx.host_for(ev))}
    hosts = sorted((no_gdr | ring0 | said) - {None}, key=natural_key)
    if not hosts and not explicit:
        return _gdr_on_some_channels(rule, ctx, assumed) or _gdr_switched_off(rule, ctx, assumed)
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
    for _ev, g in ctx.samples(rule, ["ofi_gdr"])[:1]:
        parts.append(f'the aws-ofi-nccl plugin says "{g["why"]}"')
    if ctx.stats(rule, ["ompi_gdr"]):
        parts.append("Open MPI: this OFED installation has no GPUDirect RDMA support")
    if ctx.stats(rule, ["gpu_mr_refused"]):
        parts.append("the HCA refused to register GPU memory (ibv_reg_mr failed: no nvidia-peermem/nv_peer_mem loaded)")
    if said_disabled:
        ev, g = said_disabled[0]
        why = f" ({g['why']})" if g.get("why") else ""
        parts.append(f'"GPU Direct RDMA Disabled for {g["hca"]}{why}"')
    level = gdr_settings(rule, ctx)
    detail = f"GPUDirect RDMA is not used on {hosts_text(hosts) if hosts else 'this job'}: {'; '.join(parts)}"
    if level:
        detail += f"; {level[0][0]}={level[0][1]} is set"
    detail += ". Inter-node data is staged through host memory."
    evidence = [ev for ev, _ in explicit] + [
        ev for ev, _ in ctx.samples(rule, ["plain_ib_channel", "rings_gdr0"]) if ctx.host_for(ev) in hosts
    ]
    return [
        ctx.make_finding(rule, detail=detail, hosts=hosts or None, evidence=pick_evidence(evidence), assumed=assumed)
    ]


def _gdr_on_some_channels(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """Channel lines pasted without their host prefix, some via NET/IB/<n>/GDRDMA and some plain
    NET/IB/<n>: GPUDirect RDMA works for some GPUs and not for others (a node without nvidia-peermem)."""
    unnamed = ctx.facts.hosts.get(UNNAMED_HOST)
    if unnamed is None or not (unnamed.plain_ib_channels and unnamed.gdr_channels):
        return []
    detail = (
        f"{plural(unnamed.plain_ib_channels, 'via NET/IB channel line')} without /GDRDMA next to "
        f"{unnamed.gdr_channels} with it: GPUDirect RDMA works for some GPUs and not others, typically a node "
        "without nvidia-peermem (nv_peer_mem) loaded. Inter-node data of those GPUs is staged through host memory"
    )
    assumed = [*assumed, "the channels without /GDRDMA belong to another node (the excerpt names no hosts)"]
    evidence = [ev for ev, _ in ctx.samples(rule, ["plain_ib_channel"])]
    return [
        ctx.make_finding(rule, detail=detail + ".", evidence=pick_evidence(evidence), confidence=0.5, assumed=assumed)
    ]


UCX_GDR = "Couldn't enable GPUDirect RDMA"

# NCCL_NET_GDR_LEVEL values that allow GPUDirect RDMA nowhere (LOC: same GPU only; 0 is its number).
GDR_OFF_LEVELS = ("LOC", "0")


def gdr_settings(rule: Rule, ctx: Context) -> list[tuple[str, str]]:
    """(variable, value) of the GDR settings the job shows: NCCL_NET_GDR_LEVEL, 2.3-2.4's NCCL_IB_GDR_LEVEL
    and NCCL_IB_CUDA_SUPPORT=0, as NCCL echoes them, then NCCL_NET_GDR_LEVEL from an env dump."""
    echoed = [(g["var"], g["level"]) for _, g in ctx.samples(rule, ["gdr_level_env", "cuda_support_env"])]
    return echoed + [("NCCL_NET_GDR_LEVEL", v) for v in ctx.facts.env_values("NCCL_NET_GDR_LEVEL")]


def _gdr_switched_off(rule: Rule, ctx: Context, assumed: list[str]) -> list[Finding]:
    """No channel lines to judge by, but the job itself sets NCCL_NET_GDR_LEVEL (NCCL_IB_GDR_LEVEL,
    NCCL_IB_CUDA_SUPPORT on 2.3-2.4) so that no GPU/NIC pair qualifies: GPUDirect RDMA is off by
    configuration wherever IB is used."""
    off = [(var, lv) for var, lv in gdr_settings(rule, ctx) if lv.strip().upper() in GDR_OFF_LEVELS]
    if not off or any(h.uses_socket() for h in ctx.facts.hosts.values()):
        return []
    var, level = off[0]
    what = "turns GPUDirect RDMA off for every HCA" if var == "NCCL_IB_CUDA_SUPPORT" else (
        "no GPU and NIC are ever close enough for GPUDirect RDMA"
    )
    detail = f"{var}={level} is set: {what}, so inter-node data is staged through host memory"
    return [
        ctx.make_finding(
            rule, ["gdr_level_env", "cuda_support_env"], detail=detail + ".", severity="warning", confidence=0.6,
            assumed=assumed,
        )
    ]  # fmt: skip


# --------------------------------------------------------------------------------------------- /dev/shm


def _gpu_memory_refused(rule: Rule, ctx: Context) -> list[Finding]:
    """Every completion error is a local protection error (status 4): the HCA was refused the memory
    it was to read or write. NCCL hands it GPU memory under GPUDirect RDMA, and PCIe ACS redirecting
    peer-to-peer traffic to the root complex (or an IOMMU not in passthrough) is what refuses it most
    often (NCCL's troubleshooting guide asks for ACS off and the IOMMU in passthrough for GPUDirect RDMA);
    NCCL_NET_GDR_LEVEL=0, staging through host memory, shows it."""
    cqe = completions_all_of(ctx, LOCAL_PROTECTION)
    if not cqe:
        return []
    if port_faults(ctx.rules["ib-link-fault"], ctx):
        return []  # the port itself reported faults: ib-link-fault's
    hosts = sorted({h for ev, _ in cqe if (h := ctx.host_for(ev))}, key=natural_key)
    where = hosts_text(hosts) if hosts else "a node"
    detail = (
        f"The HCA on {where} was refused the memory of its transfers (completion error 4, local protection error): "
        "GPUDirect RDMA between the NIC and the GPU does not work, most often because PCIe ACS sends peer-to-peer "
        "traffic through the root complex (or the IOMMU is not in passthrough), sometimes because nvidia-peermem/"
        "dmabuf is missing; disable ACS on the PCIe switches (or boot with iommu=pt) and confirm with "
        "NCCL_NET_GDR_LEVEL=0, which stages through host memory and should run"
    )
    severity = "error" if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=hosts or None, evidence=pick_evidence(ev for ev, _ in cqe),
            severity=severity, confidence=0.6,
        )
    ]  # fmt: skip
