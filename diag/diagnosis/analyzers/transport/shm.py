"""A /dev/shm too small for what shares memory through it: NCCL's segments (its own errors, or SIGBUS in its
code on releases before 2.19), PyTorch's shared tensors, Ray's object store (shm-too-small)."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.transport.common import trail_line
from diag.diagnosis.analyzers.transport.sockets import bare_system_error
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.report import Finding


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
    # The worker's own line and the main process's re-raise name the same death; either will do.
    loader = ["dataloader_bus", "dataloader_killed_bus"]
    if ctx.stats(rule, loader):
        detail = "A DataLoader worker died of SIGBUS: its shared memory did not fit in /dev/shm"
        return [ctx.make_finding(rule, [*loader, "bus_error"], detail=detail + ".", confidence=0.75)]
    if ctx.stats(rule, ["attach_segment"]):
        detail = "Ranks could not attach to a peer's /dev/shm segment: its creator failed to allocate it"
        return [ctx.make_finding(rule, ["attach_segment"], detail=detail + ".", confidence=0.6)]
    bus = ["bus_error", "sigbus", "exitcode_sigbus", "hydra_exit_sigbus", "hydra_killed_sigbus"]
    if not ctx.stats(rule, bus):
        return []
    versions = sorted(ctx.facts.versions)
    if not versions and not ctx.facts.max_nranks:
        return _sigbus_unknown_context(rule, ctx, bus)
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


def _where(rule: Rule, ctx: Context, name: str, what: str, why: str, confidence: float) -> list[Finding]:
    """One finding for signature ``name``: what failed, on which hosts, and why."""
    samples = ctx.samples(rule, [name])
    if not samples:
        return []
    hosts = sorted({h for ev, _ in samples if (h := ctx.host_for(ev))})
    detail = what + (f" on {hosts_text(hosts)}" if hosts else "") + why
    return [ctx.make_finding(rule, [name], detail=detail + ".", hosts=hosts or None, confidence=confidence)]


def _sigbus_unknown_context(rule: Rule, ctx: Context, bus: list[str]) -> list[Finding]:
    """A process that died of SIGBUS in logs that show neither NCCL's version nor its ranks (a pasted
    launcher summary): a full /dev/shm is the commonest cause in containers (DataLoader workers, NCCL
    2.12-2.18, shared tensors, checkpoints staged in shared memory), so it is named, weakly, with
    what it assumed; the other cause of SIGBUS is a memory-mapped file that shrank under the process."""
    detail = (
        "A process died of SIGBUS (Bus error): in a container most often /dev/shm is too small (docker's "
        "default is 64 MB) for what is placed there (DataLoader workers, NCCL's shared-memory transport, shared "
        "tensors, a checkpoint written through shared memory); `df -h /dev/shm` in the job shows its size"
    )
    assumed = [
        "the process used /dev/shm: SIGBUS also comes from a memory-mapped file that shrank (a dataset on a "
        "network file system rewritten during the run)"
    ]
    return [ctx.make_finding(rule, bus, detail=detail + ".", confidence=0.5, assumed=assumed)]


def shm_too_small_forms(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's own shared-memory failures (shm.shm_too_small), then the same full /dev/shm as
    PyTorch's shared tensors and Ray's object store word it."""
    found = shm_too_small(rule, ctx)
    if found:
        return found
    torch = ctx.samples(rule, ["torch_shm", "shm_enospc"])
    if torch:
        errs = [g["err"] for _, g in torch if g.get("err")]
        full = any("No space left" in e or "(28)" in e for e in errs) or any("path" in g for _, g in torch)
        detail = "PyTorch could not put a shared tensor in /dev/shm (DataLoader workers or torch.multiprocessing)"
        if errs:
            detail += f": {errs[0][:80]}"
        if not full:
            detail += "; /dev/shm is full or capped below what the workers need"
        return [ctx.make_finding(rule, ["torch_shm", "shm_enospc"], detail=detail + ".", confidence=0.75)]
    found = _python_shm(rule, ctx) or _sigbus_in_nccl(rule, ctx)
    if found:
        return found
    fifo = _where(
        rule, ctx, "ucx_mm_fifo", "UCX's shared-memory transport could not allocate its receive FIFO, a segment in /dev/shm",
        ": /dev/shm is full or capped (a container's 64 MB default) below what the ranks of a node need", 0.7,
    )  # fmt: skip
    if fifo:
        return fifo
    for _ev, g in ctx.samples(rule, ["k8s_shm_evicted"])[:1]:
        detail = (
            f"Kubernetes evicted the pod: its /dev/shm volume ({g['vol']}, a memory-backed emptyDir) grew past its "
            f"sizeLimit of {g['limit']}; raise sizeLimit to what NCCL and the DataLoader workers of a node need"
        )
        return [ctx.make_finding(rule, ["k8s_shm_evicted"], detail=detail + ".", confidence=0.8)]
    if ctx.stats(rule, ["shm_stat"]):
        detail = "NCCL found no /dev/shm where it runs (its stat of /dev/shm failed): the container or sandbox has none"
        return [ctx.make_finding(rule, ["shm_stat"], detail=detail + ".", confidence=0.7)]
    for _ev, g in ctx.samples(rule, ["ompi_shm_space"])[:1]:
        detail = f"Open MPI's shared-memory backing file {g['path']} did not fit in /dev/shm"
        return [ctx.make_finding(rule, ["ompi_shm_space"], detail=detail + ".", confidence=0.75)]
    sysv = _where(
        rule, ctx, "sysv_shmget", "System V shared memory was refused (shmget: No space left on device)",
        ": the node's segment limits (kernel.shmmni, kernel.shmall; in a container its IPC namespace's) are used up, "
        "often by segments earlier jobs left behind (`ipcs -m` lists them, `ipcrm` removes them); or keep UCX off "
        "SysV with UCX_TLS=^sysv", 0.65,
    )  # fmt: skip
    if sysv:
        return sysv
    for _ev, g in ctx.samples(rule, ["ompi_shmem_mmap"])[:1]:
        detail = (
            f"Open MPI could not create its shared-memory backing file {g['path']}: the file system under its session "
            "directory (/dev/shm, or /tmp) is full, capped or not writable"
        )
        return [ctx.make_finding(rule, ["ompi_shmem_mmap"], detail=detail + ".", confidence=0.6)]
    if ctx.stats(rule, ["ngc_shm_banner"]):
        detail = (
            "The NGC container started with docker's default 64 MB /dev/shm (its banner says so): too small for "
            "NCCL's shared-memory transport and DataLoader workers once a node runs several ranks"
        )
        # Only a hint: every NGC container started without --shm-size says it, failing or not.
        return [ctx.make_finding(rule, ["ngc_shm_banner"], detail=detail + ".", severity="warning", confidence=0.4)]
    ray = ctx.samples(rule, ["ray_object_store"])
    if ray:
        size = int(ray[0][1]["size"])
        detail = (
            f"/dev/shm has only {size / (1 << 20):.0f} MiB: Ray put its object store in /tmp, "
            "and anything else sharing memory through /dev/shm (NCCL, DataLoader workers) may not fit"
        )
        return [ctx.make_finding(rule, ["ray_object_store"], detail=detail + ".", severity="warning", confidence=0.4)]
    return _bare_system_error(rule, ctx)


def _python_shm(rule: Rule, ctx: Context) -> list[Finding]:
    """A full /dev/shm as Python's multiprocessing helpers meet it: a semaphore (multiprocessing's SemLock,
    joblib's probe for one) or pandarallel's chunk files, each ending in ENOSPC with no path of its own."""
    enospc = ctx.stats(rule, ["bare_enospc"])
    if enospc and ctx.stats(rule, ["semlock_frame"]):
        detail = (
            "Python's multiprocessing could not create a semaphore (SemLock), which lives in /dev/shm: No space "
            "left on device. Every Queue, Lock and Pool makes some (DataLoader workers' queues among them), so "
            "/dev/shm is full or capped (a container's 64 MB default)"
        )
        return [ctx.make_finding(rule, ["bare_enospc", "semlock_frame"], detail=detail + ".", confidence=0.75)]
    if enospc and ctx.stats(rule, ["pandarallel_memfs"]):
        detail = (
            "pandarallel passes each chunk to its workers through files in /dev/shm (its Memory file system) and "
            "one did not fit: No space left on device; /dev/shm is full or capped below a chunk's size "
            "(pandarallel.initialize(use_memory_fs=False) sends them through pipes instead)"
        )
        return [ctx.make_finding(rule, ["bare_enospc", "pandarallel_memfs"], detail=detail + ".", confidence=0.65)]
    if ctx.stats(rule, ["joblib_serial"]):
        # joblib carries on in serial mode: slower, not failed.
        detail = (
            "joblib could not create a semaphore in /dev/shm (No space left on device) and runs every Parallel "
            "serially: /dev/shm is full or capped (a container's 64 MB default)"
        )
        return [ctx.make_finding(rule, ["joblib_serial"], detail=detail + ".", severity="warning", confidence=0.6)]
    return []


def _bare_system_error(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's bare "unhandled system error" with no line saying which call failed: besides a socket
    (nccl-socket-ifname's first suspect), the call that fails most often in a container is NCCL's
    shared-memory segment in a /dev/shm capped at Docker's 64 MB. The second suspect, said as such."""
    if not bare_system_error(ctx, "shm"):
        return []
    trail = trail_line(ctx, "shm")
    said = (
        "its return trail starts in NCCL's shared-memory code: its segment"
        if trail
        else "no line says which call failed; in a container the other usual failing call is NCCL's shared-memory segment"
    )
    detail = (
        f'NCCL failed with "unhandled system error" and {said} in /dev/shm (64 MB by default under Docker): start it '
        "with --ipc=host or --shm-size, or rerun with NCCL_DEBUG=INFO to see the call"
    )
    socket = ctx.rules.get("nccl-socket-ifname")
    cited = [trail] if trail else []
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", evidence=pick_evidence(cited + [ev for ev, _ in ctx.samples(socket, ["system_error"])]),
            severity="error" if ctx.job_failed() else "warning", confidence=0.5 if trail else 0.25,
            assumed=[] if trail else ["the failing system call was NCCL's shared memory (the log does not say)"],
        )
    ]  # fmt: skip


def _sigbus_in_nccl(rule: Rule, ctx: Context) -> list[Finding]:
    """SIGBUS with a backtrace in NCCL's code: NCCL maps its shared-memory segments as files in
    /dev/shm, and touching a page the full /dev/shm cannot back raises SIGBUS, not an NCCL error."""
    signal = ["signal_bus", "caught_bus", "bus_error", "sigbus"]
    frames = ["nccl" + f for f in ctx.captures(rule, "frame", ["nccl_frame"])]
    if not frames or not ctx.stats(rule, signal):
        return []
    versions = sorted(ctx.facts.versions)
    minors = [int(m) for v in versions if v.startswith("2.") and (m := v.split(".")[1][:3]).isdigit()]
    if versions and not any(m <= 18 for m in minors):
        return []  # NCCL 2.19+ allocate the segment up front and report a full /dev/shm cleanly
    shm_frame = next((f for f in frames if "Shm" in f), None)
    detail = (
        f"A process died of SIGBUS (Bus error) inside NCCL ({shm_frame or frames[0]}): NCCL's shared-memory "
        "segments are files in /dev/shm, and a page the full /dev/shm cannot back raises SIGBUS"
    )
    assumed = [] if versions else ["NCCL older than 2.19 (the logs do not say which version)"]
    return [
        ctx.make_finding(
            rule, signal + ["nccl_frame"], detail=detail + ".", confidence=0.75 if shm_frame else 0.6, assumed=assumed
        )
    ]
