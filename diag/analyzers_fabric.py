"""Analyzers for the fabric causes of the catalogue (registered into diag.analyzers.ANALYZERS).

Each reads the per-host facts (network, HCAs, NCCL version, collective progress per rank, nccl-tests
rows) together with its rule's hits, so it can say what no single line says: which node differs,
which rank fell behind, which HCA failed first.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from diag.analyzers import _hosts_text, register
from diag.causes import severity_rank
from diag.diagnosis import natural_key, pick_evidence
from diag.evidence import Evidence

if TYPE_CHECKING:
    from diag.diagnosis import Context
    from diag.report import Finding
    from diag.rules import Rule

WC_STATUS = {
    1: "local length error", 2: "local QP operation error", 4: "local protection error, often ACS or peermem",
    5: "work request flushed", 9: "remote invalid request", 10: "remote access error",
    11: "remote operation error", 12: "transport retry counter exceeded: the peer stopped answering",
    13: "RNR retry counter exceeded",
}  # fmt: skip
FAULT_EVENTS = ("port error", "catastrophic", "CQ error", "QP", "path migration")
DEFAULT_PLUGIN_NAMES = {"libnccl-net.so", ""}
# Lines that are the cascade of a collective timeout or a lost peer, never a cause of their own.
TIMEOUT_CASCADE = (
    "ncclRemoteError", "DistBackendError", "WorkNCCL", "atchdog", "remote process exited", "closed by remote peer",
    "communicator was aborted", "ChildFailedError", "SignalException", "NCCL error", "Connection reset by peer",
)  # fmt: skip
INFO_VERBOSE_RANKS = 64
INFO_VERBOSE_LINES = 1_000_000
# Large-message all_reduce busbw of one node's NVLink domain, by GPU name (conservative figures).
NVLINK_BUSBW = (("B200", 650.0), ("GB200", 650.0), ("H200", 360.0), ("H100", 360.0), ("H800", 170.0),
                ("A100", 220.0), ("A800", 150.0), ("V100", 130.0))  # fmt: skip
_TS_ISO = re.compile(r"^\d{4}-(\d\d)-(\d\d)[T ](\d\d:\d\d:\d\d(?:[.,]\d+)?)")
_TS_GLOG = re.compile(r"^(\d\d)(\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)")


def time_key(ts: str | None) -> tuple | None:
    """A sortable (month, day, time) for the timestamp forms framing keeps; None when unknown."""
    if not ts:
        return None
    m = _TS_ISO.match(ts) or _TS_GLOG.match(ts)
    if not m:
        return None
    return (m[1], m[2], m[3].replace(",", ".").ljust(15, "0"))


def timeline_key(ev: Evidence) -> tuple:
    """Order by timestamp where the line carries one, else by file order."""
    tk = time_key(ev.timestamp)
    return (0, tk, ev.order) if tk else (1, (), ev.order)


def is_timeout_cascade(text: str) -> bool:
    return any(marker in text for marker in TIMEOUT_CASCADE)


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


# ------------------------------------------------------------------------------------- HCA mismatch
@register("hca_mismatch")
def hca_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    table = _per_host_fabric(ctx)
    explicit = ctx.stats(rule)
    if explicit and {n for n, _ in explicit} <= {"mixed_counts"} and _unopenable_hosts(ctx) and not _odd_hosts(table):
        return []  # NCCL 2.30's count check on a node that could not open some HCAs: ib-devices-not-mounted
    if explicit:
        counts = ctx.captures(rule, "min") + ctx.captures(rule, "max")
        detail = "NCCL found different network devices on the nodes of this job"
        if counts:
            detail += f" (local NIC counts from {min(counts, key=int)} to {max(counts, key=int)})"
        odd = _odd_hosts(table) if table else []
        if table:
            detail += "; per node: " + _table_text(table)
        return [ctx.make_finding(rule, detail=detail + ".", hosts=odd or None)]
    if len(table) < 2 or not facts.multi_node():
        return []
    odd = _odd_hosts(table)
    if not odd:
        return []
    detail = "The nodes offer NCCL different HCAs or settings: " + _table_text(table)
    detail += f". {_hosts_text(odd)} differ{'s' if len(odd) == 1 else ''} from the rest."
    evidence = [ev for ev, _ in ctx.samples(rule, ["ib_using", "hca_env"]) if ctx.host_for(ev) in odd]
    failed = ctx.job_failed()
    return [
        ctx.make_finding(
            rule, ["ib_using", "hca_env"], detail=detail, hosts=odd, evidence=pick_evidence(evidence),
            severity=None if failed else "warning", confidence=0.75 if failed else 0.6,
        )
    ]  # fmt: skip


def _per_host_fabric(ctx: Context) -> dict[str, str]:
    """host -> what NCCL's IB transport saw there (HCA list, link type, NCCL_IB_HCA), IB hosts only.

    Hosts where some verbs devices could not be opened are left out: ib-devices-not-mounted names them,
    and the shorter HCA list there is its consequence, not a second root cause."""
    out = {}
    unopenable = _unopenable_hosts(ctx)
    for host in sorted(ctx.facts.hosts, key=natural_key):
        hf = ctx.facts.hosts[host]
        if not hf.hcas or host in unopenable:
            continue
        text = f"{len(hf.hcas)} HCA{'s' if len(hf.hcas) != 1 else ''} {_hca_range(hf.hcas)}"
        text += "/RoCE" if hf.roce else "/IB"
        if "NCCL_IB_HCA" in hf.env:
            text += f" (NCCL_IB_HCA={hf.env['NCCL_IB_HCA']})"
        out[host] = text
    return out


def _unopenable_hosts(ctx: Context) -> set[str]:
    mounted = ctx.rules.get("ib-devices-not-mounted")
    return {h for _, st in ctx.stats(mounted) for h in st.hosts} if mounted else set()


def _hca_range(hcas: list[str]) -> str:
    if len(hcas) <= 3:
        return ",".join(hcas)
    return f"{hcas[0]}..{hcas[-1]}"


def _odd_hosts(table: dict[str, str]) -> list[str]:
    groups: dict[str, list[str]] = {}
    for host, text in table.items():
        groups.setdefault(text, []).append(host)
    if len(groups) < 2:
        return []
    biggest = max(len(h) for h in groups.values())
    if list(len(h) for h in groups.values()).count(biggest) > 1:
        return sorted(table, key=natural_key)  # no majority: every node is a suspect
    return sorted((h for hs in groups.values() if len(hs) < biggest for h in hs), key=natural_key)


def _table_text(table: dict[str, str]) -> str:
    groups: dict[str, list[str]] = {}
    for host, text in table.items():
        groups.setdefault(text, []).append(host)
    return "; ".join(f"{_hosts_text(hosts)}: {text}" for text, hosts in groups.items())


# ----------------------------------------------------------------------------------------- net plugin
@register("net_plugin")
def net_plugin(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    plugin_env = ctx.captures(rule, "plugin", ["plugin_env"]) + facts.env_values("NCCL_NET_PLUGIN")
    missing = [
        v for g in ("plugin_a", "plugin_b", "plugin_c", "plugin_d") for v in ctx.captures(rule, g, ["not_found"])
    ]
    missing = sorted({n.strip().rstrip(".") for v in missing for n in v.split()} - DEFAULT_PLUGIN_NAMES)
    net_env = ctx.captures(rule, "value", ["net_env"]) + facts.env_values("NCCL_NET")
    failed_nets = ctx.captures(rule, "net", ["failed_ib"])
    socket_hosts = [h.host for h in facts.hosts.values() if h.uses_socket()]
    fell_back = facts.multi_node() and bool(socket_hosts)
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
    broken = ctx.stats(rule, ["symbol_missing", "unsupported", "broken"])
    if broken:
        names = ctx.captures(rule, "plugin", ["unsupported", "broken"]) or plugin_env
        why = ctx.captures(rule, "dlerror", ["broken"])
        plugin = f"The net plugin {names[0]}" if names else "The net plugin NCCL found"
        detail = f"{plugin} exists but cannot be used"
        if ctx.stats(rule, ["symbol_missing"]):
            detail += " (it is built for an older NCCL: no ncclNetPlugin_v5+ symbol)"
        elif why:
            detail += f" ({why[0][:120]})"
        detail += "; NCCL skipped it and used its built-in transport"
        severe = fell_back or ctx.job_failed()
        if fell_back:
            detail += f" and fell back to TCP sockets on {_hosts_text(socket_hosts)}"
        return [ctx.make_finding(rule, ["symbol_missing", "unsupported", "broken"], detail=detail + ".",
                                 severity=None if severe else "warning", confidence=0.85 if severe else 0.6,
                                 values={"what": f"{plugin} could not be used."})]  # fmt: skip
    expected = plugin_env or missing
    if expected and ctx.stats(rule, ["not_found"]) and not ctx.stats(rule, ["loaded"]):
        name = (plugin_env or missing)[0]
        nets = sorted({n for h in facts.hosts.values() for n in h.nets}) or ["its built-in transport"]
        detail = f"A net plugin was asked for ({name}), but NCCL could not find it and used {', '.join(nets)} instead"
        if fell_back:
            detail += f"; inter-node traffic went over TCP sockets on {_hosts_text(socket_hosts)}"
        return [ctx.make_finding(rule, ["not_found", "plugin_env"], detail=detail + ".",
                                 severity=None if fell_back else "warning", confidence=0.8 if fell_back else 0.6,
                                 values={"what": f"NCCL_NET_PLUGIN={name} was not found."})]  # fmt: skip
    return _plugin_override(rule, ctx)


def _plugin_override(rule: Rule, ctx: Context) -> list[Finding]:
    """An external plugin replaces NCCL's built-in IB transport: NCCL_IB_* meant for it may not apply."""
    facts = ctx.facts
    external = ctx.captures(rule, "plugin", ["loaded"]) + sorted(
        {n for h in facts.hosts.values() for n in h.nets if n not in ("IB", "Socket")}
    )
    ib_vars = sorted(v for v in facts.env if v.startswith("NCCL_IB_") and v != "NCCL_IB_DISABLE")
    if not external or not ib_vars:
        return []
    settings = ", ".join(f"{v}={facts.env[v][0]}" for v in ib_vars)
    detail = (
        f"NCCL uses the external net plugin {external[0]} instead of its built-in IB transport; {settings} "
        f"{'is' if len(ib_vars) == 1 else 'are'} read by the built-in transport and apply only if the plugin "
        "implements them (aws-ofi-nccl ignores them; HPC-X's IBext has its own defaults)"
    )
    return [ctx.make_finding(rule, ["loaded"], detail=detail + ".", severity="warning", confidence=0.5,
                             values={"what": f"The plugin {external[0]} overrides {settings}."})]  # fmt: skip


# ------------------------------------------------------------------------------------- RoCE GID index
@register("roce_gid")
def roce_gid(rule: Rule, ctx: Context) -> list[Finding]:
    names = ["modify_qp_gid", "modify_qp_old", "hint"]
    if not ctx.stats(rule, names):
        return []
    facts = ctx.facts
    forced = ctx.captures(rule, "gid", ["gid_env", "gid_export"]) + facts.env_values("NCCL_IB_GID_INDEX")
    roce = any(h.roce for h in facts.hosts.values())
    hint = bool(ctx.stats(rule, ["hint"]))
    if not (forced or roce or hint):
        return []  # an IB fabric: a failed QP transition there is not about GID indexes
    samples = ctx.samples(rule, ["modify_qp_gid", "modify_qp_old"])
    errs = sorted({g.get("err", "").strip() for _, g in samples if g.get("err")})
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
    if roce:
        detail += "; the HCAs are RoCE"
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.85 if (forced or hint) else 0.7)]


# ------------------------------------------------------------------------------------------- IB faults
@register("link_fault")
def link_fault(rule: Rule, ctx: Context) -> list[Finding]:
    cqe = ctx.samples(rule, ["cqe_v1", "cqe_v2", "cqe_v3", "cqe_v4", "ucx_retry", "device_failed"])
    events = ctx.samples(rule, ["async_event", "async_error_event", "async_nonfatal_event", "async_fatal"])
    faults = [(ev, g) for ev, g in events if any(f in g.get("event", "") for f in FAULT_EVENTS)]
    faults += [(ev, g) for ev, g in events if ev.text and "fatal event" in ev.text and (ev, g) not in faults]
    real = [(ev, g) for ev, g in cqe if g.get("status") != "5"]
    flushes = [(ev, g) for ev, g in cqe if g.get("status") == "5"]
    if not real and not faults and not flushes:
        return _speed_drop(rule, ctx)
    ordered = sorted(real + faults, key=lambda s: timeline_key(s[0])) or sorted(
        flushes, key=lambda s: timeline_key(s[0])
    )
    first, g = ordered[0]
    host = ctx.host_for(first) or "an unnamed node"
    hca = g.get("hca") or _hca_of_host_events(ctx, faults, host) or "its HCA"
    if g.get("status"):
        status = int(g["status"])
        what = f"completion error status {status} ({WC_STATUS.get(status, 'see ibv_wc_status')})"
        if g.get("peer"):
            what += f" talking to peer {g['peer']}"
        if g.get("rgid"):
            what += f" (remote GID {g['rgid']})"
    else:
        what = g.get("event", "").strip() or "an HCA failure"
    detail = f"First fabric error at {first.timestamp or 'line ' + str(first.line)}: {hca} on {host}: {what}"
    later = len(real) + len(faults) - 1
    if later > 0:
        detail += f"; {_plural(later, 'later error')} follow"
    if flushes:
        if real or faults:
            detail += f"; {_plural(len(flushes), 'flush error')} (status 5) are consequences of it"
        else:
            detail = (
                f"Only flush errors (status 5, work request flushed) on {host}: a queue pair was already in "
                "error, and the first error was not logged"
            )
    hosts = sorted({h for ev, _ in real + faults if (h := ctx.host_for(ev))} or {host} - {"an unnamed node"},
                   key=natural_key)  # fmt: skip
    hosts = [host] + [h for h in hosts if h != host] if host != "an unnamed node" else hosts
    evidence = pick_evidence([ev for ev, _ in ordered[:6]] + [ev for ev, _ in flushes[:2]])
    conf = 0.9 if (real or faults) else 0.5
    return [ctx.make_finding(rule, detail=detail + ".", hosts=hosts, evidence=evidence, confidence=conf,
                             values={"hca": hca})]  # fmt: skip


def _hca_of_host_events(ctx: Context, events: list, host: str) -> str | None:
    for ev, g in events:
        if ctx.host_for(ev) == host and g.get("hca"):
            return g["hca"]
    return None


def _speed_drop(rule: Rule, ctx: Context) -> list[Finding]:
    drops = [(ev, g) for ev, g in ctx.samples(rule, ["speed_change"]) if int(g["new"]) < int(g["old"])]
    if not drops:
        return []
    ev, g = drops[0]
    host = ctx.host_for(ev) or "a node"
    detail = (
        f"{g['hca']}:{g['port']} on {host} trained down from {int(g['old']) // 1000} to {int(g['new']) // 1000} Gb/s"
    )
    return [ctx.make_finding(rule, ["speed_change"], detail=detail + ".", severity="warning", confidence=0.7,
                             evidence=[e for e, _ in drops[:4]], hosts=[host], values={"hca": g["hca"]})]  # fmt: skip


# --------------------------------------------------------------------------------------- GDR disabled
@register("gdr_disabled")
def gdr_disabled(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    if not facts.multi_node():
        return []
    ib_hosts = {h.host for h in facts.hosts.values() if h.uses_ib() and not h.uses_socket()}
    no_gdr = {h.host for h in facts.hosts.values() if h.plain_ib_channels and not h.gdr_channels}
    ring0 = {ctx.host_for(ev) for ev, _ in ctx.samples(rule, ["rings_gdr0"])} & ib_hosts
    explicit = ctx.samples(rule, ["disabled_hca", "disabled_gpu"])
    said = {h for ev, _ in explicit if (h := ctx.host_for(ev))}
    hosts = sorted((no_gdr | ring0 | said) - {None}, key=natural_key)
    if not hosts and not explicit:
        return []
    parts = []
    if no_gdr:
        n = sum(facts.hosts[h].plain_ib_channels for h in no_gdr)
        parts.append(f"{_plural(n, 'via NET/IB channel line')} without /GDRDMA")
    if ring0:
        parts.append('"Connected all rings ... GDR 0"')
    if explicit:
        ev, g = explicit[0]
        why = f" ({g['why']})" if g.get("why") else ""
        parts.append(f'"GPU Direct RDMA Disabled for {g.get("hca", "an HCA")}{why}"')
    level = ctx.captures(rule, "level", ["gdr_level_env"]) or facts.env_values("NCCL_NET_GDR_LEVEL")
    detail = f"GPUDirect RDMA is not used on {_hosts_text(hosts) if hosts else 'this job'}: {'; '.join(parts)}"
    if level:
        detail += f"; NCCL_NET_GDR_LEVEL={level[0]} is set"
    detail += ". Inter-node data is staged through host memory."
    evidence = [ev for ev, _ in explicit] + [
        ev for ev, _ in ctx.samples(rule, ["plain_ib_channel", "rings_gdr0"]) if ctx.host_for(ev) in hosts
    ]
    return [ctx.make_finding(rule, detail=detail, hosts=hosts or None, evidence=pick_evidence(evidence))]


# --------------------------------------------------------------------------------------------- /dev/shm
@register("shm_too_small")
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
    if ctx.stats(rule, ["dataloader_bus"]):
        detail = "A DataLoader worker died of SIGBUS: its shared memory did not fit in /dev/shm"
        return [ctx.make_finding(rule, ["dataloader_bus", "bus_error"], detail=detail + ".", confidence=0.75)]
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


# ----------------------------------------------------------------------------------- version mismatch
def _decode_version(code: str) -> str:
    n = int(code)
    return f"{n // 10000}.{n % 10000 // 100}.{n % 100}" if n >= 10000 else f"{n // 1000}.{n % 1000 // 100}.{n % 100}"


@register("version_mismatch")
def version_mismatch(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    by_version: dict[str, list[str]] = {}
    for h in facts.hosts.values():
        for v in h.versions:
            by_version.setdefault(v, []).append(h.host)
    per_host = "; ".join(f"{_hosts_text(hs)}: NCCL {v}" for v, hs in sorted(by_version.items()))
    odd = []
    if len(by_version) > 1:
        biggest = max(len(hs) for hs in by_version.values())
        odd = sorted({h for hs in by_version.values() if len(hs) < biggest for h in hs}, key=natural_key)
    samples = ctx.samples(rule, ["mismatch"])
    if samples:
        _, g = samples[0]
        detail = (
            f"NCCL refused to start: rank {g['rank_a']} runs NCCL {_decode_version(g['va'])}, "
            f"rank {g['rank_b']} runs {_decode_version(g['vb'])}"
        )
        ranks = sorted({int(x) for _, g in samples for x in (g["rank_a"], g["rank_b"])})
        minority = _minority_ranks(samples)
        if minority:
            ranks = minority
            if not odd:  # the odd node printed no version line of its own (<= 2.21 only rank 0 does)
                odd = sorted({h for r in minority if (h := facts.host_of_rank.get(r))}, key=natural_key)
        if per_host and len(by_version) > 1:
            detail += f"; per node: {per_host}"
        return [ctx.make_finding(rule, detail=detail + ".", ranks=ranks, hosts=odd or None,
                                 values={"versions": per_host or "one NCCL version"})]  # fmt: skip
    ras = ctx.samples(rule, ["ras_mismatch"])
    if ras:
        _, g = ras[0]
        detail = f"NCCL {g['local']} here, NCCL {g['remote']} on peer {g['peer']}"
        if per_host and len(by_version) > 1:
            detail += f"; per node: {per_host}"
        return [ctx.make_finding(rule, detail=detail + ".", hosts=odd or None,
                                 values={"versions": per_host or f"{g['local']} vs {g['remote']}"})]  # fmt: skip
    if odd:
        detail = f"The nodes load different NCCL libraries: {per_host}"
        return [ctx.make_finding(rule, [], detail=detail + ".", hosts=odd, confidence=0.85,
                                 evidence=_version_evidence(ctx, odd), values={"versions": per_host})]  # fmt: skip
    return []


def _minority_ranks(samples: list) -> list[int]:
    """The ranks of the version fewer ranks run, from the mismatch lines (each names two ranks and their versions)."""
    by_code: dict[str, set[int]] = {}
    for _, g in samples:
        by_code.setdefault(g["va"], set()).add(int(g["rank_a"]))
        by_code.setdefault(g["vb"], set()).add(int(g["rank_b"]))
    sizes = sorted(len(r) for r in by_code.values())
    if len(sizes) < 2 or sizes[0] == sizes[1]:
        return []  # no clear minority: do not guess
    return sorted(min(by_code.values(), key=len))


def _version_evidence(ctx: Context, hosts: list[str]) -> list[Evidence]:
    rule = ctx.rules.get("nccl-version-mismatch")
    if rule is None:
        return []
    return pick_evidence(ev for ev, _ in ctx.samples(rule, ["version_line"]) if ctx.host_for(ev) in hosts)


# ------------------------------------------------------------------------------------- duplicate GPU
@register("duplicate_gpu")
def duplicate_gpu(rule: Rule, ctx: Context) -> list[Finding]:
    fatal = ["duplicate", "multi_rank", "multi_nvls"]
    if ctx.stats(rule, fatal):
        pairs = sorted({(int(g["rank"]), int(g["other"])) for _, g in ctx.samples(rule, ["duplicate"])})
        ranks = sorted({r for p in pairs for r in p})
        bus = ctx.captures(rule, "busid", ["duplicate"])
        if pairs:
            shown = ", ".join(f"{a} and {b}" for a, b in pairs if a < b) or f"{pairs[0][0]} and {pairs[0][1]}"
            detail = f"Ranks {shown} share one GPU (CUDA device {', '.join(bus)})"
        else:
            detail = "Several ranks use the same GPU"
        return [ctx.make_finding(rule, fatal, detail=detail + "; NCCL refuses to run.", ranks=ranks or None)]
    if ctx.stats(rule, ["allowed"]):
        detail = "Several ranks share one GPU; this NCCL allows it silently and switches NVLS off (slow)"
        return [ctx.make_finding(rule, ["allowed"], detail=detail + ".", severity="warning", confidence=0.7)]
    return []


# ------------------------------------------------------------------------------------ NCCL_DEBUG=INFO
@register("debug_verbose")
def debug_verbose(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    info_ranks = max(len(facts.host_of_rank), sum(st.count for _, st in ctx.stats(rule, ["init_complete"])))
    lines = sum(i.lines for i in ctx.scan.inputs)
    if info_ranks == 0:
        return []
    if facts.max_nranks >= INFO_VERBOSE_RANKS and info_ranks >= INFO_VERBOSE_RANKS:
        detail = f"NCCL_DEBUG=INFO is on for all {facts.max_nranks} ranks of this job ({lines:,} log lines)"
    elif lines >= INFO_VERBOSE_LINES:
        detail = f"NCCL_DEBUG=INFO output fills this job's log ({lines:,} lines)"
    else:
        return []
    samples = [ev for ev, _ in ctx.samples(rule, ["init_complete"])][:3]
    return [ctx.make_finding(rule, ["init_complete", "debug_env"], detail=detail + ".", evidence=samples,
                             hosts=[], ranks=[])]  # fmt: skip


# ------------------------------------------------------------------------------------ collective timeout
@register("nccl_timeout")
def nccl_timeout(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    names = ["watchdog", "async_exception", "heartbeat", "watchdog_stuck", "comm_aborted"]
    if not ctx.stats(rule, names):
        return []
    cols = facts.collectives
    reporters = {r: c for r, c in cols.items() if c.kind}
    if not reporters:
        stuck = sorted({ev.rank for ev, _ in ctx.samples(rule, names) if ev.rank is not None})
        detail = "The PyTorch NCCL watchdog itself was blocked (an NCCL/CUDA call hung)"
        if stuck:
            detail += f" on rank {', '.join(map(str, stuck[:8]))}"
        return [ctx.make_finding(rule, names, detail=detail + ".", values={"culprits": "the ranks named"})]

    def when(r: int) -> tuple:
        c = reporters[r]
        tk = time_key(c.timestamp)
        return (0, tk, c.order) if tk else (1, (), c.order)

    first = min(reporters, key=when)
    max_seq = max(c.seq for c in reporters.values() if c.seq is not None)
    behind = sorted(
        r
        for r, c in cols.items()
        if (c.min_enqueued is not None and c.min_enqueued < max_seq) or (c.seq is not None and c.seq < max_seq)
    )
    known = set(facts.host_of_rank) | set(cols)
    silent = sorted(known - set(cols))
    if len(silent) > max(1, len(known) // 2):
        silent = []  # most ranks said nothing: their logs are probably not here, not proof they left
    peer_lost = ctx.count(rule.id, ["remote_exited", "closed_by_peer"]) > 0
    c0 = reporters[first]
    what = f"{c0.op or 'a collective'} (SeqNum {c0.seq})"
    if c0.kind == "timeout":
        seen = f"rank {first} timed out" + (f" after {c0.timeout_ms} ms" if c0.timeout_ms else "") + f" in {what}"
    else:
        seen = f"rank {first} lost its peer in {what}"
    if c0.timestamp:
        seen += f" at {c0.timestamp}"
    culprits = sorted(set(behind) | set(silent))
    behind_only = [r for r in behind if r not in silent]
    parts = []
    if silent:
        one = len(silent) == 1
        parts.append(
            f"Rank {', '.join(map(str, silent[:8]))} exited or stopped first: {'it' if one else 'they'} reported "
            f"no collective error of {'its' if one else 'their'} own, then {seen}"
        )
    else:
        parts.append(seen[0].upper() + seen[1:])
    if behind_only:
        one = len(behind_only) == 1
        parts.append(
            f"rank {', '.join(map(str, behind_only[:8]))} fell behind: {'it' if one else 'they'} had not reached "
            f"collective {max_seq} when the others waited there"
        )
    if not culprits:
        parts.append(
            f"every reporting rank waited in the same collective (SeqNum {max_seq}): no rank fell behind, so "
            "suspect the network or a hang inside NCCL"
        )
    detail = "; ".join(parts)
    later = sorted(r for r in reporters if r != first)
    if later:
        detail += (
            f". The errors rank {', '.join(map(str, later[:8]))} printed afterwards (ncclRemoteError, connection "
            "closed) are consequences"
        )
    elif peer_lost and silent:
        detail += f". Rank {first}'s ncclRemoteError / 'Connection closed by remote peer' are consequences"
    hosts = sorted({facts.host_of_rank[r] for r in culprits if r in facts.host_of_rank}, key=natural_key)
    shown = culprits or sorted(reporters)
    values = {"culprits": "rank " + ", ".join(map(str, shown[:8])) + (" (+more)" if len(shown) > 8 else "")}
    evidence = pick_evidence(ev for ev, _ in ctx.samples(rule, names + ["pg_status"]))
    return [ctx.make_finding(rule, names, detail=detail + ".", ranks=shown, hosts=hosts or None, values=values,
                             evidence=evidence)]  # fmt: skip


# ------------------------------------------------------------------------------------------- busbw
@register("busbw_low")
def busbw_low(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    rows = facts.busbw_rows
    oob = ctx.stats(rule, ["oob_failed"])
    if not rows and not oob:
        return []
    wrong_rows = [r for r in rows if r.wrong]
    problems = []
    severity = None
    if wrong_rows or oob:
        n = sum(r.wrong or 0 for r in wrong_rows) or int(
            max(ctx.captures(rule, "wrong", ["oob_failed"]) or ["0"], key=int)
        )
        problems.append(
            f"nccl-tests counted {_plural(n, 'wrong result')} (#wrong): data corruption, an error of its own"
        )
        severity = "error"
    measured = expected = None
    largest = None
    if rows:
        largest = max(rows, key=lambda r: (r.size, r.order))
        # Several tests in one log: judge each by its own largest size, report the worst.
        measured = largest.busbw
        expected, source = _expected_busbw(ctx)
        threshold = 0.8 if source == "--expect-busbw" else 0.6
        if expected and measured < threshold * expected:
            low = (
                f"busbw at the largest size ({_size_text(largest.size)}) is {measured:g} GB/s, "
                f"{measured / expected:.0%} of the {expected:g} GB/s expected ({source})"
            )
            suspects = _busbw_suspects(ctx)
            problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
    if not problems:
        return []
    values = {
        "measured": f"{measured:g}" if measured is not None else "?",
        "expected": f"{expected:g}" if expected else "?",
        "size": _size_text(largest.size) if largest else "the largest size",
    }
    evidence = []
    for r in ([largest] if largest else []) + wrong_rows[:3]:
        evidence.append(Evidence(path=ctx.scan.inputs[r.order[0]].path, line=r.order[1], text=r.text, order=r.order))
    evidence += [ev for ev, _ in ctx.samples(rule, ["oob_failed"])][:2]
    finding = ctx.make_finding(rule, ["oob_failed"], detail="; ".join(problems) + ".", evidence=pick_evidence(evidence),
                               values=values, severity=severity)  # fmt: skip
    finding.count = max(finding.count, len(wrong_rows) + (1 if largest else 0))
    return [finding]


def _busbw_suspects(ctx: Context) -> list[str]:
    """What the NCCL INFO lines of the same log show that caps bandwidth (so the finding says why)."""
    hosts = ctx.facts.hosts.values()
    out = []
    tcp = [h.host for h in hosts if h.uses_socket()]
    if tcp and ctx.facts.multi_node():
        out.append(f"inter-node traffic over TCP sockets on {_hosts_text(tcp)}")
    no_gdr = [h.host for h in hosts if h.plain_ib_channels and not h.gdr_channels]
    if no_gdr:
        out.append(f"no GPUDirect RDMA on {_hosts_text(no_gdr)} (gdr-disabled)")
    return out


def _size_text(size: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"


def _expected_busbw(ctx: Context) -> tuple[float | None, str]:
    given = getattr(ctx, "expect_busbw", None)
    if given:
        return float(given), "--expect-busbw"
    facts = ctx.facts
    hosts = facts.tests_hosts or {h for h in facts.hosts}
    ib = [h for h in facts.hosts.values() if h.hcas]
    if len(hosts) > 1 or facts.multi_node():
        if facts.hosts and any(h.uses_socket() for h in facts.hosts.values()):
            return None, ""  # TCP between nodes: tcp-fallback says why; no line rate to compare with
        rates = [(len(h.hcas), h.nic_rate_gbs) for h in ib if h.nic_rate_gbs]
        if rates:
            n, rate = min(rates)
            # ~90% of line rate per rail for large all_reduce (45 GB/s per 400 Gb/s NDR rail)
            return round(n * rate * 0.9, 1), f"inferred: {n} HCAs x {rate:g} GB/s per node"
        return None, ""
    for name, bw in NVLINK_BUSBW:
        if any(name in gpu for gpu in facts.tests_gpus):
            return bw, f"inferred: NVLink on one node of {name} GPUs"
    return None, ""


def failure_is_timeout_cascade(ctx: Context, texts: list[str]) -> bool:
    """True when a collective-timeout finding exists and every failure line given is its cascade."""
    found = ctx.findings.get("nccl-timeout")
    if found is None or severity_rank(found.severity) < severity_rank("error"):
        return False
    return all(is_timeout_cascade(t) for t in texts)
