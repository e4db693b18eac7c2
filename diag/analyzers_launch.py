"""Analyzers for the launch, container and job causes of the catalogue (registered into diag.analyzers.ANALYZERS)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from diag.analyzers import _hosts_text, register
from diag.causes import severity_rank
from diag.hostlist import expand

if TYPE_CHECKING:
    from diag.diagnosis import Context
    from diag.report import Finding
    from diag.rules import Rule

# How a task ends when Slurm (not the program) stopped it: these follow a cancel, never cause one.
SIGNAL_ENDINGS = ("Terminated", "Killed")
# Exceptions a launcher raises when it is itself signalled (scancel, time limit, preemption).
SIGNAL_EXCEPTIONS = ("SignalException",)


def _mib(n: str) -> str:
    value = int(n)
    if value >= 1 << 30:
        return f"{value / (1 << 30):.1f} GiB"
    return f"{value / (1 << 20):.0f} MiB"


def _first(values: list[str], default: str = "") -> str:
    return values[0] if values else default


def failure_before_cancel(ctx: Context) -> bool:
    """Whether the logs show a failure of the program itself (not just tasks ended by a signal).

    The same plain ``CANCELLED AT <time> ***`` banner follows a user's scancel and srun's own
    cancel after a task failed (MPI_Abort, --kill-on-bad-exit, OOM): only the second has one.
    """
    rule = ctx.rules.get("unexplained-failure")
    if rule is None:
        return False
    names = [n for n, _ in ctx.stats(rule, ["exception", "exception_other"])]
    if names:
        exceptions = ctx.captures(rule, "exception", names)
        if any(not e.endswith(SIGNAL_EXCEPTIONS) for e in exceptions):
            return True
    if ctx.stats(rule, ["terminate", "mpi_abort"]):
        return True
    if any(not how.startswith(SIGNAL_ENDINGS) for how in ctx.captures(rule, "how", ["task_exit"])):
        return True
    codes = ctx.captures(rule, "code", ["agent_exit"])
    if any(c not in ("-15", "-9", "-1") for c in codes):
        return True
    return any(ctx.count(rid) for rid in ("job-oom", "job-time-limit", "node-failure", "cuda-oom", "gpu-xid"))


@register("job_time_limit")
def job_time_limit(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    kinds = ctx.captures(rule, "kind")
    jobs = ctx.captures(rule, "job")
    when = _first(ctx.captures(rule, "time"), "?")
    what = "job" if "JOB" in kinds else "step"
    detail = f"Slurm cancelled {what} {', '.join(jobs[:3])} at {when} because it reached its time limit"
    if "JOB" not in kinds:
        detail += " (an srun --time limit on the step; the job itself may have gone on)"
    if ctx.stats(rule, ["sigterm"]):
        detail += "; torchrun's SIGTERM shutdown and the terminated tasks that follow are consequences"
    else:
        detail += "; the terminated tasks that follow are consequences"
    # A job that broke earlier (IB unusable, a rank stuck) often hangs until the limit: then the
    # limit is how it ended, not why. Runs in phase 2 so those roots are known.
    first = min((ev.order for ev, _ in ctx.samples(rule, ["time_limit"])), default=(1 << 30, 0))
    earlier = [
        f
        for f in ctx.findings.values()
        if f.role == "root" and severity_rank(f.severity) >= severity_rank("error") and f.first_order() < first
    ]
    # The node in the banner is where slurmstepd reported, not a culprit.
    if earlier:
        detail += f"; it ran into the limit after {', '.join(sorted(f.id for f in earlier))}, which is the likely cause"
        return [ctx.make_finding(rule, detail=detail + ".", hosts=[], severity="warning", confidence=0.6)]
    return [ctx.make_finding(rule, detail=detail + ".", hosts=[])]


@register("job_oom")
def job_oom(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = ctx.stats(rule)
    if not chosen:
        return []
    names = {n for n, _ in chosen}
    steps = ctx.captures(rule, "step", ["oom_kill_event", "exceeded_limit"])
    hosts: dict[str, None] = {}
    for ev, groups in ctx.samples(rule, list(names)):
        host = groups.get("host") or ctx.host_for(ev)
        if host:
            hosts[host] = None
    parts = []
    for _ev, groups in ctx.samples(rule, ["exceeded_limit"])[:1]:
        parts.append(
            f"StepId={groups['step']} used {_mib(groups['used'])} of its {_mib(groups['limit'])} memory limit "
            "and was killed"
        )
    if "oom_kill_event" in names:
        parts.append(f"the kernel's cgroup OOM killer fired in StepId={', '.join(steps[:3]) or '?'}")
    if "task_oom" in names:
        tasks = ctx.captures(rule, "task", ["task_oom"])
        parts.append(f"srun reports task(s) {', '.join(tasks[:6])} Out Of Memory")
    if "kernel_oom" in names:
        comms = ctx.captures(rule, "comm", ["kernel_oom"])
        parts.append(f"the kernel killed {', '.join(comms[:3])} for memory")
    if "exceeded_at_some_point" in names and not parts:
        parts.append("Slurm says the job exceeded its memory limit")
    confidence = None
    if names == {"dataloader_killed"}:
        parts.append("a DataLoader worker was killed by SIGKILL, which is almost always the host's OOM killer")
        confidence = 0.6
    where = f" on {_hosts_text(list(hosts))}" if hosts else ""
    detail = "Host memory ran out" + where + ": " + "; ".join(parts) + "."
    values = {"step": "StepId=" + ", ".join(steps[:3]) if steps else "the job"}
    return [ctx.make_finding(rule, detail=detail, hosts=list(hosts), values=values, confidence=confidence)]


@register("node_failure")
def node_failure(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    failed: dict[str, None] = {}
    for expr in ctx.captures(rule, "nodes", ["node_failure_on"]):
        for host in expand(expr):
            failed[host] = None
    for host in ctx.captures(rule, "host", ["task_launch_failed", "kill_task_failed"]):
        failed[host] = None
    parts = []
    if failed:
        parts.append(f"Slurm lost {_hosts_text(list(failed))}")
    ids = ctx.captures(rule, "nodeid", ["io_error"])
    if ids:
        parts.append(f"srun lost the connection to the slurmstepd of node index {', '.join(ids[:6])} of the step")
    reasons = ctx.captures(rule, "reason", ["task_launch_failed"])
    if reasons:
        parts.append(f"task launch failed: {reasons[0]}")
    if ctx.stats(rule, ["kill_task_failed"]):
        parts.append(
            "processes did not die on SIGKILL (Kill task failed: stuck in the kernel, often a hung GPU or file system)"
        )
    reporters = ctx.captures(rule, "reporter", ["banner"])
    if ctx.stats(rule, ["banner"]):
        parts.append(
            f"the job was cancelled DUE TO NODE FAILURE (reported by {', '.join(reporters[:3])}"
            + (", a surviving node)" if failed and not set(reporters) & set(failed) else ")")
        )
    detail = "; ".join(parts)
    detail = (
        detail[:1].upper()
        + detail[1:]
        + ". Errors on the other nodes after this (peer closed/reset, timeouts) are consequences."
    )
    names = failed and list(failed) or []
    values = {"nodes": ",".join(names) if names else "<the failed node, see scontrol show job / slurmctld log>"}
    return [ctx.make_finding(rule, detail=detail, hosts=names, values=values)]


@register("preempted")
def preempted(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    when = _first(ctx.captures(rule, "time"), "?")
    jobs = ctx.captures(rule, "job")
    if "preemption" in chosen or "requeue" in chosen:
        why = "was preempted by a higher-priority job" if "preemption" in chosen else "was requeued"
        names = [n for n in ("preemption", "requeue") if n in chosen]
        detail = f"Job {', '.join(jobs[:3])} {why} at {when}; the terminated tasks that follow are consequences."
        return [ctx.make_finding(rule, names, detail=detail, hosts=[])]
    if failure_before_cancel(ctx):
        # srun (or MPI) cancelled the step because something failed first: that failure is the cause.
        return []
    signals = ctx.captures(rule, "signal", ["cancelled"])
    how = f" with SIGNAL {', '.join(signals)}" if signals else ""
    detail = (
        f"Job {', '.join(jobs[:3])} was cancelled{how} at {when} with no reason given and no failure before it: "
        "a user or admin ran scancel. Nothing failed; the terminated tasks are its consequences."
    )
    return [ctx.make_finding(rule, ["cancelled"], detail=detail, severity="info", confidence=0.7, hosts=[])]


# --------------------------------------------------------------------------------------- launch
LOCAL_ADDRS = ("localhost", "127.0.0.1", "::1", "127.0.1.1")


def _earlier_roots(ctx: Context, first: tuple[int, int], exclude: str) -> list[Finding]:
    """Error-level roots found before ``first``: what a later failure is probably a consequence of."""
    return [
        f
        for f in ctx.findings.values()
        if f.id != exclude
        and f.role == "root"
        and severity_rank(f.severity) >= severity_rank("error")
        and f.first_order() < first
    ]


@register("rendezvous")
def rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    socket_sigs = ["client_timeout", "connect_any", "connect_refused", "gai"]
    addrs = ctx.captures(rule, "addr", socket_sigs)
    ports = ctx.captures(rule, "port", socket_sigs)
    target = f"{', '.join(addrs[:3])}:{', '.join(ports[:3])}" if addrs else "MASTER_ADDR:MASTER_PORT"
    parts = []
    if "gai" in chosen:
        hosts = sorted({h for ev, _ in ctx.samples(rule, ["gai"]) if (h := ctx.host_for(ev))})
        where = f" on {_hosts_text(hosts)}" if hosts else ""
        reason = _first(ctx.captures(rule, "reason", ["gai"]))
        parts.append(f"{', '.join(ctx.captures(rule, 'addr', ['gai'])[:3])} cannot be resolved{where} ({reason})")
    if "connect_refused" in chosen:
        parts.append(f"nothing listened at {target} (connection refused): the store on rank 0 was not up")
    if chosen & {"client_timeout", "connect_any"}:
        timeout = _first(ctx.captures(rule, "timeout", ["client_timeout"]))
        parts.append(f"no connection to {target}" + (f" within {timeout}" if timeout else ""))
    for _ev, g in ctx.samples(rule, ["clients_joined"])[:1]:
        missing = int(g["world"]) - int(g["joined"])
        parts.append(
            f"rank 0's store waited {g['secs']} s and only {g['joined']} of {g['world']} processes joined: "
            f"{missing} never started, crashed first, or used another MASTER_ADDR/PORT or --nnodes"
        )
    if "env_missing" in chosen:
        var = ", ".join(ctx.captures(rule, "var", ["env_missing"]))
        parts.append(f"{var} not set: the script uses env:// but was not started by torchrun (or the job script)")
    if chosen & {"rdzv_timeout", "store_connection"}:
        parts.append("torchrun's rendezvous failed: fewer nodes than --nnodes joined, or they used different endpoints")
    if "store_get" in chosen:
        err = _first(ctx.captures(rule, "error", ["store_get"]))
        parts.append(f"ranks could not fetch the NCCL unique id from rank 0 through the store ({err})")
    local = [a for a in addrs if a.strip("[]") in LOCAL_ADDRS]
    if local and ctx.facts.multi_node():
        parts.append(f"MASTER_ADDR is {local[0]}, which every node resolves to itself in a multi-node job")
    detail = "Rendezvous failed: " + "; ".join(parts) + "."
    first = min((ev.order for ev, _ in ctx.samples(rule, list(chosen))), default=(1 << 30, 0))
    earlier = _earlier_roots(ctx, first, rule.id)
    values = {"addr": target}
    if earlier:
        if chosen <= {"store_get", "store_connection", "connect_refused", "client_timeout", "connect_any"}:
            # Rank 0 died of something else first: the others then cannot reach its store.
            return []
        detail += f" It followed {', '.join(sorted(f.id for f in earlier))}, which may be the cause."
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values)]
    return [ctx.make_finding(rule, detail=detail, values=values)]


@register("port_in_use")
def port_in_use(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    ports = ctx.captures(rule, "port") or [
        a.rsplit(":", 1)[-1] for a in ctx.captures(rule, "addr") if ":" in a and a.rsplit(":", 1)[-1].isdigit()
    ]
    by_host: dict[str, set] = {}
    for ev, _ in ctx.samples(rule, [s.name for s in rule.signatures]):
        host = ctx.host_for(ev) or "?"
        by_host.setdefault(host, set()).add((ev.task, ev.pid, ev.local_rank, ev.rank))
    crowded = {h: len(v) for h, v in by_host.items() if len(v) > 1}
    port = ", ".join(dict.fromkeys(ports)) or "MASTER_PORT"
    detail = f"Port {port} was already in use"
    hosts = [h for h in by_host if h != "?"]
    if hosts:
        detail += f" on {_hosts_text(hosts)}"
    if crowded:
        where = ", ".join(f"{n} on {h}" if h != "?" else f"{n}" for h, n in crowded.items())
        detail += (
            f": {where} launchers tried to serve the store on one node, so more than one torchrun ran per node "
            "(srun started it once per GPU instead of once per node)"
        )
    else:
        detail += ": another process on that node (a second launcher or job, or a leftover run) holds it"
    return [ctx.make_finding(rule, detail=detail + ".", values={"port": port}, hosts=hosts)]


@register("world_size")
def world_size(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    parts = []
    for _ev, g in ctx.samples(rule, ["rank_count", "info_mismatch"])[:1]:
        parts.append(f"ranks passed different world sizes to NCCL ({g['a']} vs {g['b']})")
    for _ev, g in ctx.samples(rule, ["checked_in"])[:1]:
        parts.append(
            f"two processes claimed rank {g['rank']} of {g['nranks']}: every task got the same RANK, or torchrun "
            "was started once per GPU with the same --node-rank"
        )
    for _ev, g in ctx.samples(rule, ["step_create"])[:1]:
        parts.append(f"an srun step asked for more than job {g['job']} holds ({g['reason']})")
    for _ev, g in ctx.samples(rule, ["only_allocated"])[:1]:
        parts.append(f"an srun step asked for {g['want']} nodes in a {g['have']}-node allocation")
    for _ev, g in ctx.samples(rule, ["nnodes_reset"])[:1]:
        parts.append(
            f"srun ran {g['tasks']} tasks on {g['have']} nodes instead of the {g['want']} asked for, "
            "so anything computed from the asked-for node count is wrong"
        )
    for _ev, g in ctx.samples(rule, ["ntasks_per_node"])[:1]:
        parts.append(f"srun ignored --ntasks-per-node={g['per_node']} ({g['tasks']} tasks requested)")
    if "device_ordinal" in chosen:
        parts.append("a LOCAL_RANK is beyond the GPUs the task can see (invalid device ordinal)")
    detail = "Launch layout does not match: " + "; ".join(parts) + "."
    if chosen <= {"nnodes_reset", "ntasks_per_node"}:
        # srun adjusted the layout and the step ran: worth knowing, not a failure by itself.
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.6)]
    return [ctx.make_finding(rule, detail=detail)]


# ---------------------------------------------------------------------------------- containers
_HTTP_MEANING = {
    "401": "401 Unauthorized: registry credentials missing or wrong ($ENROOT_CONFIG_PATH/.credentials)",
    "403": "403 Forbidden: these credentials may not pull this image",
    "404": "404 Not Found: the image name or tag does not exist",
    "429": "429 Too Many Requests: the registry's pull rate limit (every node importing at once multiplies pulls)",
}


def _import_reason(rule: Rule, ctx: Context, chosen: set[str]) -> str:
    reasons = []
    for code in ctx.captures(rule, "code", ["http_error"]):
        if code in _HTTP_MEANING:
            reasons.append(_HTTP_MEANING[code])
        elif code.startswith("5"):
            reasons.append(f"{code}: the registry failed (outage)")
        else:
            reasons.append(f"HTTP {code}")
    for _ev, g in ctx.samples(rule, ["curl_error"])[:1]:
        reasons.append(f"curl ({g['curl']}) {g['curlmsg']}")
    if "bad_json" in chosen:
        reasons.append(
            "the registry answered with something that is not JSON (proxy or error page, often a rate limit)"
        )
    if "bad_reference" in chosen:
        ref = _first(ctx.captures(rule, "image", ["bad_reference"]))
        reasons.append(f"invalid image reference {ref} (pyxis wants registry#repository:tag)")
    if chosen & {"auth_protocol", "digest"}:
        reasons.append("the registry's authentication/digest protocol was not understood")
    if "squash_missing" in chosen:
        reasons.append(
            f"the squash file {', '.join(ctx.captures(rule, 'path', ['squash_missing'])[:2])} does not exist"
        )
    if chosen & {"disk_full", "squashfs_write"}:
        reasons.append("the disk filled up while converting the image (ENROOT_CACHE/DATA/TEMP_PATH too small)")
    if "command_missing" in chosen:
        reasons.append(f"enroot lacks {', '.join(ctx.captures(rule, 'cmd', ['command_missing']))}")
    return "; ".join(dict.fromkeys(reasons))


@register("container_import")
def container_import(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    images = ctx.captures(rule, "image", ["failed_import", "bad_reference"]) or ctx.captures(
        rule, "image", ["importing"]
    )
    image = _first(images, "the image")
    reason = _import_reason(rule, ctx, chosen)
    if chosen <= {"curl_error", "http_error"} and "failed_import" not in chosen and not ctx.job_failed():
        return []  # a curl or HTTP error from the program itself, with no import failure
    hosts = sorted({h for _, st in ctx.stats(rule) for h in st.hosts})
    if not hosts and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    detail = f"pyxis/enroot could not import {image}"
    if hosts:
        detail += f" on {_hosts_text(hosts)}"
    detail += f": {reason}" if reason else " (enroot's log gives no reason)"
    return [ctx.make_finding(rule, detail=detail + ".", hosts=hosts, values={"image": image.replace("#", "/", 1)})]


@register("container_runtime")
def container_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    generic = {"start_failed", "couldnt_start"}
    if chosen <= generic and "container-import-failure" in ctx.findings:
        return []  # pyxis <= 0.23 prints "couldn't start container" after a failed import too
    parts = []
    names = list(chosen)
    for _ev, g in ctx.samples(rule, ["no_pyxis"])[:1]:
        cmd, value = g["cmd"], g.get("value", "")
        part = f"{cmd} does not know --{g['opt']}: the pyxis plugin is not installed or not loaded for {cmd}"
        if cmd == "sbatch" and value and "#" not in value and "/" not in value:
            part += f" (and in an #SBATCH line the value was cut at '#', leaving '{value}')"
        parts.append(part)
    shared = "shared-storage-missing" in ctx.findings
    mounts = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["mount_failed", "mount_other", "source_missing"])
        if not (shared and g.get("src", "").startswith(SHARED_PREFIXES))
    ]
    if mounts:
        srcs = list(dict.fromkeys(g["src"] for _, g in mounts))
        reason = _first([g["reason"] for _, g in mounts if g.get("reason")], "source path does not exist")
        hosts = sorted({h for ev, _ in mounts if (h := ctx.host_for(ev))})
        where = f" on {_hosts_text(hosts)}" if hosts else ""
        parts.append(f"mounting {', '.join(srcs[:3])} into the container failed{where}: {reason}")
        if any(s.startswith("/dev/infiniband") for s in srcs):
            parts.append("that node has no /dev/infiniband (no IB driver or HCA): exclude it or drop the mount there")
    elif chosen <= {"mount_failed", "mount_other", "source_missing"} | generic and shared:
        return []  # the mount failed because the shared file system is missing there: that is the finding
    for _ev, g in ctx.samples(rule, ["hook_failed"])[:1]:
        parts.append(f"the enroot hook {g['hook']} failed (exit {g['code']})")
    for _ev, g in ctx.samples(rule, ["nvidia_cli"])[:1]:
        parts.append(f"nvidia-container-cli: {g['what']}: {g['reason']}")
    if "exited_too_soon" in chosen:
        parts.append("the container exited before pyxis could attach (entrypoint, missing /bin/sh, architecture)")
    for _ev, g in ctx.samples(rule, ["namespace"])[:1]:
        parts.append(f"pyxis could not join the {g['ns']} namespace: {g['reason']}")
    for _ev, g in ctx.samples(rule, ["name_flag"])[:1]:
        parts.append(f'--container-name "{g["flag"]}" was used but the container {g["state"]}')
    if "mounts_format" in chosen:
        parts.append(f"--container-mounts is malformed: {_first(ctx.captures(rule, 'spec', ['mounts_format']))}")
    if not parts:
        parts.append("the container failed to start; enroot's log above says why")
    reason = "; ".join(parts)
    detail = "The container could not start: " + reason + "."
    hosts = sorted({h for ev, _ in ctx.samples(rule, names) if (h := ctx.host_for(ev))})
    if not hosts and "no_pyxis" not in chosen and ctx.facts.slurm_task_hosts:
        hosts = sorted(ctx.facts.slurm_task_hosts)
    return [ctx.make_finding(rule, names, detail=detail, hosts=hosts, values={"reason": reason[:160]})]


# ------------------------------------------------------------------------------------- storage
SHARED_PREFIXES = (
    "/home/", "/lustre", "/gpfs", "/nfs", "/fsx", "/weka", "/pfs", "/sfs", "/shared", "/scratch", "/projects",
    "/project/", "/work/", "/data/", "/datasets", "/mnt/", "/net/", "/efs", "/beegfs", "/cephfs", "/vast", "/groups",
)  # fmt: skip
_PATH_RE = re.compile(r"""(/[^\s'"`:,;()]+)""")


def _shared_path(text: str) -> str | None:
    from diag.analyzers import NODE_LOCAL_PREFIXES

    for path in _PATH_RE.findall(text):
        if path.startswith(SHARED_PREFIXES) and not path.startswith(NODE_LOCAL_PREFIXES):
            return path
    return None


@register("shared_storage")
def shared_storage(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = [n for n, _ in ctx.stats(rule)]
    if not chosen:
        return []
    broken, absent = [], []  # (evidence, path)
    for ev, g in ctx.samples(rule, chosen):
        path = g.get("path") if g.get("path", "").startswith(SHARED_PREFIXES) else _shared_path(ev.text)
        if path is None:
            continue
        text = ev.text
        if "Stale file handle" in text or "Transport endpoint is not connected" in text or "Input/output error" in text:
            broken.append((ev, path))
        else:
            absent.append((ev, path))
    facts = ctx.facts
    known = set(facts.hosts) | facts.slurm_task_hosts
    failing = {h for ev, _ in absent if (h := ctx.host_for(ev))}
    # Missing or refused on some nodes while the job has others: a mount problem, not a wrong path.
    partial = bool(failing) and facts.multi_node() and len(failing) < max(facts.node_count(), len(known))
    chosen_pairs = broken + (absent if partial else [])
    if not chosen_pairs:
        return []
    hosts = sorted({h for ev, _ in chosen_pairs if (h := ctx.host_for(ev))}, key=_nat)
    paths = list(dict.fromkeys(p for _, p in chosen_pairs))
    kinds = []
    if broken:
        texts = " ".join(ev.text for ev, _ in broken)
        for needle, meaning in (
            ("Stale file handle", "a stale NFS handle (the export or server was restarted)"),
            ("Transport endpoint is not connected", "a dead FUSE mount (the client process is gone)"),
            ("Input/output error", "I/O errors (client evicted or a storage target down)"),
        ):
            if needle in texts:
                kinds.append(meaning)
    if partial and absent:
        others = sorted(known - failing, key=_nat) if known - failing else []
        seen = f", while {_hosts_text(others)} read it" if others else ""
        kinds.append(f"missing or refused on {_hosts_text(sorted(failing, key=_nat))} only{seen}")
    detail = f"{', '.join(paths[:3])}: {'; '.join(kinds)}"
    from diag.diagnosis import pick_evidence

    evidence = pick_evidence(ev for ev, _ in chosen_pairs)
    return [
        ctx.make_finding(rule, chosen, detail=detail + ".", hosts=hosts, evidence=evidence, values={"path": paths[0]})
    ]


def _nat(text: str) -> list:
    from diag.diagnosis import natural_key

    return natural_key(text)


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


@register("gpu_xid")
def gpu_xid(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if not chosen:
        return []
    xids: dict[int, list[str]] = {}
    order: list[int] = []
    for ev, g in ctx.samples(rule, ["xid"]):
        n = int(g["xid"])
        host = ctx.host_for(ev)
        if n not in xids:
            xids[n] = []
            order.append(n)
        if host and host not in xids[n]:
            xids[n].append(host)
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
        where = f" on {_hosts_text(xids[n])}" if xids[n] else ""
        label = {"hardware": "hardware", "application": "usually the application", "consequence": "consequence"}.get(
            whose, "unclassified"
        )
        parts.append(f"Xid {n}{where}: {meaning} [{label}]")
    severity = None
    if "ecc_in_process" in chosen:
        parts.append("the process got 'uncorrectable ECC error encountered' [hardware]")
        classes.add("hardware")
    if "gpu_lost" in chosen:
        parts.append("the GPU is lost (reboot required) [hardware]")
        classes.add("hardware")
    if "nvml_mismatch" in chosen:
        parts.append(
            "NVML: driver/library version mismatch (driver upgraded without reboot, or the image ships its own)"
        )
        classes.add("driver")
    hard = [n for n in order if XID_MEANING.get(n, ("", "unknown"))[1] in ("hardware", "unknown")]
    if "hardware" in classes or "unknown" in classes:
        severity = "error" if hard and set(hard) <= ERROR_ONLY_XIDS and not chosen - {"xid"} else "critical"
    elif "driver" in classes:
        severity = "error"
    elif "application" in classes:
        severity = "warning"
        parts.append("no hardware Xid: rule out the program (illegal address) before suspecting the GPU")
    else:
        severity = "info"
    detail = "; ".join(parts) + "."
    values = {"xid": ", ".join(str(n) for n in order) or "<n>"}
    confidence = 0.9 if severity in ("critical", "error") else 0.5
    return [ctx.make_finding(rule, detail=detail, severity=severity, confidence=confidence, values=values)]


@register("cuda_oom")
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
