"""Job-fate analyzers (diag/diagnosis/analyzers/job/): what Slurm says ended the job (time limit, OOM,
node failure, preemption or scancel), and the honest 'unexplained' when nothing known matched."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, top

WATCHDOG = (
    "[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=20000) ran for "
    "20053 milliseconds before timing out."
)
JOB_TIME_LIMIT = "slurmstepd-n0: error: *** JOB 46 ON n0 CANCELLED AT 2026-12-02T11:11:58 DUE TO TIME LIMIT ***"


# ---------------------------------------------------------------------------------- job_time_limit
def test_time_limit_is_the_cause_and_its_reporting_node_is_no_culprit(rules):
    report = diagnose(rules, [WATCHDOG, JOB_TIME_LIMIT, "srun: error: n0: task 0: Terminated"])
    limit = found(report, "job-time-limit")
    assert (limit.severity, limit.hosts) == ("error", [])  # n0 is where slurmstepd reported, nothing more
    assert found(report, "nccl-timeout").explained_by == "job-time-limit"


def test_time_limit_after_an_earlier_error_is_how_the_job_ended_not_why(rules):
    broken_ib = [
        "slinky-0:12:12 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.10.0.10<0>",
        "slinky-0:12:12 [0] NCCL INFO Using network IB",
        "slinky-1:13:13 [0] transport/net_ib.cc:201 NCCL WARN NET/IB : Unable to open device mlx5_0",
        "slinky-1:13:13 [0] NCCL INFO Using network Socket",
    ]
    report = diagnose(rules, broken_ib + [JOB_TIME_LIMIT])
    assert found(report, "job-time-limit").severity == "warning"
    assert report.findings[0].id == "ib-devices-not-mounted"


# ----------------------------------------------------------------------------------------- job_oom
def test_cgroup_oom_names_the_node_it_happened_on(rules):
    lines = [
        "1: slurmstepd-n1: error: Detected 1 oom-kill event(s) in StepId=59.0. Some of your processes may have been "
        "killed by the cgroup out-of-memory handler.",
        "srun: error: n1: task 1: Out Of Memory",
    ]
    finding = found(diagnose(rules, lines), "job-oom")
    assert (finding.severity, finding.hosts) == ("error", ["n1"])


def test_gpu_out_of_memory_is_not_host_memory(rules):
    line = "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    assert "job-oom" not in ids(diagnose(rules, [line]))


# ------------------------------------------------------------------------------------ node_failure
def test_node_failure_names_the_lost_node_not_the_survivor_that_reported_it(rules):
    lines = [
        "srun: error: Node failure on n1",
        "slurmstepd-n0: error: *** JOB 50 ON n0 CANCELLED AT 2026-12-02T11:13:37 DUE TO NODE FAILURE, SEE SLURMCTLD "
        "LOG FOR DETAILS ***",
        "srun: error: n1: task 1: Terminated",
        "srun: error: n0: task 0: Terminated",
        WATCHDOG,
    ]
    report = diagnose(rules, lines)
    failure = found(report, "node-failure")
    assert (failure.severity, failure.hosts) == ("critical", ["n1"])
    assert found(report, "nccl-timeout").explained_by == "node-failure"


def test_a_peer_that_crashed_is_no_node_failure(rules):
    lines = [
        "[rank24]: ValueError: loss is nan at step 310",
        "srun: error: slinky-3: task 3: Exited with exit code 1",
    ]
    report = diagnose(rules, lines)
    assert "node-failure" not in ids(report)
    unexplained = found(report, "unexplained-failure")
    assert (unexplained.ranks, unexplained.hosts) == ([24], ["slinky-3"])


# --------------------------------------------------------------------------------------- preempted
def test_preemption_is_an_error_whose_terminated_tasks_are_consequences(rules):
    lines = [
        "slurmstepd-n0: error: *** JOB 68 ON n0 CANCELLED AT 2026-12-02T11:21:02 DUE TO PREEMPTION ***",
        "srun: error: n1: task 1: Terminated",
        WATCHDOG,
    ]
    report = diagnose(rules, lines)
    assert found(report, "preempted").severity == "error"
    assert "unexplained-failure" not in ids(report)
    assert found(report, "nccl-timeout").explained_by == "preempted"


def test_plain_scancel_is_only_info(rules):
    lines = [
        "slurmstepd: error: *** JOB 902311 ON slinky-0 CANCELLED AT 2025-08-12T10:02:41 DUE to SIGNAL Terminated ***",
        "srun: error: slinky-0: task 0: Terminated",
    ]
    report = diagnose(rules, lines)
    assert found(report, "job-cancelled").severity == "info"
    assert "preempted" not in ids(report), "a cancel without a reason is never a preemption"
    assert "unexplained-failure" not in ids(report)


# ---------------------------------------------------------------------------------- unexplained_failure
KILL_ON_BAD_EXIT = [
    "1: KeyError: 'labels'",
    "srun: error: slinky-1: task 1: Exited with exit code 1",
    "0: slurmstepd: error: *** STEP 41178.0 ON slinky-0 CANCELLED AT 2023-05-15T09:00:00 ***",
    "srun: error: slinky-0: task 0: Terminated",
]


def test_cancel_after_a_task_failed_is_a_failure_not_a_scancel(rules):
    # The same plain banner as a scancel, but task 1 failed first: srun's --kill-on-bad-exit cancelled the step.
    report = diagnose(rules, KILL_ON_BAD_EXIT)
    assert "preempted" not in ids(report)
    assert found(report, "unexplained-failure").severity == "error"


def test_unexplained_failure_names_the_node_that_failed_not_the_ones_cancelled_after_it(rules):
    assert found(diagnose(rules, KILL_ON_BAD_EXIT), "unexplained-failure").hosts == ["slinky-1"]


def test_no_failure_line_means_no_unexplained_failure(rules):
    assert "unexplained-failure" not in ids(diagnose(rules, ["step 100 loss 2.31", "training finished"]))


def test_stepd_notices_printed_as_errors_on_a_run_that_went_on_are_no_failure(rules):
    # pyxis reports through slurm_error() options it ignores without an image and the SIGTERM it
    # forwards; Slurm 19.05-20.02's accounting raced with an exiting process; slurmstepd fell back
    # to TMPDIR=/tmp. None is a failure of the run; a real error line next to them still is.
    notices = [
        "slurmstepd: error: pyxis: ignoring --container-mounts because neither --container-image nor "
        "--container-name is set",
        "slurmstepd: error: pyxis: received SIGTERM, forwarding to child 41822",
        "slurmstepd: error: _is_a_lwp: open() /proc/40417/status failed: No such file or directory",
        "slurmstepd: error: Unable to create TMPDIR [/local/scratch/48213]: Permission denied",
        "slurmstepd: error: Setting TMPDIR to /tmp",
        # the gpu/nvml plugin's accounting poll, with srun --label's prefix (an MLPerf run that finished)
        "16: slurmstepd: error: NVML: Failed to get Compute running procs(7): Insufficient Size",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, [*notices, "step 100 loss 2.31"]))
    failed = diagnose(rules, [*notices, "slurmstepd: error: execve(): train.py: Permission denied"])
    assert found(failed, "unexplained-failure").severity == "error"


def test_submitits_uncompleted_job_error_names_the_cause_by_the_state_it_quotes(rules):
    # submitit (core/core.py) raises UncompletedJobError quoting sacct's state on its own line;
    # the user pastes it from the driver process, with none of the job's own output.
    for state, cause in (
        ("TIMEOUT", "job-time-limit"),
        ("OUT_OF_MEMORY", "job-oom"),
        ("NODE_FAIL", "node-failure"),
        ("PREEMPTED", "preempted"),
        ("FAILED", "unexplained-failure"),
    ):
        lines = [
            "submitit.core.utils.UncompletedJobError: Job 48213 (task: 0) with path /pfs/u/logs/48213_0_result.pkl",
            f"has not produced any output (state: {state})",
            "No output/error stream produced ! Check: /pfs/u/logs/48213_0_log.out",
        ]
        top(diagnose(rules, lines), cause)


def test_the_kernels_and_pytorchs_own_words_for_host_memory_running_out(rules):
    # mm/oom_kill.c: the 4.19+ summary line naming the cgroup and task, and the victim line older
    # kernels print on its own; c10/core/impl/alloc_cpu.cpp's two wordings of a failed CPU allocation.
    for lines, says in (
        (
            [
                "slinky-1: [ 1234.5] oom-kill:constraint=CONSTRAINT_MEMCG,nodemask=(null),cpuset=/,mems_allowed=0-1,"
                "oom_memcg=/slurm/uid_1000/job_48213,task_memcg=/slurm/uid_1000/job_48213/step_0,task=python,"
                "pid=4412,uid=1000",
            ],
            "killed python",
        ),
        (["slinky-1: [ 1234.5] Killed process 4412 (pt_main_thread) total-vm:123456kB, anon-rss:98765kB"], "killed pt_"),
        (
            [
                "[rank3]: RuntimeError: [enforce fail at ../c10/core/impl/alloc_cpu.cpp:83] err == 0. DefaultCPUAllocator:"
                " can't allocate memory: you tried to allocate 68719476736 bytes. Error code 12 (Cannot allocate memory)"
            ],
            "64.0 GiB",
        ),
    ):
        report = diagnose(rules, [*lines, "srun: error: slinky-1: task 3: Exited with exit code 1"])
        assert says in top(report, "job-oom").detail, (says, report.findings[0].detail)


def test_a_node_slurm_marked_not_responding_is_a_node_failure(rules):
    finding = found(
        diagnose(rules, ["[2026-12-02T11:13:37.123] error: Nodes gpu[03-04] not responding, setting DOWN"]),
        "node-failure",
    )
    assert finding.hosts == ["gpu03", "gpu04"]
    reason = found(diagnose(rules, ["Reason=Not responding [slurm@2022-07-10T02:00:55]"]), "node-failure")
    assert "2022-07-10T02:00:55" in reason.detail
    assert "node-failure" not in ids(diagnose(rules, ["[2026-12-02T11:20:01.004] Node gpu03 now responding"]))


def test_slurmctld_and_sinfo_name_the_node_they_lost(rules):
    for lines, hosts in (
        (["[2026-11-30T03:14:07.413] Killing JobId=4812733 on failed node node018"], ["node018"]),
        (["[2018-02-11T03:14:07.413] Killing job_id 4812733 on failed node node018"], ["node018"]),
        (["[2026-11-30T03:14:07.413] Killing StepId=4812733.0 due to failed node node018"], ["node018"]),
        (["REASON               USER      TIMESTAMP           NODELIST",
          "Not responding       slurm     2026-11-30T03:14:07 node018"], ["node018"]),
    ):  # fmt: skip
        finding = top(diagnose(rules, lines), "node-failure")
        assert (finding.severity, finding.hosts) == ("critical", hosts), lines
    # Slurm 14.11's banner names the reporting node inside the reason; a requeue for a node failure is no preemption.
    old = "slurmstepd: *** JOB 4812733 CANCELLED AT 2015-06-11T03:14:07 DUE TO NODE n0 FAILURE ***"
    assert "reported by n0" in top(diagnose(rules, [old]), "node-failure").detail
    requeue = "[2026-11-30T03:14:07.414] _job_complete: requeue JobId=4812733 due to node failure"
    assert "requeued" in top(diagnose(rules, [requeue]), "node-failure").detail
    assert "preempted" not in ids(diagnose(rules, [requeue]))


def test_a_sacct_table_pasted_whole_still_shows_node_fail(rules):
    lines = [
        "JobID           JobName  Partition    Account  AllocCPUS      State ExitCode ",
        "------------ ---------- ---------- ---------- ---------- ---------- -------- ",
        "4812733           train        gpu         ml        256  NODE_FAIL      0:0 ",
        "4812733.bat+      batch                    ml         64  CANCELLED     0:15 ",
    ]
    assert top(diagnose(rules, lines), "node-failure").severity == "critical"


def test_a_kill_that_failed_after_a_plain_cancel_is_the_stuck_node(rules):
    """A cancel with no reason says nothing of why; processes that then outlive SIGKILL are what hangs a job
    until someone cancels it: the node stays the cause (an error, with what it assumed), not "unexplained"."""
    lines = [
        "[2020-12-14T09:43:55.500] [63532.0] error: *** STEP 63532.0 ON cn106 CANCELLED AT 2020-12-14T09:43:55 ***",
        "[2020-12-14T09:43:55.502] [63532.extern] done with job",
        "[2020-12-14T09:44:56.002] [63532.0] error: *** STEP 63532.0 STEPD TERMINATED ON cn106 AT "
        "2020-12-14T09:44:56 DUE TO JOB NOT ENDING WITH SIGNALS ***",
    ]
    report = diagnose(rules, lines)
    finding = top(report, "node-failure")
    assert (finding.severity, finding.hosts) == ("error", ["cn106"])
    assert finding.assumed and "unexplained-failure" not in ids(report)


def test_a_sinfo_row_with_a_down_node_is_a_weak_node_failure(rules):
    """A lone sinfo row is the cluster's state, not the job's record: a warning naming the node, saying what it
    assumed; drained or powered-down cloud nodes are no failure."""
    finding = top(diagnose(rules, ["main*        up   infinite      1  down* c01"]), "node-failure")
    assert (finding.severity, finding.hosts) == ("warning", ["c01"])
    assert finding.assumed and "down*" in finding.detail
    fail = top(diagnose(rules, ["dev*             up   infinite      1   fail ip-10-1-16-50"]), "node-failure")
    assert fail.hosts == ["ip-10-1-16-50"]
    calm = [
        "PARTITION AVAIL  TIMELIMIT  NODES  STATE NODELIST",
        "gpu          up 2-00:00:00      1  drain gpu017",
        "cloud        up   infinite     16  idle~ queue1-dy-p5-[1-16]",
    ]
    assert "node-failure" not in ids(diagnose(rules, calm))


def test_a_node_whose_local_disk_is_full_is_a_node_failure_that_says_what_it_assumed(rules):
    heredoc = "-bash: cannot create temp file for here-document: No space left on device"
    finding = top(diagnose(rules, [heredoc, heredoc, "-bash: ls: command not found"]), "node-failure")
    assert finding.severity == "error" and finding.assumed and "local disk is full" in finding.detail
    cache = "OSError: [Errno 28] No space left on device: '/tmp/torchinductor_alice/triton/0/abc.cubin'"
    assert "/tmp/torchinductor_alice" in top(diagnose(rules, [cache]), "node-failure").detail
    # A full shared file system (a quota) or /dev/shm is not the node's disk.
    quota = "OSError: [Errno 28] No space left on device: '/lustre/proj/ckpt/step_2000.pt'"
    assert "node-failure" not in ids(diagnose(rules, [quota]))
    shm = "OSError: [Errno 28] No space left on device: '/dev/shm/torch_881_1712'"
    assert top(diagnose(rules, [shm]), "shm-too-small")


def test_moab_s_wallclock_note_is_a_time_limit(rules):
    lines = ["job deleted", "Job deleted at request of root@gpc-sched-ib0", "MOAB_INFO:  job exceeded wallclock limit"]
    assert top(diagnose(rules, lines), "job-time-limit")


def test_a_kill_that_failed_after_the_time_limit_is_the_time_limit(rules):
    """Processes that would not die when the job was being ended leave the node drained ("Kill task failed"):
    the node needs an admin, but what ended the job is its time limit."""
    lines = [
        "slurmstepd: error: *** JOB 4812733 ON node017 CANCELLED AT 2026-11-30T03:14:07 DUE TO TIME LIMIT ***",
        "slurmstepd: error: *** JOB 4812733 STEPD TERMINATED ON node017 AT 2026-11-30T03:16:07 DUE TO JOB NOT "
        "ENDING WITH SIGNALS ***",
    ]
    report = diagnose(rules, lines)
    assert top(report, "job-time-limit")
    assert found(report, "node-failure").severity == "warning"
    assert "ended by its time limit" in found(report, "node-failure").detail
    # Without another cause the banner stays a node failure; a drain reason alone is a warning.
    assert top(diagnose(rules, lines[1:]), "node-failure").severity == "critical"
    drained = top(diagnose(rules, ["   Reason=Kill task failed [root@2021-03-11T03:20:12]"]), "node-failure")
    assert drained.severity == "warning"
    flux = "1270.005s: job.exception fA3bCdEf2kP type=exec severity=0 shell exited with unkillable processes on gpu-a12"
    assert top(diagnose(rules, [flux]), "node-failure").hosts == ["gpu-a12"]


def test_hydra_losing_a_proxy_and_a_step_on_a_drained_node_are_node_failures_of_less_certainty(rules):
    for line in (
        "[mpiexec@node017] control_cb (mpiexec/pmiserv_cb.c:252): assert (!closed) failed",
        "srun: error: Unable to create step for job 4812733: Required node not available (down, drained or reserved)",
    ):
        finding = top(diagnose(rules, [line]), "node-failure")
        assert finding.severity == "error" and finding.assumed, line
    proxy = "[proxy:0:1@node018] HYD_pmcd_pmip_control_cmd_cb (pm/pmiserv/pmip_cb.c:144): assert (!closed) failed"
    assert "node-failure" not in ids(diagnose(rules, [proxy]))


def test_mpirun_losing_a_remote_daemon_names_its_node_unless_pmix_failed(rules):
    box = [
        "ORTE has lost communication with a remote daemon.",
        "",
        "  HNP daemon   : [[40113,0],0] on node node016",
        "  Remote daemon: [[40113,0],3] on node node019",
    ]
    finding = top(diagnose(rules, box), "node-failure")
    assert finding.hosts == ["node019"] and finding.assumed
    # Slurm's PMIx plugin failing its collectives beside it: the wire-up failed, not the node.
    pmix = (
        "slurmstepd: error:  mpi/pmix_v4: _progress_collect: node018 [1]: pmixp_coll_tree.c:556: Cannot send data "
        "(size = 2214), to node017:0"
    )
    report = diagnose(rules, [*box, pmix])
    assert top(report, "pmix-runtime-error") and found(report, "node-failure").severity == "warning"


def test_a_traceback_cut_off_after_a_store_timeout_is_the_timeout_not_an_unexplained_failure(rules):
    lines = [
        "[rank1]:[W516 14:34:56.854597329 socket.cpp:489] [c10d] waitForInput: socket SocketImpl(fd=79, "
        "addr=[localhost]:41170, remote=[localhost]:29500) timed out after 1800000ms",
        "[rank1]: Traceback (most recent call last):",
        '[rank1]:   File "<frozen runpy>", line 198, in _run_module_as_main',
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "nccl-timeout"
    assert "unexplained-failure" not in ids(report)
    # The exception itself, when shown and not the timeout's, still makes the failure unexplained.
    other = lines + ["[rank1]: ValueError: tokenizer has no pad token"]
    assert diagnose(rules, other).findings[0].id == "unexplained-failure"


def test_submitit_catching_the_preemption_signal(rules):
    lines = [
        "submitit WARNING (2022-07-12 04:18:45,706) - Bypassing signal SIGTERM",
        "submitit WARNING (2022-07-12 04:18:45,881) - Caught signal SIGHUP on learnfair0293: this job is preempted.",
        "submitit INFO (2022-07-12 04:18:45,912) - Requeued job 60601445 (3 remaining timeouts)",
    ]
    finding = found(diagnose(rules, lines), "preempted")
    assert finding.hosts == ["learnfair0293"] and "SIGHUP" in finding.detail


def test_host_memory_exhaustion_in_the_words_of_ray_kubernetes_sacct_and_numpy(rules):
    for line, says in (
        ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.", "Ray"),
        ("  Last State:  Terminated  Reason: OOMKilled  Exit Code: 137", "OOMKilled"),
        ("4412.0  python  lab  16  OUT_OF_ME+  0:125", "OUT_OF_MEMORY"),
        ("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 12.5 GiB for an array with shape (9, 9)", "12.5 GiB"),
        ("slurmstepd: error: Job 4412 exceeded memory limit (9000000 > 8000000), being killed", "4412"),
    ):
        report = diagnose(rules, [line, "srun: error: n3: task 0: Killed"])
        assert report.findings[0].id == "job-oom", (line, [f.id for f in report.findings])
        assert says in report.findings[0].detail, report.findings[0].detail


def test_how_the_job_ended_in_other_schedulers_and_in_slurms_own_record(rules):
    for lines, cause in (
        (["=>> PBS: job killed: walltime 3630 exceeded limit 3600"], "job-time-limit"),
        (["TERM_RUNLIMIT: job killed after reaching LSF run time limit."], "job-time-limit"),
        (["JobId=812 JobName=pretrain JobState=TIMEOUT Reason=TimeLimit"], "job-time-limit"),
        (["812.batch    batch   lab   8   OUT_OF_ME+   0:125"], "job-oom"),
        (["812          pretrain   gpu   lab   64  NODE_FAIL    0:0"], "node-failure"),
        (["Message[1] job cancelled - job preempted (node failure)"], "node-failure"),
        (["JobId=812 JobName=pretrain JobState=PREEMPTED Reason=None"], "preempted"),
        (["EC2 Spot Instance interruption notice: i-0abc terminates in 2 minutes"], "preempted"),
    ):
        report = diagnose(rules, lines + ["Traceback (most recent call last):"])
        assert report.findings and report.findings[0].id == cause, (lines, [f.id for f in report.findings])
        assert "preempted" not in ids(report) or cause == "preempted"


def test_a_timeout_word_in_prose_is_no_time_limit(rules):
    assert "job-time-limit" not in ids(diagnose(rules, ["store get TIMEOUT 30 s, retrying"]))


def test_a_provider_or_ray_notice_in_a_run_that_went_on_is_only_a_warning(rules):
    for line, cause in (
        ("EC2 Spot Instance interruption notice: i-0abc terminates in 2 minutes", "preempted"),
        ("The node with node id: 6a1f and address: 10.0.3.12 and node name: 10.0.3.12 has been marked dead because "
         "the detector has missed too many heartbeats from it.", "node-failure"),
        # Ray before 1.0, and its GCS dropping the node.
        ("The node with client ID 1ead has been marked dead because the monitor has missed too many heartbeats "
         "from it.", "node-failure"),
        ("[2022-08-16 13:02:15,608 W 1678 1692] (gcs_server) gcs_heartbeat_manager.cc:106: Node timed out: f2ae94",
         "node-failure"),
    ):
        went_on = diagnose(rules, [line, "Rescheduled; epoch 4 loss 0.8", "Training completed."])
        assert found(went_on, cause).severity == "warning", line
        failed = diagnose(rules, [line, "Traceback (most recent call last):", "RuntimeError: worker died"])
        assert found(failed, cause).severity in ("error", "critical"), line


def test_nccl_kernels_needing_more_shared_memory_than_the_gpu_has_say_the_release_is_too_old(rules):
    lines = [
        "node1:4766:4780 [0] enqueue.cc:50 NCCL WARN cudaArch 1200 ncclMaxSharedMem 82240 exceeds device/fn maxSharedMem 79856",
        "Test NCCL failure common.cu:1005 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '",
    ]
    finding = top(diagnose(rules, lines), "unexplained-failure")
    assert "does not support the GPU's architecture" in finding.detail


def test_a_launcher_that_cannot_ssh_to_a_node_is_a_failure_saying_so(rules):
    for lines in (
        ["pdsh@node1: node2: ssh: connect to host node2 port 22: Connection refused", "pdsh@node1: node2: ssh exited with exit code 255"],
        ["node2: Permission denied (publickey,password).", "pdsh@node1: node2: ssh exited with exit code 255"],
    ):
        finding = top(diagnose(rules, lines), "unexplained-failure")
        assert "passwordless key" in finding.detail and "srun" in finding.detail


def test_a_node_kubernetes_lost_or_whose_kernel_panicked_is_a_node_failure(rules):
    events = ["Warning  NodeNotReady  2m  node-controller  Node is not ready", "RuntimeError: worker died"]
    assert "NotReady" in top(diagnose(rules, events), "node-failure").detail
    panic = ["[12345.679] Kernel panic - not syncing: Hard LOCKUP"]
    assert "kernel panicked (Hard LOCKUP)" in top(diagnose(rules, panic), "node-failure").detail


def test_tasks_exiting_1_after_a_cleanup_killall_that_found_nothing_are_no_failure(rules):
    exit_1 = "srun: error: taurusi2031: tasks 10-11: Exited with exit code 1"
    for killall in ("picongpu: no process found", "picongpu: Kein Prozess abgebrochen"):
        assert not diagnose(rules, [killall, exit_1]).findings
    # Without it, or with another exit, it is the failure it looks like.
    assert "unexplained-failure" in ids(diagnose(rules, [exit_1]))
    assert "unexplained-failure" in ids(diagnose(rules, ["picongpu: no process found", exit_1.replace("code 1", "code 2")]))


def test_a_failed_nccl_call_no_rule_knows_is_a_warning_that_says_what_it_assumed(rules):
    report = diagnose(rules, ["gpu-3:5512:5530 [1] misc/shmutils.cc:77 NCCL WARN Call to mmap failed : Bad address"])
    finding = found(report, "unexplained-failure")
    assert finding.severity == "warning" and finding.assumed and finding.hosts == ["gpu-3"]
    assert "Call to mmap failed" in finding.detail


def test_a_lone_nccl_warn_of_a_failed_call_pasted_without_its_host_is_still_a_failed_call(rules):
    # NCCL's own words for calls that failed, in the "file:line NCCL WARN" form a paste keeps.
    for line in ("graph/topo.h:230 NCCL WARN Could not find NET with id 0",
                 "transport/p2p.cc:275 NCCL WARN Cuda failure 800 'operation not permitted'"):  # fmt: skip
        finding = found(diagnose(rules, [line]), "unexplained-failure")
        assert finding.severity == "warning" and line.split("WARN ")[1] in finding.detail


def test_an_nccl_warn_that_reports_no_failure_or_one_a_cause_explains_adds_nothing(rules):
    assert ids(diagnose(rules, ["gpu-3:5512:5530 [1] net_fastsocket.cc:652 NCCL WARN Cannot get incoming CPU."])) == set()
    report = diagnose(rules, [
        "gpu-3:5512:5530 [1] misc/shmutils.cc:77 NCCL WARN Call to mmap failed : Bad address",
        "srun: error: gpu-3: task 1: Out Of Memory",
    ])  # fmt: skip
    assert report.findings[0].id == "job-oom"
    assert "unexplained-failure" not in ids(report) or found(report, "unexplained-failure").severity != "warning"


def test_tasks_only_terminated_by_a_signal_are_a_warning_not_a_failure(rules):
    # The end of a healthy job that someone stopped: no error of its own, no banner saying who.
    report = diagnose(
        rules,
        [
            "srun: forcing job termination",
            "srun: error: n1: tasks 0-1: Terminated",
            "srun: error: n2: tasks 2-3: Terminated",
        ],
    )
    finding = found(report, "unexplained-failure")
    assert finding.severity == "warning" and finding.assumed
    assert "signal" in finding.detail
    # A task that exited with an error of its own is a failure.
    failed = diagnose(rules, ["srun: error: n1: task 0: Exited with exit code 1", "srun: error: n2: task 2: Terminated"])
    assert found(failed, "unexplained-failure").severity == "error"


def test_a_process_that_crashed_is_a_failure_even_without_a_python_exception(rules):
    for crash in (
        ["free(): corrupted unsorted chunks", "[n7:186363] *** Process received signal ***", "[n7:186363] Signal: Aborted (6)"],
        ["/var/spool/slurmd/job9/slurm_script: line 12: 48812 Segmentation fault      (core dumped) ./train"],
        ["munmap_chunk(): invalid pointer"],
        # UCX's signal handler, with the backtrace under it and no other error.
        ["[w-0:4682 :0:4682] Caught signal 11 (Segmentation fault: address not mapped to object at address (nil))",
         "==== backtrace (tid:   4677) ====", " 1 0x0000000000050dc2 pncclRedOpDestroy()  ???:0"],
    ):
        finding = found(diagnose(rules, crash), "unexplained-failure")
        assert finding.severity == "error"
        assert crash[0].split(": ")[-1][:20] in finding.detail or "Segmentation fault" in finding.detail


def test_an_nccl_tests_check_that_failed_is_a_failure_shown_with_the_warn_that_names_the_call(rules):
    lines = [
        "my-node:7039:7435 [0] misc/nvmlwrap.cc:183 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found",
        "my-node:7039:7435 [0] NCCL INFO init.cc:881 -> 2",
        "my-node: Test NCCL failure common.cu:1126 'unhandled system error (run with NCCL_DEBUG=INFO for details) / '",
    ]
    report = diagnose(rules, lines)
    finding = found(report, "unexplained-failure")
    assert finding.severity == "error" and "nvmlDeviceGetHandleByPciBusId" in finding.evidence[0].text
    # The WARN names the failing call (NVML, not a socket): no guess about interfaces.
    assert "nccl-socket-ifname" not in ids(report)


def test_a_known_message_outside_the_catalogue_stays_unexplained_but_says_what_it_usually_means(rules):
    # CUDA error 802: the node's Fabric Manager (a node service, not the GPU) is not running.
    report = diagnose(rules, ["[rank0]: RuntimeError: CUDA error: system not yet initialized"])
    finding = report.findings[0]
    assert finding.id == "unexplained-failure" and "Fabric Manager" in finding.detail
    assert "gpu-xid" not in ids(report)
    # The open-file limit is no shared-memory fault, though the message says "shared memory".
    emfile = "RuntimeError: unable to open shared memory object </torch_1234_5678_0> in read-write mode: Too many open files (24)"
    report = diagnose(rules, [emfile])
    assert ids(report) == {"unexplained-failure"} and "ulimit -n" in report.findings[0].detail
    # NCCL's own WARN of a CUDA call refused: the IMEX channel or the IPC namespace.
    warn = diagnose(rules, ["transport/p2p.cc:275 NCCL WARN Cuda failure 800 'operation not permitted'"]).findings[0]
    assert warn.id == "unexplained-failure" and "IMEX" in warn.detail and "--ipc=host" in warn.detail



def test_an_unexplained_failure_says_where_to_look_when_a_peer_went_away_or_memory_could_not_be_pinned(rules):
    closed = "gpu-1:123:456 [0] misc/socket.cc:49 NCCL WARN socketProgress: Connection closed by remote peer gpu-3<45678>"
    finding = found(diagnose(rules, [closed]), "unexplained-failure")
    assert "peer gpu-3 closed the connection" in finding.detail
    # UCX's own ERROR line is the first error shown, and ENOMEM from verbs is the locked-memory limit.
    ucx = "[1700000000.123456] [gpu1:123  :0]        ib_iface.c:746  UCX  ERROR ibv_create_cq(cqe=4096) failed: Cannot allocate memory"
    finding = found(diagnose(rules, [ucx, "srun: error: gpu1: task 0: Exited with exit code 1"]), "unexplained-failure")
    assert "ibv_create_cq" in finding.detail and "LimitMEMLOCK" in finding.detail


def test_a_torchrun_worker_killed_by_sigkill_is_likely_the_oom_killer_and_says_so(rules):
    line = "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 0 (pid: 12345) of binary: /usr/bin/python"
    finding = diagnose(rules, [line]).findings[0]
    assert finding.id == "job-oom" and finding.severity == "warning" and "OOM killer" in finding.assumed[0]
    # A worker its agent stopped (SIGTERM, -15) after a cancel says nothing about memory.
    assert "job-oom" not in ids(diagnose(rules, [line.replace("-9", "-15")]))


def test_a_lone_ucx_error_is_a_warning_that_says_what_it_assumed(rules):
    line = "[1700000000.123456] [gpu1:123  :0]     ib_mlx5_log.c:143  UCX  ERROR Remote access on mlx5_0:1/IB (synd 0x13 vend 0x88 hw_synd 0/0)"
    finding = found(diagnose(rules, [line]), "unexplained-failure")
    assert finding.severity == "warning" and finding.detail.startswith("UCX reported an error")
    assert finding.hosts == ["gpu1"] and finding.assumed


def test_an_exception_python_printed_and_ignored_is_no_failure_but_one_after_it_is(rules):
    ignored = [
        "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f2b3c1d1ee0>",
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py", line 1478, in __del__',
        "AssertionError: can only test a child process",
        "Training completed.",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, ignored))
    real = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "KeyError: 'input_ids'"]
    finding = found(diagnose(rules, ignored + real), "unexplained-failure")
    assert finding.severity == "error" and "KeyError" in finding.detail and "child process" not in finding.detail


def test_a_traceback_multiprocessings_exit_finalizers_printed_is_no_failure(rules):
    # util._run_finalizers catches and prints what a finalizer raised; a paste may start inside one.
    finalizer = [
        "Traceback (most recent call last):",
        '  File "/usr/lib/python3.10/multiprocessing/util.py", line 300, in _run_finalizers',
        "    finalizer()",
        '  File "/usr/lib/python3.10/multiprocessing/util.py", line 224, in __call__',
        "    res = self._callback(*self._args, **self._kwargs)",
        '  File "/usr/lib/python3.10/multiprocessing/synchronize.py", line 87, in _cleanup',
        "    sem_unlink(name)",
        "FileNotFoundError: [Errno 2] No such file or directory",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, finalizer))
    assert "unexplained-failure" not in ids(diagnose(rules, finalizer[3:]))
    real = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "KeyError: 'input_ids'"]
    finding = found(diagnose(rules, finalizer + real), "unexplained-failure")
    assert finding.severity == "error" and "KeyError" in finding.detail


def test_inotifys_no_space_left_is_its_watch_limit_not_a_full_disk(rules):
    line = (
        "[1724685304.167173] [sse-lg-112-41:102320:f]        vfs_fuse.c:281  UCX  ERROR inotify_add_watch(/tmp) "
        "failed: No space left on device"
    )
    finding = found(diagnose(rules, [line]), "unexplained-failure")
    assert finding.severity == "warning" and "max_user_watches" in finding.detail and "is full" not in finding.detail
    full = found(diagnose(rules, ["OSError: [Errno 28] No space left on device: '/scratch/ckpt/step_10.pt'"]), "unexplained-failure")
    assert full.severity == "error" and "full" in full.detail


def test_slurms_record_of_a_cancelled_job_is_a_cancel_naming_who(rules):
    row = "4411         train        gpu        lab         64 CANCELLED by 1001      0:0"
    finding = diagnose(rules, [row]).findings[0]
    assert (finding.id, finding.severity) == ("job-cancelled", "info") and "user id 1001" in finding.detail
    assert diagnose(rules, ["JobId=4411 JobName=train JobState=CANCELLED Reason=None"]).findings[0].id == "job-cancelled"
    # A completed row is nothing at all.
    assert not diagnose(rules, [row.replace("CANCELLED by 1001", "COMPLETED")]).findings


def test_a_task_that_sees_no_gpu_says_how_the_step_gets_its_gpus(rules):
    finding = diagnose(rules, ["RuntimeError: CUDA error: no CUDA-capable device is detected"]).findings[0]
    assert finding.id == "unexplained-failure" and "--gres=gpu:N" in finding.detail


def test_a_step_slurm_could_not_create_on_busy_nodes_names_overlap(rules):
    finding = diagnose(rules, ["srun: error: Unable to create step for job 123: Requested nodes are busy"]).findings[0]
    assert finding.id == "unexplained-failure" and "srun --overlap" in finding.detail


def test_nccl_receiving_another_size_than_expected_is_named_as_mismatched_collectives(rules):
    line = "gpu1:123:456 [0] include/socket.h:423 NCCL WARN Message truncated : received 1024 bytes instead of 512"
    finding = found(diagnose(rules, [line]), "unexplained-failure")
    assert "collectives that do not match" in finding.detail and "TORCH_DISTRIBUTED_DEBUG=DETAIL" in finding.detail


def test_nccl_refusals_worded_without_error_words_are_failures_that_say_what_they_usually_mean(rules):
    # NCCL 2.2x-2.30 WARNs whose words hold no "failed"/"error": the call still returned an error.
    mnnvl = [
        "gb200-n07:3301:3301 [2] mnnvl.cc:74 NCCL WARN MNNVL (cliqueSize 72) is available but not working on this "
        "system. Check the IMEX channel configuration (/dev/nvidia-caps-imex-channels). Set NCCL_MNNVL_ENABLE=0 to "
        "ignore this issue.",
        "gb200-n07:3301:3301 [2] NCCL INFO init.cc:1432 -> 2",
    ]
    finding = found(diagnose(rules, mnnvl), "unexplained-failure")
    assert finding.severity == "error" and "IMEX" in finding.detail and finding.hosts == ["gb200-n07"]
    old = (
        "node1:4766:4766 [0] dev_runtime.cc:1428 NCCL WARN NCCL library is too old. This application was compiled "
        "with NCCL version 2.30.7, but is running with NCCL library version 2.27.3."
    )
    finding = found(diagnose(rules, [old]), "unexplained-failure")
    assert "built against a newer NCCL" in finding.detail and "2.27.3.." not in finding.detail
    none = "node1:4766:4790 [0] transport.cc:39 NCCL WARN No transport found for rank 0[1b000] -> rank 8[1b000]"
    finding = found(diagnose(rules, [none]), "unexplained-failure")
    assert "NCCL_P2P_DISABLE=1" in finding.detail and "NCCL_NET" in finding.detail


def test_a_long_line_quoted_in_a_finding_is_cut_with_an_ellipsis_not_mid_text(rules):
    line = "gpu1:123:456 [0] misc/foo.cc:49 NCCL WARN Unable to frobnicate the widget: " + "reason " * 60 + "END"
    finding = found(diagnose(rules, [line]), "unexplained-failure")
    assert "Unable to frobnicate" in finding.detail and "reason…" in finding.detail and "reaso…" not in finding.detail
    assert "END" not in finding.detail


def test_a_command_the_shell_reports_killed_with_enomem_is_a_host_oom_that_says_what_it_assumed(rules):
    killed = "/home/u/process_data.sh: line 76:  4663 Killed                  sct_deepseg_sc -i t2.nii.gz"
    enomem = "OSError: [Errno 12] Cannot allocate memory"
    both = top(diagnose(rules, [killed, enomem]), "job-oom")
    alone = top(diagnose(rules, [killed]), "job-oom")
    assert "4663 Killed" in both.detail and "Errno 12" in both.detail and both.assumed
    assert both.confidence > alone.confidence  # two signs weigh more than one
    # A command ended by SIGTERM (scancel, the time limit) is no memory problem.
    assert "job-oom" not in ids(diagnose(rules, ["slurm_script: line 12: 4663 Terminated    python train.py"]))


def test_a_node_slurm_saw_reboot_unexpectedly_is_a_node_failure_naming_it(rules):
    line = "[2024-07-15T09:10:11.123] validate_node_specs: Node gpu-017 unexpectedly rebooted boot_time=1 last response=0"
    finding = top(diagnose(rules, [line]), "node-failure")
    assert finding.hosts == ["gpu-017"] and "unexpectedly rebooted" in finding.detail


def test_a_cloud_launcher_saying_its_cluster_is_preempted_is_a_preemption(rules):
    lines = [
        "# (bert-qa pid=920210) I 05-04 00:52:46 controller.py:100] The cluster is preempted.",
        "# (bert-qa pid=920210) E 05-04 00:53:16 backend_utils.py:999] Failed to cancel jobs on cluster bert-qa-39.",
    ]
    top(diagnose(rules, lines), "preempted")
    status = "(sky-de99, pid=734143) I 12-10 21:39:39 controller.py:118] Cluster is preempted (status: INIT). Recovering..."
    top(diagnose(rules, [status]), "preempted")
    assert "preempted" not in ids(diagnose(rules, ["If the cluster is preempted, the controller recovers it."]))
    # A worker agent relaying the provider's notice, then the VM powered off: nothing else is printed.
    notice = "node-1 start-worker 2024/12/17 16:03:58 GCP Metadata Service says termination is imminent"
    top(diagnose(rules, [notice, "node-1 systemd-logind Power key pressed."]), "preempted")


def test_a_step_that_reached_its_memory_limit_at_some_point_and_went_on_is_a_warning_not_an_oom(rules):
    line = "slurmstepd: error: Exceeded step memory limit at some point. Step may have been partially swapped out to disk."
    finding = found(diagnose(rules, [line]), "job-oom")
    assert finding.severity == "warning" and "nothing was killed" in finding.detail
    assert "unexplained-failure" not in ids(diagnose(rules, [line]))
    # With a failure beside it, it is the failure's cause.
    failed = diagnose(rules, [line, "srun: error: n1: task 0: Exited with exit code 1"])
    assert top(failed, "job-oom").severity == "error"


def test_a_prolog_failure_on_a_node_is_a_node_failure_naming_it(rules):
    lines = ["salloc: Prolog failure on node k003-006", "salloc: Job allocation 235454 has been revoked."]
    finding = top(diagnose(rules, lines), "node-failure")
    assert finding.hosts == ["k003-006"] and "Prolog" in finding.detail


def test_launch_failed_requeued_held_is_the_nodes_failure(rules):
    finding = top(diagnose(rules, ["  4411   gpu  train  alice PD  0:00  1 (launch failed requeued held)"]), "node-failure")
    assert "launch failed requeued held" in finding.detail


def test_a_job_requeued_runs_again_so_the_requeue_is_a_warning_while_a_preemption_stays_an_error(rules):
    requeue = "slurmstepd: error: *** JOB 31182239 ON sh-06-34 CANCELLED AT 2018-11-05T10:35:06 DUE TO JOB REQUEUE ***"
    assert top(diagnose(rules, [requeue]), "preempted").severity == "warning"
    preemption = requeue.replace("JOB REQUEUE", "PREEMPTION")
    assert top(diagnose(rules, [preemption]), "preempted").severity == "error"


def test_mpi_launchers_own_failure_banners_are_failures_that_say_where_to_look(rules):
    daemon = [
        "/bin/bash: orted: command not found",
        "A daemon (pid 19372) died unexpectedly with status 127 while attempting",
        "to launch so we are aborting.",
    ]
    finding = top(diagnose(rules, daemon), "unexplained-failure")
    assert finding.severity == "error" and "--prefix" in finding.detail
    hydra = [
        "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
        "=   EXIT CODE: 11",
        "APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)",
    ]
    assert top(diagnose(rules, hydra), "unexplained-failure").severity == "error"


VISDOM = [
    "Traceback (most recent call last):",
    '  File "/env/lib/python3.7/site-packages/requests/adapters.py", line 516, in send',
    "    raise ConnectionError(e, request=request)",
    "requests.exceptions.ConnectionError: HTTPConnectionPool(host='localhost', port=8097): Max retries exceeded "
    "(Caused by NewConnectionError('Failed to establish a new connection: [Errno 111] Connection refused'))",
]


def test_an_exception_the_program_went_past_is_a_warning_not_a_failed_job(rules):
    went_on = found(diagnose(rules, VISDOM + ["MSN_TRAIN train [0: 0/9]  emd1: 0", "```"]), "unexplained-failure")
    assert went_on.severity == "warning" and any("went on" in a for a in went_on.assumed)
    assert found(diagnose(rules, VISDOM), "unexplained-failure").severity == "error", "the log ends at the exception"
    exited = VISDOM + ["MSN_TRAIN train [0: 0/9]", "srun: error: n1: task 0: Exited with exit code 1"]
    assert found(diagnose(rules, exited), "unexplained-failure").severity == "error", "a process exit says it failed"


def test_deepspeed_s_launcher_reporting_a_sigkilled_worker_is_a_weak_host_oom(rules):
    line = "[2025-02-11 10:03:31,123] [ERROR] [launch.py:325:sigkill_handler] exits with return code = -9"
    finding = top(diagnose(rules, [line]), "job-oom")
    assert "DeepSpeed" in finding.detail and finding.assumed
    assert "job-oom" not in ids(diagnose(rules, [line.replace("-9", "1")]))


def test_a_program_that_could_not_start_is_a_failure_that_says_why(rules):
    loader = "./train: error while loading shared libraries: libcudart.so.11.0: cannot open shared object file: No such file or directory"
    finding = top(diagnose(rules, [loader]), "unexplained-failure")
    assert finding.severity == "error" and "LD_LIBRARY_PATH" in finding.detail
    missing = top(diagnose(rules, ["/var/spool/slurmd/job123/slurm_script: line 12: torchrun: command not found"]), "unexplained-failure")
    assert "no torchrun on its PATH" in missing.detail
    went_on = diagnose(rules, ["bash: module: command not found", "step 1 loss 2.3", "step 2 loss 2.1"])
    assert found(went_on, "unexplained-failure").severity == "warning", "a script that went on past it"


def test_launchers_giving_up_and_an_old_driver_are_failures(rules):
    assert top(diagnose(rules, ["srun: fatal: Can not execute python3"]), "unexplained-failure").severity == "error"
    ompi = ["Primary job  terminated normally, but 1 process returned", "a non-zero exit code. Per user-direction, the job has been aborted."]
    assert top(diagnose(rules, [" ".join(ompi)]), "unexplained-failure").severity == "error"
    old = top(diagnose(rules, ["RuntimeError: CUDA error: CUDA driver version is insufficient for CUDA runtime version"]), "unexplained-failure")
    assert "driver is older than the CUDA" in old.detail



def test_slurms_accounting_race_reading_smaps_is_a_notice_not_a_failure(rules):
    line = "slurmstepd: error: _get_pss: ferror() indicates error on file /proc/$$/smaps"
    assert not diagnose(rules, [line]).findings


def test_timeout_in_other_accounting_forms_is_the_time_limit(rules):
    for line in (
        "2024-02-09 12:30:37 jobid=44981366 jobstate=TIMEOUT username=sven account=staff nodes=r35 procs=1",
        "Job 338652  bash  snit.san  TIMEOUT   06:44:31",
    ):
        assert diagnose(rules, [line]).findings[0].id == "job-time-limit", line


def test_an_older_libnccl_than_the_framework_was_built_for_is_said_so(rules):
    lines = [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 3, in <module>',
        "ImportError: /usr/local/lib/python3.10/dist-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclDevCommDestroy",
    ]
    report = diagnose(rules, lines)
    assert ids(report) == {"unexplained-failure"}  # /usr/local is installed software, not node-local storage
    assert "newer NCCL than the libnccl.so it loaded" in report.findings[0].detail


def test_a_launchers_ssh_that_cannot_resolve_a_host_says_which(rules):
    lines = [
        "ssh: Could not resolve hostname node-0: Name or service not known",
        "subprocess.CalledProcessError: Command '['ssh node-0 hostname -I']' returned non-zero exit status 255.",
    ]
    finding = diagnose(rules, lines).findings[0]
    assert finding.id == "unexplained-failure" and "hostfile" in finding.detail


# Open MPI's (ORTE/PRRTE errmgr) summaries of a failed job, each as printed on its own.
OMPI_SUMMARIES = {
    "nonzero": [
        "--------------------------------------------------------------------------",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "the job to be terminated. The first process to do so was:",
        "",
        "  Process name: [[56171,1],6]",
        "  Exit code:    3",
    ],
    "aborted": [
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
    ],
    "signal": ["mpirun noticed that process rank 3 with PID 0 on node gpu-7 exited on signal 11 (Segmentation fault)."],
    "improper": [
        "prterun has exited due to process rank 0 with PID 0 on",
        "node gpu-1 exiting improperly. There are three reasons this could occur:",
    ],
    "glibc": ["*** Error in `./all_reduce_perf': double free or corruption (fasttop): 0x0000555556d2b0a0 ***"],
}


def test_open_mpi_summaries_and_old_glibc_aborts_are_failures(rules):
    for name, lines in OMPI_SUMMARIES.items():
        assert top(diagnose(rules, lines), "unexplained-failure").severity == "error", name


def test_a_rank_mpirun_saw_killed_by_sigkill_is_still_read_as_host_memory(rules):
    line = "mpirun noticed that process rank 1 with PID 39 on node worker-1 exited on signal 9 (Killed)."
    top(diagnose(rules, [line]), "job-oom")


def test_a_rank_ended_by_the_sigterm_of_a_cancel_is_no_crash_before_the_cancel(rules):
    lines = [
        "slurmstepd: error: *** JOB 77 ON gpu-1 CANCELLED AT 2026-12-02T11:08:40 ***",
        "mpirun noticed that process rank 0 with PID 0 on node gpu-1 exited on signal 15 (Terminated).",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, lines))


def test_slurms_uncorrectable_memory_error_and_lost_io_name_a_node_failure(rules):
    ume = "slurmstepd: error: *** JOB 4812733 ON node017 UNCORRECTABLE MEMORY ERROR AT 2026-11-30T03:14:07 ***"
    assert top(diagnose(rules, [ume]), "node-failure").hosts == ["node017"]
    assert "node index 3" in top(diagnose(rules, ["srun: error: Cannot communicate with node 3.  Aborting job."]), "node-failure").detail


def test_sallocs_revoked_allocation_is_the_time_limit(rules):
    line = "salloc: Job 4812733 has exceeded its time limit and its allocation has been revoked."
    top(diagnose(rules, [line]), "job-time-limit")


def test_a_task_slurmd_could_not_execve_is_no_node_failure(rules):
    report = diagnose(rules, ["srun: error: task 0 launch failed: Slurmd could not execve job"])
    assert "node-failure" not in ids(report)
    assert "not on the node's PATH" in top(report, "unexplained-failure").detail


def test_a_deepspeed_worker_that_exited_1_is_a_failure_not_a_signal(rules):
    line = "[2025-03-02 11:40:55,019] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', '-u', 'train.py'] exits with return code = 1"
    finding = top(diagnose(rules, [line]), "unexplained-failure")
    assert finding.severity == "error" and "ended by a signal" not in finding.detail


def test_a_topology_xml_for_another_machine_is_said_so(rules):
    lines = [
        "gpu1:16674:17023 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /opt/microsoft/ncv4/topo.xml",
        "gpu1:16674:17023 [0] graph/xml.h:77 NCCL WARN Attribute arch of node cpu not found",
        "gpu1:16674:17023 [0] NCCL INFO graph/topo.cc:380 -> 3",
    ]
    assert "NCCL_TOPO_FILE or NCCL_GRAPH_FILE" in top(diagnose(rules, lines), "unexplained-failure").detail


def test_apptainers_fatal_errors_are_failures_and_a_missing_image_is_an_import_failure(rules):
    fatal = "FATAL:   while extracting /scratch/u/run.sif: root filesystem extraction failed: permission denied"
    assert top(diagnose(rules, [fatal]), "unexplained-failure").severity == "error"
    missing = (
        "FATAL:   could not open image /lustre/containers/pytorch-24.05.sif: failed to retrieve path for "
        "/lustre/containers/pytorch-24.05.sif: lstat /lustre/containers/pytorch-24.05.sif: no such file or directory"
    )
    top(diagnose(rules, [missing]), "container-import-failure")
    # UCX's fatal QP error (one space after the level) is the fabric's, not the container's.
    ucx = "[jazz21:194169:0:194169] ib_mlx5_log.c:113  FATAL: Error on QP 0x2e5d6 wqe[7]: Transport retry count exceeded"
    assert top(diagnose(rules, [ucx]), "ib-link-fault")


def test_enroots_checksum_mismatch_without_the_digest_prefix_is_an_import_failure(rules):
    line = "slurmstepd: error: pyxis:     Checksum mismatch: 4f4fb700ef54461cfa02571ae0db9a0dc1e0cdb5577484a6d75e68dc38e8acc1"
    assert "did not match its digest" in top(diagnose(rules, [line]), "container-import-failure").detail


def test_an_extern_step_alone_out_of_memory_in_a_completed_job_is_no_oom(rules):
    rows = [
        "1234.extern     extern     proj    64  OUT_OF_ME+    0:125",
        "1234.0          python     proj    64   COMPLETED      0:0",
        "1234            train      proj    64   COMPLETED      0:0",
    ]
    assert top(diagnose(rules, rows), "job-oom").severity == "info"
    # The job's own step out of memory is the job's OOM.
    assert top(diagnose(rules, ["1234.0   python   proj   64  OUT_OF_ME+    0:125"]), "job-oom").severity == "error"


# Kubernetes' events (kubectl describe) and Ray's and cloud agents' messages, as their sources print them.
def test_kubernetes_and_ray_say_a_node_was_lost_or_taken_back_in_their_own_words(rules):
    said = {
        "  Ready   Unknown   Sat, 05 Dec 2026 07:31:09 +0000   Sat, 05 Dec 2026 07:32:00 +0000   NodeStatusUnknown   "
        "Kubelet stopped posting node status.": "node-failure",
        "[2024-11-02 07:31:09,118 W 812 812] (gcs_server) gcs_health_check_manager.cc:108: Node is dead because the "
        "health check failed.": "node-failure",
        "  Normal   Preempted  40s  default-scheduler  Preempted by pod 8c1f0e2a-5b3d on node gpu-a12": "preempted",
        "Message: Pod was terminated in response to imminent node shutdown.": "preempted",
        "  Normal   SpotInterruption   44s   aws-node-termination-handler  Spot ITN received. Instance will be "
        "interrupted at 2026-12-05T07:33:09Z": "preempted",
    }
    for line, cause in said.items():
        top(diagnose(rules, [line]), cause)
    # Ray's actor record naming the preemption: the node's death is the preemption's, not a node failure.
    actor = [
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "The actor died because its node has died. Node Id: 3a4b6075",
        "\tthe actor's node was preempted: Node was forcibly preempted",
    ]
    report = diagnose(rules, actor)
    assert top(report, "preempted") and "node-failure" not in ids(report)
    # NodeDiedError lists preemption among what may have happened: no preemption is claimed.
    died = [
        "ray.exceptions.NodeDiedError: Task failed due to the node (where this task was running)  was dead or unavailable.",
        "This can happen if the instance where the node was running failed, the node was preempted, or raylet crashed.",
    ]
    report = diagnose(rules, died)
    assert top(report, "node-failure") and "preempted" not in ids(report)


def test_kubernetes_events_for_memory_images_gpus_deadlines_and_crash_loops(rules):
    cases = {
        "  Warning  Evicted  1m  kubelet  Usage of EmptyDir volume \"dshm\" exceeds the limit \"1Gi\". ": "shm-too-small",
        "  Warning  Failed  12s  kubelet  Error: ErrImagePull": "container-import-failure",
        "I1205 07:31:09.118301       1 server.go:279] 'nvidia.com/gpu' device marked unhealthy: GPU-6f2ec5c8-b0d5": "gpu-xid",
        "  Warning  DeadlineExceeded  0s  job-controller  Job was active longer than specified deadline": "job-time-limit",
        "  Warning  BackOff  12s (x14 over 3m)  kubelet  Back-off restarting failed container pytorch in pod w-3": "unexplained-failure",
        "ray._private.memory_monitor.RayOutOfMemoryError: More than 95% of the memory on node gpu-a12 is used (1923.41 / 2015.56 GB).": "job-oom",
    }
    for line, cause in cases.items():
        top(diagnose(rules, [line]), cause)
    assert "Kubernetes could not get" in found(diagnose(rules, ["  Warning  Failed  12s  kubelet  Error: ErrImagePull"]), "container-import-failure").detail


def test_sbatch_ignoring_a_value_before_it_submits_is_no_failure(rules):
    lines = ['sbatch: error: "SBATCH_EXCLUSIVE=true" -- invalid value, ignoring...', "Submitted batch job 1152535"]
    assert not diagnose(rules, lines).findings
    quoted = ["'sbatch: error: This does not look like a batch script.  The first"]
    top(diagnose(rules, quoted), "unexplained-failure")


def test_slurms_pmi2_asking_for_a_key_it_lacks_is_a_notice(rules):
    lines = [
        "slurmstepd-docker2: error: mpi/pmi2: no value for key  in req",
        "PMI2_Init OK: (size, rank, appnum) = (2 0 -1)",
    ]
    assert not [f for f in diagnose(rules, lines).findings if f.severity in ("error", "critical", "warning")]


def test_kubernetes_failures_in_their_controllers_words_are_failures(rules):
    for line in (
        "  Normal   ExitedWithCode  30s  pytorchjob-controller  Pod: ml.llama-ft-32n-worker-2 exited with code 1",
        "  Warning  MPIJobEvicted  2m  mpijob-controller  2/8 workers are evicted",
        "  Warning  PyTorchJobFailed  1m  pytorchjob-controller  Job llama-ft-32n has failed because it has reached the "
        "specified backoff limit",
    ):
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line
    # Processes ended from outside (srun forcing the step down, a rank's exit code in torchrun's table):
    # a failure whose sender the logs do not name, as for tasks that only say Terminated.
    for line in ["srun: Force Terminated StepId=4812733.0", "srun: forcing job termination", "  exitcode  : -15 (pid: 48212)"]:
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "warning", line
    disk = "  Warning  Evicted  1m  kubelet  The node was low on resource: ephemeral-storage. Threshold quantity: 10Gi."
    assert "persistent volume" in top(diagnose(rules, [disk]), "unexplained-failure").detail


def test_slurmd_and_slurmstepd_older_words_for_a_memory_kill(rules):
    for line in (
        "slurmd[4411]: Job 4812733 exceeded memory limit (274877906944>268435456000), cancelling it",
        "slurmstepd: task 3 (48211) Out Of Memory (OOM)",
    ):
        assert top(diagnose(rules, [line]), "job-oom").severity == "error", line


def test_seff_summaries_name_how_the_job_ended(rules):
    for state, cause in (("TIMEOUT", "job-time-limit"), ("PREEMPTED", "preempted"), ("BOOT_FAIL", "node-failure")):
        lines = ["Job ID: 4812733", "Cluster: hpc1", "User/Group: alice/ml", f"State: {state} (exit code 0)"]
        assert top(diagnose(rules, lines), cause), state
    assert not diagnose(rules, ["State: COMPLETED (exit code 0)"]).findings


def test_other_batch_systems_preempting_the_job(rules):
    pbs = ["11/06/2019 14:54:53  S    Job Rerun at request of Scheduler@pbs02", "11/06/2019 14:54:53  L    Simulation: preempting job"]
    assert top(diagnose(rules, pbs), "preempted")
    assert top(diagnose(rules, ["TERM_PREEMPT: job killed after preemption."]), "preempted")


def test_launchers_own_words_for_a_step_that_never_fully_started_or_a_process_that_ended_badly(rules):
    for line in (
        "srun: StepId=4812733.0 aborted before step completely launched.",
        "[mpiexec@node017] HYDT_bscu_wait_for_completion (lib/tools/bootstrap/utils/bscu_wait.c:110): one of the "
        "processes terminated badly; aborting",
        "ERROR: Unexpected segmentation fault encountered in worker.",
    ):
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line


def test_srun_losing_a_node_or_waiting_for_nodes_that_never_booted_is_a_node_failure(rules):
    assert top(diagnose(rules, ["srun: error: Aborting, can not test connection to node 5."]), "node-failure")
    assert "never became ready" in top(
        diagnose(rules, ["srun: error: Nodes node[017-020] are still not ready"]), "node-failure"
    ).detail


def test_an_interactive_shells_killed_is_a_weak_host_oom_that_says_what_it_assumed(rules):
    for lines in (
        ["Loading checkpoint shards:  50%|#####   | 4/8 [02:10<02:22, 35.73s/it]Killed"],
        ["Loading checkpoint shards:  50%|#####   | 4/8 [02:10<02:22, 35.73s/it]", "Killed"],
        ["zsh: killed     python train.py"],
    ):
        finding = top(diagnose(rules, lines), "job-oom")
        assert finding.assumed and finding.confidence < 0.5, lines
    assert "job-oom" not in ids(diagnose(rules, ["Killed: 3 stale lock files removed"]))


def test_slurms_error_level_notices_of_runs_that_go_on_are_no_failure(rules):
    for line in (
        "srun: error: Ignoring --core-spec value for a job step within an existing job. Set specialized cores at job "
        "allocation time.",
        "srun: error: --begin is ignored because nodes are already allocated.",
        "sbatch: error: Currently unable to load job state information, retrying: Socket timed out on send/recv "
        "operation",
        "slurmstepd: error: _get_joules_task: can't get info from slurmd",
        "slurmstepd: error: Cannot get cgroup accounting data for 3",
    ):
        assert not [f for f in diagnose(rules, [line]).findings if f.severity in ("error", "critical")], line
    # The same tools' errors that end a step stay failures.
    assert top(diagnose(rules, ["srun: error: Unable to create step for job 77: Job/step already completing or completed"]), "unexplained-failure")


def test_python_that_cannot_open_its_script_failed(rules):
    local = "/usr/bin/python: can't open file '/tmp/alice/train.py': [Errno 2] No such file or directory"
    assert top(diagnose(rules, [local]), "node-local-path").severity == "error"
    shared = "/opt/conda/bin/python3: can't open file '/lustre/proj/alice/train.py': [Errno 2] No such file or directory"
    report = diagnose(rules, [shared])
    assert report.findings[0].severity == "error" and "node-local-path" not in ids(report)


def test_other_batch_systems_words_for_time_memory_node_and_preemption(rules):
    for line, cause in (
        ("12/05/2026 14:22:10  M    walltime 3618 exceeded limit 3600", "job-time-limit"),
        ("3600.012s: job.exception fA3bCdEf2kP type=timeout severity=0 resource allocation expired", "job-time-limit"),
        ("12/05/2026 14:22:10  M    mem 537919488kb exceeded limit 536870912kb", "job-oom"),
        ("\tJob has gone over cgroup memory limit of 65536 megabytes. Peak usage: 66012 megabytes.", "job-oom"),
        ("12/05/2026 14:22:10  S    Job requeued, execution node node018 down", "node-failure"),
        ("812.331s: job.exception fA3bCdEf2kP type=node-failure severity=2 node failure on gpu-a12 (shell rank 3)", "node-failure"),
        ("x4406c6s7b0n0: shepherd died from signal 9", "node-failure"),
        ("12/05/2026 14:22:10  L    Job preempted by requeuing", "preempted"),
    ):
        report = diagnose(rules, [line])
        assert report.findings and report.findings[0].id == cause, (line, ids(report))


def test_other_schedulers_cancels_are_a_cancel_not_a_failure(rules):
    for line in ("TERM_OWNER: job killed by owner.", "\tvia condor_rm (by user alice)", "14.207s: job.exception fA3bCdEf2kP type=cancel severity=0 "):
        finding = top(diagnose(rules, [line]), "job-cancelled")
        assert finding.severity == "info" and "scancel" not in finding.detail, line


def test_a_task_launch_a_nodes_slurmd_refused_is_no_node_failure_but_an_unreachable_node_is(rules):
    refused = "srun: error: Task launch for StepId=3372350.2 failed on node nid007281: Unable to satisfy cpu bind request"
    report = diagnose(rules, [refused])
    assert "node-failure" not in ids(report) and report.findings[0].id == "unexplained-failure"
    lost = "srun: error: Task launch for StepId=3372350.2 failed on node nid007281: Communication connection failure"
    assert "nid007281" in top(diagnose(rules, [lost]), "node-failure").hosts


def test_hydras_own_timeout_is_a_time_limit_in_its_words(rules):
    finding = top(diagnose(rules, ["[mpiexec@node017] APPLICATION TIMED OUT, TIMEOUT = 3600s"]), "job-time-limit")
    assert "mpiexec ended the job after its timeout of 3600 s" in finding.detail
    assert "Slurm" not in finding.detail


def test_other_launchers_and_batch_systems_words_for_a_job_that_failed(rules):
    # Each line alone is a failure of unknown cause, never a healthy log.
    for line in [
        "  exitcode  : -6 (pid: 48212)",
        "srun: error: compute030: tasks 0-7: Illegal instruction (core dumped)",
        "=>> PBS: job killed: ncpus 97.3 exceeded limit 96 (burst)",
        "srun returned non-zero exit status (1) from launching",
        "[src/mpid/ch3/channels/mrail/src/gen2/vbuf.c 380] Cannot register vbuf region",
    ]:
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line


def test_torchruns_failure_table_with_a_sigkilled_rank_points_at_host_memory(rules):
    table = ["Root Cause (first observed failure):", "[0]:", "  host      : node017", "  exitcode  : -9 (pid: 48211)"]
    assert "job-oom" in ids(diagnose(rules, table))


def test_a_step_slurmstepd_could_not_end_drains_its_node_and_says_whether_it_ever_ran(rules):
    banner = "slurmstepd: error: *** STEP 4812733.0 STEPD TERMINATED ON gpu-a12 AT 2025-08-01T09:14:44 DUE TO JOB NOT {why} ***"
    never_ran = top(diagnose(rules, [banner.format(why="RUNNING")]), "node-failure")
    assert never_ran.hosts == ["gpu-a12"] and "never reached running" in never_ran.detail
    unkillable = top(diagnose(rules, [banner.format(why="ENDING WITH SIGNALS")]), "node-failure")
    assert "did not die on SIGKILL" in unkillable.detail


def test_sinfo_s_reason_cut_at_twenty_characters_still_says_the_node_rebooted(rules):
    lines = ["REASON               USER      TIMESTAMP           NODELIST", "Node unexpectedly re root      2021-03-05T11:35:16 eureka"]
    assert "new boot time" in top(diagnose(rules, lines), "node-failure").detail


def test_a_container_platform_s_exit_code_132_is_a_failure_of_an_illegal_instruction(rules):
    line = "INFO: container failed with non-zero exit code: container failed with non-zero exit code: 132 (exit code 132)"
    finding = top(diagnose(rules, [line]), "unexplained-failure")
    assert finding.severity == "error" and "SIGILL" in finding.detail


# ------------------------------------------------------------------- a run that reported its success
EXIT_BARRIER = [
    "I1209 11:42:09.104000 3114 torch/distributed/elastic/agent/server/api.py:931] [default] worker group successfully "
    "finished. Waiting 300 seconds for other agents to finish.",
    "E1209 11:42:09.131000 3114 torch/distributed/elastic/agent/server/api.py:1008] Error waiting on exit barrier. "
    "Elapsed: 0.02545332908630371 seconds",
    "E1209 11:42:09.131000 3114 torch/distributed/elastic/agent/server/api.py:1008] Traceback (most recent call last):",
    "E1209 11:42:09.131000 3114 torch/distributed/elastic/agent/server/api.py:1008] torch.distributed.DistNetworkError: "
    "Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?",
]


def test_an_error_after_the_training_loop_ended_is_teardown_not_the_job_failing(rules):
    report = diagnose(rules, ["2026-12-09 11:40:03 [INFO] Training completed", "srun: error: node018: task 8: Exited with exit code 1"])
    failed = found(report, "unexplained-failure")
    assert failed.severity == "warning"
    assert "after the run reported success ([INFO] Training completed)" in failed.detail
    assert not [f for f in report.findings if f.severity in ("error", "critical")]


def test_a_failure_the_run_recovered_from_before_its_success_is_a_warning(rules):
    events = [
        "  Warning  PyTorchJobRestarting  12m  pytorchjob-controller  PyTorchJob llama-ft is restarting because 1 Worker "
        "replica(s) failed.",
        "  Normal   PyTorchJobSucceeded   1m   pytorchjob-controller  PyTorchJob llama-ft is successfully completed.",
    ]
    failed = found(diagnose(rules, events), "unexplained-failure")
    assert failed.severity == "warning" and "says the job completed" in failed.detail


def test_mlperfs_run_stop_success_is_the_runs_own_end_and_teardown_after_it_no_failure(rules):
    # mlperf_logging's run_stop carries the run's verdict (MLLOG JSON, v0.7+); a peer gone at teardown after it.
    stop = (
        ':::MLLOG {"namespace": "", "time_ms": 1714978963120, "event_type": "INTERVAL_END", "key": "run_stop", '
        '"value": null, "metadata": {"file": "/workspace/ssd/engine.py", "lineno": 315, "status": "success"}}'
    )
    teardown = "[rank3]: torch.distributed.DistNetworkError: Connection reset by peer"
    report = diagnose(rules, [stop, teardown])
    assert found(report, "unexplained-failure").severity == "warning" and "reported success" in found(
        report, "unexplained-failure"
    ).detail
    aborted = stop.replace('"status": "success"', '"status": "aborted"')
    assert found(diagnose(rules, [aborted, teardown]), "unexplained-failure").severity == "error"


def test_torchruns_exit_barrier_after_its_workers_succeeded_is_no_failure_and_its_words_no_cause(rules):
    report = diagnose(rules, EXIT_BARRIER)
    assert found(report, "unexplained-failure").severity == "warning"
    assert not [f for f in report.findings if f.severity in ("error", "critical")]  # DistNetworkError's cue too


def test_one_nodes_torchrun_finishing_well_does_not_clear_another_nodes_failed_workers(rules):
    failing = [
        EXIT_BARRIER[0],
        "E1209 11:42:09.172000 696 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
        "local_rank: 0 (pid: 717) of binary: /usr/bin/python",
        "[rank9]: ValueError: shapes (4,) and (5,) not aligned",
    ]
    assert found(diagnose(rules, failing), "unexplained-failure").severity == "error"


def test_slurms_completed_row_lowers_a_caught_exception_and_its_failed_row_does_not(rules):
    exception = ["[rank3]: Traceback (most recent call last):", "[rank3]: ConnectionError: Read timed out."]
    table = ["JobID           JobName      State ExitCode", "------------ ---------- ---------- --------"]
    completed = diagnose(rules, exception + table + ["4812733          llama3  COMPLETED      0:0"])
    assert found(completed, "unexplained-failure").severity == "warning"
    failed = diagnose(rules, exception + table + ["4812733          llama3     FAILED      1:0"])
    assert found(failed, "unexplained-failure").severity == "error"


def test_slurms_completed_row_makes_other_causes_weigh_a_run_that_went_on(rules):
    # rendezvous-failure keeps c10d's name-resolution retries an error only in a job that failed:
    # Slurm saying the job completed is the job not failing, whatever a step printed.
    retries = [
        "[W socket.cpp:558] [c10d] The IPv6 network addresses of (worker-1.svc, 29500) cannot be retrieved "
        "(gai error: -3 - Temporary failure in name resolution).",
        "srun: error: gpu01: task 1: Exited with exit code 1",
    ]
    table = ["JobID           JobName      State ExitCode", "------------ ---------- ---------- --------"]
    assert found(diagnose(rules, retries), "rendezvous-failure").severity == "error"
    completed = diagnose(rules, retries + table + ["4812733          llama3  COMPLETED      0:0"])
    assert found(completed, "rendezvous-failure").severity == "warning"
    failed = diagnose(rules, retries + table + ["4812733          llama3     FAILED      1:0"])
    assert found(failed, "rendezvous-failure").severity == "error"


def test_an_nccl_warn_after_nccl_tests_passed_is_a_peers_teardown(rules):
    lines = [
        "# Out of bounds values : 0 OK",
        "# Avg bus bandwidth    : 175.63 ",
        "node017:48211:48290 [0] proxy.cc:1533 NCCL WARN [Service thread] Could not receive type from localRank 3, res=3, closed=1",
    ]
    failed = found(diagnose(rules, lines), "unexplained-failure")
    assert failed.severity == "info" and "teardown" in failed.detail


def test_a_worker_restart_before_the_training_loop_ended_was_recovered_from(rules):
    lines = [
        "E1209 10:49:31.172000 696 torch/distributed/elastic/multiprocessing/api.py:986] failed (exitcode: 1) "
        "local_rank: 0 (pid: 717) of binary: /usr/bin/python",
        "I1209 11:40:03.104000 3114 torchtitan/trainer.py:1071] Training completed",
    ]
    failed = found(diagnose(rules, lines), "unexplained-failure")
    assert failed.severity == "warning" and "it recovered from them" in failed.detail


# ------------------------------------------------------------------ session 17: host-memory forms
def test_a_raylet_terminated_is_a_lost_node_and_the_oom_killer_ray_lists_as_a_possible_reason_is_no_oom(rules):
    # Ray 2.x's agent names the node and lists the OOM killer as one possibility; pastes wrap it onto a line of its own.
    for lines in (
        [
            "2022-10-17 14:23:59,720 WARNING worker.py:1839 -- Raylet is terminated: ip=172.29.58.176, "
            "id=c28cee44b5cd67e730b3a9f729ca772f9bfd3f4b936ae1999d38cf36. Termination is unexpected. Possible reasons "
            "include: (1) SIGKILL by the user or system",
            "OOM killer, (2) Invalid memory access from Raylet causing SIGSEGV or SIGBUS, (3) Other termination "
            "signals. Last 20 lines of the Raylet logs:",
        ],
        [
            "(raylet) [2025-03-02 11:20:31,512 E 48211 48211] Raylet is terminated: ip=10.12.0.21, id=8f3d4c2a1b9e. "
            "Termination is unexpected. Possible reasons include: (1) SIGKILL by the user or system OOM killer, (2) "
            "Invalid memory access from Raylet causing SIGSEGV or SIGBUS, (3) Other termination signals."
        ],
    ):
        report = diagnose(rules, lines)
        assert "job-oom" not in ids(report), [(f.id, f.detail) for f in report.findings]
        # The raylet is Ray's daemon on that node: the node was lost, saying what that assumes.
        lost = top(report, "node-failure")
        assert any("OOM killer" in a for a in lost.assumed) and lost.confidence < 0.5


def test_a_ray_worker_sigkilled_is_a_weak_oom_lead_that_never_decides_alone(rules):
    worker = (
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
        "Worker unexpectedly exits with a connection error code 2. End of file. There are some potential root causes. "
        "(1) The process is killed by SIGKILL by OOM killer due to high memory usage. (2) ray stop --force is called. "
        "(3) The worker is crashed unexpectedly due to SIGSEGV or other unexpected errors."
    )
    finding = found(diagnose(rules, [worker]), "job-oom")
    assert finding.severity == "warning" and finding.assumed and "ray stop --force" in finding.detail
    # Beside Ray's memory monitor's own kill it is the OOM it looks like, at full strength.
    monitor = "(raylet) node_manager.cc:3035: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers"
    strong = top(diagnose(rules, [monitor + " crashed due to other reasons at node (ID: ab37, IP: 10.0.0.5)", worker]), "job-oom")
    assert strong.severity == "error" and "memory monitor" in strong.detail


def test_older_kernels_and_the_kubelet_name_the_oom_kill_in_their_own_words(rules):
    memcg = [
        "[6710782.257588] Task in /slurm/uid_1000/job_4812733/step_0 killed as a result of limit of "
        "/slurm/uid_1000/job_4812733",
        "[6710782.257601] memory: usage 268435456kB, limit 268435456kB, failcnt 1234",
    ]
    assert "limit of /slurm/uid_1000/job_4812733" in top(diagnose(rules, memcg), "job-oom").detail
    rhel6 = "[6710784.707978] Killed process 215701, UID 1000, (python3) total-vm:412316860kB, anon-rss:261993005kB"
    assert "python3" in top(diagnose(rules, [rhel6]), "job-oom").detail
    event = "Warning  SystemOOM  6m57s  kubelet  System OOM encountered, victim process: python3, pid: 48211"
    assert "killed python3" in top(diagnose(rules, [event]), "job-oom").detail


def test_docker_inspect_s_oomkilled_false_is_no_oom_but_true_is(rules):
    state = ['"State": {', '    "Status": "exited",', '    "OOMKilled": {},', '    "ExitCode": {},']
    healthy = [line.replace("{}", v) for line, v in zip(state, ["", "", "false", "0"])]
    assert "job-oom" not in ids(diagnose(rules, healthy))
    killed = [line.replace("{}", v) for line, v in zip(state, ["", "", "true", "137"])]
    assert top(diagnose(rules, killed), "job-oom")



# ------------------------------------------------------------------- unexplained_failure: hangs and crashes
PYSPY_ELSEWHERE = [
    'Thread 835990 (active): "MainThread"',
    "    train (megatron/training.py:915)",
    "    pretrain (megatron/training.py:187)",
]
PYSPY_BROADCAST = [
    'Thread 835995 (active): "MainThread"',
    "    broadcast (torch/distributed/distributed_c10d.py:1191)",
    "    _aggregate_total_loss (deepspeed/runtime/pipe/engine.py:540)",
    "    train_step (megatron/training.py:436)",
]


def test_stack_dumps_with_ranks_in_and_out_of_a_collective_are_a_hang(rules):
    report = diagnose(rules, PYSPY_ELSEWHERE + PYSPY_BROADCAST)
    hang = top(report, "unexplained-failure")
    assert hang.severity == "error" and "hung" in hang.detail and "broadcast" in hang.detail


def test_dumps_in_different_collectives_are_a_hang(rules):
    lines = [
        "Thread 0x00007f3a1d2b9740 (most recent call first):",
        '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 1191 in broadcast',
        "Thread 0x00007f3a1d2b9741 (most recent call first):",
        '  File "/opt/venv/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", line 2050 in all_reduce',
    ]
    hang = top(diagnose(rules, lines), "unexplained-failure")
    assert hang.severity == "error" and "all_reduce, broadcast" in hang.detail


def test_one_dump_in_a_collective_is_a_warning_and_idle_threads_are_nothing(rules):
    assert found(diagnose(rules, PYSPY_BROADCAST), "unexplained-failure").severity == "warning"
    idle = [
        'Thread 0x7F6D3C29D740 (idle): "MainThread"',
        "    wait (threading.py:312)",
        "    main (slurmeventd.py:208)",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, idle))


def test_faulthandler_crash_names_its_signal(rules):
    lines = [
        "Fatal Python error: Segmentation fault",
        "",
        "Current thread 0x00007fde15275b80 (most recent call first):",
        '  File "/workspace/train.py", line 211 in train_step',
    ]
    crash = top(diagnose(rules, lines), "unexplained-failure")
    assert crash.severity == "error" and "Segmentation fault" in crash.detail


def test_bare_divisibility_assertion_does_not_outrank_unexplained(rules):
    lines = [
        '  File "/opt/conda/lib/python3.8/site-packages/titans/layer/attention/gpt_attention.py", line 49, in forward',
        "    num_attention_heads = divide(all_head_size, self.attention_head_size)",
        '  File "/opt/conda/lib/python3.8/site-packages/colossalai/nn/layer/utils/common.py", line 52, in divide',
        "AssertionError: 96 is not divisible by 64",
    ]
    report = diagnose(rules, lines)
    assert report.findings[0].id == "unexplained-failure"
    assert found(report, "world-size-mismatch").severity == "warning"
    # DeepSpeed's groups.py divides only parallel sizes: the bare assertion alone stays the layout's.
    assert top(diagnose(rules, ["AssertionError: 12 is not divisible by 8"]), "world-size-mismatch").severity == "error"


def test_slurmd_refusing_the_controller_s_rpcs_names_the_slurm_uid_mismatch(rules):
    lines = [
        "Nov 18 17:50:18 hpc-1 slurmd[8046]: [2025-11-18T17:50:18.003] error: Security violation, ping RPC from uid 11100",
        "Nov 18 17:51:32 hpc-1 slurmd[8046]: [2025-11-18T17:51:32.767] error: Security violation: kill_job(2) from uid 11100",
    ]
    report = diagnose(rules, lines)
    assert "SlurmUser" in top(report, "unexplained-failure").detail
    assert "node-failure" not in ids(report)


def test_a_pod_rejected_at_admission_and_a_miopen_cache_on_lustre_are_failures_outside_the_catalogue(rules):
    admission = (
        "  Warning  UnexpectedAdmissionError  13s   kubelet            Allocate failed due to rpc error: code = Unknown "
        "desc = request for 'nvidia.com/gpu: 2' too large: maximum request size for shared resources is 1, which is unexpected"
    )
    miopen = (
        "MIOpen Error: /long_pathname_so_that_rpms_can_package_the_debug_info/data/driver/MLOpen/src/sqlite_db.cpp:220: "
        "Internal error while accessing SQLite database: locking protocol"
    )
    assert "admission" in top(diagnose(rules, [admission]), "unexplained-failure").detail
    assert "MIOPEN_USER_DB_PATH" in top(diagnose(rules, [miopen]), "unexplained-failure").detail


def test_a_rank_that_crashed_before_the_time_limit_is_why_the_job_sat_there(rules):
    lines = [
        "Function: void {anonymous}::fpe_signal_handler(int)",
        "Floating point exception!",
        "slurmstepd: error: *** JOB 313794 ON wheeler049 CANCELLED AT 2021-09-26T15:36:54 DUE TO TIME LIMIT ***",
    ]
    report = diagnose(rules, lines)
    assert "Floating point exception" in top(report, "unexplained-failure").detail
    assert found(report, "job-time-limit").severity == "warning"


def test_a_crash_after_the_time_limit_banner_is_its_consequence(rules):
    lines = [
        "slurmstepd: error: *** JOB 1234 ON node017 CANCELLED AT 2024-01-02T03:04:05 DUE TO TIME LIMIT ***",
        "Segmentation fault",
    ]
    assert top(diagnose(rules, lines), "job-time-limit").severity == "error"


def test_the_kernels_oom_task_list_alone_is_a_host_oom_naming_the_largest_task(rules):
    lines = [
        "[17798674.374062] [ 199244]  1000 199244     1907      677    49152        0          -998 bash",
        "[17798674.374495] [ 202779]  1000 202779 274650088 243385180 1957441536     7930          -998 python",
        "[17798674.374519] [ 202780]  1000 202780 33475461  2529507 25161728     3314          -998 python",
    ]
    finding = found(diagnose(rules, lines), "job-oom")
    assert "202779" in finding.detail and finding.assumed


def test_a_parallelcluster_node_that_failed_to_bootstrap_is_a_node_failure(rules):
    line = (
        "service[nvidia-fabricmanager] (aws-parallelcluster-platform::nvidia_config line 35) had an error: "
        "Mixlib::ShellOut::CommandTimeout: Command timed out after 900s:"
    )
    top(diagnose(rules, [line]), "node-failure")


def test_a_parallelcluster_bootstrap_that_could_not_mount_home_is_no_node_failure(rules):
    line = (
        "[2020-04-11T15:34:58+00:00] FATAL: Mixlib::ShellOut::ShellCommandFailed: mount[/home] "
        "(aws-parallelcluster::_compute_base_config line 45) had an error: Mixlib::ShellOut::ShellCommandFailed: "
        "Expected process to exit with [0], but received '32'"
    )
    assert "node-failure" not in ids(diagnose(rules, [line]))


def test_a_submission_slurm_refused_is_no_time_limit_or_memory_kill(rules):
    # Slurm refusing the request names "time limit" or "memory limit" in its words: nothing ran out.
    for line in (
        "sbatch: error: Batch job submission failed: Requested time limit is invalid (missing or exceeds some limit)",
        "sbatch: error: memory limit must be provided for shared jobs",
        "sbatch: fatal: --mem, --mem-per-cpu, and --mem-per-gpu are mutually exclusive.",
        "salloc: error: Job submit/allocate failed: Invalid partition name specified",
    ):
        finding = top(diagnose(rules, [line]), "unexplained-failure")
        assert "never ran" in finding.detail and ".." not in finding.detail
    # A refusal the catalogue does name keeps its cause.
    refused = ["sbatch: error: Batch job submission failed: Node count specification invalid"]
    top(diagnose(rules, refused), "world-size-mismatch")


# ------------------------------------------------------------------------- NCCL's error-return trail
WSL_TOPOLOGY = [
    "SHJS:92777:92777 [0] misc/ibvwrap.cc:63 NCCL WARN Failed to open libibverbs.so[.1]",
    "SHJS:92777:92777 [0] NCCL INFO NET/Socket : Using [0]eth0:172.27.213.95<0>",
    "SHJS:92777:92777 [0] NCCL INFO Using network Socket",
    "SHJS:92777:92889 [0] graph/xml.cc:332 NCCL WARN Could not find real path of /sys/class/pci_bus/0000:01/../../0000:01:00.0",
    "SHJS:92777:92889 [0] NCCL INFO graph/xml.cc:469 -> 2",
    "SHJS:92777:92889 [0] NCCL INFO graph/topo.cc:523 -> 2",
    "SHJS:92777:92889 [0] NCCL INFO init.cc:581 -> 2",
    "SHJS:92777:92889 [0] NCCL INFO group.cc:73 -> 2 [Async thread]",
]


def test_an_unknown_nccl_warn_whose_error_returned_to_the_caller_outranks_a_missing_verbs_library(rules):
    # NCCL went on over sockets without libibverbs; the topology WARN's error is what reached ncclCommInitRank.
    report = diagnose(rules, WSL_TOPOLOGY)
    first = report.findings[0]
    assert (first.id, first.severity) == ("unexplained-failure", "error")
    assert "Could not find real path of /sys/class/pci_bus" in first.detail and "init.cc:581 -> 2" in first.detail
    assert "PCI tree" in first.detail  # what the message usually means
    assert found(report, "ib-verbs-library-missing").severity == "warning"


def test_a_service_thread_trail_after_the_tests_passed_is_no_failure(rules):
    report = diagnose(
        rules,
        [
            "# Out of bounds values : 0 OK",
            "# Avg bus bandwidth    : 180.4",
            "n3:77:120 [0] misc/socket.cc:538 NCCL WARN socketProgress: Connection closed by remote peer n4<42311>",
            "n3:77:120 [0] NCCL INFO proxy.cc:1458 -> 6 [Proxy Service]",
        ],
    )
    assert all(f.severity not in ("error", "critical") for f in report.findings)


def test_a_trail_from_a_warn_a_known_cause_explains_stays_that_cause(rules):
    report = diagnose(
        rules,
        [
            "node2:141:141 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 172.17.0.1<43369> failed : "
            "Connection refused",
            "node2:141:141 [0] NCCL INFO misc/socket.cc:567 -> 6",
            "node2:141:141 [0] NCCL INFO bootstrap.cc:274 -> 6",
            "node2:141:141 [0] NCCL INFO init.cc:1799 -> 6",
            "srun: error: node2: task 1: Exited with exit code 1",
        ],
    )
    top(report, "nccl-socket-ifname")
    assert "unexplained-failure" not in ids(report)


# ------------------------------------------------------------------------------- job_container plugin
def test_slurms_job_container_directory_missing_is_no_node_local_path_of_the_job(rules):
    report = diagnose(
        rules,
        [
            "slurmstepd: error: container_p_join: open failed /scratch/119383/.active: No such file or directory",
            "slurmstepd: error: container_g_join failed: 119383",
        ],
    )
    assert "job_container" in top(report, "unexplained-failure").detail
    assert "node-local-path" not in ids(report)


def test_a_locked_memory_limit_too_low_for_rdma_is_a_failure_naming_the_limit(rules):
    for lines in (
        ["[0] DAPL startup: RLIMIT_MEMLOCK too small", "[1] DAPL startup: RLIMIT_MEMLOCK too small"],
        ["The OpenFabrics (openib) BTL failed to initialize while trying to allocate some locked memory.  This typically"],
    ):
        assert "LimitMEMLOCK=infinity" in top(diagnose(rules, lines), "unexplained-failure").detail


def test_open_mpis_signal_line_alone_is_a_crash(rules):
    crash = ["[fd7fd1d78666:03983] Signal: Bus error (7)", "[fd7fd1d78666:03983] Signal code: Non-existant physical address (2)"]
    assert top(diagnose(rules, crash), "unexplained-failure").hosts == ["fd7fd1d78666"]


def test_a_failed_glog_check_is_a_failure_of_its_own(rules):
    # caffe / TensorFlow / XLA abort on a failed CHECK; nothing else may be printed but the stack trace.
    caffe = [
        "I1116 15:54:58.068287 30214 solver.cpp:363]     Test net output #1: loss1 = 0.139663 (* 1 = 0.139663 loss)",
        "F1116 15:55:02.388101 30214 cudnn_conv_layer.cu:137] Check failed: error == cudaSuccess (77 vs. 0)  an illegal memory access was encountered",
        "*** Check failure stack trace: ***",
    ]
    finding = top(diagnose(rules, caffe), "unexplained-failure")
    assert "Check failed" in " ".join(e.text for e in finding.evidence)
    absl = "F0000 00:00:1712345678.123456   12345 pjrt_stream_executor_client.cc:1234] Check failed: buffer != nullptr"
    top(diagnose(rules, [absl]), "unexplained-failure")
    # glog's INFO and WARNING lines are not failures.
    assert not ids(diagnose(rules, caffe[:1]))



# ----------------------------------------------------------------------- thin pastes of a failure (session 23)
def test_torchrun_s_signal_row_reads_like_its_exitcode_row(rules):
    """The failure table's traceback row is all some pastes keep: SIGKILL is the OOM killer's guess, as
    exitcode -9 is; another signal is a crash nobody explained; a glued table still reads."""
    killed = top(diagnose(rules, ["traceback : Signal 9 (SIGKILL) received by PID 36071"]), "job-oom")
    assert killed.severity == "warning" and any("OOM killer" in a for a in killed.assumed)
    top(diagnose(rules, ["rank2 (local rank: 2)exitcode: -9 (pid: 36071)error file: <N/A>"]), "job-oom")
    segv = diagnose(rules, ["traceback : Signal 11 (SIGSEGV) received by PID 36071"])
    assert ids(segv) == {"unexplained-failure"} and top(segv, "unexplained-failure").severity == "error"


def test_fatal_lines_of_libraries_are_a_failure_even_alone(rules):
    for line in [
        "2020-07-14 12:13:46.715142: F external/org_tensorflow/tensorflow/compiler/xla/service/cpu/ir_emitter.cc:3131]"
        " could not find emitted value for: %collective-permute.3",
        "/opt/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1284: indexSelectLargeIndex: block: [37,0,0], thread: "
        "[92,0,0] Assertion `srcIndex < srcSelectDimSize` failed.",
        "Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:455 'invalid argument'",
    ]:
        finding = top(diagnose(rules, [line]), "unexplained-failure")
        assert finding.severity == "error" and finding.evidence[0].line == 1, line
    info = "2020-07-14 12:13:46.715142: I tensorflow/core/platform/cpu_feature_guard.cc:142] Your CPU supports AVX2"
    assert not diagnose(rules, [info]).findings


def test_a_raylet_the_gcs_declared_dead_is_a_lost_node(rules):
    report = diagnose(rules, [
        "[2022-02-16 12:45:07,907 W 149 199] node_manager.cc:157: Last heartbeat was sent 6901 ms ago. There might be "
        "resource pressure on this node. If heartbeat keeps lagging, this node can be marked as dead mistakenly.",
        "[2022-02-16 12:46:52,789 C 149 149] node_manager.cc:170: This node has beem marked as dead.",
    ])  # fmt: skip
    assert top(report, "node-failure").evidence[0].line == 2
    assert not diagnose(rules, ["this node can be marked as dead mistakenly."]).findings


def test_cuda_errors_that_lose_the_context_are_a_failure_in_any_wrapper(rules):
    for line in [
        "cuda runtime error (700) : an illegal memory access was encountered",
        "THCudaCheck FAIL file=/pytorch/aten/src/THC/THCCachingHostAllocator.cpp line=265 error=77 : an illegal memory "
        "access was encountered",
        "unspecified launch failure (code 719, ERROR_LAUNCH_FAILED)",
        "Error : 'cudaErrorLaunchFailure': 'unspecified launch failure'!",
    ]:
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line


def test_a_launcher_stopped_from_outside_is_no_error_of_the_job(rules):
    """torchrun's agent signalled, DeepSpeed's launcher killing its workers: something stopped the run, which a
    warning says without naming a cause; Horovod shut down by a rank's exception is the failure itself."""
    for line in [
        "WARNING:torch.distributed.elastic.agent.server.api:Received 1 death signal, shutting down workers",
        "192.169.83.120: [2023-10-13 11:31:28,593] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 249",
    ]:
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "warning", line
    horovod = (
        "[1,3]<stderr>:Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt "
        "to allreduce, allgather or broadcast a tensor after one of the ranks finished execution."
    )
    assert top(diagnose(rules, [horovod]), "unexplained-failure").severity == "error"


AGENT_SIGTERM = [
    "W0616 00:37:22.830000 4015698 torch/distributed/elastic/agent/server/api.py:719] Received Signals.SIGTERM "
    "death signal, shutting down workers",
    "W0616 00:37:22.831000 4015698 torch/distributed/elastic/multiprocessing/api.py:900] Sending process 4015788 "
    "closing signal SIGTERM",
    "Traceback (most recent call last):",
    '  File "/usr/local/bin/torchrun", line 8, in <module>',
    "torch.distributed.elastic.multiprocessing.api.SignalException: Process 4015698 got signal: 15",
]


def test_torchrun_signalled_says_which_signal_and_what_it_usually_means(rules):
    """PyTorch 2.x names the signal ("Signals.SIGHUP"), 1.x numbers it; the agent's own SignalException and its
    traceback are how it stopped, not the job's error: a warning saying what the signal usually means."""
    stopped = top(diagnose(rules, AGENT_SIGTERM), "unexplained-failure")
    assert stopped.severity == "warning" and "SIGTERM" in stopped.detail and "scancel" in stopped.detail
    hangup = top(
        diagnose(rules, [
            "Received Signals.SIGHUP death signal, shutting down workers",
            "torch.distributed.elastic.multiprocessing.api.SignalException: Process 88121 got signal: 1",
        ]),
        "unexplained-failure",
    )  # fmt: skip
    assert hangup.severity == "warning" and "terminal or SSH session" in hangup.detail and "tmux" in hangup.detail
    # The exception alone (the last line a user pastes) still says which signal
    alone = top(diagnose(rules, AGENT_SIGTERM[-1:]), "unexplained-failure")
    assert alone.severity == "warning" and "SIGTERM" in alone.detail
    interrupted = diagnose(rules, ["[2024-03-02 22:13:28,114] torch.distributed.elastic.agent.server.api: [WARNING] "
                                   "Received 2 death signal, shutting down workers"])  # fmt: skip
    assert "Ctrl-C" in top(interrupted, "unexplained-failure").detail
    deepspeed = diagnose(rules, [
        "[2024-05-02 03:11:09,401] [INFO] [launch.py:315:sigkill_handler] Killing subprocess 249",
        "[2024-05-02 03:11:09,402] [INFO] [launch.py:333:sigkill_handler] Main process received SIGTERM, exiting",
    ])  # fmt: skip
    launcher = top(deepspeed, "unexplained-failure")
    assert launcher.severity == "warning" and launcher.detail.startswith("The launcher (DeepSpeed's")
    lightning = top(diagnose(rules, ["[rank: 0] Received SIGTERM: 15", "Bypassing SIGTERM: 15"]), "unexplained-failure")
    assert lightning.severity == "warning" and lightning.detail.startswith("PyTorch Lightning got SIGTERM")



HYDRA_BOX = [
    "===================================================================================",
    "=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES",
    "=   PID 2451 RUNNING AT archlinux",
    "=   EXIT CODE: 2",
    "=   CLEANING UP REMAINING PROCESSES",
    "===================================================================================",
]


def test_srun_interrupted_twice_is_named_instead_of_a_scancel(rules):
    ctrl_c = ["srun: interrupt (one more within 1 sec to abort)", "srun: StepId=1234.0 tasks 0-7: running",
              "srun: sending Ctrl-C to StepId=1234.0", "srun: forcing job termination"]  # fmt: skip
    cancelled = top(diagnose(rules, ctrl_c + [
        "slurmstepd: error: *** STEP 1234.0 ON n0 CANCELLED AT 2025-01-01T10:00:00 ***",
        "srun: error: n0: tasks 0-7: Killed",
    ]), "job-cancelled")  # fmt: skip
    assert "srun was interrupted" in cancelled.detail and "scancel" not in cancelled.detail
    # Slurm 20.02's words, without the banner
    alone = top(diagnose(rules, ["srun: sending Ctrl-C to job 1234.0"]), "unexplained-failure")
    assert alone.severity == "warning" and alone.detail.startswith("srun passed a Ctrl-C on")


def test_mpiexec_passing_on_a_ctrl_c_is_a_stop_not_a_crash(rules):
    ctrl_c = ["[mpiexec@archlinux] Sending Ctrl-C to processes as requested",
              "[mpiexec@archlinux] Press Ctrl-C again to force abort"]  # fmt: skip
    stopped = top(diagnose(rules, ctrl_c + HYDRA_BOX + [
        "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Interrupt (signal 2)"]), "unexplained-failure")  # fmt: skip
    assert stopped.severity == "warning" and "Hydra) got SIGINT" in stopped.detail
    crashed = top(diagnose(rules, ctrl_c + HYDRA_BOX[:3] + ["=   EXIT CODE: 139"] + HYDRA_BOX[4:] + [
        "YOUR APPLICATION TERMINATED WITH THE EXIT STRING: Segmentation fault (signal 11)"]), "unexplained-failure")  # fmt: skip
    assert crashed.severity == "error"


def test_a_real_exception_beside_torchruns_signal_is_still_the_failure(rules):
    crashed = AGENT_SIGTERM + ["RuntimeError: CUDA error: an illegal memory access was encountered"]
    failure = top(diagnose(rules, crashed), "unexplained-failure")
    assert failure.severity == "error" and "illegal memory access" in failure.detail


def test_lightning_auto_requeue_that_failed_is_the_time_limit_and_says_why(rules):
    """Lightning's SLURM auto-requeue: the working form raises nothing; a refused `scontrol requeue` is a job
    that ends at its limit and is not queued again, and a job submitted without requeue is told --requeue."""
    start = ["Handling auto-requeue signal: 10", "requeing job 4412871..."]
    assert not diagnose(rules, start + ["Requeued SLURM job: 4412871"]).findings
    refused = diagnose(rules, start + [
        "Requested operation is presently disabled for job 4412871",
        "Requeuing SLURM job 4412871 failed with error code 1",
    ])  # fmt: skip
    limit = top(refused, "job-time-limit")
    assert "could not requeue job 4412871" in limit.detail and "sbatch --requeue" in limit.detail
    other = top(diagnose(rules, start + ["Requeuing SLURM job 4412871 failed with error code 127"]), "job-time-limit")
    assert "exited 127" in other.detail and "--requeue" not in other.detail


def test_hydra_reports_a_sigkill_as_a_likely_oom_and_other_codes_as_failures(rules):
    box = ["=   BAD TERMINATION OF ONE OF YOUR APPLICATION PROCESSES", "=   PID 92248 RUNNING AT fzh-desktop"]
    for code in ["=   EXIT CODE: 9", "=   KILLED BY SIGNAL: 9 (Killed)"]:
        report = diagnose(rules, box + [code, "=   CLEANING UP REMAINING PROCESSES"])
        oom = top(report, "job-oom")
        assert oom.severity == "warning" and "Hydra" in oom.detail and any("OOM killer" in a for a in oom.assumed)
        assert found(report, "unexplained-failure").severity == "warning"
    crashed = diagnose(rules, box + ["=   EXIT CODE: 1"])
    assert top(crashed, "unexplained-failure").severity == "error" and "job-oom" not in ids(crashed)
    bus = diagnose(rules, box + ["=   KILLED BY SIGNAL: 7 (Bus error)"])
    top(bus, "shm-too-small")


def test_host_memory_running_out_in_old_and_localised_words(rules):
    top(diagnose(rules, ["RuntimeError: $ Torch: not enough memory: you tried to allocate 0GB. Buy new RAM!"]), "job-oom")
    killed = top(diagnose(rules, ["Writing metrics: /home/u/logdir/scores.jsonl", "已杀死"]), "job-oom")
    assert any("OOM killer" in a for a in killed.assumed)


def test_a_full_disk_a_quota_or_an_hdf5_lock_is_a_failure_that_says_what_to_check(rules):
    cases = {
        "[Errno 28] No space left on device": "df -h",
        "/usr/bin/sort: write failed: standard output: Disk quota exceeded": "quota",
        "  #004: H5FDsec2.c line 941 in H5FD_sec2_lock(): unable to lock file, errno = 11, error message = "
        "'Resource temporarily unavailable'": "HDF5_USE_FILE_LOCKING=FALSE",
    }
    for line, advice in cases.items():
        finding = top(diagnose(rules, [line]), "unexplained-failure")
        assert finding.severity == "error" and advice in finding.detail, line


def test_xlas_aborted_communicator_and_rccl_tests_hip_failure_are_failures(rules):
    for line in [
        "2023-08-25 11:06:39.330561: E external/xla/xla/service/gpu/nccl_utils.cc:191] Aborting communicator: "
        "0x5555a108ff90 due to async NCCL error: remote process exited or there was a network error",
        "Test HIP failure common.cu:1129 'hipErrorInvalidDevice'",
    ]:
        assert top(diagnose(rules, [line]), "unexplained-failure").severity == "error", line


def test_a_prolog_that_hung_is_a_node_failure(rules):
    assert "Prolog" in top(diagnose(rules, ["slurmstepd: error: Prolog hung on node worker-3"]), "node-failure").detail


def test_python_3_14s_words_for_an_ignored_exception_at_shutdown_are_no_failure(rules):
    ignored = [
        "[rank6]:[titan] 2026-05-03 02:37:15,266 - root - INFO - Training completed",
        "[rank6]:Exception ignored while calling deallocator <function CheckpointManager.__del__ at 0x7faa78f38a90>:",
        "[rank6]:Traceback (most recent call last):",
        '[rank6]:  File "/venv/main/lib/python3.14/threading.py", line 1133, in join',
        "[rank6]:PythonFinalizationError: cannot join thread at interpreter shutdown",
    ]
    assert "unexplained-failure" not in ids(diagnose(rules, ignored))
    # Without the line that says it was ignored, the same traceback is a failure.
    assert "unexplained-failure" in ids(diagnose(rules, ignored[:1] + ignored[2:]))


def test_a_process_terminated_before_the_others_timed_out_is_the_root_of_the_timeout(rules):
    steps = [f"2024-07-29 01:5{n}:31 - LOGS - Epoch:  10 [   8354{n}/  100000], loss: 33.49" for n in range(3)]
    report = diagnose(rules, steps + ["Terminated", WATCHDOG])
    root = top(report, "unexplained-failure")
    assert root.severity == "error" and "Terminated" in root.detail
    assert found(report, "nccl-timeout").explained_by == "unexplained-failure"
    # A time limit that sent the signal says who stopped it.
    assert top(diagnose(rules, steps + ["Terminated", WATCHDOG, JOB_TIME_LIMIT]), "job-time-limit")
    # The shell's word alone: stopped from outside, a warning that says what it could not tell.
    alone = diagnose(rules, ["run.sh: line 12:  4663 Terminated              python train.py"])
    assert top(alone, "unexplained-failure").severity == "warning"


def test_an_exception_hydra_reported_before_exiting_is_the_jobs_failure(rules):
    lines = [
        "Error executing job with overrides: ['experiment=downscaling_LDM_res_2mT']",
        "Traceback (most recent call last):",
        '  File "src/train.py", line 31, in main',
        "RuntimeError: DDP expects same model across all ranks, but Rank 3 has 192 params, while rank 0 has "
        "inconsistent 170 params.",
        "",
        "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.",
    ]
    finding = top(diagnose(rules, lines), "unexplained-failure")
    assert finding.severity == "error" and "DDP expects same model" in finding.detail


def test_argparse_rejecting_the_command_line_on_every_rank_is_the_failure(rules):
    usage = ["usage: train.py [-h] [--output-dir OUTPUT_DIR] [config]", "train.py: error: unrecognized arguments: configs/scaling_cgpu.yaml"]
    finding = found(diagnose(rules, usage * 3), "unexplained-failure")
    assert finding.severity == "error" and "unrecognized arguments" in finding.detail
    # "error:" after a program's name that is not argparse's wording is not read as one.
    assert not diagnose(rules, ["train.py: error: 0.25 after epoch 3"]).findings
