"""The NCCL net plugin that fails to load, or loads and overrides the settings: nccl-net-plugin."""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or
from diag.diagnosis.analyzers.transport.common import SYSTEM_ERROR_EXPLAINED_BY, external_net
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.report import Finding

# The names NCCL and RCCL (AMD's fork: init.cc dlopen("librccl-net.so")) look for on every start, whether a
# plugin was asked for or not: "Could not find" one of them is the probe, not a failure.
DEFAULT_PLUGIN_NAMES = {"libnccl-net.so", "librccl-net.so", ""}


# ----------------------------------------------------------------------------------------- net plugin
# A plugin that is there but cannot be used (built for another NCCL, or missing a library it needs).
# The plugin could not load because the image lacks the verbs user space (ib-verbs-library-missing's cause).
_VERBS_LIBS = re.compile(r"\b(?:libibverbs|librdmacm|libmlx5)\.so")

BROKEN_PLUGIN = ["symbol_missing", "unsupported", "broken", "unpack_incompatible", "dep_missing"]


# NCCL's prefix "<host>:<pid>:<tid> [<dev>]" at the start of a line whose logger name is a C++ signature
# (aws-ofi-nccl >= 1.16, GPUDirect-TCPX: "int f(T**):418 NCCL WARN ..."), which the framing does not take apart.
_NCCL_PREFIX_HOST = re.compile(r"^(?:\[[^\]]*\] )?(?P<host>[A-Za-z][\w.-]*):\d+:\d+ \[\d+\] ")


def _host(ctx: Context, ev) -> str | None:
    if host := ctx.host_for(ev):
        return host
    m = _NCCL_PREFIX_HOST.match(ev.text or "")
    return m.group("host") if m else None


def _is_plugin_lib(name: str) -> bool:
    return name.rsplit("/", 1)[-1].startswith("libnccl-net")


# NCCL 2.26-2.27 probe net API v10 down to v6 and stop there; older releases start lower and go on below v6.
_FIRST_PROBE_OF_V6_LAST = 10


def _last_api_missing(rule: Rule, ctx: Context) -> list[int]:
    """The net API version that this NCCL tries last, when the plugin lacks it (and so every one before):
    v4 and older for NCCL 2.4-2.12; v6 for 2.26-2.27, whose chain from v10 ends there with no line saying
    the plugin was dropped. Empty where the plugin loaded at some version, or the chain is not one that ends."""
    probes = {int(a) for a in ctx.captures(rule, "api", ["version_probe"])}
    if old := sorted(a for a in probes if a <= 4):
        return old
    loaded = ctx.stats(rule, ["loaded"])
    v226 = any(re.match(r"2\.2[67]\.", v) for v in ctx.facts.versions)
    if 6 in probes and not loaded and (max(probes) >= _FIRST_PROBE_OF_V6_LAST or v226):
        return [6]
    return []


def net_plugin(rule: Rule, ctx: Context) -> list[Finding]:
    if other := _plugin_names_other_cause(rule, ctx):
        return other
    facts = ctx.facts
    plugin_env = ctx.captures(rule, "plugin", ["plugin_env"]) + facts.env_values("NCCL_NET_PLUGIN")
    # "Plugin load returned 2 : libibverbs.so.1: cannot open ... : when loading libnccl-net.so" (2.19-2.21)
    # names a library the plugin needs, not the plugin: the plugin is the one after "when loading".
    # A library named libnccl-net* there is the plugin itself ("... libnccl-net-ofi.so: cannot open ... : when
    # loading ofi", 2.21 after NCCL_NET_PLUGIN=ofi): the plugin asked for is missing.
    dependency = {
        g["plugin_e"]
        for ev, g in ctx.samples(rule, ["not_found"])
        if g.get("plugin_e") and "when loading" in ev.text and not _is_plugin_lib(g["plugin_e"])
    }
    missing = [
        v
        for g in ("plugin_a", "plugin_b", "plugin_c", "plugin_d", "plugin_e")
        for v in ctx.captures(rule, g, ["not_found"])
        if v not in dependency
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
    if tcpx := _tcpx_rxdm(rule, ctx):
        return tcpx
    if bad := ctx.captures(rule, "value", ["p2p_invalid"]):
        detail = (
            f"NCCL_PLUGIN_P2P={bad[0]} is not a transport HPC-X's net plugin knows (ib, ucx, ucx_rma, ucx_uct, "
            "ucx_uct_read; the ucx ones only where the plugin was built with UCX): it goes on with IB verbs"
        )
        return [
            ctx.make_finding(
                rule, ["p2p_invalid"], detail=detail + ".", severity="warning", confidence=0.5,
                values={"what": f"NCCL_PLUGIN_P2P={bad[0]} is not a value the plugin knows."},
            )
        ]  # fmt: skip
    if ctx.stats(rule, ["ucx_tls_gpu"]):
        detail = (
            "HPC-X's UCX net plugin refuses UCX_TLS (or NCCL_UCX_TLS) naming cuda or gdr transports and does not start, "
            "so NCCL uses its built-in transport; name host transports only (e.g. UCX_TLS=rc_x) or unset it"
        )
        return [
            ctx.make_finding(
                rule, ["ucx_tls_gpu"], detail=detail + ".", severity=None if ctx.job_failed() else "warning",
                confidence=0.7, values={"what": "UCX_TLS names transports the UCX net plugin refuses."},
            )
        ]  # fmt: skip
    # The plugin's WARN names the step; libsharp's own ERROR lines (often all a paste keeps) name the reason.
    if sharp := ctx.samples(rule, ["sharp_failed"]) or ctx.samples(rule, ["sharp_lib"]):
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
                ["sharp_failed", "sharp_lib"],
                detail=detail + ".",
                severity=severity,
                confidence=0.6,
                values={"what": "SHARP (CollNet) could not start."},
            )
        ]
    # The last API version this NCCL tries missing: it cannot use the plugin at all.
    too_old = _last_api_missing(rule, ctx)
    broken = ctx.stats(rule, BROKEN_PLUGIN)
    if broken or too_old:
        names = ctx.captures(rule, "plugin", ["unsupported", "broken"]) or plugin_env
        why = ctx.captures(rule, "dlerror", ["broken"])
        said = " ".join(why + ctx.captures(rule, "dep", ["dep_missing"]) + [ev.text for ev, _ in ctx.samples(rule, ["not_found"])])
        if _VERBS_LIBS.search(said) and ctx.count("ib-verbs-library-missing"):
            return []  # the verbs libraries are missing from the image: NCCL's own IB cannot load either
        plugin = f"The net plugin {names[0]}" if names else "The net plugin NCCL found"
        detail = f"{plugin} exists but cannot be used"
        if ctx.stats(rule, ["symbol_missing"]):
            detail += " (it is built for an older NCCL: no ncclNetPlugin_v5+ symbol)"
        elif too_old and too_old[0] >= 6:
            detail += (
                f" (it is built for an NCCL older than this one: NCCL 2.26+ tries net API v10 down to v{too_old[0]} "
                "and the plugin has none of them)"
            )
        elif too_old:
            detail += f" (it is built for another NCCL: no ncclNetPlugin_v{too_old[0]} symbol, the API this NCCL needs)"
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
                [*BROKEN_PLUGIN, "version_probe"] if too_old else BROKEN_PLUGIN,
                detail=detail + ".",
                severity=ctx.between_nodes_severity(rule.severity, assumed) if severe else "warning",
                confidence=confidence,
                assumed=assumed,
                values={"what": f"{plugin} could not be used."},
            )
        ]
    nets = ", ".join(sorted({n for h in facts.hosts.values() for n in h.nets}) or ["its built-in transport"])
    tcp = f"; inter-node traffic went over TCP sockets on {hosts_text(socket_hosts)}" if fell_back else ""
    severity = ctx.between_nodes_severity(rule.severity, assumed) if fell_back else "warning"
    if failed := [n for n in failed_nets if n not in ("IB", "Socket")]:
        # NCCL 2.19+ loads the plugin, then says its init failed and moves on to its built-in networks.
        detail = f"The net plugin {failed[0]} loaded but failed to initialize, so NCCL used {nets}{tcp}"
        return [
            ctx.make_finding(
                rule, ["failed_ib", "loaded"], detail=detail + ".", assumed=assumed, confidence=0.75 if fell_back else 0.55,
                severity=severity, values={"what": f"the net plugin {failed[0]} could not start."},
            )
        ]  # fmt: skip
    expected = plugin_env or missing
    if not expected and fell_back and ctx.stats(rule, ["slingshot_socket"]) and not ctx.stats(rule, ["loaded"]):
        # Only the default name probed, on Slingshot: no plugin was installed where one is required.
        probed = sorted({n.strip().rstrip(".") for g in ("plugin_a", "plugin_b") for n in ctx.captures(rule, g, ["not_found"])})
        if probed := [n for n in probed if n]:
            iface = ctx.captures(rule, "iface", ["slingshot_socket"])[0]
            detail = (
                f"No net plugin was found ({probed[0]}, the default name) on HPE Slingshot nodes ({iface}): RDMA over "
                f"Slingshot goes through the libfabric plugin (aws-ofi-nccl, aws-ofi-rccl for RCCL), so NCCL used "
                f"{nets}{tcp}"
            )
            return [
                ctx.make_finding(
                    rule, ["not_found", "slingshot_socket"], detail=detail + ".", severity=severity, confidence=0.75,
                    assumed=assumed, values={"what": "no libfabric (OFI) net plugin was installed on these Slingshot nodes."},
                )
            ]  # fmt: skip
    if expected and ctx.stats(rule, ["not_found"]) and not ctx.stats(rule, ["loaded"]):
        name = expected[0]
        detail = f"A net plugin was asked for ({name}), but NCCL could not find it and used {nets} instead{tcp}"
        return [
            ctx.make_finding(
                rule, ["not_found", "plugin_env"], detail=detail + ".", severity=severity,
                confidence=0.8 if fell_back else 0.6, assumed=assumed, values={"what": f"NCCL_NET_PLUGIN={name} was not found."},
            )
        ]  # fmt: skip
    return (
        _plugin_on_some_nodes(rule, ctx)
        or _plugin_override(rule, ctx)
        or _ofi_warned(rule, ctx)
        or _plugin_warned(rule, ctx)
    )


def _ofi_failed(rule: Rule, ctx: Context, socket_hosts: list[str]) -> list[Finding]:
    """aws-ofi-nccl could not start (no libfabric provider fits, or its protocol failed): NCCL then
    quietly uses its built-in IB or, on EFA nodes that have none, TCP sockets."""
    ofi = ctx.samples(rule, ["ofi_failed"])
    why = ofi[0][1].get("why", "").strip()
    # FI_ENODATA ("No data available", v0.9's "Could not find any optimal provider"): no provider found a
    # device, which ib-devices-not-mounted names as the likelier root; the plugin itself is not broken.
    no_device = why.endswith("No data available") or "optimal provider" in why
    hosts = sorted({h for ev, _ in ofi if (h := _host(ctx, ev))}, key=natural_key)
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
            values={
                "what": "The aws-ofi-nccl plugin found no usable libfabric provider."
                if no_device
                else f"The aws-ofi-nccl plugin could not start ({why[:80]})."
            },
        )
    ]


def _ofi_warned(rule: Rule, ctx: Context) -> list[Finding]:
    """A WARN of aws-ofi-nccl that no rule knows: the plugin met a state it does not handle. A suspect
    only where nothing else (GDR, the EFA device, a link) is named."""
    warned = ctx.samples(rule, ["ofi_warn", "ofi_warn_unframed"])
    others = ("gdr-disabled", "ib-devices-not-mounted", "ib-link-fault", "nccl-tcp-fallback", "ib-verbs-library-missing")
    if not warned or any(ctx.count(r) for r in others):
        return []
    return _plugin_suspect(
        rule, ctx, ["ofi_warn", "ofi_warn_unframed"], warned, "aws-ofi-nccl", f'NET/OFI {warned[0][1]["why"][:120]}',
        "libfabric version that does not match this NCCL or the instance's EFA setup",
    )  # fmt: skip


# What GPUDirect-TCPX and FastSocket WARN about on a run that goes on: a slow first connect ("rx ctrl
# timeout cnt ..."), a CPU or NAPI id the kernel does not report, retries that then connect.
_PLUGIN_NOTICES = re.compile(
    r"ctrl timeout cnt|Cannot get incoming (?:CPU|NAPI_ID)|Maximum retry reached for (?:accept|connect)|"
    r"Cannot set socket|Cannot enable socket busy poll|Turning off TX zero copy"
)


def _plugin_warned(rule: Rule, ctx: Context) -> list[Finding]:
    """A WARN of another external plugin (GPUDirect-TCPX, FastSocket) that no rule knows, read as
    _ofi_warned reads aws-ofi-nccl's: a suspect only where nothing else is named and the job failed."""
    warned = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["plugin_warn", "fastsocket_warn", "plugin_warn_unframed"])
        if not _PLUGIN_NOTICES.search(g["why"])
    ]
    others = (
        "gdr-disabled", "ib-devices-not-mounted", "ib-link-fault", "nccl-tcp-fallback", "nccl-socket-ifname",
        "ib-verbs-library-missing",
    )  # fmt: skip
    if not warned or any(ctx.count(r) for r in others):
        return []
    g = warned[0][1]
    plugin = "GPUDirect-TCPX" if g.get("tcpx") or g.get("plugin") == "GPUDirectTCPX" else g.get("plugin") or "net"
    return _plugin_suspect(
        rule, ctx, ["plugin_warn", "fastsocket_warn", "plugin_warn_unframed"], warned, plugin, g["why"][:120],
        "driver or sidecar version that does not match this NCCL or the node's setup",
    )  # fmt: skip


def _plugin_suspect(
    rule: Rule, ctx: Context, signatures: list[str], warned: list, plugin: str, quoted: str, versions: str
) -> list[Finding]:
    """A plugin's WARN no rule knows, as a weak suspect: an error only where the job failed."""
    hosts = sorted({h for e, _ in warned if (h := _host(ctx, e))}, key=natural_key)
    detail = f'The {plugin} net plugin warned "{quoted}": a state it does not handle (often a plugin, {versions})'
    return [
        ctx.make_finding(
            rule, signatures, detail=detail + ".", hosts=hosts or None, confidence=0.4,
            evidence=pick_evidence(e for e, _ in warned), severity=None if ctx.job_failed() else "warning",
            assumed=["the warning is why the job failed: nothing else in the logs says what did"],
            values={"what": f"The {plugin} plugin met a state it does not handle."},
        )
    ]  # fmt: skip


def _plugin_names_other_cause(rule: Rule, ctx: Context) -> list[Finding]:
    """A plugin's own message that shows a cause of another id: EFA's words for a peer that stopped
    answering (ib-link-fault), a plugin that finds no interface (nccl-socket-ifname)."""
    found = []
    link = ctx.rules.get("ib-link-fault")
    efa = ctx.samples(rule, ["efa_unresponsive", "efa_unreachable"])
    if efa and ctx.stats(rule, ["efa_security_group"]):
        efa = [(ev, g) for ev, g in efa if "Unreachable" not in g["what"]]  # the security group, not a link
    if link and efa:
        ev, g = efa[0]
        host = _host(ctx, ev)
        detail = (
            f'The EFA fabric reported "{g["what"]}"{" on " + host if host else ""}: a peer that had been reachable '
            "stopped answering (its EFA link, its node, or the process on it went away); the collectives on that "
            "connection fail"
        )
        found.append(
            ctx.make_finding(
                link, [], detail=detail + ".", evidence=pick_evidence(e for e, _ in efa), hosts=[host] if host else None,
                confidence=0.7, values={"hca": "its EFA device"},
                assumed=["the peer's link or node failed: a peer process that crashed looks the same from here"],
            )
        )  # fmt: skip
    socket = ctx.rules.get("nccl-socket-ifname")
    if socket and (none := ctx.samples(rule, ["plugin_no_interface"])):
        ev, g = none[0]
        plugin = g["plugin"]
        env = "NCCL_GPUDIRECTTCPX_CTRL_DEV" if g.get("ctrl") else (
            "NCCL_GPUDIRECTTCPX_SOCKET_IFNAME" if plugin.startswith("GPUDirectTCPX") else "NCCL_SOCKET_IFNAME"
        )  # fmt: skip
        detail = (
            f"The {plugin} net plugin found no {'control ' if g.get('ctrl') else ''}network interface matching {env} "
            f"({'it uses no control NIC' if g.get('ctrl') else 'it cannot start'}): the setting names NICs this "
            "node (or pod) does not have"
        )
        hosts = sorted({h for e, _ in none if (h := _host(ctx, e))}, key=natural_key)
        found.append(
            ctx.make_finding(
                socket, [], detail=detail + ".", evidence=pick_evidence(e for e, _ in none), hosts=hosts or None,
                confidence=0.75, severity="warning" if g.get("ctrl") and not ctx.job_failed() else None,
            )
        )  # fmt: skip
    return found


def _tcpx_rxdm(rule: Rule, ctx: Context) -> list[Finding]:
    """GPUDirect-TCPX cannot reach the receive-datapath-manager (RxDM) that hands it GPU receive buffers and
    programs flow steering: the sidecar/daemon is not running on the node or its socket is not mounted."""
    seen = ctx.samples(rule, ["tcpx_rxdm", "tcpx_gpumem"])
    if not seen:
        return _tcpx_host_landing(rule, ctx)
    ev, g = seen[0]
    where = f" (unix socket {g['socket']})" if g.get("socket") else ""
    detail = (
        f'GPUDirect-TCPX could not use its receive-datapath-manager: "{g["what"]}"{where}; the RxDM sidecar (tcpx '
        "daemon) must run on the node with its socket directory (/run/tcpx) mounted into the workload"
    )
    hosts = sorted({h for e, _ in seen if (h := _host(ctx, e))}, key=natural_key)
    return [
        ctx.make_finding(
            rule, ["tcpx_rxdm", "tcpx_gpumem"], detail=detail + ".", hosts=hosts or None, confidence=0.8,
            values={"what": "GPUDirect-TCPX could not reach its receive-datapath-manager."},
        )
    ]  # fmt: skip


def _tcpx_host_landing(rule: Rule, ctx: Context) -> list[Finding]:
    """GPUDirect-TCPX found received data in host memory: devmem TCP only puts a connection's packets into
    GPU memory when the NIC's flow steering sends them to the GPU receive queues, and RxDM programs those
    rules. Without them the plugin fails (or, in builds that go on, copies and slows down)."""
    seen = ctx.samples(rule, ["tcpx_host_landing"])
    if not seen:
        return []
    fatal = any(g["what"].startswith("fatal") for _, g in seen)
    detail = (
        f'GPUDirect-TCPX received data into host memory instead of GPU memory ("{seen[0][1]["what"][:100]}"): '
        "the NIC's flow steering did not send the connection to the GPU receive queues. RxDM (the "
        "receive-datapath-manager sidecar or daemon) programs those rules: it is not running on the node, "
        "its socket directory (/run/tcpx) is not mounted into the workload, or it does not match the plugin "
        "or the NIC driver"
    )
    hosts = sorted({h for e, _ in seen if (h := _host(ctx, e))}, key=natural_key)
    return [
        ctx.make_finding(
            rule, ["tcpx_host_landing"], detail=detail + ".", hosts=hosts or None,
            confidence=0.75 if fatal or ctx.job_failed() else 0.5,
            severity=None if fatal or ctx.job_failed() else "warning",
            values={"what": "GPUDirect-TCPX's received data did not land in GPU memory."},
        )
    ]  # fmt: skip


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
    # A host that found no IB device, or chose sockets, shows the variable did switch RDMA off there.
    sockets_shown = any(h.ib_no_device or h.nets == {"Socket"} for h in facts.hosts.values())
    if external and "1" in facts.env_values("NCCL_IB_DISABLE") and not sockets_shown:
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
    hosts = ctx.facts.hosts.values()
    connected = any(external_net(h.channel_nets) for h in hosts)
    if (connected or ctx.stats(rule, ["init_complete"])) and not ctx.job_failed():
        return []  # channels over the plugin or a completed init: it works
    if any("Socket" in h.nets for h in hosts) and not any(external_net(h.nets) for h in hosts):
        return []  # NCCL chose its Socket transport: the plugin loaded but carries nothing (nccl-tcp-fallback says why)
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
