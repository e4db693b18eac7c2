"""Collective analyzers (diag/diagnosis/analyzers/collectives.py): which rank a watchdog timeout is about,
nccl-tests bandwidth, and NCCL_DEBUG=INFO left on for a large job."""

from __future__ import annotations

from tests.diagnosis.logs import diagnose, found, ids, top

# Two ranks on two nodes, as NCCL places them (this is how a rank gets its host).
INIT = [
    f"slinky-{r}:54{r}:54{r} [0] NCCL INFO ncclCommInitRankConfig comm 0x44c494e{r} rank {r} nranks 2 cudaDev 0 "
    f"nvmlDev 0 busId 60 commId 0x2feeab4e40b49c8a - Init COMPLETE"
    for r in (0, 1)
]
WATCHDOG = (
    "[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689] [Rank 0] Watchdog caught collective operation "
    "timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=67108864, NumelOut=67108864, Timeout(ms)=20000) ran for "
    "20053 milliseconds before timing out."
)


def dump(rank: int, enqueued: int, completed: int) -> str:
    """The flight-recorder line each rank prints once a timeout is signalled: how far it got."""
    return (
        f"[rank{rank}]:[E1202 11:14:38.56462{rank} ProcessGroupNCCL.cpp:1914] [PG ID 0 PG GUID 0(default_pg) "
        f"Rank {rank}] Received a dump signal due to a collective timeout from this local rank and we will try our "
        f"best to dump the debug info. Last enqueued NCCL work: {enqueued}, last completed NCCL work: {completed}."
    )


# ------------------------------------------------------------------------------------ nccl_timeout
def test_timeout_names_the_rank_that_fell_behind_not_the_one_that_timed_out(rules):
    report = diagnose(rules, INIT + [WATCHDOG, dump(0, 2, 1), dump(1, 1, 1)])
    timeout = found(report, "nccl-timeout")
    assert (timeout.severity, timeout.ranks, timeout.hosts) == ("error", [1], ["slinky-1"])


def test_timeout_names_a_rank_that_said_nothing(rules):
    # Rank 1 is known (it joined the communicator) but printed no collective state: it left first.
    timeout = found(diagnose(rules, INIT + [WATCHDOG, dump(0, 2, 1)]), "nccl-timeout")
    assert (timeout.ranks, timeout.hosts) == ([1], ["slinky-1"])


def test_a_watchdog_timeout_rethrown_by_old_pytorch_is_not_an_unknown_failure(rules):
    # PyTorch 1.12-2.1 rethrows from the watchdog thread: the terminate line names only the C++ type.
    old = WATCHDOG.replace("[rank0]:[E1202 11:14:33.189526546 ProcessGroupNCCL.cpp:689]", "[E ProcessGroupNCCL.cpp:828]")
    rethrown = [
        old,
        "terminate called after throwing an instance of 'std::runtime_error'",
        "  what():  " + old.split("] ", 1)[1],
    ]
    top(diagnose(rules, rethrown), "nccl-timeout")
    # The same line without a timeout is still a failure nobody explained.
    top(diagnose(rules, ["terminate called after throwing an instance of 'std::runtime_error'"]), "unexplained-failure")


def test_timeout_where_every_rank_waited_in_the_same_collective_blames_no_straggler(rules):
    timeout = found(diagnose(rules, INIT + [WATCHDOG, dump(0, 2, 1), dump(1, 2, 1)]), "nccl-timeout")
    assert timeout.ranks == [0]  # only the reporter: nobody fell behind
    assert "slinky-1" not in timeout.hosts


def test_timeout_is_folded_under_the_crash_of_the_rank_it_waited_for(rules):
    oom = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"
    report = diagnose(rules, INIT + [oom, WATCHDOG, dump(0, 2, 1)])
    assert found(report, "nccl-timeout").explained_by == "cuda-oom"
    assert report.findings[0].id == "cuda-oom"


# --------------------------------------------------------------------------------------- busbw_low
def nccl_tests(busbw: float, wrong: int = 0) -> list[str]:
    """One node of 8 H100 (NVLink, ~360 GB/s expected) running all_reduce_perf up to 8 GiB."""
    devices = [
        f"#  Rank  {r} Group  0 Pid 2234{r:02d} on  slinky-0 device  0 [0000:18:00] NVIDIA H100 80GB HBM3"
        for r in range(8)
    ]
    return devices + [
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        f"    67108864      16777216     float     sum      -1   489.36  137.13  {busbw / 2:.2f}      0   485.95  138.10  "
        f"{busbw / 2:.2f}      0",
        f"  8589934592    2147483648     float     sum      -1  47435.26  181.09  {busbw:.2f}      {wrong}  47104.21  "
        f"182.36  {busbw:.2f}      {wrong}",
        f"# Out of bounds values : {wrong} {'FAILED' if wrong else 'OK'}",
    ]


def test_a_watchdog_stuck_after_the_processes_reached_their_exit_is_a_teardown_warning(rules):
    exit_warning = (
        "[rank0]:[W205 18:00:34.953145631 ProcessGroupNCCL.cpp:1538] Warning: WARNING: destroy_process_group() was "
        "not called before program exit, which can leak resources."
    )
    stuck = (
        "[rank4]:[E205 18:11:06.375750231 ProcessGroupNCCL.cpp:1870] [PG ID 12 PG GUID 99(EXPERT_MODEL_PARALLEL_GROUP) "
        "Rank 4] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring "
        "enqueued collectives."
    )
    finding = found(diagnose(rules, [exit_warning, stuck]), "nccl-timeout")
    assert finding.severity == "warning" and "destroy_process_group" in finding.detail
    # Stuck before the exit, or after a failure: the watchdog hung while the work was still going.
    assert found(diagnose(rules, [stuck, exit_warning]), "nccl-timeout").severity == "error"
    crashed = ["RuntimeError: CUDA error: an illegal memory access was encountered", exit_warning, stuck]
    assert found(diagnose(rules, crashed), "nccl-timeout").severity != "warning"


def test_nccl_tests_own_timeout_is_a_collective_timeout_and_its_unwinding_no_other_failure(rules):
    # all_reduce_perf --timeout 10 on two hosts: each prints its timeout, the frames it returned through,
    # and mpirun's box on the first non-zero exit (src/common.cu; Open MPI's errmgr).
    lines = [
        "8d393995ec76: Test timeout (10s) common.cu:321",
        " .. 8d393995ec76 pid 11785: Test failure common.cu:407",
        " .. 8d393995ec76 pid 11785: Test failure all_reduce.cu:90",
        "6a3e6142ec3e:5671:5690 [0] NCCL INFO comm 0x562a041141f0 rank 0 nranks 4 cudaDev 0 busId 61000 - Abort COMPLETE",
        "6a3e6142ec3e: Test timeout (10s) common.cu:321",
        " .. 6a3e6142ec3e pid 5671: Test failure common.cu:407",
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
    ]
    finding = top(diagnose(rules, lines), "nccl-timeout")
    assert "10 s" in finding.detail and "8d393995ec76" in finding.hosts
    # A failure of its own before the timeout still is one.
    crashed = ["8d393995ec76: Test NCCL failure common.cu:394 'unhandled system error (run with NCCL_DEBUG=INFO for "
               "details) / '", *lines]
    assert diagnose(rules, crashed).findings[0].id != "nccl-timeout"


def test_low_busbw_at_the_largest_size_is_an_error(rules):
    assert found(diagnose(rules, nccl_tests(120.5)), "busbw-low").severity == "error"


def test_wrong_results_are_an_error_even_at_full_speed(rules):
    # Full bandwidth with wrong values is no busbw-low (a slow fabric); no cause id is data corruption.
    report = diagnose(rules, nccl_tests(350.85, wrong=12))
    assert "busbw-low" not in ids(report)
    finding = found(report, "unexplained-failure")
    assert finding.severity == "error" and "24 wrong results" in finding.detail  # 12 in each of the two #wrong columns
    # The fix hunts the corrupting node; it does not report a bandwidth that was fine as too low.
    assert "corrupted" in finding.remediation and "GB/s expected" not in finding.remediation
    slow_and_wrong = found(diagnose(rules, nccl_tests(120.5, wrong=12)), "busbw-low")
    assert "GB/s expected" in slow_and_wrong.remediation


def test_full_busbw_is_no_finding(rules):
    # The smaller sizes are slower (latency-bound); only the largest one is judged.
    assert "busbw-low" not in ids(diagnose(rules, nccl_tests(350.85)))


def test_rows_of_rooted_timestamped_and_per_iteration_tables_are_judged_too(rules):
    """nccl-tests prints broadcast/gather/scatter rows with redop "none" and their root, appends a
    timestamp with -T and min/max/p99/cv% after each #wrong with per-iteration timing (src/util.cu)."""
    head = nccl_tests(350.85)[:8]
    slow = "  8589934592    2147483648     float"
    rows = {
        "broadcast": f"{slow}    none       0  47435.26  181.09  120.50      0  47104.21  182.36  120.50      0",
        "timestamp": f"{slow}     sum      -1  47435.26  181.09  120.50      0  47104.21  182.36  120.50      0  "
        "2026-07-09 16:02:59",
        "per-iteration": f"{slow}     sum      -1  47435.26  181.09  120.50      0  47001.2  48002.3  48002.3     0.05"
        "  47104.21  182.36  120.50      0  47001.2  48002.3  48002.3     0.05",
    }
    end = ["# Out of bounds values : 0 OK"]  # the table's end: its last row is the largest size
    for form, row in rows.items():
        assert found(diagnose(rules, head + [row] + end), "busbw-low").severity == "error", form
        fast = row.replace("120.50", "350.85")
        assert "busbw-low" not in ids(diagnose(rules, head + [fast] + end)), form


def test_nccl_tests_own_bandwidth_floor_failing_is_an_error(rules):
    # NCCL_TESTS_MIN_BW=<GB/s>: nccl-tests prints FAILED when the average is under 0.9 x that; with
    # nothing else in the paste to infer the fabric from, its verdict is the evidence.
    report = diagnose(rules, ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 12.4871 FAILED"])
    assert found(report, "busbw-low").severity == "error"
    passed = ["# Out of bounds values : 0 OK", "# Avg bus bandwidth    : 182.33 OK"]
    assert "busbw-low" not in ids(diagnose(rules, passed))


# ----------------------------------------------------------------------------------- debug_verbose
def init_complete(nranks: int, shown: int) -> list[str]:
    return [
        f"slinky-{r // 8}:{5000 + r}:{5000 + r} [{r % 8}] NCCL INFO ncclCommInitRankConfig comm 0x55d{r:x} rank {r} "
        f"nranks {nranks} cudaDev {r % 8} nvmlDev {r % 8} busId db000 commId 0x1 - Init COMPLETE"
        for r in range(shown)
    ]


def test_nccl_debug_info_on_every_rank_of_a_large_job_is_advice(rules):
    finding = found(diagnose(rules, init_complete(64, 64)), "nccl-debug-verbose")
    assert (finding.severity, finding.role) == ("info", "advice")


def test_nccl_debug_info_on_a_small_job_is_no_finding(rules):
    assert "nccl-debug-verbose" not in ids(diagnose(rules, init_complete(32, 32)))


def test_a_traceback_through_main_process_first_is_a_barrier_wait(rules):
    lines = [
        '  File "run_clm.py", line 414, in main',
        '    with training_args.main_process_first(desc="dataset map tokenization"):',
        '  File "/usr/lib/python3.8/contextlib.py", line 113, in __enter__',
    ]
    finding = found(diagnose(rules, lines), "nccl-timeout")
    assert "main_process_first" in finding.detail


# ------------------------------------------------------------------------------ shm-too-small forms
def test_pytorch_shared_tensors_that_do_not_fit_in_dev_shm_are_shm_too_small(rules):
    for line in (
        "RuntimeError: unable to allocate shared memory(shm) for file </torch_77_31337_0>: No space left on device (28)",
        "RuntimeError: unable to write to file </torch_12_99>: No space left on device (28)",
        "RuntimeError: unable to allocate shared memory(shm) for file: No space left on device",
    ):
        report = diagnose(rules, ["[rank1]: " + line, "srun: error: n1: task 1: Exited with exit code 1"])
        assert report.findings[0].id == "shm-too-small", (line, [f.id for f in report.findings])


def test_a_dataloader_killed_by_sigbus_outranks_its_peers_timeouts_and_the_launchers_summary(rules):
    # PyTorch's main process re-raises the worker's death in words that name shared memory
    # (torch/csrc/DataLoader.cpp); the worker's own "Unexpected bus error" line went to a stderr
    # this paste left out. The other ranks then wait in the next all-reduce, and torchrun sums up.
    lines = [
        "[rank3]: Traceback (most recent call last):",
        '[rank3]:   File "/opt/train.py", line 88, in <module>',
        "[rank3]: RuntimeError: DataLoader worker (pid 40417) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.",
        WATCHDOG.replace("SeqNum=2", "SeqNum=812"),
        WATCHDOG.replace("[rank0]", "[rank1]").replace("[Rank 0]", "[Rank 1]").replace("SeqNum=2", "SeqNum=812"),
        "E1202 11:14:40.000000 696 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) "
        "local_rank: 3 (pid: 40400) of binary: /usr/bin/python",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
        "srun: error: gpu-001: task 0: Exited with exit code 1",
    ]
    report = diagnose(rules, lines)
    top(report, "shm-too-small")
    assert found(report, "nccl-timeout").explained_by == "shm-too-small"
    assert "unexplained-failure" not in ids(report)


def test_a_dataloader_worker_killed_by_another_signal_is_not_shm(rules):
    for line in (
        "RuntimeError: DataLoader worker (pid 40417) is killed by signal: Segmentation fault. ",
        "RuntimeError: DataLoader worker (pid 40417) exited unexpectedly with exit code 1. Details are lost due to "
        "multiprocessing. Rerunning with num_workers=0 may give better error trace.",
    ):
        report = diagnose(rules, [line, "srun: error: n1: task 1: Exited with exit code 1"])
        assert "shm-too-small" not in ids(report), (line, [f.id for f in report.findings])


def test_rays_object_store_in_tmp_is_a_warning_not_a_failure(rules):
    line = (
        "WARNING services.py:1996 -- WARNING: The object store is using /tmp instead of /dev/shm because /dev/shm "
        "has only 67108864 bytes available. This will harm performance!"
    )
    finding = found(diagnose(rules, [line]), "shm-too-small")
    assert finding.severity == "warning" and "64 MiB" in finding.detail


def test_collective_waits_outside_the_nccl_watchdog_name_who_never_came_when_they_can(rules):
    barrier = "RuntimeError: [Rank 0]: Ranks 5, 6 failed to pass monitoredBarrier in 300000 ms"
    finding = found(diagnose(rules, [barrier]), "nccl-timeout")
    assert finding.ranks == [5, 6]
    for line in (
        "RuntimeError: [gloo/transport/tcp/unbound_buffer.cc:133] Timed out waiting 1800000ms for send operation to "
        "complete",
        "W horovod/common/stall_inspector.cc:107] One or more tensors were submitted to be reduced, gathered or "
        "broadcasted by subset of ranks and are waiting for remainder of ranks for more than 60 seconds.",
    ):
        assert "nccl-timeout" in ids(diagnose(rules, [line])), line


def test_a_results_table_cut_before_its_end_is_a_warning_that_says_what_it_assumed(rules):
    # An excerpt may stop before the largest size: the last row shown need not be the run's last.
    cut = nccl_tests(120.5)[:-1]
    finding = found(diagnose(rules, cut), "busbw-low")
    assert finding.severity == "warning"
    assert any("largest message size shown" in a for a in finding.assumed)
    ended = cut + ["# Avg bus bandwidth    : 61.2"]
    assert found(diagnose(rules, ended), "busbw-low").severity == "error"


def test_sigbus_with_a_backtrace_in_nccls_code_is_shm_too_small(rules):
    gdb = [
        'Thread 787 "train" received signal SIGBUS, Bus error.',
        "0x00007f6b59544f3b in ncclShmOpen(char*, unsigned long, void**, void**, int, void**) () from /x/libnccl.so.2",
        "#1 0x00007f6b595436d7 in ncclProxyService(void*) () from /x/libnccl.so.2",
    ]
    finding = found(diagnose(rules, gdb), "shm-too-small")
    assert "ncclShmOpen" in finding.detail and finding.assumed  # the NCCL version is not in the log
    # A SIGBUS elsewhere (the application's own code) is not NCCL's /dev/shm.
    other = ['Thread 787 "train" received signal SIGBUS, Bus error.', "0x00007f6b in memcpy () from /lib/libc.so.6"]
    assert "shm-too-small" not in ids(diagnose(rules, other))
    # NCCL 2.19+ report a full /dev/shm cleanly: a SIGBUS in their code is something else.
    newer = ["slinky-0:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"] + gdb
    assert "shm-too-small" not in ids(diagnose(rules, newer))


def _two_nodes(busbw: float, size: int = 134217728) -> list[str]:
    """Two GH200 nodes of 4 GPUs each; no NCCL INFO line says what the fabric is."""
    devices = [
        f"#  Rank  {r} Group  0 Pid 20282{r} on  nid00547{r // 4} device  {r % 4} [0009:01:00] NVIDIA GH200 120GB"
        for r in range(8)
    ]
    return devices + [
        f"  {size:>10}  {size // 4:>12}     float     sum      -1   9876.5   13.59   {busbw:.2f}      0   9870.1   "
        f"13.60   {busbw:.2f}      0",
        "# Out of bounds values : 0 OK",
    ]


def test_data_centre_gpus_across_nodes_far_below_any_rdma_fabric_are_low(rules):
    low = found(diagnose(rules, _two_nodes(5.43)), "busbw-low")
    assert "slowest RDMA fabric" in low.detail
    # Only the guess of the fabric calls it slow: a warning that says what it assumed, not an error.
    assert low.severity == "warning" and any("RDMA fabric" in a for a in low.assumed)
    fabric = ["nid005470:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB hsn0:10.0.0.1<0>"]
    ended = _two_nodes(5.43) + ["# Avg bus bandwidth    : 4.8821"]
    assert found(diagnose(rules, ended), "busbw-low").severity == "warning"
    assert found(diagnose(rules, fabric + ended), "busbw-low").severity == "error", "the log names its IB HCAs"
    # 23 GB/s is a slow fabric, not no fabric; and a small largest size need not reach line rate.
    assert "busbw-low" not in ids(diagnose(rules, _two_nodes(23.4)))
    assert "busbw-low" not in ids(diagnose(rules, _two_nodes(5.43, size=8388608)))


def test_a_node_health_check_that_measured_low_busbw_is_low_busbw(rules):
    line = (
        "ERROR:  nhc:  Health check failed:  check_nccl_allreduce: NCCL allreduce, BUS BW (expected >=431.0 GB/s, "
        "but measured 15.1043 GB/s). FaultCode: NHC2010"
    )
    low = top(diagnose(rules, [line]), "busbw-low")
    assert "15.1043 GB/s" in low.detail and "431.0 GB/s" in low.detail and low.severity == "error"


def test_the_watchdogs_timeout_account_alone_names_the_rank_that_completed_less(rules):
    # PyTorch 2.2+ prints how far each rank got; an excerpt may hold only these lines.
    lines = [
        f"[rank{r}]:[E909 09:55:46.996672294 ProcessGroupNCCL.cpp:1709] [PG 0 (default_pg) Rank {r}] Timeout at NCCL "
        f"work: 2070, last enqueued NCCL work: 2082, last completed NCCL work: {done}."
        for r, done in ((3, 2069), (5, 2050))
    ]
    finding = top(diagnose(rules, lines), "nccl-timeout")
    assert finding.ranks == [5] and "completed fewer collectives" in finding.detail


def test_a_rank_told_of_another_ranks_timeout_is_a_timeout_not_its_own_fault(rules):
    line = "[rank5]:[E ProcessGroupNCCL.cpp:1224] [PG 0 Rank 5] Received a global timeout from another rank and will start to dump the debug info."
    finding = top(diagnose(rules, [line]), "nccl-timeout")
    assert "Another rank timed out" in finding.detail


def test_horovods_stall_shutdown_is_a_collective_timeout(rules):
    line = 'One or more rank (marked by "!") is stalled for longer than 1200 seconds. Will shutdown.'
    assert "after 1200 s" in top(diagnose(rules, [line]), "nccl-timeout").detail


def test_older_and_newer_pytorch_words_for_a_collective_timeout(rules):
    for line in (
        "[I ProcessGroupNCCL.cpp:287] [Rank 3] Watchdog caught collective operation timeout for work: "
        "WorkNCCL(OpType=ALLREDUCE, TensorShape=[262144], Timeout(ms)=1800000) ran for 1800324 milliseconds",
        "RuntimeError: NCCL Operation Timed Out",
        "[rank2]:[E1206 18:44:17.120398812 ProcessGroupNCCL.cpp:1595] [PG ID 0 PG GUID 0(default_pg) Rank 2] Received "
        "a dump signal due to a collective timeout from  rank 0 and we will try our best to dump the debug info.",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for "
        "recv operation to complete",
        "RuntimeError: Application timeout caused pair closure",
    ):
        report = diagnose(rules, [line])
        assert report.findings[0].id == "nccl-timeout", (line, ids(report))
    dump = "Rank 2] Received a dump signal due to a collective timeout from  rank 0 and we will try our best"
    assert "rank 0 was the first" in found(diagnose(rules, [dump]), "nccl-timeout").detail


def test_a_watchdog_line_wrapped_after_its_colon_behind_a_runners_prefix_is_still_a_timeout(rules):
    lines = []
    for rank in (14, 12):
        lines += [
            f"dinov2-giant-nodes.cn-d004 [stderr] [rank{rank}]:[E909 09:55:29.307629539 ProcessGroupNCCL.cpp:607] "
            f"[Rank {rank}] Watchdog caught collective operation timeout: ",
            "WorkNCCL(SeqNum=2070, OpType=REDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600034 "
            "milliseconds before timing out.",
        ]
    finding = top(diagnose(rules, lines), "nccl-timeout")
    assert finding.severity == "error" and 14 in finding.ranks
    # Behind a prefix the framing does not know, the wrapped head alone still says it.
    bare = [line.split("[stderr] ", 1)[-1].replace(f"[rank{r}]:", "") for line, r in zip(lines, (14, 14, 12, 12))]
    unknown = ["runner.cn-d004 [stderr] " + line if "Watchdog" in line else line for line in bare]
    assert top(diagnose(rules, unknown), "nccl-timeout").severity == "error"


def test_a_watchdog_without_a_heartbeat_and_xlas_collective_termination_are_timeouts(rules):
    heartbeat = (
        "[rank3]:[E1206 18:44:16.994981286 ProcessGroupNCCL.cpp:1316] [PG 0 Rank 3] First PG on this rank that "
        "detected no heartbeat of its watchdog."
    )
    assert top(diagnose(rules, [heartbeat]), "nccl-timeout")
    xla = (
        "E0915 03:25:02.160012     395 rendezvous.cc:128] Termination timeout for `first call to collective operation "
        "42; run_id=2012504188` of 600 seconds exceeded. Exiting to ensure a consistent program state."
    )
    assert top(diagnose(rules, [xla]), "nccl-timeout").severity == "error"


def test_the_heartbeat_monitors_last_words_alone_say_a_collective_failed_or_the_watchdog_hung(rules):
    # PyTorch 2.3+: the fatal line before SIGABRT, often the only one pasted.
    head = "[rank0]:[F725 02:47:41.268394894 ProcessGroupNCCL.cpp:1653] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
    failed = head + "Terminating the process after attempting to dump debug info, due to collective timeout or exception."
    finding = top(diagnose(rules, [failed]), "nccl-timeout")
    assert finding.ranks == [0] and "collective timed out or failed" in finding.detail
    hung = head + "Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang."
    assert "watchdog itself was blocked" in top(diagnose(rules, [hung]), "nccl-timeout").detail
    # A rank that ran out of GPU memory first is the cause; the termination is its consequence.
    oom = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.10 GiB"
    assert top(diagnose(rules, [oom, failed]), "cuda-oom")


def test_pytorch_2_7s_propagated_error_names_the_rank_that_failed_first(rules):
    line = "[rank3]:[E1107 10:11:12.1 ProcessGroupNCCL.cpp:1950] [PG ID 0 PG GUID 0(default_pg) Rank 3]  remote error detected from rank: 5"
    finding = top(diagnose(rules, [line]), "nccl-timeout")
    assert "rank 5 failed first" in finding.detail and "(rank 5)" in finding.remediation
    assert "rank rank" not in finding.action
    # The monitor switched off still says what it would have done; the teardown's second line alone too.
    off = (
        "[rank3]:[E1107 10:21:12.1 ProcessGroupNCCL.cpp:1557] [PG ID 0 PG GUID 0(default_pg) Rank 3] ProcessGroupNCCL "
        "monitor thread is disabled, but would have terminated the processafter attempting to dump debug info, due to "
        "collective timeout or exception."
    )
    assert top(diagnose(rules, [off]), "nccl-timeout")
    down = "[rank0]:[E709 17:05:39.081690629 ProcessGroupNCCL.cpp:698] [Rank 0] To avoid data inconsistency, we are taking the entire process down."
    assert top(diagnose(rules, [down]), "nccl-timeout")


def test_the_watchdog_ended_by_an_error_no_rule_knows_is_an_unexplained_failure(rules):
    head = "[rank3]:[E1107 10:11:12.1 ProcessGroupNCCL.cpp:1899] [PG ID 0 PG GUID 0(default_pg) Rank 3] Process group watchdog thread terminated with exception: "
    assert top(diagnose(rules, [head + "CUDA error: an illegal memory access was encountered"]), "unexplained-failure")
    assert top(diagnose(rules, [head + "CUDA error: out of memory"]), "cuda-oom")


def test_pytorch_s_words_after_a_failed_collective_alone_still_say_a_collective_failed(rules):
    dump = (
        "[rank0]:[E709 17:05:38.482326987 ProcessGroupNCCL.cpp:1536] [PG ID 0 PG GUID 0(default_pg) Rank 0] "
        "ProcessGroupNCCL preparing to dump debug info. Include stack trace: 1"
    )
    trace = (
        "[rank1]:[E1218 20:27:21.484941868 ProcessGroupNCCL.cpp:667] Stack trace of the failed collective not "
        "found, potentially because FlightRecorder is disabled."
    )
    for line in (dump, trace):
        finding = top(diagnose(rules, [line]), "nccl-timeout")
        assert "timed out or failed" in finding.detail


RAS_REPORT = [
    "#0-0 (fa93daea854b060b) MISMATCH",
    "  Communicator ranks have different AllGather operation counts",
    "  30 ranks have launched up to operation 640",
    "  2 ranks have launched up to operation 641",
    "  Rank 12 -- GPU 4 managed by process 323032 on node 10.137.190.124",
]


def test_nccl_ras_count_mismatch_points_at_the_ranks_that_never_called_the_next_collective(rules):
    finding = top(diagnose(rules, RAS_REPORT), "nccl-timeout")
    assert "30 ranks at operation 640 never called the next AllGather" in finding.detail


def test_nccl_ras_names_the_lone_rank_behind_and_its_node(rules):
    report = [
        "#0-0 (9e4b3a7c1d2f0011) MISMATCH",
        "  Communicator ranks have different AllReduce operation counts",
        "  15 ranks have launched up to operation 5213",
        "  Rank 9 has launched up to operation 5212 -- GPU 1 managed by process 2231 on node node003",
    ]
    finding = top(diagnose(rules, report), "nccl-timeout")
    assert "rank 9 on node003 at operation 5212 never called the next AllReduce" in finding.detail
    assert finding.ranks == [9] and finding.hosts == ["node003"]


def test_nccl_ras_dead_or_missing_processes_are_named_with_their_node(rules):
    dead = [
        "DEAD",
        "  1 job process is considered dead (unreachable via the RAS network)",
        "  Process 3487984 on node 172.16.64.213 managing GPU 5",
        "#0-0 (cf264af53edbe986) INCOMPLETE",
        "  Missing communicator data from 1 rank",
        "  The missing rank: 21",
    ]
    finding = top(diagnose(rules, dead), "nccl-timeout")
    assert finding.severity == "error" and finding.hosts == ["172.16.64.213"] and finding.ranks == [21]
    assert "considered dead" in finding.detail and "process 3487984" in finding.detail


def test_nccl_ras_status_mismatch_is_a_transitional_warning(rules):
    # NCCL's guide: ranks in different states while communicators are created or torn down.
    report = [
        "#0-0 (9e17999afaa87dbb) MISMATCH",
        "  Communicator ranks have different status",
        "  26 ranks have status UNKNOWN",
        "  2 ranks have status FINALIZE",
        "  Rank 4 -- GPU 4 managed by process 507289 on node 172.16.64.210",
    ]
    finding = found(diagnose(rules, report), "nccl-timeout")
    assert finding.severity == "warning" and "transitional" in finding.detail


def test_nccl_ras_thread_losing_a_peer_is_a_warning_about_the_peer_not_the_host_that_printed_it(rules):
    line = (
        "node003:2231:2301 [0] NCCL INFO RAS declaring peer 10.1.0.14<53211> as DEAD; rasDeadPeersHash "
        "0x5f1e2a7c9b3d4410"
    )
    finding = found(diagnose(rules, [line]), "nccl-timeout")
    assert finding.severity == "warning" and "10.1.0.14<53211>" in finding.detail and finding.hosts == []


def test_other_timeout_reporters_name_the_rank_task_or_host_they_saw_stop(rules):
    cases = [
        (
            "[E ProcessGroupNCCL.cpp:1064] [Rank 2] Work WorkNCCL(SeqNum=311, OpType=ALLREDUCE, Timeout(ms)=1800000) "
            "timed out in blocking wait (NCCL_BLOCKING_WAIT=1).",
            "blocking wait",
            [2],
        ),
        (
            "Not all ranks joining collective 5 at entry 4\ngroup info: 0:default_pg\ncollective: nccl:all_reduce\n"
            "missing ranks: {1}",
            "rank 1 never joined",
            [1],
        ),
        (
            "[2025-03-02 11:20:31,512] [WARNING] [RankMonitorServer2231@node003:5] [Cycle 1] Section 'step' has been "
            "open for 612.34 seconds. Timeout is 600.00 seconds.",
            "rank 5 on node003 hung",
            [5],
        ),
        (
            "F0926 17:26:32.075587  157988 client.h:77] Terminating process because the JAX distributed service "
            "detected fatal errors. This most likely indicates that another task died; see the other task logs for "
            "more details. absl::Status: UNAVAILABLE: The following tasks are unhealthy (stopped sending "
            "heartbeats):\n/job:jax_worker/replica:0/task:3",
            "task 3",
            [],
        ),
    ]
    for text, says, ranks in cases:
        finding = top(diagnose(rules, text.split("\n")), "nccl-timeout")
        assert says in finding.detail and finding.ranks == ranks, (says, finding.detail)


def test_pytorchs_desync_report_names_the_ranks_behind_over_the_rank_that_timed_out(rules):
    lines = WATCHDOG.split("\n") + [
        "\t - [0] Timeout at collective: ALLREDUCE, #2",
        "\t - To our best knowledge, ranks [1] are the lagging ranks that caused this timeout. They never joined any "
        "collectives",
    ]
    finding = top(diagnose(rules, INIT + lines), "nccl-timeout")
    assert finding.ranks == [1] and "rank 1 never joined any collective" in finding.detail
    assert finding.hosts == ["slinky-1"]


def test_one_ras_snapshot_of_different_operation_counts_is_a_warning_until_the_job_is_shown_failing(rules):
    # NCCL lists it under "Warnings": collectives outpace RAS's query in a job that runs on.
    assert found(diagnose(rules, RAS_REPORT), "nccl-timeout").severity == "warning"
    failed = RAS_REPORT + ["srun: error: node003: task 3: Exited with exit code 1"]
    assert found(diagnose(rules, failed), "nccl-timeout").severity == "error"


def test_nccl_tests_2_0_to_2_12_rows_are_judged_like_later_ones(rules):
    # No root column, and a deviation ("0e+00") where later versions count wrong values.
    old = [
        "#   Rank  0 Pid  48211 on gpu-node07 device  0 [0x18] NVIDIA A100-SXM4-80GB",
        "#   Rank  8 Pid  51022 on gpu-node08 device  0 [0x18] NVIDIA A100-SXM4-80GB",
        "#",
        "#                                                       out-of-place                       in-place          ",
        "#       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error",
        "#        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       ",
        "   536870912     134217728     float     sum   447392    1.20    2.25  0e+00   447392    1.20    2.25  0e+00",
        "  1073741824     268435456     float     sum   894785    1.20    2.25  0e+00   894785    1.20    2.25  0e+00",
        "# Out of bounds values : 0 OK",
    ]
    finding = found(diagnose(rules, old), "busbw-low")
    assert "2.25 GB/s" in finding.detail and "1 GiB" in finding.detail and "100 Gb/s per node" in finding.detail
    fast = [line.replace("    1.20    2.25", "   88.10  165.19") for line in old]
    assert "busbw-low" not in ids(diagnose(rules, fast))


def test_nccl_2_28s_port_speed_lines_give_the_rate_to_expect_between_nodes(rules):
    def node(host: str, pid: int) -> list[str]:
        return [
            f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB ib0:10.0.0.{pid % 250}<0>",
        ] + [
            f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB: [{d}] mlx5_{d}:uverbs{d}:1/IB provider=Mlx5 speed=400000 "
            f"context=0x55d0c8a0e2f0 pciPath=/sys/devices/pci0000:10/0000:10:01.0/0000:11:00.0 ar=0"
            for d in range(2)
        ]

    table = [
        "#  Rank  0 Group  0 Pid  48211 on  gpu-node07 device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
        "#  Rank  8 Group  0 Pid  51022 on  gpu-node08 device  0 [0000:18:00] NVIDIA H100 80GB HBM3",
        "#",
        "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",
        "  8589934592    2147483648     float     sum      -1   766958   11.20   21.00      0   766958   11.20   21.00      0",
        "# Out of bounds values : 0 OK",
    ]
    finding = found(diagnose(rules, node("gpu-node07", 48211) + node("gpu-node08", 51022) + table), "busbw-low")
    assert "2 HCAs x 50 GB/s per node" in finding.detail and "90 GB/s expected" in finding.detail


def test_ranks_whose_store_read_of_the_unique_id_ran_out_blame_the_late_rank_0(rules):
    # ProcessGroupNCCL's unique id fetch at the group's first collective (1.x "retreiving", 2.x "retrieving"):
    # the store answered, so the group existed; rank 0 was still tokenizing when the timeout ran out.
    lines = [
        "Running tokenizer on dataset:  47%|████▋     | 2350000/5000000 [29:58<33:47, 1307.21 examples/s]",
        *(
            f"[rank{r}]: torch.distributed.DistBackendError: [{r}] is setting up NCCL communicator and retrieving "
            f"ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: wait timeout "
            "after 1800000ms. This may indicate a possible application crash on rank 0 or a network set up issue."
            for r in (1, 2, 3)
        ),
    ]
    finding = top(diagnose(rules, lines), "nccl-timeout")
    assert finding.ranks == [1, 2, 3] and "30 min" in finding.detail and "NCCL unique id" in finding.detail


def test_a_subgroup_key_wait_that_ran_out_is_a_late_rank(rules):
    # vLLM's workers waiting on a key of a gloo subgroup under the default group's prefix (TCPStore 2.2+).
    line = (
        "(Worker pid=2437300) ERROR 08-31 06:22:53 [multiproc_executor.py:944] torch.distributed.DistStoreError: "
        "wait timeout after 1800000ms, keys: /default_pg/0//2//cpu//0/2"
    )
    finding = top(diagnose(rules, [line]), "nccl-timeout")
    assert "a key of the group" in finding.detail


def test_a_stack_through_a_process_group_barrier_alone_is_a_weak_barrier_timeout(rules):
    frames = [
        "frame #13: c10d::ProcessGroupNCCL::barrier(c10d::BarrierOptions const&) + 0x851 (0x7f739b7d2671 in "
        "/env/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)",
        "frame #14: <unknown function> + 0x501cf39 (0x7f73ddfd9f39 in /env/lib/python3.10/site-packages/torch/lib/libtorch_cpu.so)",
    ]
    finding = top(diagnose(rules, frames), "nccl-timeout")
    assert finding.severity == "warning" and finding.confidence < 0.4 and finding.assumed
    # With the exception kept, its own cause comes first.
    oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB."
    assert diagnose(rules, [oom, *frames]).findings[0].id == "cuda-oom"


def test_jax_heartbeat_timeout_names_its_task_and_is_no_preemption(rules):
    line = (
        "2024-10-09 15:47:38.568412: E external/xla/xla/tsl/distributed_runtime/coordination/coordination_service.cc:1170] "
        "/job:jax_worker/replica:0/task:3 has been set to ERROR in coordination service: UNAVAILABLE: Task "
        "/job:jax_worker/replica:0/task:3 heartbeat timeout. This indicates that the remote task has failed, got "
        "preempted, or crashed unexpectedly. Check the task logs for an earlier error to debug further."
    )
    report = diagnose(rules, [line])
    assert "task 3" in top(report, "nccl-timeout").detail
    assert "preempted" not in ids(report)
