#!/usr/bin/env python3
"""Corpus cases that close the per-id gaps of issue 3 (two positives and one near miss per cause id).

* ``syn-ib-disabled-net-socket-2.26``: the second nccl-ib-disabled positive (NCCL_NET=Socket from a cloud recipe:
  IB initialises, then NCCL picks Socket by name).
* near misses that must not produce their id: ib-devices-not-mounted (enroot mellanox hook, librxe noise),
  ib-verbs-library-missing (pip wheel on an Ethernet-only cluster), nccl-duplicate-gpu (benign barrier hint, and
  the --gpus-per-task=1 shape where every rank is "GPU 0"), nccl-timeout (raised timeout, teardown TCPStore
  warnings), nccl-socket-ifname (NCCL_SOCKET_IFNAME=ib0 with recovered connect retries).

Message forms: shared/reference/log-signatures.md §0, §1 and "healthy"; NCCL's ncclNetInit (2.19-2.26) calls every
net's init before it compares the name with NCCL_NET, so NCCL_NET=Socket still prints `NET/IB : Using ...`. The job
scaffolding (4 nodes x 8 GPUs slinky-0..3) is gen_synthetic.py's, the NCCL per-rank blocks gen_fabric.py's.

Deterministic: ``python3 gen_gaps.py`` rewrites the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import gen_synthetic as gs  # noqa: E402
from gen_fabric import absent, make_ranks, nccl, std_start, ver  # noqa: E402
from gen_synthetic import BUSID, ETH_IP, IB_IP, NODES, Job, T, info, omp_banner, step_lines  # noqa: E402

SIZES: dict[str, int] = {}
RXE = (
    "libibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': librxe-rdmav34.so: cannot open shared object "
    "file: No such file or directory"
)
BARRIER = (
    "{pg}  using GPU {g} to perform barrier as devices used by this process are currently unknown. This can "
    "potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use "
    "of a particular device,or call init_process_group() with a device_id."
)
SHOULD_DUMP = (
    '{pg} Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with '
    "error: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?"
)


def save(job: Job, **exp) -> None:
    SIZES[job.name] = job.write(exp)


def ib_only_socket_ifaces(r, lines):
    """NCCL's default interface search takes ib* interfaces only when there are any: no eth0 next to ib0."""
    return [x.replace(f" [1]eth0:{ETH_IP[r.host]}<0>", "") for x in lines]


def destroy(job: Job, ranks) -> None:
    for r in ranks:
        job.o(info(r, f"comm {r.comm} rank {r.rank} nranks {len(ranks)} cudaDev {r.dev} busId {BUSID[r.local]} - Destroy COMPLETE"),
              task=r.node)  # fmt: skip


# ================================================================================= nccl-ib-disabled (positive)
def ib_disabled_net_socket():
    job = Job("syn-ib-disabled-net-socket-2.26", 401, label=True, merged=False, jobid=88412)
    v, t = ver("2.26.2", 12080), T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-05-06"
    script = [
        "+ source /lustre/fs1/proj/llm/recipes/p5-cloud/nccl-env.sh",
        "+ export NCCL_NET=Socket",
        "+ export NCCL_SOCKET_NTHREADS=4",
        "+ export NCCL_NSOCKS_PERTHREAD=8",
        "+ export NCCL_DEBUG=INFO",
        "+ env",
        "+ grep NCCL",
        "NCCL_NSOCKS_PERTHREAD=8",
        "NCCL_SOCKET_NTHREADS=4",
        "NCCL_DEBUG=INFO",
        "NCCL_NET=Socket",
        "TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
        "+ srun --container-image=nvcr.io#nvidia/pytorch:25.04-py3 --container-mounts=/lustre/fs1/proj/llm:/workspace "
        "torchrun --nnodes=4 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=slinky-0:29500 /workspace/train.py",
    ]
    std_start(job, v, t, 4, date, "11:20:02.310000", agents=agents, image="nvcr.io#nvidia/pytorch:25.04-py3",
              script=script)  # fmt: skip
    env = ("NCCL_SOCKET_NTHREADS set by environment to 4.", "NCCL_NSOCKS_PERTHREAD set by environment to 8.")

    def mut(r, ph, lines):
        if ph == "init":
            return ib_only_socket_ifaces(r, lines)
        if ph == "conn" and r.local in (0, 7):
            return [*lines, info(r, "NET/Socket: Using 4 threads and 8 sockets per thread", tid=r.ptid + 3)]
        return lines

    nccl(job, v, ranks, 4, net="Socket", gdr=False, kw={n: {"extra_env": env} for n in range(4)}, mut=mut)
    L, _ = step_lines(job.rng, 10, 300, 10, 5120.0, 25.6, hms=(11, 21, 0))
    job.o(L, task=0)
    job.o("[11:46:41] epoch 0 done: 300 steps, 25.6k tok/s (expected ~330k tok/s on 4x8 H100)", task=0)
    save(job, description="NCCL 2.26.2, 4x8 H100 with 8 HCAs per node: the job sources a cloud recipe that exports NCCL_NET=Socket (set -x and the env dump show it; NCCL does not echo NCCL_NET). NCCL still initialises IB (NET/IB : Using mlx5_0..7, bootstrap on ib0) but then picks the Socket net by name on every node: 'Using network Socket', channels via NET/Socket, ~13x slower training",  # noqa: E501
         top="nccl-ib-disabled", expected=["nccl-ib-disabled", "nccl-tcp-fallback"],
         absent=absent("nccl-ib-disabled", "nccl-tcp-fallback"),
         culprits={"nccl-tcp-fallback": {"hosts": list(NODES[:4])}})  # fmt: skip


# ============================================================================ ib-devices-not-mounted (near miss)
def near_not_mounted_hook():
    job = Job("near-ib-devices-not-mounted-mellanox-hook", 402, jobid=54217)
    v, t = ver("2.21.5", 12040), T((2, 3))
    agents, ranks = make_ranks(job)
    date = "2024-07-18"
    image = "nvcr.io#nvidia/pytorch:24.06-py3"
    job.o(["+ echo MELLANOX_VISIBLE_DEVICES=all", "MELLANOX_VISIBLE_DEVICES=all",
           f"+ srun --ntasks=4 --container-image={image} --container-name=llm true"])  # fmt: skip
    gs.pyxis(job, 4, image=image)
    job.o("+ srun -N1 -n1 --container-name=llm ibv_devinfo --list")
    job.e(RXE)
    job.o(["8 HCAs found:"] + [f"\t{h}" for h in gs.HCAS])
    job.o(["+ srun -N1 -n1 --container-name=llm ls /dev/infiniband", "rdma_cm"] + [f"uverbs{i}" for i in range(8)])
    job.o("+ srun --container-name=llm --container-mounts=/lustre/fs1/proj/llm:/workspace torchrun --nnodes=4 "
          "--nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=slinky-0:29500 /workspace/train.py")  # fmt: skip
    for n in range(4):
        job.e(omp_banner(t, date, "08:11:40.020000", agents[n]))
    for _ in ranks:
        job.e(RXE)
    nccl(job, v, ranks, 4, mut=lambda r, ph, lines: ib_only_socket_ifaces(r, lines) if ph == "init" else lines)
    L, _ = step_lines(job.rng, 20, 1200, 20, 412.0, 318.0, hms=(8, 12, 10))
    job.o(L)
    job.o(["[08:20:27] saved checkpoint to /workspace/ckpt/run-54217/step_1200", "training complete"])
    save(job, description="healthy 4x8 run in a pyxis container with enroot's 99-mellanox hook (MELLANOX_VISIBLE_DEVICES=all): the script lists 8 HCAs and /dev/infiniband/rdma_cm + uverbs0-7 inside the container; every process prints libibverbs' harmless 'couldn't load driver librxe-rdmav34.so' (unused soft-RoCE provider); all inter-node channels via NET/IB/<n>/GDRDMA",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


# ========================================================================== ib-verbs-library-missing (near miss)
def near_verbs_ethernet():
    job = Job("near-ib-verbs-library-missing-ethernet-pip", 403, jobid=20931)
    v, t = ver("2.21.5", 12040), T((2, 5), py="/home/mlops/venv/bin/python3",
                                    sp="/home/mlops/venv/lib/python3.11/site-packages")  # fmt: skip
    agents, ranks = make_ranks(job)
    date = "2024-11-26"
    job.o(["+ source /home/mlops/venv/bin/activate",
           "+ python -c 'import torch; print(torch.__version__, torch.cuda.nccl.version())'",
           "2.5.1+cu124 (2, 21, 5)",
           "+ srun torchrun --nnodes=4 --nproc-per-node=8 --rdzv-backend=c10d --rdzv-endpoint=slinky-0:29500 finetune.py"])  # fmt: skip
    for n in range(4):
        job.e(omp_banner(t, date, "16:02:31.501000", agents[n]))
    kw = {n: {"socket_if": "eth0", "ib_fail": "verbs-lib"} for n in range(4)}
    nccl(job, v, ranks, 4, net="Socket", gdr=False, kw=kw)
    L, _ = step_lines(job.rng, 10, 400, 10, 2420.0, 54.2, hms=(16, 3, 0))
    job.o(L)
    job.o("finetune done: 400 steps, checkpoint in /nfs/mlops/runs/20931")
    save(job, description="Ethernet-only cluster (one 100GbE eth0 per node, no RDMA NICs; NCCL's default interface search finds no ib* interface) running the pip torch 2.5.1 wheel (bundled NCCL 2.21.5) from a venv on the host: no rdma-core installed, so every rank prints the INFO 'Failed to open libibverbs.so[.1]' and uses NET/Socket over eth0 as it must; the fine-tune completes. Nothing to fix: no error-level finding (a hedged note that IB/RoCE, if the cluster had it, would be unusable is acceptable: the same lines on a RoCE cluster would be the cause)",  # noqa: E501
         expected=[], absent=absent("ib-verbs-library-missing", "nccl-tcp-fallback"), healthy=True)  # fmt: skip


# ================================================================================ nccl-duplicate-gpu (near misses)
def near_duplicate_barrier():
    job = Job("near-nccl-duplicate-gpu-barrier-hint", 404, label=True, jobid=66120)
    v, t = ver("2.20.5", 12040), T((2, 4))
    agents, ranks = make_ranks(job)
    date = "2024-09-03"
    std_start(job, v, t, 4, date, "13:40:11.000000", agents=agents, image="nvcr.io#nvidia/pytorch:24.08-py3")
    nccl(job, v, ranks, 4)
    for r in ranks:
        job.e(t.cxx(r.rank, "W", date, "13:40:16.", "ProcessGroupNCCL.cpp:3915",
                    BARRIER.format(pg=f"[PG ID 0 PG GUID 0 Rank {r.rank}]", g=r.local)),
              task=r.node)  # fmt: skip
    L, _ = step_lines(job.rng, 25, 1500, 25, 433.0, 302.0, hms=(13, 40, 50))
    job.o(L, task=0)
    job.o("training complete", task=0)
    save(job, description="healthy 4x8 run (PyTorch 2.4, NCCL 2.20.5): every rank calls dist.barrier() before init_process_group knows its device and prints the benign hint '[PG ID 0 PG GUID 0 Rank <r>]  using GPU <local rank> to perform barrier ...'; the ranks of each node name GPUs 0-7 (distinct), NCCL init completes with 8 distinct busIds per node",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


def near_duplicate_gpus_per_task():
    job = Job("near-nccl-duplicate-gpu-gpus-per-task", 405, label=True, jobid=72905)
    v, t = ver("2.23.4", 12060), T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-02-11"
    image = "nvcr.io#nvidia/pytorch:24.12-py3"
    job.o(f"+ srun --ntasks-per-node=8 --gpus-per-task=1 --container-image={image} python /workspace/train.py")
    gs.pyxis(job, 4, image=image)
    # 32 tasks, each sees exactly one GPU as cuda:0: NCCL's [cudaDev] is 0 everywhere, nvmlDev/busId differ
    for r in ranks:
        r.dev = 0

    def mut(r, ph, lines):
        # a process cannot open peer GPUs it cannot see: intra-node channels go through SHM, not P2P
        return [x.replace(f"cudaDev {r.local} ", "cudaDev 0 ").replace("via P2P/CUMEM/read", "via SHM/direct/direct")
                for x in lines]  # fmt: skip

    nccl(job, v, ranks, 4, mut=mut)
    for r in ranks:
        job.e(t.cxx(r.rank, "W", date, "10:05:09.", "ProcessGroupNCCL.cpp:4115",
                    BARRIER.format(pg=f"[PG ID 0 PG GUID 0 Rank {r.rank}]", g=0)), task=r.node)  # fmt: skip
    L, _ = step_lines(job.rng, 25, 1000, 25, 409.0, 321.0, hms=(10, 5, 40))
    job.o(L, task=0)
    job.o("training complete", task=0)
    save(job, description="healthy 4x8 run launched as 32 srun tasks with --gpus-per-task=1: each process sees only its own GPU as cuda:0, so every NCCL line shows [0] / cudaDev 0 and every rank's barrier hint says 'using GPU 0'; the Init lines show 8 distinct nvmlDev/busId per node, so no two ranks share a GPU",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


# ====================================================================================== nccl-timeout (near miss)
def near_timeout_raised():
    job = Job("near-nccl-timeout-raised-timeout-teardown", 406, merged=False, jobid=90417)
    v, t = ver("2.23.4", 12060), T((2, 5))
    agents, ranks = make_ranks(job)
    date = "2024-12-09"
    script = ["+ export TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC=1800", "+ export TORCH_NCCL_ASYNC_ERROR_HANDLING=1",
              "+ export NCCL_DEBUG=INFO"]  # fmt: skip
    std_start(job, v, t, 4, date, "02:00:03.000000", agents=agents, image="nvcr.io#nvidia/pytorch:24.11-py3",
              script=script)  # fmt: skip
    nccl(job, v, ranks, 4)
    job.o("init_process_group(backend='nccl', timeout=3600 s): the full-state checkpoint gather can take > 10 min")
    L, hms = step_lines(job.rng, 50, 2000, 50, 407.0, 320.0, hms=(2, 0, 40))
    job.o(L)
    job.o(["[02:14:01] step 2000: gathering full state dict on rank 0 (all ranks wait in barrier)",
           "[02:27:44] saved checkpoint to /lustre/fs1/proj/llm/ckpt/run-90417/step_2000 (823.1 s; barrier wait 818.6 s)"])  # fmt: skip
    L, _ = step_lines(job.rng, 2050, 2400, 50, 409.0, 318.0, hms=(2, 27, 50))
    job.o(L)
    job.o("training complete")
    destroy(job, ranks)
    for r in ranks[8:32:3]:
        job.e(t.cxx(r.rank, "W", date, "02:30:39.", "ProcessGroupNCCL.cpp:1259", SHOULD_DUMP.format(pg=t.pg(r.rank))))
    save(job, description="healthy 4x8 run (PyTorch 2.5) whose 818 s full-state checkpoint barrier would have tripped the default 10-minute NCCL watchdog: the script raises init_process_group's timeout to 3600 s and TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC, the barrier completes, training finishes, and at teardown ranks on slinky-1..3 print the benign 'Failed to check the \"should dump\" flag on TCPStore ... Connection was likely closed' because rank 0's store exited first",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


# ================================================================================= nccl-socket-ifname (near miss)
def near_socket_ifname_ib0():
    job = Job("near-nccl-socket-ifname-ib0", 407, jobid=99027)
    v, t = ver("2.27.7", 12090), T((2, 8))
    agents, ranks = make_ranks(job)
    date = "2025-09-15"
    std_start(job, v, t, 4, date, "19:30:00.400000", agents=agents, image="nvcr.io#nvidia/pytorch:25.08-py3",
              script=["+ export NCCL_SOCKET_IFNAME=ib0", "+ export NCCL_DEBUG=INFO"])  # fmt: skip
    root = f"{IB_IP['slinky-0']}<{41233}>"

    def mut(r, ph, lines):
        if ph != "init":
            return lines
        out = ib_only_socket_ifaces(r, lines)
        if r.node == 3 and r.local < 3:
            # slinky-3 started first: its ranks wait a moment for rank 0's bootstrap listener (then connect)
            at = next(i for i, x in enumerate(out) if "Init START" in x) + 1
            retry = [info(r, f"socketStartConnect: connect to {root} returned Connection refused, retrying ({k}/34) after sleep for {k * 100} msec")  # noqa: E501
                     for k in (1, 2)]  # fmt: skip
            out[at:at] = retry
        return out

    nccl(job, v, ranks, 4, kw={n: {"socket_env": "ib0"} for n in range(4)}, mut=mut)
    L, _ = step_lines(job.rng, 50, 2500, 50, 398.0, 330.0, hms=(19, 30, 40))
    job.o(L)
    job.o("training complete")
    save(job, description="healthy 4x8 run with NCCL_SOCKET_IFNAME=ib0 (echoed by every rank, 'Bootstrap: Using ib0:10.10.0.x', OOB ib0): ib0 exists and routes between all nodes; three ranks on slinky-3 log 2.27's INFO 'connect to ... returned Connection refused, retrying (k/34)' while rank 0's listener starts, then connect; all channels via NET/IB/GDRDMA",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


CASES = [ib_disabled_net_socket, near_not_mounted_hook, near_verbs_ethernet, near_duplicate_barrier,
         near_duplicate_gpus_per_task, near_timeout_raised, near_socket_ifname_ib0]  # fmt: skip


def main() -> None:
    for fn in CASES:
        fn()
    for k, n in SIZES.items():
        print(f"{k:50s} {n:8d}")


if __name__ == "__main__":
    main()
