"""Checks of the NCCL transport settings and of the container's view of the HCAs."""

from __future__ import annotations

import re

from diag.lint.context import Hit, LintContext
from diag.lint.script import first_int

_UNROUTABLE_IF = re.compile(r"^(lo|docker|virbr)")


def _names(value: str) -> tuple[bool, bool, list[str]]:
    """NCCL's interface/HCA list syntax: (exclusion ``^``, exact ``=``, names without ``:port``)."""
    exclude = value.startswith("^")
    exact = value.lstrip("^").startswith("=")
    names = [n.split(":")[0].strip() for n in value.lstrip("^=").split(",")]
    return exclude, exact, [n for n in names if n]


def _matches(name: str, known: tuple[str, ...], exact: bool) -> bool:
    # NCCL matches a prefix unless the list starts with '='
    return any(k == name if exact else k.startswith(name) for k in known)


def container_ib_mounts(ctx: LintContext) -> list[Hit]:
    """pyxis ``--container-image`` on several nodes without /dev/infiniband in ``--container-mounts``."""
    profile = ctx.profile
    if ctx.multi_node is False or (profile and (profile.enroot_mounts_hca or profile.hcas == ())):
        return []  # one node, the site's enroot mounts the HCAs, or the site has none
    if any(
        v.value is None or v.value.lower() not in ("void", "none", "")
        for v in ctx.assignments("MELLANOX_VISIBLE_DEVICES")
    ):
        return []  # the enroot hook is asked to mount the HCAs
    hits = []
    directives = ctx.script.directives
    for cmd in ctx.script.commands:
        if cmd.launcher != "srun":
            continue
        image = cmd.options.get("container-image") or directives.get("container-image")
        if image is None or first_int(cmd.options.get("nodes")) == 1:
            continue  # no container, or a one-node step (no traffic between nodes)
        mounts = cmd.options.get("container-mounts") or directives.get("container-mounts")
        if mounts is not None and (mounts.value is None or "/dev/infiniband" in mounts.value):
            continue  # mounted, or mounts we cannot read
        certain = bool(ctx.multi_node and ctx.profile and ctx.profile.enroot_mounts_hca is False)
        assumed = [] if certain else ["enroot does not mount /dev/infiniband by itself (no site profile says so)"]
        hits.append(Hit(
            f"srun at line {cmd.line} runs container {image.raw} on {ctx.nodes or 'several'} nodes without "
            "/dev/infiniband in --container-mounts: NCCL will not open the HCAs and falls back to TCP",
            [cmd.line], certain, assumed + ctx.nodes_assumption(),
        ))  # fmt: skip
    return hits


def socket_ifname(ctx: LintContext) -> list[Hit]:
    """NCCL_SOCKET_IFNAME = lo/docker*/virbr* (never routes between nodes) or, with a profile, a
    name that matches none of the site's interfaces."""
    hits = []
    for value in ctx.assignments("NCCL_SOCKET_IFNAME"):
        if value.value is None:
            continue
        exclude, exact, names = _names(value.value)
        if exclude or not names:
            continue
        bad = [n for n in names if _UNROUTABLE_IF.match(n)]
        if bad and ctx.multi_node is not False:
            hits.append(Hit(
                f"NCCL_SOCKET_IFNAME={value.value} selects {', '.join(bad)}, which does not route between nodes",
                [value.line], bool(ctx.multi_node), ctx.nodes_assumption(),
            ))  # fmt: skip
            continue
        nics = ctx.profile.nics if ctx.profile else None
        if nics is not None:
            missing = [n for n in names if not _matches(n, nics, exact)]
            if len(missing) == len(names):
                hits.append(Hit(
                    f"NCCL_SOCKET_IFNAME={value.value} matches none of the site's interfaces "
                    f"({', '.join(nics)}, from {ctx.profile.path})", [value.line], True,
                ))  # fmt: skip
    return hits


def ib_disabled(ctx: LintContext) -> list[Hit]:
    """NCCL_IB_DISABLE=1 or NCCL_NET=Socket in a multi-node job."""
    if ctx.multi_node is False:
        return []
    hcas = ctx.profile.hcas if ctx.profile else None
    if hcas is not None and not hcas:
        return []  # the profile says the site has no HCA: sockets are the fabric
    hits = []
    found = [(v, "NCCL_IB_DISABLE") for v in ctx.assignments("NCCL_IB_DISABLE") if v.value and v.value.strip() == "1"]
    found += [(v, "NCCL_NET") for v in ctx.assignments("NCCL_NET") if v.value and v.value.strip().lower() == "socket"]
    for value, name in found:
        certain = bool(ctx.multi_node and hcas)
        assumed = [] if hcas else ["the nodes have InfiniBand/RoCE HCAs (no site profile says so)"]
        hits.append(Hit(
            f"{name}={value.value} makes NCCL carry inter-node traffic over TCP sockets",
            [value.line], certain, assumed + ctx.nodes_assumption(),
        ))  # fmt: skip
    return hits


def ib_hca(ctx: LintContext) -> list[Hit]:
    """NCCL_IB_HCA names an HCA the site profile does not list (needs a profile)."""
    hcas = ctx.profile.hcas if ctx.profile else None
    if not hcas:
        return []
    hits = []
    for value in ctx.assignments("NCCL_IB_HCA"):
        if value.value is None:
            continue
        exclude, exact, names = _names(value.value)
        missing = [n for n in names if not _matches(n, hcas, exact)]
        if missing and not exclude:
            hits.append(Hit(
                f"NCCL_IB_HCA={value.value} names {', '.join(missing)}, not among the site's HCAs "
                f"({', '.join(hcas)}, from {ctx.profile.path})", [value.line], True,
            ))  # fmt: skip
    return hits
