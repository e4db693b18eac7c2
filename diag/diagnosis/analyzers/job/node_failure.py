"""Node failure: node-failure.

Reads slurmctld's, slurmstepd's and srun's words for a node lost to the job (NODE_FAIL, Not responding, Kill task
failed, a reboot, a failed prolog), the batch systems' (PBS, Flux, HPE PALS), mpirun's and Hydra's lost daemons,
Kubernetes' and Ray's lost nodes and a cloud node's failed bootstrap; weighs a node left drained by a job that ended
otherwise, a node preempted (preempted's), and mpirun's daemons that never started. Without any of them, an NCCL
peer that refused its connection in a failed job.
"""

from __future__ import annotations

import re

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or
from diag.diagnosis.analyzers.job.preempted import taken_back
from diag.diagnosis.analyzers.launch.pmix import daemon_never_called_back, ssh_login_failed
from diag.diagnosis.context import Context, hosts_text
from diag.hostlist import expand
from diag.report import Finding

K8S_NODE_LOST = ["k8s_node_status", "k8s_status_unknown", "k8s_taint_eviction", "k8s_node_eviction"]
RAY_NODE_LOST = [
    "ray_health_check", "ray_node_died_error", "ray_raylet_died", "ray_raylet_terminated", "ray_objects_lost"
]


# A provider or scheduler taking the node back: the node's "death" that Ray or Kubernetes reports next is that.
# A task launch that failed because the node could not be reached, not because its slurmd refused it.
_LOST_NODE = re.compile(
    r"(?i)communication connection failure|connection (?:refused|reset)|no route to host|not responding|"
    r"zero bytes were transmitted|node (?:is )?down|host is down"
)

# slurmctld's and the batch systems' own words naming the node they lost.
CTLD_LOST = ["ctld_failed_node", "slurmd_error_running", "kill_task_reason", "batch_complete_failure",
             "sinfo_not_responding", "instance_gone", "mpirun_lost_remote"]  # fmt: skip
FLUX_SHELL_LOST = ["flux_lost_shell", "flux_shell_lost_doom", "flux_unkillable"]
# What a few signatures say, in the detail's order.
LOST_NODE_SAYS = [
    (["kill_task_reason", "flux_unkillable"],
     "the node is drained because the job's processes did not die (Kill task failed / unkillable processes: stuck "
     "in the kernel, often a hung GPU or file system)"),
    (["instance_gone"],
     "the node's cloud VM was stopped or deleted under the job (Instance stopped/deleted; a preempted spot VM gets "
     "the same reason)"),
    (["mpirun_lost_remote", "mpirun_heartbeat"],
     "mpirun lost the node mid-run (its daemon stopped answering, or its processes stopped sending heartbeats): the "
     "node went down, its network dropped, or the daemon died"),
    (FLUX_SHELL_LOST, "Flux lost contact with the job shell on a node (the node or its broker went away)"),
    (["hydra_proxy_closed"],
     "mpiexec (Hydra) lost the connection to a node's proxy before it reported its processes' exit: the node went "
     "down, or the proxy was killed there (the OOM killer, a dropped ssh)"),
    (["step_node_unavailable"],
     "srun could not create its step because a node of the allocation is down or drained (Required node not "
     "available)"),
]  # fmt: skip
# A node's drain reason (and slurmctld's line that sets it), left also by a job that ended for another reason.
DRAINED_AFTER = {"kill_task_reason", "batch_complete_failure", "slurmd_error_running"}
# Processes that did not die when the job was being ended: the node's fault only when nothing else ended it.
UNKILLABLE = {*DRAINED_AFTER, "kill_task_failed", "flux_unkillable"}
MPIRUN_LOST = {"mpirun_lost_remote", "mpirun_heartbeat"}
# sinfo's rows for nodes Slurm holds down or failed: the cluster's state, not the job's record.
SINFO_ROWS = ["sinfo_down_row", "sinfo_fail_row"]
# A node lost to the job, or a process there killed / a node drained by hand: error, not critical.
UNSURE = {"hydra_proxy_closed", "step_node_unavailable"}

TAKEN_BACK = ["cloud_preempted", "spot_interruption", "termination_notice", "node_shutdown", "node_termination",
              "spot_itn", "ray_node_preempted"]  # fmt: skip


def _is_mount(groups: dict[str, str]) -> bool:
    """A bootstrap step that mounts shared storage (Chef's mount[/home]): the storage is missing, not the node."""
    return groups.get("resource", "").startswith("mount[")


def node_failure(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return _peer_gone(rule, ctx)
    if {n for n, _ in ctx.stats(rule)} == {"pcluster_cookbook"} and all(
        _is_mount(g) for _, g in ctx.samples(rule, ["pcluster_cookbook"])
    ):
        return []  # the node's bootstrap could not mount the shared file system: shared-storage-missing's
    if {n for n, _ in ctx.stats(rule)} == {"task_launch_failed"} and not any(
        _LOST_NODE.search(r) for r in ctx.captures(rule, "reason", ["task_launch_failed"])
    ):
        # slurmd on that node answered and refused the launch (a CPU binding, an expired credential, a
        # munge key it does not share): the node is up; unexplained-failure says why it refused.
        return []
    soft_only = {n for n, _ in ctx.stats(rule)} <= {
        *K8S_NODE_LOST, *RAY_NODE_LOST, "ray_node_dead", "ray_node_died", "ray_raylet_marked_dead"
    }
    if soft_only and taken_back(ctx) & set(TAKEN_BACK):
        return []  # the node died of its preemption, which preempted reports
    failed: dict[str, None] = {}
    for expr in ctx.captures(rule, "nodes", ["node_failure_on"]):
        for host in expand(expr):
            failed[host] = None
    for host in ctx.captures(rule, "host", ["task_launch_failed", "kill_task_failed", "ume_banner"]):
        failed[host] = None
    for ev, _g in ctx.samples(rule, ["pals_shepherd"]):
        if host := ctx.host_for(ev):
            failed[host] = None
    batch = ["pbs_node_down", "pbs_mom_lost", "pbs_join_failed", "flux_node_failure", "pals_shepherd", *FLUX_SHELL_LOST]
    for expr in ctx.captures(
        rule,
        "nodes",
        [
            "not_responding", "unexpected_reboot", "prolog_failure", "low_real_memory", "not_ready", *SINFO_ROWS,
            *batch, *CTLD_LOST,
        ],
    ):  # fmt: skip
        for host in expand(expr):
            failed[host] = None
    parts = []
    if failed:
        # Only Slurm's own words make it "Slurm" that lost the node; mpirun, Flux or PBS say so for themselves.
        others = {n for n, _ in ctx.stats(rule)} <= {*batch, "pbs_sister_lost", "mpirun_lost_remote", "hydra_proxy_closed"}
        parts.append(f"{'the job lost' if others else 'Slurm lost'} {hosts_text(list(failed))}")
    ids = ctx.captures(rule, "nodeid", ["io_error", "io_timeout"])
    if ids:
        parts.append(f"srun lost the connection to the slurmstepd of node index {', '.join(ids[:6])} of the step")
    reasons = ctx.captures(rule, "reason", ["task_launch_failed"])
    if reasons:
        parts.append(f"task launch failed: {reasons[0]}")
    if ctx.stats(rule, ["ume_banner"]):
        parts.append("slurmstepd ended the job for an uncorrectable memory error on the node: a hardware fault")
    if ctx.stats(rule, ["kill_task_failed"]):
        if "RUNNING" in ctx.captures(rule, "why", ["kill_task_failed"]):
            parts.append(
                "the step never reached running and could not be ended in time (stuck in its prolog, container "
                "set-up or a hung file system): slurmstepd drains such a node"
            )
        else:
            parts.append(
                "processes did not die on SIGKILL (Kill task failed: stuck in the kernel, often a hung GPU or file "
                "system)"
            )
    if ctx.stats(rule, ["ctld_failed_node", "requeue_node_fail"]):
        requeued = " and requeued the job" if ctx.stats(rule, ["requeue_node_fail"]) else ""
        parts.append(f"Slurm's controller declared the node failed, ended the job's work on it{requeued}")
    if ctx.stats(rule, ["wrong_batch_host"]):
        sender = first_or(ctx.captures(rule, "sender", ["wrong_batch_host"]))
        parts.append(
            f"the batch script's former node ({sender}) reported its end after the job had been requeued "
            "elsewhere: slurmctld asks whether it was requeued for a node failure"
        )
    if ctx.stats(rule, ["slurmd_error_running", "batch_complete_failure"]):
        why = first_or(ctx.captures(rule, "reason", ["slurmd_error_running"]))
        parts.append(
            "the node's slurmd reported a fatal error for the batch job"
            + (f" ({why})" if why else "")
            + " and slurmctld drained it (batch job complete failure)"
        )
    parts += [says for names, says in LOST_NODE_SAYS if ctx.stats(rule, names)]
    if ctx.stats(rule, ["not_responding", "sinfo_not_responding"]):
        since = first_or(ctx.captures(rule, "time", ["not_responding", "sinfo_not_responding"]))
        who = "it" if failed else "a node of the job"
        when = f" at {since}" if since else ""
        parts.append(f"Slurm's controller marked {who} Not responding{when}: its slurmd stopped answering")
    if ctx.stats(rule, ["not_ready"]):
        parts.append("the allocated nodes never became ready (they did not boot or resume in time: ResumeTimeout)")
    if ctx.stats(rule, ["prolog_failure"]):
        parts.append("the node's Prolog failed as the job started there: Slurm drains such a node and revokes the allocation")
    if ctx.stats(rule, ["launch_failed_held"]):
        parts.append(
            "Slurm could not start the batch script on its node and requeued the job held (launch failed requeued "
            "held): that node's slurmd or prolog failed (its slurmd log says why; scontrol release <job> after the fix)"
        )
    if ctx.stats(rule, ["unexpected_reboot"]):
        parts.append("Slurm saw the node come back with a new boot time (Node unexpectedly rebooted): it went down mid-job")
    if ctx.stats(rule, ["node_state_down"]):
        parts.append("Slurm shows the node DOWN or not responding")
    states = ctx.captures(rule, "state", SINFO_ROWS)
    if states:
        parts.append(
            f"sinfo shows the node {', '.join(dict.fromkeys(states))}: Slurm holds it down or failed (a `*` means "
            "its slurmd does not answer); `sinfo -R` gives the reason"
        )
    for _ev, g in ctx.samples(rule, ["local_disk_full"])[:1]:
        where = g.get("path") or g.get("template") or "the temp directory ($TMPDIR or /tmp)"
        parts.append(
            f"a node's local disk is full: No space left on device for {where[:100]}, so whatever writes temp files "
            "there fails on that node"
        )
    if ctx.stats(rule, ["state_node_fail"]):
        parts.append("Slurm's record says the job ended in state NODE_FAIL")
    if ctx.stats(rule, [*batch, "pbs_sister_lost"]):
        parts.append("the batch system (PBS, Flux, HPE PALS) lost a node of the job and ended or requeued it")
    if ctx.stats(rule, ["pbs_node_failure", "mom_unreachable"]):
        parts.append("the batch server lost the node (its MOM did not answer) and ended the job for node failure")
    if ctx.stats(rule, ["low_real_memory", "reason_low_memory"]):
        parts.append(
            "Slurm refused the node's registration: it came back with less memory than slurm.conf gives it (Low "
            "RealMemory) and is drained: a node that rebooted or a cloud VM replaced (spot eviction) mid-job"
        )
    if ctx.stats(rule, ["ompi_lost_node"]):
        parts.append(
            "Open MPI lost the daemon on a node of the job mid-run (ORTE has lost communication with its daemon): "
            "the node went down or its network dropped (the help box names it: hostname)"
        )
    if ctx.stats(rule, K8S_NODE_LOST):
        parts.append("Kubernetes lost a node (its kubelet stopped posting status) and evicted the job's pods from it")
    if ctx.stats(rule, RAY_NODE_LOST):
        parts.append("Ray lost a node (health check failed, raylet died) and the tasks and objects on it with it")
    if ctx.stats(rule, ["k8s_not_ready", "k8s_unreachable"]):
        parts.append("Kubernetes marked a node NotReady or unreachable (its kubelet stopped reporting) and evicts its pods")
    if ctx.stats(rule, ["kernel_panic"]):
        why = ctx.captures(rule, "why", ["kernel_panic"])
        reason = f" ({why[0]})" if why else ""
        parts.append(f"a node's kernel panicked{reason}: it went down with the job's processes")
    if ctx.stats(rule, ["ray_node_dead", "ray_node_died", "ray_node_timed_out", "ray_raylet_marked_dead"]):
        parts.append("Ray marked a node dead (it stopped answering heartbeats) and the work on it died with it")
    for _ev, g in ctx.samples(rule, ["pcluster_bootstrap"])[:1]:
        parts.append(
            f"ParallelCluster's clustermgtd found a compute node that failed to bootstrap ({g['why'][:140]}): jobs sent "
            "to it cannot start, and repeated failures put the queue in protected mode"
        )
    for _ev, g in [(ev, g) for ev, g in ctx.samples(rule, ["pcluster_cookbook"]) if not _is_mount(g)][:1]:
        parts.append(
            f"a compute node's ParallelCluster bootstrap failed at {g['resource']} ({g['cookbook']}::{g['recipe']}: "
            f"{g['why'][:120]}): the node never joins Slurm, so jobs sent to it fail (its cloud-init-output.log and "
            "chef-client.log say more)"
        )
    reporters = ctx.captures(rule, "reporter", ["banner", "banner_old"])
    if ctx.stats(rule, ["banner", "banner_old"]):
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
    # Ray or a node's state alone, in a run that shows no failure: the work was moved; worth a warning.
    soft = {
        "ray_node_dead", "ray_node_died", "ray_node_timed_out", "node_state_down", "k8s_not_ready", "k8s_unreachable",
        *K8S_NODE_LOST, *RAY_NODE_LOST,
    }  # fmt: skip
    chosen = {n for n, _ in ctx.stats(rule)}
    severity = "warning" if chosen <= soft and not ctx.job_failed() else None
    confidence = None
    assumed: list[str] = []
    if chosen <= set(SINFO_ROWS):
        # A sinfo row is the cluster's state when it was run, not the job's record: it names the node only.
        severity, confidence = "warning", 0.4
        assumed.append(
            "the job ran on (or was sent to) the node sinfo shows down: the row says what the node is, not which "
            "jobs it held"
        )
    elif chosen == {"local_disk_full"}:
        # ENOSPC on /tmp is the node's disk; whether it was full before the job or the job filled it, the logs
        # do not say. Either way that node fails what writes there until it is cleaned.
        severity, confidence = "error", 0.5
        assumed.append(
            "the node's disk was full before the job (it needs cleaning): a job that fills /tmp with its own temp "
            "files ends the same way (point TMPDIR at a larger disk)"
        )
    if chosen == {"ray_raylet_terminated"}:
        # Ray names the OOM killer, a crash of the raylet itself and other signals as possible reasons.
        confidence = 0.5
        assumed.append("the raylet died with its node: Ray lists SIGKILL by the OOM killer among the possible reasons")
    ended_by = _ended_otherwise(ctx)
    if (
        ended_by
        and chosen <= {*UNKILLABLE, "wrong_batch_host"}
        and "RUNNING" not in ctx.captures(rule, "why", ["kill_task_failed"])
    ):
        # The job was being ended for another reason and its processes would not die (stuck in the kernel on
        # a hung file system or GPU): the node is left drained, but what ended the job is that other cause.
        severity, confidence = "warning", 0.6
        detail = f"The job was ended by {ended_by} and its processes did not die on the node. {detail}"
        assumed.append(f"the node's state did not end the job: {ended_by} did, and the kill then failed")
        if ended_by == "a cancel" and "kill_task_failed" in chosen:
            # A cancel with no reason says nothing of why; processes that then outlive SIGKILL are stuck in
            # the kernel, which is what hangs a job until someone cancels it. A time limit or a preemption
            # ends a job for its own reason; a cancel leaves the stuck node as the likelier one.
            severity, confidence = "error", 0.5
            assumed[-1] = (
                "the cancel ended a job that the node's stuck processes had hung: a cancel for another reason "
                "leaves the same lines"
            )
    elif chosen <= {*DRAINED_AFTER, "wrong_batch_host"} and chosen & DRAINED_AFTER:
        # A drain reason that outlives the job: the processes would not die when the job ended, whatever
        # ended it (its time limit, a failed epilog). The node needs an admin; the job's cause may be another.
        severity, confidence = "warning", 0.6
        assumed.append("the job ended because of the node: a drain reason is also left by a job that ended otherwise")
    elif chosen == {"wrong_batch_host"}:
        # slurmctld's question, not its finding: the node may have failed, or the job been requeued by hand.
        severity, confidence = "warning", 0.5
        assumed.append("the requeue was for a node failure: slurmctld only asks")
    elif chosen <= MPIRUN_LOST and (daemon_never_called_back(ctx) or ssh_login_failed(ctx)):
        # The box that names the lost daemon comes with the one for a daemon that never called back after
        # launch, or with the launcher's ssh to a node failing: mpirun's start of its daemons failed, not a
        # node that was up and then went down.
        severity, confidence = "warning", 0.3
        assumed.append("the node went down, though its daemon never started (a start-up failure)")
    elif chosen <= MPIRUN_LOST and _pmix_failed_too(ctx):
        # mpirun's lost daemon among PMIx's own errors: the wire-up between the nodes failed (pmix-runtime-error).
        severity, confidence = "warning", 0.5
        assumed.append("the node went down, not the PMIx wire-up between the nodes that the PMIx errors show")
    elif chosen <= {*MPIRUN_LOST, "instance_gone", "wrong_batch_host", *UNSURE}:
        # The node is lost to the job either way, but these words also fit a dropped network path, a daemon
        # that died, or a spot VM taken back: less sure than Slurm's own NODE_FAIL.
        confidence = 0.75
        if chosen & UNSURE:
            severity, confidence = "error", 0.65
        assumed.append(
            "the node itself went down, not only the network path to it, its daemon or (cloud) a preempted VM"
        )
    return [
        ctx.make_finding(
            rule, detail=detail, hosts=names, values=values, severity=severity, confidence=confidence, assumed=assumed
        )
    ]


def _ended_otherwise(ctx: Context) -> str:
    """What else the logs say ended the job (its time limit, a preemption, a cancel), or ""."""
    if ctx.count("job-time-limit"):
        return "its time limit"
    if ctx.count("preempted", ["preemption", "state_preempted"]):
        return "a preemption"
    if ctx.count("job-cancelled", ["cancelled", "lsf_owner", "condor_rm", "flux_cancel"]):
        return "a cancel"
    return ""


def _pmix_failed_too(ctx: Context) -> bool:
    """Whether pmix-runtime-error's own messages (not mpirun's lost-daemon box it shares) are in the logs."""
    pmix = ctx.rules.get("pmix-runtime-error")
    if pmix is None:
        return False
    daemon_box = {"daemon_lost", "daemon_start_failed"}
    own = [s.name for s in pmix.signatures if s.name not in daemon_box and not s.fact]
    return bool(ctx.stats(pmix, own))


def _peer_gone(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL could not connect to a peer that refused (nothing listened), in a job that failed of it:
    the peer's node broke or its process died first. Which of the two the logs do not say."""
    addrs = ctx.captures(rule, "addr", ["peer_refused"])
    if not addrs or not ctx.job_failed():
        return []
    detail = (
        f"NCCL's connection to the peer at {', '.join(addrs[:4])} was refused: nothing listened there any more, "
        "so that peer's node has a broken network or went down (its address names it: reverse DNS), or its "
        "process died first; resubmit excluding that node if its own log shows no error"
    )
    assumed = ["the peer's node broke, not its process: the logs do not show the peer's side"]
    return [
        ctx.make_finding(
            rule, ["peer_refused"], detail=detail + ".", severity="error", confidence=0.45, assumed=assumed
        )
    ]
