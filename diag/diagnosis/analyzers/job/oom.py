"""Host memory: job-oom.

Reads the kernel's and the cgroup's OOM killer, Slurm's OUT_OF_MEMORY and exceeded-limit lines, Kubernetes, Ray's
memory monitor, containers and the program's own failed allocations; without them, a torchrun or DeepSpeed worker
dead of SIGKILL is a weak answer. An extern step's OUT_OF_MEMORY alone, or a limit reached with nothing killed, is
no failure.
"""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.context import Context, hosts_text
from diag.report import Finding


def _mib(n: str) -> str:
    value = int(n)
    if value >= 1 << 30:
        return f"{value / (1 << 30):.1f} GiB"
    return f"{value / (1 << 20):.0f} MiB"


def _extern_steps_only(rule: Rule, ctx: Context) -> bool:
    """Whether every OUT_OF_MEMORY row of sacct is an extern step's (``1234.extern``)."""
    st = dict(ctx.stats(rule, ["sacct_state"]))["sacct_state"]
    if st.count > len(st.samples):
        return False
    return all(ev.text.split()[:1] and ev.text.split()[0].endswith(".extern") for ev, _ in st.samples)


def _worker_sigkilled(rule: Rule, ctx: Context) -> list[Finding]:
    """torchrun's agent reporting a worker that died of SIGKILL (exitcode -9): the agent itself stops
    workers with SIGTERM, and Slurm's own kills take the agent too, so the kernel's OOM killer is the
    likeliest sender; a weak answer that says what it assumed."""
    failed = ctx.rules.get("unexplained-failure")
    if failed is None:
        return []
    killed = [(ev, g) for ev, g in ctx.samples(failed, ["agent_exit", "deepspeed_exit", "elastic_root_cause"]) if g.get("code") == "-9"]
    # The table's traceback row says the same where the exitcode row was left out of a paste.
    if not killed:
        killed = [(ev, g) for ev, g in ctx.samples(failed, ["elastic_signal"]) if g.get("signal") == "9"]
    hydra = False
    if not killed:
        # MPICH's Hydra reports a process a signal ended by the signal's number ("EXIT CODE: 9").
        killed = [(ev, g) for ev, g in ctx.samples(failed, ["hydra_exit_code", "hydra_killed_by"]) if g.get("code") == "9"]
        hydra = bool(killed)
    if not killed:
        return []
    ranks = sorted({int(g["local_rank"]) for _, g in killed if g.get("local_rank", "").isdigit()})
    if hydra:
        launcher, code = "MPICH's Hydra reports a process that", "EXIT CODE: 9"
    else:
        launcher = "torchrun's" if any("local_rank" in g for _, g in killed) else "DeepSpeed's launcher's"
        launcher += f" worker{'s' if len(killed) > 1 else ''}"
        code = "exitcode -9"
    which = f" (local rank {', '.join(map(str, ranks))})" if ranks else ""
    detail = (
        f"{launcher}{which} died of SIGKILL "
        f"({code}), which the kernel's OOM killer sends when host memory runs out; "
        "`sacct -j <job> -o JobID,State,MaxRSS,ReqMem` and `dmesg | grep -i oom` on the node confirm it"
    )
    assumed = ["the SIGKILL came from the OOM killer: the logs do not say who sent it"]
    hosts = sorted({h for ev, _ in killed if (h := ctx.host_for(ev))})
    finding = ctx.make_finding(
        rule, [], detail=detail + ".", evidence=[ev for ev, _ in killed[:4]], hosts=hosts or None,
        severity="warning", confidence=0.4, assumed=assumed,
    )  # fmt: skip
    finding.count = len(killed)
    return [finding]


def _oom_task_table(rule: Rule, ctx: Context) -> str:
    """The kernel's OOM report task list (mm/oom_kill.c dump_tasks): rss is in pages, the victim is
    most often the task with the most of them."""
    rows = ctx.samples(rule, ["oom_task_table"])
    if not rows:
        return "the kernel printed an OOM report (its task list header)"
    _ev, top = max(rows, key=lambda r: int(r[1]["rss"]))
    gib = int(top["rss"]) * 4096 / (1 << 30)  # 4 KiB pages on x86-64 and most arm64 kernels
    return (
        f"the kernel printed an OOM report listing the tasks it weighed; the largest is {top['comm']} (pid "
        f"{top['pid']}) with {top['rss']} resident pages (~{gib:.0f} GiB at 4 KiB)"
    )


def _docker_state_not_oomkilled(rule: Rule, ctx: Context) -> bool:
    """Whether every OOMKilled the logs show is `docker inspect`'s `"OOMKilled": false` key."""
    st = dict(ctx.stats(rule, ["k8s_oomkilled"]))["k8s_oomkilled"]
    return st.count == len(st.samples) and all('"OOMKilled": false' in ev.text for ev, _ in st.samples)


def job_oom(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = ctx.stats(rule)
    if not chosen:
        return _worker_sigkilled(rule, ctx)
    names = {n for n, _ in chosen}
    if "shell_killed_zh" in names:  # the same shell line in a zh_CN locale
        names = (names - {"shell_killed_zh"}) | {"shell_killed"}
    if "k8s_oomkilled" in names and _docker_state_not_oomkilled(rule, ctx):
        names.discard("k8s_oomkilled")  # `docker inspect` of a container the kernel did not kill
        if not names:
            return _worker_sigkilled(rule, ctx)
    if names == {"sacct_state"} and not ctx.job_failed() and _extern_steps_only(rule, ctx):
        # The extern step holds no task of the job (it adopts ssh sessions); Slurm marks it OUT_OF_MEMORY
        # when any OOM event hit the job's cgroup or, on some cgroup v2 versions, for nothing at all.
        detail = (
            "Only the job's extern step is recorded OUT_OF_MEMORY, and nothing else failed: the extern step runs none "
            "of the job's tasks (Slurm's accounting marks it on an OOM event anywhere in the job's cgroup, and on "
            "some cgroup v2 setups for nothing at all)"
        )
        return [ctx.make_finding(rule, ["sacct_state"], detail=detail + ".", severity="info", confidence=0.4)]
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
    if names & {"task_oom", "stepd_task_oom"}:
        tasks = ctx.captures(rule, "task", ["task_oom", "stepd_task_oom"])
        parts.append(f"srun reports task(s) {', '.join(tasks[:6])} Out Of Memory")
    kernel = ["kernel_oom", "kernel_killed", "kernel_oom_summary"]
    if names & set(kernel):
        comms = ctx.captures(rule, "comm", kernel)
        parts.append(f"the kernel killed {', '.join(comms[:3])} for memory")
    for _ev, g in ctx.samples(rule, ["memcg_limit_kill"])[:1]:
        # Kernels before 4.19 name the memory cgroup whose limit was reached (a Slurm job's or step's).
        parts.append(f"the kernel's OOM killer killed a task of {g['task_cg']} at the memory limit of {g['limit_cg']}")
    if "k8s_system_oom" in names:
        victims = ctx.captures(rule, "comm", ["k8s_system_oom"])
        parts.append(f"the kubelet reports the node's OOM killer killed {', '.join(victims[:3])}")
    if "ray_memory_monitor" in names:
        workers = ctx.captures(rule, "workers", ["ray_memory_monitor"])
        parts.append(f"Ray's memory monitor killed {', '.join(workers[:3])} worker(s) under host memory pressure")
    if names & {"ray_task_oom", "ray_threshold"} and "ray_memory_monitor" not in names:
        parts.append("Ray's memory monitor killed a task: the node ran low on host memory")
    for _ev, g in ctx.samples(rule, ["ray_oom_v1"])[:1]:
        parts.append(f"Ray's memory monitor stopped the task: more than {g['pct']}% of {g['host']}'s memory was in use")
    if "container_oom" in names:
        parts.append("the container reached its memory limit")
    if "k8s_evicted_memory" in names:
        parts.append("Kubernetes evicted the pod: the node was low on memory")
    if "k8s_oomkilled" in names:
        parts.append("Kubernetes killed the container at its memory limit (OOMKilled)")
    task_table = ""
    if names & {"oom_task_table", "oom_task_header"} and not names & set(kernel):
        task_table = _oom_task_table(rule, ctx)
        parts.append(task_table)
    if "kernel_invoked" in names and not names & set(kernel):
        parts.append(f"{', '.join(ctx.captures(rule, 'comm', ['kernel_invoked'])[:3])} invoked the kernel's OOM killer")
    for _ev, g in ctx.samples(rule, ["batch_memory_limit", "condor_memory"])[:1]:
        parts.append(f"the batch system ended the job at its memory limit ({g['what']})")
    if "sacct_state" in names and not parts:
        parts.append("Slurm recorded the job as OUT_OF_MEMORY")
    for _ev, groups in ctx.samples(rule, ["host_alloc"])[:1]:
        parts.append(f"the program could not allocate {groups['size']} of host memory")
    for _ev, groups in ctx.samples(rule, ["cpu_alloc"])[:1]:
        parts.append(f"PyTorch could not allocate {int(groups['bytes']) / (1 << 30):.1f} GiB of host memory")
    for _ev, groups in ctx.samples(rule, ["th_alloc"])[:1]:
        parts.append(f"Torch's CPU allocator could not get {groups['size']} of host memory")
    if "exceeded_at_some_point" in names and not parts:
        parts.append("Slurm says the job exceeded its memory limit")
    confidence = None
    severity = None
    assumed: list[str] = []
    if names == {"dataloader_killed"}:
        parts.append("a DataLoader worker was killed by SIGKILL, which is almost always the host's OOM killer")
        confidence = 0.6
    if task_table and names <= {"oom_task_table", "oom_task_header"}:
        # The kernel prints this list only in an OOM report, but the victim line is not in the excerpt.
        confidence = 0.7
        assumed.append("the OOM killer took the task with the most resident memory: its victim line is not in the excerpt")
    weak = {"shell_killed", "enomem", "dataloader_killed", "ray_worker_sigkill"}
    if names == {"ray_worker_sigkill"}:
        parts.append(
            "a Ray worker process died of SIGKILL (connection error code 2), which Ray's OOM guide names as the "
            "sign of the OS OOM killer; `ray stop --force` or a crashed worker print the same"
        )
        # One of three possible causes Ray lists: a lead under the failure, never the verdict on its own.
        severity, confidence = "warning", 0.45
        assumed.append("the kernel's OOM killer sent the SIGKILL: the logs show no OOM message")
    if names <= weak and names & {"shell_killed", "enomem"}:
        # Signs from inside the job only: SIGKILL and ENOMEM have other senders, so say what was assumed.
        if "shell_killed" in names:
            pids = ctx.captures(rule, "pid", ["shell_killed", "shell_killed_zh"])
            which = f"process {', '.join(pids[:3])}" if pids else "a command"
            parts.append(f"the shell reports {which} Killed (SIGKILL)")
        if "enomem" in names:
            parts.append("a process could not get host memory ([Errno 12] Cannot allocate memory)")
        confidence = 0.75 if len(names) > 1 else 0.55
        assumed.append("the kernel's OOM killer sent the SIGKILL / refused the memory: the logs show no OOM message")
    where = f" on {hosts_text(list(hosts))}" if hosts else ""
    if names == {"exceeded_at_some_point"} and not ctx.job_failed():
        # slurmstepd prints it when the cgroup's limit was hit at any time (pages reclaimed or swapped),
        # also for steps that went on and ended well: memory pressure, not a kill.
        parts = ["Slurm says the step reached its memory limit at some point (pages were reclaimed or swapped out); "
                 "nothing was killed and the logs show no failure"]
        severity, confidence = "warning", 0.6
    detail = ("Host memory ran short" if severity else "Host memory ran out") + where + ": " + "; ".join(parts) + "."
    values = {"step": "StepId=" + ", ".join(steps[:3]) if steps else "the job"}
    return [
        ctx.make_finding(
            rule, detail=detail, hosts=list(hosts), values=values, confidence=confidence, assumed=assumed,
            severity=severity,
        )
    ]
