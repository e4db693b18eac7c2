#!/usr/bin/env python3
"""Writes expected.yaml for the origin: real cases (log files are plain `cp` copies of ../shared/real-logs)."""

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FAB = [
    "ib-devices-not-mounted",
    "ib-verbs-library-missing",
    "nccl-ib-hca-wrong",
    "nccl-ib-disabled",
    "nccl-socket-ifname",
]
PMIX = ["pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error"]


def minus(lst, *drop):
    return [x for x in lst if x not in drop]


CASES = {
    # name: (source, description, top, expected, absent, healthy, culprits)   top=... means "no constraint"
    "real-nccl-01-baseline-torchrun": (
        "nccl-2.28.9-h200/01-baseline-torchrun.log",
        "single-GPU torchrun all-reduce, no IB on the machine, Socket is the only net; exit 0",
        None,
        [],
        FAB + PMIX + ["node-local-path", "unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-02-baseline-subsys-all": (
        "nccl-2.28.9-h200/02-baseline-subsys-all.log",
        "same baseline with NCCL_DEBUG_SUBSYS=ALL (benign dlvsym INFO lines, topology dump); exit 0",
        None,
        [],
        FAB + PMIX + ["node-local-path", "unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-03-ib-hca-bogus": (
        "nccl-2.28.9-h200/03-ib-hca-bogus.log",
        "single GPU, NCCL_IB_HCA=mlx5_0:1,mlx5_3:1 names HCAs that do not exist; single node so no harm; exit 0",
        ...,
        [],
        minus(FAB, "nccl-ib-hca-wrong") + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-04-ib-disable": (
        "nccl-2.28.9-h200/04-ib-disable.log",
        "single GPU, NCCL_IB_DISABLE=1 (single node, harmless); exit 0",
        ...,
        [],
        minus(FAB, "nccl-ib-disabled") + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-05-net-ib-forced": (
        "nccl-2.28.9-h200/05-net-ib-forced.log",
        "NCCL_NET=IB on a machine without IB: 'Failed to initialize any NET plugin', all_reduce fails, exit 1",
        "nccl-net-plugin",
        ["nccl-net-plugin"],
        [
            "nccl-ib-disabled",
            "ib-devices-not-mounted",
            "nccl-ib-hca-wrong",
            "nccl-socket-ifname",
            "unexplained-failure",
        ],
        False,
        None,
    ),
    "real-nccl-06-socket-ifname-bogus": (
        "nccl-2.28.9-h200/06-socket-ifname-bogus.log",
        "NCCL_SOCKET_IFNAME=eth9 matches no interface: 'Bootstrap : no socket interface found', exit 1",
        "nccl-socket-ifname",
        ["nccl-socket-ifname"],
        minus(FAB, "nccl-socket-ifname") + ["unexplained-failure"],
        False,
        None,
    ),
    "real-nccl-07-socket-ifname-lo": (
        "nccl-2.28.9-h200/07-socket-ifname-lo.log",
        "single GPU, NCCL_SOCKET_IFNAME=lo (fine on one node); exit 0",
        ...,
        [],
        minus(FAB, "nccl-socket-ifname") + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-13-nccl-version-info": (
        "nccl-2.28.9-h200/13-nccl-version-info.log",
        "single GPU, NCCL_DEBUG_SUBSYS=INIT,ENV,NET; healthy run, exit 0",
        None,
        [],
        FAB + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-15-shm-tiny": (
        "nccl-2.28.9-h200/15-shm-tiny.log",
        "single rank with a 64 KiB /dev/shm: SHM transport never used, healthy, exit 0",
        None,
        [],
        FAB + ["node-local-path", "unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-16-net-plugin-missing": (
        "nccl-2.28.9-h200/16-net-plugin-missing.log",
        "single GPU, NCCL_NET_PLUGIN points to a missing file; built-in nets used; exit 0",
        ...,
        ["nccl-net-plugin"],
        FAB + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-17-nccl-net-socket": (
        "nccl-2.28.9-h200/17-nccl-net-socket.log",
        "single GPU, NCCL_NET=Socket (single node, harmless); exit 0",
        ...,
        [],
        minus(FAB, "nccl-ib-disabled") + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-20-two-hosts-socket": (
        "nccl-2.28.9-h200/20-two-hosts-socket.log",
        "two NCCL hosts (NCCL_HOSTID), no IB anywhere and nothing asked for IB: Socket is expected; healthy",
        None,
        [],
        FAB + ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-21-two-hosts-hca-set": (
        "nccl-2.28.9-h200/21-two-hosts-hca-set.log",
        "two NCCL hosts with NCCL_IB_HCA=mlx5_0:1,mlx5_1:1 that do not exist: No device found, inter-host traffic over TCP",
        "nccl-ib-hca-wrong",
        ["nccl-ib-hca-wrong", "nccl-tcp-fallback"],
        ["ib-devices-not-mounted", "nccl-ib-disabled", "ib-verbs-library-missing", "nccl-socket-ifname"],
        False,
        None,
    ),
    "real-slurm-mpi-hello-no-pmix": (
        "slurm-22.05/mpi-hello-no-pmix",
        "Open MPI 4 program started by srun without --mpi: OPAL ERROR + 'direct launched using srun' box, MPI_Init aborts",
        "pmix-not-used",
        ["pmix-not-used"],
        ["pmix-plugin-missing", "pmix-runtime-error", "unexplained-failure"],
        False,
        None,
    ),
    "real-slurm-mpi-hello-pmix": (
        "slurm-22.05/mpi-hello-pmix",
        "srun --mpi=pmix over 2 nodes x 2 ranks: healthy MPI hello + allreduce",
        None,
        [],
        PMIX + ["unexplained-failure"],
        True,
        None,
    ),
    "real-slurm-pmix-v9-absent": (
        "slurm-22.05/pmix-v9-absent",
        "srun --mpi=pmix_v9: plugin does not exist, srun refuses to launch",
        "pmix-plugin-missing",
        ["pmix-plugin-missing"],
        ["pmix-not-used", "pmix-runtime-error", "unexplained-failure"],
        False,
        None,
    ),
    "real-slurm-pmix-v3-absent": (
        "slurm-22.05/pmix-v3-absent",
        "srun --mpi=pmix_v3 on a Slurm that only has pmix_v4: srun refuses to launch",
        "pmix-plugin-missing",
        ["pmix-plugin-missing"],
        ["pmix-not-used", "pmix-runtime-error", "unexplained-failure"],
        False,
        None,
    ),
    "real-slurm-pmix-libpmix-so-missing": (
        "slurm-22.05/pmix-libpmix-so-missing",
        "srun --mpi=pmix: mpi/pmix_v4 plugin cannot load libpmix.so (libpmix-dev removed), srun refuses to launch",
        "pmix-plugin-missing",
        ["pmix-plugin-missing"],
        ["pmix-not-used", "pmix-runtime-error", "unexplained-failure"],
        False,
        None,
    ),
    "real-slurm-srun-label": (
        "slurm-22.05/srun-label",
        "srun --label over 4 nodes x 2 tasks, stdout and stderr lines ('err: ...'); healthy",
        None,
        [],
        FAB + PMIX + ["node-local-path", "unexplained-failure"],
        True,
        None,
    ),
    "real-slurm-checkpoint-tmp": (
        "slurm-22.05/checkpoint-tmp",
        "rank 0 on n0 writes /tmp/ckpt-33.pt, a step on n1 reads it; it works only because the lab shares /tmp",
        "node-local-path",
        ["node-local-path"],
        ["unexplained-failure"],
        True,
        None,
    ),
    "real-nccl-08-duplicate-gpu": (
        "nccl-2.28.9-h200/08-duplicate-gpu.log",
        "CUDA_VISIBLE_DEVICES=0 with torchrun --nproc_per_node=2: both ranks on one GPU, 'Duplicate GPU detected', exit 1",
        "nccl-duplicate-gpu",
        ["nccl-duplicate-gpu"],
        ["unexplained-failure", "nccl-net-plugin", "nccl-timeout"],
        False,
        {"nccl-duplicate-gpu": {"ranks": [0, 1]}},
    ),
    "real-nccl-22-two-hosts-watchdog-timeout": (
        "nccl-2.28.9-h200/22-two-hosts-watchdog-timeout.log",
        "two NCCL hosts over Socket; rank 1 stalls 90 s before its second all-reduce, rank 0's watchdog times out at SeqNum 2 and aborts; rank 1's later 'Connection closed by remote peer' is a consequence",
        "nccl-timeout",
        ["nccl-timeout"],
        ["unexplained-failure", "ib-link-fault", "nccl-socket-ifname"],
        False,
        {"nccl-timeout": {"ranks": [1]}},
    ),
    "real-nccl-23-two-hosts-peer-crash": (
        "nccl-2.28.9-h200/23-two-hosts-peer-crash.log",
        "two NCCL hosts over Socket; rank 1 exits (code 3) before its second all-reduce without an error line; rank 0 gets ncclRemoteError / 'Connection closed by remote peer' and aborts",
        "nccl-timeout",
        ["nccl-timeout"],
        ["unexplained-failure", "ib-link-fault", "nccl-socket-ifname"],
        False,
        {"nccl-timeout": {"ranks": [1]}},
    ),
    "real-slurm-task-nonzero-exit": (
        "slurm-22.05/task-nonzero-exit",
        "rank 2 (n2) raises RuntimeError 'CUDA error: an illegal memory access was encountered (simulated)' and exits 3; an illegal memory access with no Xid line is the program's own fault as often as the GPU's (Xid 13/31 territory), and this one is labelled simulated: not gpu-xid, no known cause",
        "unexplained-failure",
        ["unexplained-failure"],
        FAB + PMIX + ["node-local-path", "gpu-xid", "cuda-oom", "job-oom", "preempted"],
        False,
        {"unexplained-failure": {"hosts": ["n2"], "ranks": [2]}},
    ),
}


def yl(xs):
    return "[" + ", ".join(xs) + "]"


for name, (src, desc, top, exp, absent, healthy, culprits) in CASES.items():
    lines = [f"description: {json.dumps(desc)}", "origin: real", f"source: real-logs/{src}"]
    if top is not ...:
        lines.append(f"top: {top if top else 'null'}")
    lines += [f"expected: {yl(exp)}", f"absent: {yl(absent)}", f"healthy: {'true' if healthy else 'false'}"]
    if culprits:
        lines.append("culprits:")
        for cid, c in culprits.items():
            parts = []
            if "hosts" in c:
                parts.append(f"hosts: {yl(c['hosts'])}")
            if "ranks" in c:
                parts.append(f"ranks: {yl(str(r) for r in c['ranks'])}")
            lines.append(f"  {cid}: {{{', '.join(parts)}}}")
    (HERE / name / "expected.yaml").write_text("\n".join(lines) + "\n")
print(len(CASES), "real cases")
