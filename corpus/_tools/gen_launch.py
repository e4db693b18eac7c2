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


if __name__ == "__main__":
    real()
