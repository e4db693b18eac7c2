"""GPUs: Xid events and CUDA out-of-memory."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or
from diag.diagnosis.context import Context, hosts_text
from diag.report import Finding

# ------------------------------------------------------------------------------------------ GPU
# Xid -> (meaning, whose fault). "hardware" faults drain the node; "application" ones are usually
# the program (illegal address); "consequence" follows another error.
XID_MEANING: dict[int, tuple[str, str]] = {
    13: ("graphics engine exception (SM warp exception)", "application"),
    31: ("GPU memory page fault (MMU fault)", "application"),
    43: ("GPU stopped processing (channel reset after a fault)", "application"),
    45: ("preemptive cleanup after a previous error", "consequence"),
    48: ("double-bit ECC error (DBE)", "hardware"),
    61: ("internal micro-controller breakpoint", "hardware"),
    62: ("internal micro-controller halt", "hardware"),
    63: ("ECC page retirement / row remapping event", "hardware"),
    64: ("ECC page retirement / row remapper failure", "hardware"),
    74: ("NVLink error", "hardware"),
    79: ("GPU has fallen off the bus", "hardware"),
    92: ("high single-bit ECC error rate", "hardware"),
    94: ("contained ECC error (the process was killed, the GPU stays usable)", "hardware"),
    95: ("uncontained ECC error (GPU reset required)", "hardware"),
    119: ("GSP firmware RPC timeout", "hardware"),
    120: ("GSP firmware error", "hardware"),
    154: ("GPU recovery action changed (reset or reboot required)", "hardware"),
}

ERROR_ONLY_XIDS = {63, 92, 94}  # hardware, but the GPU keeps working: error rather than critical
RECORD_ONLY_XIDS = {63, 92}  # corrected and recorded: no process was stopped by them
# DCGM's health and diagnostic texts (dcgm_errors.h) that name no Xid number.
DCGM_SIGNATURES = ["dcgm_health", "dcgm_sxid", "dcgm_off_bus", "dcgm_nvlink", "dcgm_retired", "dcgm_dbe", "dcgm_row_remap",
                   "dcgm_dbe_retired", "dcgm_nvswitch_fatal"]  # fmt: skip


def gpu_xid(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return _launch_failure_only(rule, ctx)
    xids: dict[int, list[str]] = {}
    order: list[int] = []
    for ev, g in ctx.samples(rule, ["xid", "xid_device_plugin", "dcgm_health"]):
        if not g.get("xid"):
            continue
        n = int(g["xid"])
        if n == 154 and "to 0x0 (None)" in g.get("text", ""):
            continue  # the recovery action cleared again: the GPU was reset and is usable
        host = ctx.host_for(ev)
        if n not in xids:
            xids[n] = []
            order.append(n)
        if host and host not in xids[n]:
            xids[n].append(host)
    if chosen <= {"xid"} and not xids:
        return []
    if "off_bus" in chosen and 79 not in xids:
        xids[79] = []
        order.append(79)
    parts, classes = [], set()
    for n in order:
        meaning, whose = XID_MEANING.get(n, ("see NVIDIA's Xid table", "unknown"))
        if n == 45 and order[0] != 45:
            whose = "consequence"
            meaning += f", after Xid {order[0]}: a consequence of it"
        classes.add(whose)
        where = f" on {hosts_text(xids[n])}" if xids[n] else ""
        label = {"hardware": "hardware", "application": "usually the application", "consequence": "consequence"}.get(
            whose, "unclassified"
        )
        parts.append(f"Xid {n}{where}: {meaning} [{label}]")
    severity = None
    switch = ctx.samples(rule, ["sxid"])
    fatal = sorted({int(g["sxid"]) for _, g in switch if g["sev"] == "Fatal"})
    if fatal:
        where = hosts_text(sorted({h for ev, _ in switch if (h := ctx.host_for(ev))}))
        parts.append(
            f"fatal NVSwitch SXid {', '.join(map(str, fatal))}{' on ' + where if where else ''}: the node's NVLink "
            "fabric lost a link; the GPUs and switches need a reset [hardware]"
        )
        classes.add("hardware")
    elif switch:
        parts.append(f"non-fatal NVSwitch SXid {switch[0][1]['sxid']}: recorded, the fabric kept working")
        classes.add("switch-recorded")
    if "ecc_in_process" in chosen:
        parts.append("the process got 'uncorrectable ECC error encountered' [hardware]")
        classes.add("hardware")
    if chosen & {"nvlink_uncorrectable", "nvlink_enum"}:
        parts.append("the process got an uncorrectable NVLink error (the driver logs it as Xid 74) [hardware]")
        classes.add("hardware")
    for _ev, g in ctx.samples(rule, ["nvlink_p2p_disabled"])[:1]:
        parts.append(
            f"NVML reports P2P disabled between GPUs {g['a']} and {g['b']}, which an NVLink connects: NCCL stops there "
            "(a GPU or NVLink fault, or a Fabric Manager that is not running; NCCL_IGNORE_DISABLED_P2P=1 goes on "
            "without it) [hardware]"
        )
        classes.add("hardware")
    if "gpu_lost" in chosen:
        parts.append("the GPU is lost (reboot required) [hardware]")
        classes.add("hardware")
    if "handle_unknown" in chosen and "gpu_lost" not in chosen:
        parts.append("nvidia-smi cannot reach the GPU (Unknown Error): it dropped out, usually off the bus [hardware]")
        classes.add("hardware")
    dcgm = [(g["what"], g) for _, g in ctx.samples(rule, DCGM_SIGNATURES) if not g.get("xid")]
    if dcgm:
        what, _ = dcgm[0]
        # A pending page retirement or row remapping is applied at the next GPU reset: recorded, no
        # process was stopped by it (DCGM reports it as a warning, like Xid 63).
        pending = all(g.get("pending") or what.startswith("A pending") for what, g in dcgm)
        parts.append(f"DCGM's health check: {what} [{'recorded' if pending else 'hardware'}]")
        classes.add("dcgm-pending" if pending else "hardware")
    if "reset_required" in chosen:
        parts.append("the driver says the GPU needs a reset (NV_ERR_RESET_REQUIRED): drain it and reset it [hardware]")
        classes.add("hardware")
    for _ev, g in ctx.samples(rule, ["rm_init_failed"])[:1]:
        code = f" ({g['code']})" if g.get("code") else ""
        parts.append(f"the driver could not initialise the GPU (RmInitAdapter failed{code}) [hardware]")
        classes.add("hardware")
    if "k8s_gpu_unhealthy" in chosen:
        gpus = ctx.captures(rule, "gpu", ["k8s_gpu_unhealthy"])
        which = f" ({', '.join(gpus[:3])})" if gpus else ""
        parts.append(
            f"NVIDIA's device plugin marked a GPU unhealthy{which} and the node offers one GPU less than it did: "
            "its dmesg holds the Xid that did it [hardware]"
        )
        classes.add("hardware")
    for _ev, g in ctx.samples(rule, ["amd_hw_exception"])[:1]:
        parts.append(f"ROCm: GPU node-{g['node']} raised a hardware exception ({g['reason']}): reset the GPU [hardware]")
        classes.add("hardware")
    if chosen & {"amd_memory_fault", "amdgpu_page_fault"}:
        parts.append("ROCm: a GPU memory access fault (page fault, the AMD counterpart of Xid 31) [usually the application]")
        classes.add("application")
    if "nvml_mismatch" in chosen:
        parts.append(
            "NVML: driver/library version mismatch (driver upgraded without reboot, or the image ships its own)"
        )
        classes.add("driver")
    hard = [n for n in order if XID_MEANING.get(n, ("", "unknown"))[1] in ("hardware", "unknown")]
    if "hardware" in classes or "unknown" in classes:
        severity = "error" if hard and set(hard) <= ERROR_ONLY_XIDS and not chosen - {"xid"} else "critical"
        if severity == "error" and set(hard) <= RECORD_ONLY_XIDS and not ctx.job_failed():
            # NVIDIA's Xid table: 63 records a row remapping (reset the GPU when convenient), 92 a
            # rising single-bit rate; neither stops a process. On a run that went on: a warning.
            severity = "warning"
            parts.append("the logs show no failure: plan a GPU reset, nothing stopped of it")
    elif "driver" in classes:
        severity = "error"
    elif "dcgm-pending" in classes:
        severity = "error" if ctx.job_failed() else "warning"
    elif "application" in classes:
        severity = "warning"
        parts.append("no hardware Xid: rule out the program (illegal address) before suspecting the GPU")
    elif "switch-recorded" in classes:
        severity = "warning" if ctx.job_failed() else "info"
    else:
        severity = "info"
    detail = "; ".join(parts) + "."
    values = {"xid": ", ".join(str(n) for n in order) or (f"SXid {fatal[0]}" if fatal else "<n>")}
    confidence = 0.9 if severity in ("critical", "error") else 0.5
    return [ctx.make_finding(rule, detail=detail, severity=severity, confidence=confidence, values=values)]


def _launch_failure_only(rule: Rule, ctx: Context) -> list[Finding]:
    """``CUDA error: unspecified launch failure`` with no Xid in the logs: a kernel died on the GPU,
    which the driver logs as an Xid (13/31/43 for the program, 48/79/94/95 for the hardware) in
    dmesg, not in the job's output. Worth naming only when the job failed of it."""
    if not ctx.stats(rule, ["launch_failure"]) or not ctx.job_failed():
        return []
    whats = ctx.captures(rule, "what", ["launch_failure"])
    what = first_or(whats, "unspecified launch failure")
    detail = (
        f"CUDA failed on the GPU ({what}) and the job failed; the logs carry no Xid line: "
        "look in the node's dmesg for the Xid, which says whether the GPU (ECC, fallen off the bus) or the "
        "program (illegal address) caused it."
    )
    assumed = ["the kernel fault was the GPU's: the logs show no Xid to tell the GPU's fault from the program's"]
    # An unspecified launch failure is the program's fault (an illegal address) as often as the GPU's:
    # without an Xid or another hardware sign it is a lead to check (info, under the unexplained failure),
    # not a node to drain. CUDA's unknown / unrecognized errors come from the driver, not from a kernel
    # the program ran.
    severity = "info" if set(whats) <= {"unspecified launch failure"} else None
    return [
        ctx.make_finding(rule, ["launch_failure"], detail=detail, severity=severity, confidence=0.45, assumed=assumed)
    ]


def cuda_oom(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    samples = ctx.samples(rule, ["allocator", "allocator_old"])
    ranks = sorted({ev.rank for ev, _ in ctx.samples(rule, list(chosen)) if ev.rank is not None})
    who = f"Rank {', '.join(str(r) for r in ranks[:8])}" if ranks else "A process"
    if samples:
        _ev, g = samples[0]
        detail = f"{who} ran out of GPU memory: tried to allocate {g['alloc']} on GPU {g['gpu']}"
        detail += f" (total capacity {g['total']}, {g['free']} free"
        if g.get("inuse"):
            detail += f", this process holds {g['inuse']}"
        if g.get("allocated"):
            detail += f", {g['allocated']} allocated by PyTorch"
        if g.get("reserved"):
            detail += f", {g['reserved']} reserved but unallocated" if "allocated" in g else ""
        detail += ")"
        if g.get("others"):
            detail += f"; another process uses the same GPU:{g['others'].rstrip('.')} (two ranks on one GPU?)"
        if _size(g["alloc"]) > _size(g["total"]):
            detail += "; the request alone is larger than the GPU"
    elif "nccl_oom" in chosen or "nccl_calloc" in chosen:
        detail = f"{who}: NCCL could not allocate its buffers: the GPU was already full when the communicator started"
    elif "vllm_free_memory" in chosen:
        g = ctx.samples(rule, ["vllm_free_memory"])[0][1]
        detail = (
            f"{who}: only {g['free']} of {g['total']} GiB of the GPU was free when vLLM started: another process "
            "(or another rank placed on the same GPU) holds the rest"
        )
    elif "kv_cache" in chosen:
        detail = f"{who}: the model's weights left no GPU memory for vLLM's KV cache"
    elif chosen & {"kv_cache_none", "kv_cache_negative"}:
        # Only vLLM's start-up log line is in the excerpt, not the ValueError it raises next.
        avail = first_or(ctx.captures(rule, "avail", ["kv_cache_negative"]))
        detail = f"{who}: the model's weights left no GPU memory for vLLM's KV cache" + (
            f" ({avail} available)" if avail else " (0 GPU blocks)"
        )
        assumed = ["vLLM stopped at start-up on it: it refuses to start without KV cache, though its error is not shown"]
        return [ctx.make_finding(rule, detail=detail + ".", confidence=0.8, assumed=assumed)]
    elif chosen & {"kv_cache_len", "kv_cache_need"}:
        detail = f"{who}: the GPU memory left after the weights holds no KV cache for one sequence of max_model_len"
        for _ev, g in ctx.samples(rule, ["kv_cache_need"])[:1]:
            detail += f" ({g['need']} needed, {g['avail']} available)"
    elif chosen & {"xla_oom", "xla_oom_old", "tf_oom"}:
        xla = ["xla_oom", "xla_oom_old"]
        size = first_or(ctx.captures(rule, "alloc", xla) + ctx.captures(rule, "req", xla))
        detail = f"{who} ran out of GPU memory (the framework's allocator" + (f" could not get {size})" if size else ")")
    elif "paddle_oom" in chosen:
        _ev, g = ctx.samples(rule, ["paddle_oom"])[0]
        detail = f"{who} ran out of GPU memory: PaddlePaddle could not allocate {g['alloc']} on GPU {g['gpu']}"
    elif chosen == {"batch_finder_zero"}:
        detail = (
            f"{who}: Accelerate's find_executable_batch_size ran out of memory at every batch size down to 1: one "
            "sample does not fit in the GPU (or, less often, in host memory)"
        )
        return [ctx.make_finding(rule, detail=detail + ".", confidence=0.7)]
    elif chosen == {"bfc_oom"}:
        _ev, g = ctx.samples(rule, ["bfc_oom"])[0]
        detail = (
            f"{who}: XLA's/TensorFlow's allocator {g['allocator']} could not get {g['alloc']} of GPU memory for an op "
            "(the framework raises RESOURCE_EXHAUSTED next)"
        )
        if not ctx.job_failed():
            # The allocator's own warning, without the error it leads to: the excerpt shows no failure.
            return [ctx.make_finding(rule, detail=detail + ".", severity="warning", confidence=0.6)]
    else:
        detail = f"{who} ran out of GPU memory (CUDA error: out of memory)"
    return [ctx.make_finding(rule, detail=detail + ".")]


def _size(text: str) -> float:
    num, _, unit = text.partition(" ")
    scale = {"B": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40}
    try:
        return float(num) * scale.get(unit, 1)
    except ValueError:
        return 0.0
