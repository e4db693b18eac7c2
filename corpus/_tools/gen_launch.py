#!/usr/bin/env python3
"""Corpus cases for the launch, container, storage, job and GPU causes (issue 3, launch half).

* ``REAL``: byte-for-byte copies of ../shared/real-logs (only the job's own .out/.err or the captured
  log), with their expected.yaml.
* ``synthetic()``: syn-<id>-... positives and near-<id>-... near misses, written from the message forms
  in shared/reference/log-signatures.md (Slurm 20.11-25.05, PyTorch 2.1-2.9, pyxis/enroot) around the
  realistic job scaffolding of gen_synthetic.py.

Deterministic: ``python3 gen_launch.py`` rewrites the same bytes.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE.parent
SHARED = CORPUS.parent.parent / "shared" / "real-logs"
sys.path.insert(0, str(HERE))

FAB = [
    "ib-devices-not-mounted",
    "ib-verbs-library-missing",
    "nccl-ib-hca-wrong",
    "nccl-ib-disabled",
    "nccl-socket-ifname",
]
PMIX = ["pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error"]
MINE = [
    "rendezvous-failure", "port-in-use", "world-size-mismatch", "container-import-failure", "container-runtime-error",
    "shared-storage-missing", "job-time-limit", "job-oom", "node-failure", "preempted", "gpu-xid", "cuda-oom",
]  # fmt: skip
ALL = FAB + PMIX + MINE + ["node-local-path", "unexplained-failure"]


def others(*keep: str) -> list[str]:
    return [x for x in ALL if x not in keep]


def write_expected(d: Path, exp: dict) -> None:
    lines = [f"description: {json.dumps(exp['description'])}", f"origin: {exp['origin']}"]
    if exp.get("source"):
        lines.append(f"source: {exp['source']}")
    if "top" in exp:
        lines.append(f"top: {exp['top'] or 'null'}")
    lines.append("expected: [" + ", ".join(exp.get("expected", [])) + "]")
    lines.append("absent: [" + ", ".join(exp.get("absent", [])) + "]")
    lines.append(f"healthy: {'true' if exp.get('healthy') else 'false'}")
    if exp.get("culprits"):
        lines.append("culprits:")
        for cid, c in exp["culprits"].items():
            parts = [f"{k}: [" + ", ".join(str(x) for x in v) + "]" for k, v in c.items()]
            lines.append(f"  {cid}: {{{', '.join(parts)}}}")
    (d / "expected.yaml").write_text("\n".join(lines) + "\n")


# name: (source files relative to real-logs, description, top, expected, absent, healthy, culprits)
REAL: dict[str, tuple] = {
    "real-slurm-time-limit": (
        ["slurm-22.05/time-limit/train-timelimit-46.out", "slurm-22.05/time-limit/train-timelimit-46.err"],
        "--time=1: JOB and STEP 'CANCELLED AT ... DUE TO TIME LIMIT', then srun teardown and tasks Terminated",
        "job-time-limit", ["job-time-limit"], others("job-time-limit"), False, None,
    ),
    "real-slurm-step-time-limit": (
        ["slurm-22.05/step-time-limit/step-timelimit-22.out", "slurm-22.05/step-time-limit/step-timelimit-22.err"],
        "srun --time=1 inside a longer job: only the STEP line 'DUE TO TIME LIMIT' and 'srun: Force Terminated'",
        "job-time-limit", ["job-time-limit"], others("job-time-limit"), False, None,
    ),
    "real-slurm-oom": (
        ["slurm-22.05/oom/oom-step-21.out", "slurm-22.05/oom/oom-step-21.err"],
        "an srun step over --mem=200M (RSS polling, OverMemoryKill): 'exceeded memory limit (406831104 > 209715200), "
        "being killed', then a plain STEP CANCELLED banner (a consequence, not a scancel) and task 0 Killed",
        "job-oom", ["job-oom"], others("job-oom"), False, {"job-oom": {"hosts": ["n0"], "tasks": [0]}},
    ),
    "real-slurm-oom-batch": (
        ["slurm-22.05/oom-batch/oom-batch-25.out", "slurm-22.05/oom-batch/oom-batch-25.err"],
        "the batch step itself over --mem=200M: 'StepId=25.batch exceeded memory limit', then a plain JOB CANCELLED "
        "banner that the OOM kill explains",
        "job-oom", ["job-oom"], others("job-oom"), False, {"job-oom": {"hosts": ["n0"]}},
    ),
    "real-slurm-oom-cgroup": (
        ["slurm-22.05/oom-cgroup/oom-cgroup-59.out", "slurm-22.05/oom-cgroup/oom-cgroup-59.err"],
        "kernel cgroup OOM (task/cgroup): 'Detected 1 oom-kill event(s) in StepId=59.0' on n0 and n1, "
        "'srun: error: n1: task 1: Out Of Memory'",
        "job-oom", ["job-oom"], others("job-oom"), False, {"job-oom": {"hosts": ["n0", "n1"], "tasks": [1]}},
    ),
    "real-slurm-scancel": (
        ["slurm-22.05/scancel/cancelled-26.out", "slurm-22.05/scancel/cancelled-26.err"],
        "a user's scancel: STEP and JOB 'CANCELLED AT ...' with no reason, tasks Terminated and nothing failed "
        "before: an info finding, no error",
        "preempted", ["preempted"], others("preempted"), True, None,
    ),
    "real-slurm-node-fail": (
        ["slurm-22.05/node-fail/node-fail-50.out", "slurm-22.05/node-fail/node-fail-50.err"],
        "an admin sets n1 DOWN mid-job: 'srun: error: Node failure on n1', and n0 (a survivor) prints "
        "'CANCELLED ... DUE TO NODE FAILURE'; the failed node is n1, not the one in the banner",
        "node-failure", ["node-failure"], others("node-failure"), False, {"node-failure": {"hosts": ["n1"]}},
    ),
    "real-slurm-preempted": (
        ["slurm-22.05/preempted/low-prio-train-68.out", "slurm-22.05/preempted/low-prio-train-68.err"],
        "PreemptMode=REQUEUE: STEP and JOB 'CANCELLED AT ... DUE TO PREEMPTION', every task Terminated",
        "preempted", ["preempted"], others("preempted"), False, None,
    ),
    "real-slurm-mpi-abort": (
        ["slurm-22.05/mpi-abort/mpi-abort-37.out", "slurm-22.05/mpi-abort/mpi-abort-37.err"],
        "rank 1 calls MPI_Abort(42) after a NaN loss; srun cancels the step (a plain STEP CANCELLED banner that is "
        "a consequence, not a scancel), the other tasks are Killed: an application failure no rule knows",
        "unexplained-failure", ["unexplained-failure"], others("unexplained-failure"), False,
        {"unexplained-failure": {"tasks": [1]}},
    ),
    "real-slurm-task-nonzero-exit-kill-on-bad-exit": (
        [
            "slurm-22.05/task-nonzero-exit-kill-on-bad-exit/task-fail-kob-29.out",
            "slurm-22.05/task-nonzero-exit-kill-on-bad-exit/task-fail-kob-29.err",
        ],
        "task 2 exits 3 with --kill-on-bad-exit=1: srun terminates the step (plain STEP CANCELLED banner, other "
        "tasks Terminated); the failure is task 2's, not a scancel",
        "unexplained-failure", ["unexplained-failure"], others("unexplained-failure"), False,
        {"unexplained-failure": {"hosts": ["n2"]}},
    ),
    "real-nccl-09-rendezvous-missing-rank": (
        ["nccl-2.28.9-h200/09-rendezvous-missing-rank.log"],
        "torchrun --nnodes=2 started on one node only: the static TCPStore on rank 0 gives up, "
        "'Timed out after 21 seconds waiting for clients. 1/2 clients joined.'",
        "rendezvous-failure", ["rendezvous-failure"], others("rendezvous-failure"), False, None,
    ),
    "real-nccl-10-master-addr-bad": (
        ["nccl-2.28.9-h200/10-master-addr-bad.log"],
        "MASTER_ADDR=no-such-host.invalid: gai error -3 warnings, TCPStore retries (not failures by themselves), "
        "then 'The client socket has timed out after 15000ms' and DistNetworkError",
        "rendezvous-failure", ["rendezvous-failure"], others("rendezvous-failure"), False, None,
    ),
    "real-nccl-11-port-in-use": (
        ["nccl-2.28.9-h200/11-port-in-use.log"],
        "torchrun's master port already bound by another process: libuv store 'code: -98, name: EADDRINUSE'",
        "port-in-use", ["port-in-use"], others("port-in-use"), False, None,
    ),
    "real-nccl-12-cuda-oom": (
        ["nccl-2.28.9-h200/12-cuda-oom.log"],
        "torch.empty of 400 GiB on a 139.80 GiB H200: torch.OutOfMemoryError with the sizes (PyTorch 2.9 wording)",
        "cuda-oom", ["cuda-oom"], others("cuda-oom"), False, None,
    ),
    "real-slurm-container-image-srun": (
        ["slurm-22.05/container-image-srun/container-srun-42.out", "slurm-22.05/container-image-srun/container-srun-42.err"],
        "srun --container-image on a cluster without pyxis: 'srun: unrecognized option '--container-image=...'', "
        "exit 255",
        "container-runtime-error", ["container-runtime-error"], others("container-runtime-error"), False, None,
    ),
    "real-slurm-container-image-sbatch": (
        ["slurm-22.05/container-image-sbatch/sbatch.stderr"],
        "#SBATCH --container-image=nvcr.io#... without pyxis: sbatch rejects the option, cut at '#' "
        "(the rest of an #SBATCH line after # is a comment)",
        "container-runtime-error", ["container-runtime-error"], others("container-runtime-error"), False, None,
    ),
    "real-slurm-step-more-nodes-than-allocation": (
        ["slurm-22.05/step-more-nodes-than-allocation/step-nodes-48.out",
         "slurm-22.05/step-more-nodes-than-allocation/step-nodes-48.err"],
        "srun --nodes=4 inside a 2-node job: 'can't run 2 processes on 4 nodes, setting nnodes to 2'; the step runs "
        "(a silent layout change: a warning, not an error)",
        "world-size-mismatch", ["world-size-mismatch"], others("world-size-mismatch"), True, None,
    ),
    "real-slurm-step-more-nodes-than-allocation-n4": (
        ["slurm-22.05/step-more-nodes-than-allocation-n4/step-nodes-n4-51.out",
         "slurm-22.05/step-more-nodes-than-allocation-n4/step-nodes-n4-51.err"],
        "srun --nodes=4 --ntasks=4 inside 2 nodes: 'srun: error: Only allocated 2 nodes asked for 4'",
        "world-size-mismatch", ["world-size-mismatch"], others("world-size-mismatch"), False, None,
    ),
    "real-slurm-step-more-tasks-than-cpus": (
        ["slurm-22.05/step-more-tasks-than-cpus/step-tasks-49.out",
         "slurm-22.05/step-more-tasks-than-cpus/step-tasks-49.err"],
        "srun --ntasks=16 inside --ntasks=2: 'Unable to create step for job 49: More processors requested than "
        "permitted'",
        "world-size-mismatch", ["world-size-mismatch"], others("world-size-mismatch"), False, None,
    ),
}  # fmt: skip


def real() -> None:
    for name, (files, desc, top, expected, absent, healthy, culprits) in REAL.items():
        d = CORPUS / name
        if d.exists():
            shutil.rmtree(d)
        d.mkdir()
        for rel in files:
            shutil.copyfile(SHARED / rel, d / Path(rel).name)
        source = "real-logs/" + str(Path(files[0]).parent) if len(files) > 1 else "real-logs/" + files[0]
        exp = {"description": desc, "origin": "real", "source": source, "expected": expected, "absent": absent}
        exp.update({"top": top, "healthy": healthy, "culprits": culprits})
        write_expected(d, exp)


# ------------------------------------------------------------------------------------------------ synthetic
def synthetic() -> None:  # noqa: C901 - one block per case reads best
    import gen_synthetic as g

    N = g.NODES

    def job_of(name, seed, jobid, v="2.23.4", cuda=12060, cudastr="12.6", torch=(2, 6), label=False, merged=True):
        job = g.Job(name, seed, label=label, merged=merged, jobid=jobid)
        ver = g.V(v, cuda)
        ver.cudastr = cudastr
        return job, ver, g.T(torch)

    def nccl(job, v, t, date, t0, stop_after=None, tee=False):
        agents, ranks = g.make_ranks(job)
        g.torch_job(job, v, t, ranks, 4, {n: "IB" for n in range(4)}, {n: {} for n in range(4)}, date, t0,
                    stop_after=stop_after, tee=tee)  # fmt: skip
        return agents, ranks

    def steps(job, first, last, hms, task=None):
        lines, end = g.step_lines(job.rng, first, last, 10, 612.0, 98.4, hms=hms)
        job.o(lines, task=task)
        return end

    def sigterm(job, t, date, time, agents, ranks):
        for n in range(4):
            job.e(t.agent("WARNING", date, time, agents[n], "elastic.agent.server.api", 723,
                          "Received Signals.SIGTERM death signal, shutting down workers"))  # fmt: skip
            for lr in range(8):
                job.e(t.agent("WARNING", date, time, agents[n], "elastic.multiprocessing.api", 897,
                              f"Sending process {ranks[n * 8 + lr].pid} closing signal SIGTERM"))  # fmt: skip

    def write(job, exp, stem="train"):
        job.write(exp, stem=stem)

    # ---------------------------------------------------------------- job-time-limit
    job, v, t = job_of("syn-job-time-limit-long-2411", 301, 771204, "2.21.5", 12040, "12.4", (2, 4))
    date = "2025-02-03"
    job.o(["Job 771204: 4 nodes (slinky-[0-3]) x 8 GPUs, --time=04:00:00", "MASTER_ADDR=slinky-0 MASTER_PORT=29500"])
    agents, ranks = nccl(job, v, t, date, "08:00:12")
    steps(job, 10, 23000, (8, 1, 0))  # 2300 progress lines: the cause is one line among thousands
    job.e("slurmstepd: error: *** STEP 771204.0 ON slinky-0 CANCELLED AT 2025-02-03T12:00:14 DUE TO TIME LIMIT ***")
    job.e("slurmstepd: error: *** JOB 771204 ON slinky-0 CANCELLED AT 2025-02-03T12:00:14 DUE TO TIME LIMIT ***")
    job.e("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    sigterm(job, t, date, "12:00:14.330000", agents, ranks)
    for n in range(4):
        job.e(f"srun: error: {N[n]}: task {n}: Terminated")
    job.e("srun: Force Terminated StepId=771204.0")
    write(
        job,
        {
            "description": "Slurm 24.11, torchrun on 4 nodes trains for 4 hours (2,300 progress lines after the NCCL "
            "init) and is cancelled DUE TO TIME LIMIT; torchrun's SIGTERM shutdown and the Terminated tasks follow",
            "top": "job-time-limit",
            "expected": ["job-time-limit"],
            "absent": others("job-time-limit"),
        },
    )

    job, v, t = job_of("syn-job-time-limit-step-2011", 302, 31877, "2.18.5", 12020, "12.2", (2, 1), label=True)
    date = "2023-11-20"
    agents, ranks = nccl(job, v, t, date, "14:20:02")
    steps(job, 10, 400, (14, 21, 0), task=0)
    job.e("0: slurmstepd: error: *** STEP 31877.2 ON slinky-0 CANCELLED AT 2023-11-20T15:20:03 DUE TO TIME LIMIT ***")
    for n in range(4):
        job.e(f"srun: error: {N[n]}: task {n}: Terminated")
    job.e("srun: launch/slurm: _step_signal: Terminating StepId=31877.2")
    write(
        job,
        {
            "description": "Slurm 20.11 with srun --label: an evaluation step started with srun --time=60 hits the "
            "step's limit (STEP ... DUE TO TIME LIMIT only, no JOB line)",
            "top": "job-time-limit",
            "expected": ["job-time-limit"],
            "absent": others("job-time-limit"),
        },
    )

    job, v, t = job_of("near-job-time-limit-scancel-2505", 303, 902311, "2.27.3", 12080, "12.8", (2, 8))
    date = "2025-08-12"
    job.o("time limit for this run: 04:00:00")
    agents, ranks = nccl(job, v, t, date, "09:30:00")
    steps(job, 10, 300, (9, 31, 0))
    job.e("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    job.e(
        "slurmstepd: error: *** STEP 902311.0 ON slinky-0 CANCELLED AT 2025-08-12T10:02:41 DUE to SIGNAL Terminated ***"
    )
    job.e("slurmstepd: error: *** JOB 902311 ON slinky-0 CANCELLED AT 2025-08-12T10:02:41 DUE to SIGNAL Terminated ***")
    sigterm(job, t, date, "10:02:41.100000", agents, ranks)
    for n in range(4):
        job.e(f"srun: error: {N[n]}: task {n}: Terminated")
    write(
        job,
        {
            "description": "Slurm 25.05 user scancel ('DUE to SIGNAL Terminated', lower-case 'to') half an hour "
            "into a 4-hour job: not a time limit; reported as an info-level cancel, nothing failed",
            "top": "preempted",
            "expected": ["preempted"],
            "absent": others("preempted"),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- job-oom
    job, v, t = job_of("syn-job-oom-dataloader-2302", 311, 412099, "2.19.3", 12030, "12.3", (2, 2), label=True)
    date = "2024-03-05"
    agents, ranks = nccl(job, v, t, date, "11:00:03")
    steps(job, 10, 120, (11, 1, 0), task=0)
    job.o("[rank18]: RuntimeError: DataLoader worker (pid 231877) is killed by signal: Killed.", task=2)
    job.e(
        "2: slurmstepd: error: Detected 2 oom_kill events in StepId=412099.0. Some of the step tasks have been OOM Killed."
    )
    job.e("srun: error: slinky-2: task 2: Out Of Memory")
    for n in (0, 1, 3):
        job.e(f"srun: error: {N[n]}: task {n}: Terminated")
    write(
        job,
        {
            "description": "Slurm 23.02 cgroup v2: DataLoader workers on slinky-2 exhaust host RAM; "
            "'Detected 2 oom_kill events ... OOM Killed' and 'task 2: Out Of Memory'",
            "top": "job-oom",
            "expected": ["job-oom"],
            "absent": others("job-oom"),
            "culprits": {"job-oom": {"hosts": ["slinky-2"]}},
        },
    )

    job, v, t = job_of("syn-job-oom-cgroup-2011", 312, 22871, "2.18.3", 12020, "12.2", (2, 1))
    date = "2023-10-02"
    agents, ranks = nccl(job, v, t, date, "16:10:00")
    job.e(
        "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=22871.batch cgroup. Some of your processes may "
        "have been killed by the cgroup out-of-memory handler."
    )
    job.e(child := "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
    job.e(g.child_failed(t, "train.py", "slinky-0", "2023-10-02_16:12:44", 3, 3, -9, ranks[3].pid,
                         f"Signal 9 (SIGKILL) received by PID {ranks[3].pid}"))  # fmt: skip
    del child
    write(
        job,
        {
            "description": "Slurm 20.11 wording 'oom-kill event(s) in StepId=... cgroup': torchrun launched in the "
            "batch step shares the batch memory limit; a worker gets SIGKILL (exitcode -9)",
            "top": "job-oom",
            "expected": ["job-oom"],
            "absent": others("job-oom"),
        },
    )

    # ---------------------------------------------------------------- cuda-oom (also the near miss of job-oom)
    job, v, t = job_of("syn-cuda-oom-rank5-capacty-2.1", 321, 50112, "2.18.5", 12020, "12.2", (2, 1))
    date = "2023-12-01"
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    steps(job, 10, 60, (10, 1, 0))
    job.o(["[rank5]: Traceback (most recent call last):",
           '[rank5]:   File "/workspace/train.py", line 211, in <module>',
           "[rank5]: torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
           "capacty of 79.15 GiB of which 1.23 GiB is free. Including non-PyTorch memory, this process has 77.91 GiB "
           "memory in use. Of the allocated memory 74.02 GiB is allocated by PyTorch, and 2.37 GiB is reserved by "
           "PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to "
           "avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"])  # fmt: skip
    job.e("srun: error: slinky-0: task 0: Exited with exit code 1")
    write(
        job,
        {
            "description": "PyTorch 2.1 ('total capacty' typo) on rank 5: CUDA OOM with the sizes stated; host "
            "memory is fine (not job-oom)",
            "top": "cuda-oom",
            "expected": ["cuda-oom"],
            "absent": others("cuda-oom"),
            "culprits": {"cuda-oom": {"ranks": [5]}},
        },
    )

    job, v, t = job_of("syn-cuda-oom-rank0-store-2.5", 322, 66120, "2.21.5", 12040, "12.4", (2, 5))
    date = "2024-11-19"
    job.o("[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 11.72 GiB. GPU 0 has a total "
          "capacity of 79.10 GiB of which 8.31 GiB is free. Process 40112 has 1.02 GiB memory in use. Including "
          "non-PyTorch memory, this process has 69.76 GiB memory in use. Of the allocated memory 67.20 GiB is allocated "
          "by PyTorch, and 1.05 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large "
          "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for "
          "Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")  # fmt: skip
    for r in range(1, 32, 5):
        job.o(f"[rank{r}]: torch.distributed.DistBackendError: [{r}] is setting up NCCL communicator and retrieving "
              f"ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Failed to "
              "recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?")  # fmt: skip
    write(
        job,
        {
            "description": "PyTorch 2.5: rank 0 loads the model onto GPU 0 and dies of CUDA OOM before creating the "
            "NCCL communicator; the other ranks' store->get errors are consequences, not a rendezvous problem",
            "top": "cuda-oom",
            "expected": ["cuda-oom"],
            "absent": others("cuda-oom"),
            "culprits": {"cuda-oom": {"ranks": [0]}},
        },
    )

    job, v, t = job_of("near-cuda-oom-memory-report", 323, 66121, "2.23.4", 12060, "12.6", (2, 6))
    date = "2025-01-10"
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    steps(job, 10, 200, (10, 1, 0))
    job.o(
        [
            "max memory allocated: 71.2 GiB of 79.1 GiB (CUDA out of memory avoided with activation checkpointing)",
            "training finished: 200 steps",
        ]
    )
    write(
        job,
        {
            "description": "healthy run that prints a memory report mentioning 'CUDA out of memory' in prose",
            "expected": [],
            "absent": others(),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- node-failure
    job, v, t = job_of("syn-node-failure-2308", 331, 230881, "2.20.5", 12040, "12.4", (2, 3))
    date = "2024-06-02"
    agents, ranks = nccl(job, v, t, date, "02:00:00")
    steps(job, 10, 800, (2, 1, 0))
    for r in ranks[:24:3]:
        job.o(g.warn(v, r, "2024-06-02 03:21:07", "misc/socket.cc:50",
                     f"socketProgress: Connection closed by remote peer slinky-3.cluster<{40000 + r.rank}>")[0])  # fmt: skip
    job.e("srun: error: Node failure on slinky-3")
    job.e(
        "slurmstepd: error: *** JOB 230881 ON slinky-0 CANCELLED AT 2024-06-02T03:21:40 DUE TO NODE FAILURE, SEE "
        "SLURMCTLD LOG FOR DETAILS ***"
    )
    for n in range(3):
        job.e(f"srun: error: {N[n]}: task {n}: Terminated")
    write(
        job,
        {
            "description": "Slurm 23.02: slinky-3 dies mid-training; NCCL on the others sees 'Connection closed by "
            "remote peer slinky-3', srun says 'Node failure on slinky-3' and slinky-0 prints the NODE FAILURE banner",
            "top": "node-failure",
            "expected": ["node-failure"],
            "absent": others("node-failure"),
            "culprits": {"node-failure": {"hosts": ["slinky-3"]}},
        },
    )

    job, v, t = job_of("syn-node-failure-launch-2011", 332, 19021, "2.18.3", 12020, "12.2", (2, 1))
    job.e(
        [
            "srun: error: Task launch for StepId=19021.0 failed on node slinky-1: Communication connection failure",
            "srun: error: Application launch failed: Communication connection failure",
            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
            "srun: error: Aborting, io error and missing step on node 1",
            "srun: error: Timed out waiting for job step to complete",
        ]
    )
    write(
        job,
        {
            "description": "Slurm 20.11: slurmd on slinky-1 does not answer; task launch fails there and srun "
            "aborts the step (io error on node index 1)",
            "top": "node-failure",
            "expected": ["node-failure"],
            "absent": others("node-failure"),
            "culprits": {"node-failure": {"hosts": ["slinky-1"]}},
        },
    )

    job, v, t = job_of("near-node-failure-peer-crash", 333, 230882, "2.20.5", 12040, "12.4", (2, 3))
    date = "2024-06-03"
    agents, ranks = nccl(job, v, t, date, "02:00:00")
    job.o(
        [
            "[rank24]: Traceback (most recent call last):",
            "[rank24]: ValueError: loss is nan at step 310 (checking node failure domain: none)",
        ]
    )
    for r in ranks[:8:2]:
        job.o(g.warn(v, r, "2024-06-03 02:31:07", "misc/socket.cc:50",
                     f"socketProgress: Connection closed by remote peer slinky-3.cluster<{40000 + r.rank}>")[0])  # fmt: skip
    job.e("srun: error: slinky-3: task 3: Exited with exit code 1")
    write(
        job,
        {
            "description": "rank 24 on slinky-3 exits with an exception; the others see the peer close its "
            "connection: that is not a node failure",
            "top": "unexplained-failure",
            "expected": ["unexplained-failure"],
            "absent": others("unexplained-failure"),
        },
    )

    # ---------------------------------------------------------------- preempted
    job, v, t = job_of("syn-preempted-2505", 341, 811002, "2.27.3", 12080, "12.8", (2, 8))
    date = "2025-09-01"
    agents, ranks = nccl(job, v, t, date, "20:00:00")
    steps(job, 10, 500, (20, 1, 0))
    job.e("slurmstepd: error: *** STEP 811002.0 ON slinky-0 CANCELLED AT 2025-09-01T21:02:11 DUE TO PREEMPTION ***")
    job.e("slurmstepd: error: *** JOB 811002 ON slinky-0 CANCELLED AT 2025-09-01T21:02:11 DUE TO PREEMPTION ***")
    sigterm(job, t, date, "21:02:11.004000", agents, ranks)
    write(
        job,
        {
            "description": "Slurm 25.05, PreemptMode=CANCEL: a higher-priority job preempts the training",
            "top": "preempted",
            "expected": ["preempted"],
            "absent": others("preempted"),
        },
    )

    job, v, t = job_of("syn-preempted-requeue-2102", 342, 41177, "2.18.5", 12020, "12.2", (2, 2))
    job.e("slurmstepd: error: *** JOB 41177 ON slinky-0 CANCELLED AT 2023-05-14T04:10:00 DUE TO JOB REQUEUE ***")
    job.e("srun: forcing job termination")
    job.o("start: restart count 1, resuming from /lustre/proj/ckpt/step_4000.pt")
    write(
        job,
        {
            "description": "Slurm 21.02: the job is requeued (PreemptMode=REQUEUE) and restarts in the same "
            "output file",
            "top": "preempted",
            "expected": ["preempted"],
            "absent": others("preempted"),
        },
    )

    job, v, t = job_of("near-preempted-kill-on-bad-exit", 343, 41178, "2.18.5", 12020, "12.2", (2, 2), label=True)
    job.o(["1: Traceback (most recent call last):", "1: KeyError: 'labels'"])
    job.e(
        [
            "srun: error: slinky-1: task 1: Exited with exit code 1",
            "srun: launch/slurm: _step_signal: Terminating StepId=41178.0",
            "0: slurmstepd: error: *** STEP 41178.0 ON slinky-0 CANCELLED AT 2023-05-15T09:00:00 ***",
            "srun: error: slinky-0: task 0: Terminated",
            "srun: error: slinky-2: task 2: Terminated",
        ]
    )
    write(
        job,
        {
            "description": "--kill-on-bad-exit: task 1 raises KeyError; srun cancels the step (plain banner) "
            "- a failure, not a user's scancel",
            "top": "unexplained-failure",
            "expected": ["unexplained-failure"],
            "absent": others("unexplained-failure"),
        },
    )

    synthetic_launch(g, job_of, nccl, steps, write)


def synthetic_launch(g, job_of, nccl, steps, write) -> None:  # noqa: C901
    N = g.NODES
    pyx = "slurmstepd: error: pyxis: "

    # ---------------------------------------------------------------- rendezvous-failure
    job, v, t = job_of("syn-rendezvous-localhost-2.1", 351, 12001, torch=(2, 1), label=True)
    job.o("MASTER_ADDR=localhost MASTER_PORT=29500 SLURM_JOB_NUM_NODES=4")
    for n in (1, 2, 3):
        for _ in range(2):
            job.e("[E socket.cpp:957] [c10d] The client socket has timed out after 1800s while trying to connect to "
                  "(localhost, 29500).", task=n)  # fmt: skip
        job.e(
            "RuntimeError: The client socket has timed out after 1800s while trying to connect to (localhost, 29500).",
            task=n,
        )
        job.e(f"srun: error: {N[n]}: task {n}: Exited with exit code 1")
    write(
        job,
        {
            "description": "PyTorch 2.1, MASTER_ADDR=localhost in a 4-node job: ranks on slinky-1..3 wait 1800 s "
            "for a store on their own node",
            "top": "rendezvous-failure",
            "expected": ["rendezvous-failure"],
            "absent": others("rendezvous-failure"),
        },
    )

    job, v, t = job_of("syn-rendezvous-gai-one-node-2.4", 352, 12002, torch=(2, 4), label=True)
    job.o("MASTER_ADDR=slinky-0.ib.cluster MASTER_PORT=29500")
    for i in range(6):
        job.e(f"[W1001 10:00:{10 + i}.11000000 socket.cpp:697] [c10d] The IPv4 network addresses of (slinky-0.ib.cluster, "
              "29500) cannot be retrieved (gai error: -2 - Name or service not known).", task=2)  # fmt: skip
    job.e(
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (slinky-0.ib.cluster, 29500).",
        task=2,
    )
    job.e("srun: error: slinky-2: task 2: Exited with exit code 1")
    write(
        job,
        {
            "description": "PyTorch 2.4: slinky-2 cannot resolve the master's IPoIB name (gai error -2; its "
            "resolv.conf lacks the ib domain); the others resolve it",
            "top": "rendezvous-failure",
            "expected": ["rendezvous-failure"],
            "absent": others("rendezvous-failure"),
        },
    )

    job, v, t = job_of("near-rendezvous-retry-recovered-2.6", 353, 12003, torch=(2, 6))
    date = "2025-01-10"
    for i in range(3):
        job.e(f"[W0110 10:00:0{i}.11000000 TCPStore.cpp:340] [c10d] TCP client failed to connect/validate to host "
              f"slinky-0:29500 - retrying (try={i}, timeout=600000ms, delay=1000ms): Connection refused")  # fmt: skip
    agents, ranks = nccl(job, v, t, date, "10:00:05")
    steps(job, 10, 100, (10, 1, 0))
    job.o("training finished: 100 steps")
    write(
        job,
        {
            "description": "TCPStore retry warnings while rank 0 starts, then a healthy run: retries are not a failure",
            "expected": [],
            "absent": others(),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- port-in-use
    job, v, t = job_of("syn-port-in-use-torchrun-per-gpu-2.5", 361, 12011, torch=(2, 5), label=True)
    job.o("srun --ntasks-per-node=8 torchrun --nnodes=4 --nproc-per-node=8 --rdzv-endpoint=slinky-0:29500 train.py")
    for task in range(1, 8):
        job.e(f"[W1119 10:00:02.{task}1000000 socket.cpp:752] [c10d] The server socket has failed to listen on any "
              "local network address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address "
              "already in use", task=task)  # fmt: skip
        job.e("torch.distributed.DistNetworkError: The server socket has failed to listen on any local network "
              "address. port: 29500, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use",
              task=task)  # fmt: skip
    job.e("srun: error: slinky-0: tasks 1-7: Exited with exit code 1")
    write(
        job,
        {
            "description": "PyTorch 2.5: srun --ntasks-per-node=8 starts eight torchrun launchers per node; on "
            "slinky-0 seven of them fail to bind the rendezvous port (libuv EADDRINUSE)",
            "top": "port-in-use",
            "expected": ["port-in-use"],
            "absent": others("port-in-use"),
        },
    )

    job, v, t = job_of("syn-port-in-use-shared-node-2.1", 362, 12012, torch=(2, 1))
    job.e(["[W socket.cpp:436] [c10d] The server socket has failed to bind to [::]:29500 (errno: 98 - Address already "
           "in use).",
           "[W socket.cpp:436] [c10d] The server socket has failed to bind to 0.0.0.0:29500 (errno: 98 - Address already "
           "in use).",
           "[E socket.cpp:472] [c10d] The server socket has failed to listen on any local network address.",
           "RuntimeError: The server socket has failed to listen on any local network address. The server socket has "
           "failed to bind to [::]:29500 (errno: 98 - Address already in use). The server socket has failed to bind to "
           "0.0.0.0:29500 (errno: 98 - Address already in use)."])  # fmt: skip
    write(
        job,
        {
            "description": "PyTorch 2.1: another job on the same shared node already holds the default port 29500",
            "top": "port-in-use",
            "expected": ["port-in-use"],
            "absent": others("port-in-use"),
        },
    )

    job, v, t = job_of("near-port-in-use-listening-2.1", 363, 12013, torch=(2, 1))
    date = "2023-12-01"
    job.e("[I socket.cpp:480] [c10d] The server socket has started to listen on [::]:29500.")
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    job.o("training finished: port 29500 released")
    write(
        job,
        {
            "description": "the store listens on 29500 and the run is healthy",
            "expected": [],
            "absent": others(),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- world-size-mismatch
    job, v, t = job_of("syn-world-size-rank-count-2.18", 371, 12021, "2.18.5", 12020, "12.2", (2, 1))
    agents, ranks = g.make_ranks(job)
    for r in ranks[:16:4]:
        job.o(g.warn(v, r, "", "bootstrap.cc:259", "Bootstrap Root : mismatch in rank count from procs 16 : 32")[0])
    job.o("[rank0]: torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1251, internal error")
    write(
        job,
        {
            "description": "NCCL 2.18: half the nodes were started with WORLD_SIZE=16, the others 32 (a hard-coded "
            "--nnodes on two nodes)",
            "top": "world-size-mismatch",
            "expected": ["world-size-mismatch"],
            "absent": others("world-size-mismatch"),
        },
    )

    job, v, t = job_of("syn-world-size-checked-in-2.23", 372, 12022, "2.23.4", 12060, "12.6", (2, 6), label=True)
    agents, ranks = g.make_ranks(job)
    job.o("srun --ntasks-per-node=8 python train.py   # RANK taken from LOCAL_RANK")
    for r in ranks[:3]:
        job.o(g.warn(v, r, "2025-01-14 09:12:44", "bootstrap.cc:270",
                     "Bootstrap Root : rank 0 of 32 ranks has already checked in")[0], task=0)  # fmt: skip
    job.e("srun: error: slinky-0: task 0: Exited with exit code 1")
    write(
        job,
        {
            "description": "NCCL 2.23: every node's task 0 sets RANK=LOCAL_RANK, so rank 0 checks in four times",
            "top": "world-size-mismatch",
            "expected": ["world-size-mismatch"],
            "absent": others("world-size-mismatch"),
        },
    )

    job, v, t = job_of("near-world-size-step-created", 373, 12023, "2.23.4", 12060, "12.6", (2, 6))
    date = "2025-01-14"
    job.e(
        [
            "srun: Job 12023 step creation temporarily disabled, retrying (Requested nodes are busy)",
            "srun: Step created for job 12023",
        ]
    )
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    job.o("training finished")
    write(
        job,
        {
            "description": "a step waits for busy nodes and then starts: not a layout mismatch",
            "expected": [],
            "absent": others(),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- container-import-failure
    img = "docker.io#library/pytorch:2.5.1-cuda12.4"
    job, v, t = job_of("syn-container-import-429", 381, 12031)
    for _ in range(4):
        job.e(f"pyxis: importing docker image: {img}")
    for n in range(4):
        job.e([f"{pyx}child {4100 + n} failed with error code: 1", f"{pyx}failed to import docker image",
               f"{pyx}printing enroot log file:", f"{pyx}    [INFO] Querying registry for permission grant",
               f"{pyx}    [INFO] Authenticating with user: <anonymous>",
               f"{pyx}    [INFO] Authentication succeeded", f"{pyx}    [INFO] Fetching image manifest list",
               f"{pyx}    [ERROR] URL https://registry-1.docker.io/v2/library/pytorch/manifests/2.5.1-cuda12.4 "
               "returned error code: 429 ",
               f"{pyx}couldn't start container",
               "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
               "slurmstepd: error: Failed to invoke spank plugin stack"])  # fmt: skip
        job.e(f"srun: error: {N[n]}: task {n}: Exited with exit code 1")
    write(
        job,
        {
            "description": "pyxis 0.20: four nodes pull from Docker Hub anonymously at once and hit the rate limit "
            "('returned error code: 429 ' with the trailing space)",
            "top": "container-import-failure",
            "expected": ["container-import-failure"],
            "absent": others("container-import-failure"),
        },
    )

    job, v, t = job_of("syn-container-import-401-nvcr", 382, 12032)
    job.e(["pyxis: importing docker image: nvcr.io#nvidia/nemo:24.07",
           f"{pyx}child 5120 failed with error code: 1",
           f"{pyx}failed to import docker image: nvcr.io#nvidia/nemo:24.07",
           f"{pyx}printing enroot log file:",
           f"{pyx}    [INFO] Querying registry for permission grant",
           f"{pyx}    [INFO] Authenticating with user: $oauthtoken",
           f"{pyx}    [ERROR] URL https://nvcr.io/proxy_auth?account=$oauthtoken&scope=repository:nvidia/nemo:pull "
           "returned error code: 401 Unauthorized",
           "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
           "srun: error: slinky-0: task 0: Exited with exit code 1"])  # fmt: skip
    write(
        job,
        {
            "description": "pyxis 0.24 wording (image in the error line): NGC key expired, 401 Unauthorized",
            "top": "container-import-failure",
            "expected": ["container-import-failure"],
            "absent": others("container-import-failure"),
        },
    )

    job, v, t = job_of("near-container-import-ok", 383, 12033)
    date = "2025-01-14"
    job.e([f"pyxis: importing docker image: {img}", f"pyxis: imported docker image: {img}"])
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    job.o(
        ["curl: (22) The requested URL returned error: 404 (optional metrics endpoint, ignored)", "training finished"]
    )
    write(
        job,
        {
            "description": "image imports fine; a curl 404 from an optional metrics push is not an import failure",
            "expected": [],
            "absent": others(),
            "healthy": True,
        },
    )

    # ---------------------------------------------------------------- container-runtime-error
    job, v, t = job_of("syn-container-runtime-ib-mount", 391, 12041)
    job.e([f"pyxis: imported docker image: {img}",
           "slurmstepd-slinky-3: error: pyxis: container start failed with error code: 1",
           "slurmstepd-slinky-3: error: pyxis: printing enroot log file:",
           "slurmstepd-slinky-3: error: pyxis:     enroot-mount: failed to mount: /dev/infiniband at "
           "/run/pyxis/0/12041.0/dev/infiniband: No such file or directory",
           "slurmstepd-slinky-3: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
           "srun: error: slinky-3: task 3: Exited with exit code 1"])  # fmt: skip
    write(
        job,
        {
            "description": "--container-mounts=/dev/infiniband:/dev/infiniband, but slinky-3 has no IB driver: "
            "enroot-mount fails there only",
            "top": "container-runtime-error",
            "expected": ["container-runtime-error"],
            "absent": others("container-runtime-error"),
            "culprits": {"container-runtime-error": {"hosts": ["slinky-3"]}},
        },
    )

    job, v, t = job_of("syn-container-runtime-hook", 392, 12042)
    job.e([f"pyxis: imported docker image: {img}",
           f"{pyx}couldn't start container",
           f"{pyx}printing enroot log file:",
           f"{pyx}    nvidia-container-cli: initialization error: nvml error: driver/library version mismatch",
           f"{pyx}    [ERROR] /etc/enroot/hooks.d/98-nvidia.sh exited with return code 1",
           "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
           "srun: error: slinky-1: task 1: Exited with exit code 1"])  # fmt: skip
    write(
        job,
        {
            "description": "pyxis 0.19: the NVIDIA enroot hook fails (driver upgraded, node not rebooted)",
            "top": "container-runtime-error",
            "expected": ["container-runtime-error"],
            "absent": others("container-runtime-error"),
        },
    )

    job, v, t = job_of("near-container-runtime-name-other-node", 393, 12043)
    job.e(
        [
            'slurmstepd: error: pyxis: error: a container with name "train" does not exist, and --container-image is not set',
            "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
        ]
    )
    for n in (1, 2, 3):
        job.e(f"srun: error: {N[n]}: task {n}: Exited with exit code 1")
    write(
        job,
        {
            "description": "a named container exists only on the node that created it: node-local storage, not a "
            "runtime error",
            "top": "node-local-path",
            "expected": ["node-local-path"],
            "absent": others("node-local-path"),
        },
    )

    # ---------------------------------------------------------------- shared-storage-missing
    job, v, t = job_of("syn-shared-storage-stale-nfs", 401, 12051, label=True)
    date = "2025-01-14"
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    job.o(
        [
            "[rank12]: Traceback (most recent call last):",
            "[rank12]: OSError: [Errno 116] Stale file handle: '/nfs/proj/data/tokens-0007.bin'",
        ],
        task=1,
    )
    job.e("srun: error: slinky-1: task 1: Exited with exit code 1")
    write(
        job,
        {
            "description": "the NFS server was restarted and slinky-1 kept a stale handle",
            "top": "shared-storage-missing",
            "expected": ["shared-storage-missing"],
            "absent": others("shared-storage-missing"),
            "culprits": {"shared-storage-missing": {"hosts": ["slinky-1"]}},
        },
    )

    job, v, t = job_of("syn-shared-storage-lustre-one-node", 402, 12052, label=True)
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    for r in (16, 19, 23):
        job.o(f"[rank{r}]: FileNotFoundError: [Errno 2] No such file or directory: '/lustre/fs1/datasets/c4/"
              f"shard-{r:05d}.arrow'", task=2)  # fmt: skip
    job.e("srun: error: slinky-2: task 2: Exited with exit code 1")
    write(
        job,
        {
            "description": "/lustre is not mounted on slinky-2: its ranks cannot open dataset shards the other "
            "three nodes read",
            "top": "shared-storage-missing",
            "expected": ["shared-storage-missing"],
            "absent": others("shared-storage-missing"),
            "culprits": {"shared-storage-missing": {"hosts": ["slinky-2"]}},
        },
    )

    job, v, t = job_of("near-shared-storage-wrong-path", 403, 12053, label=True)
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    for r in range(0, 32, 8):
        job.o(f"[rank{r}]: FileNotFoundError: [Errno 2] No such file or directory: '/lustre/fs1/datsets/c4/"
              "shard-00000.arrow'", task=r // 8)  # fmt: skip
    for n in range(4):
        job.e(f"srun: error: {N[n]}: task {n}: Exited with exit code 1")
    write(
        job,
        {
            "description": "a typo in the dataset path: every node fails the same way, so the path is wrong, "
            "not a missing mount",
            "top": "unexplained-failure",
            "expected": ["unexplained-failure"],
            "absent": others("unexplained-failure"),
        },
    )

    # ---------------------------------------------------------------- gpu-xid
    job, v, t = job_of("syn-gpu-xid-79-epilog", 411, 12061, "2.21.5", 12040, "12.4", (2, 4))
    date = "2024-09-09"
    agents, ranks = nccl(job, v, t, date, "10:00:00")
    steps(job, 10, 300, (10, 1, 0))
    job.o(["[rank13]: RuntimeError: CUDA error: unspecified launch failure",
           "slinky-1: [Mon Sep  9 10:51:07 2024] NVRM: Xid (PCI:0000:5d:00): 79, pid=1907, name=python, GPU has fallen "
           "off the bus.",
           "slinky-1: [Mon Sep  9 10:51:07 2024] NVRM: GPU 0000:5d:00.0: GPU has fallen off the bus."])  # fmt: skip
    write(
        job,
        {
            "description": "GPU 3 of slinky-1 falls off the bus (Xid 79, printed by the epilog's dmesg)",
            "top": "gpu-xid",
            "expected": ["gpu-xid"],
            "absent": others("gpu-xid"),
            "culprits": {"gpu-xid": {"hosts": ["slinky-1"]}},
        },
    )

    job, v, t = job_of("syn-gpu-xid-48-ecc", 412, 12062, "2.23.4", 12060, "12.6", (2, 6))
    job.o(["[rank21]: RuntimeError: CUDA error: uncorrectable ECC error encountered",
           "slinky-2: [ 9123.443211] NVRM: Xid (PCI:0000:9a:00): 48, pid=20412, name=python3, An uncorrectable double "
           "bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x3f2a1000 partition 3, "
           "subpartition 0.",
           "slinky-2: [ 9123.443300] NVRM: Xid (PCI:0000:9a:00): 63, pid=20412, name=python3, Row Remapper: New row "
           "(0x00000000000011a2) marked for remapping, reset gpu to activate."])  # fmt: skip
    write(
        job,
        {
            "description": "double-bit ECC error (Xid 48, then row remapping Xid 63) on slinky-2; rank 21 sees "
            "'uncorrectable ECC error encountered'",
            "top": "gpu-xid",
            "expected": ["gpu-xid"],
            "absent": others("gpu-xid"),
            "culprits": {"gpu-xid": {"hosts": ["slinky-2"]}},
        },
    )

    job, v, t = job_of("near-gpu-xid-13-application", 413, 12063, "2.23.4", 12060, "12.6", (2, 6))
    job.o(["[rank4]: RuntimeError: CUDA error: an illegal memory access was encountered",
           "slinky-0: [ 812.1] NVRM: Xid (PCI:0000:9a:00): 13, pid=3301, name=python3, Graphics SM Warp Exception on "
           "(GPC 1, TPC 0, SM 0): Out Of Range Address",
           "slinky-0: [ 812.2] NVRM: Xid (PCI:0000:9a:00): 45, pid=3301, name=python3, Ch 00000010"])  # fmt: skip
    job.e("srun: error: slinky-0: task 0: Exited with exit code 1")
    write(
        job,
        {
            "description": "Xid 13 (out-of-range address) then 45 (cleanup): the program's own illegal access; "
            "gpu-xid is only a warning and the failure stays unexplained",
            "top": "unexplained-failure",
            "expected": ["unexplained-failure"],
            "absent": others("unexplained-failure", "gpu-xid"),
        },
    )


if __name__ == "__main__":
    real()
    synthetic()
