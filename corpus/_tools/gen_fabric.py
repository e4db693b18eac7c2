#!/usr/bin/env python3
"""Corpus cases for the fabric/NCCL causes that had none (issue 3, fabric half).

ib-hca-mismatch-nodes, roce-gid-index, ib-link-fault, gdr-disabled, shm-too-small, nccl-version-mismatch,
nccl-debug-verbose, busbw-low (+ nccl-net-plugin, nccl-duplicate-gpu) and two healthy fabrics (RoCE, AWS EFA):
syn-<id>-<variant> positives and near-<id>-<variant> near misses. Message forms come from
shared/reference/log-signatures.md §1 (per NCCL version) and the NCCL 2.28.9 captures; the job scaffolding
(4 nodes x 8 GPUs slinky-0..3, srun + pyxis + torchrun) is gen_synthetic.py's.

Deterministic: ``python3 gen_fabric.py`` rewrites the same bytes.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent.parent))

import gen_synthetic as gs  # noqa: E402
from gen_synthetic import BUSID, IB_IP, NODES, Job, T, V, info, interleave, omp_banner, pyxis, step_lines  # noqa: E402

from diag.causes import CAUSE_IDS  # noqa: E402

# Consequences a case may or may not show without it being wrong (the tool may fold or list them).
CASCADE = {"nccl-timeout"}


def ver(s: str, cuda: int) -> V:
    v = V(s, cuda)
    v.cudastr = f"{cuda // 1000}.{cuda % 1000 // 10}"
    return v


def absent(*expected: str, allow: tuple[str, ...] = ()) -> list[str]:
    return sorted(CAUSE_IDS - set(expected) - set(allow) - CASCADE)


def make_ranks(job: Job, nnodes: int = 4, gpus: int = 8):
    """gen_synthetic.make_ranks for any node count (slinky-0..N-1)."""
    while len(NODES) < nnodes:
        NODES.append(f"slinky-{len(NODES)}")
        IB_IP[NODES[-1]] = f"10.10.0.{11 + len(NODES) - 1}"
        gs.ETH_IP[NODES[-1]] = f"10.0.0.{11 + len(NODES) - 1}"
    rng = job.rng
    agents = [rng.randint(180000, 260000) for _ in range(nnodes)]
    commid = "0x%016x" % rng.getrandbits(64)
    ranks = []
    for n in range(nnodes):
        for loc in range(gpus):
            r = gs.Rank(rng, n, loc, agents[n])
            r.rank = n * gpus + loc
            r._commid = commid
            r._btot = rng.uniform(0.05, 0.4)
            r._t = ""
            ranks.append(r)
    return agents, ranks


def nccl(job, v, ranks, nnodes, *, net="IB", kw=None, mut=None, stop=None, gdr=True, nch=4, tee=False):
    """NCCL init/connect/complete lines of every rank, interleaved like srun does.

    mut(r, phase, lines) -> lines edits one rank's lines of one phase ("init", "conn", "done")."""
    nranks = len(ranks)
    phases = {"init": [], "conn": [], "done": []}
    for r in ranks:
        k = dict((kw or {}).get(r.node, {}))
        n = net(r) if callable(net) else net
        pre = f"[default{r.local}]:" if tee else ""
        parts = {
            "init": gs.nccl_rank_init(v, r, nranks, nnodes, n, nch=nch, **k),
            "conn": gs.nccl_rank_connect(v, r, nranks, nnodes, "IB" if n == "IB" else "Socket", nch=nch, gdr=gdr),
            "done": gs.nccl_rank_complete(v, r, nranks, nch=nch),
        }
        for ph, lines in parts.items():
            if mut:
                lines = mut(r, ph, lines)
            phases[ph].append([("\n".join(pre + y for y in x.split("\n")), r.node) for x in lines])
    order = ["init", "conn", "done"]
    if stop:
        order = order[: order.index(stop) + 1]
    for i, ph in enumerate(order):
        merged = interleave(job.rng, phases[ph])
        if i == 0 and v.n < 22200:
            pos = job.rng.randint(len(merged) // 4, len(merged) // 2)
            merged.insert(pos, (f"NCCL version {v.s}+cuda{v.cudastr}", 0))
        for ln, node in merged:
            job.o(ln, task=node)


def W(v, r, ts, fileline, msg, tid=None, fn=None):
    """One NCCL WARN (leading blank line; timestamp from 2.26; '(function)' from 2.30.7)."""
    f = f" ({fn})" if fn and v.n >= 23007 else ""
    return f"\n{v.ts(ts)}{r.host}:{r.pid}:{tid or r.pid} [{r.dev}] {fileline}{f} NCCL WARN {msg}"


def traceback(t, r, err_lines, entry="/workspace/train.py"):
    p = f"[rank{r.rank}]: " if t.ver >= (2, 3) else ""
    body = [
        "Traceback (most recent call last):",
        f'  File "{entry}", line 214, in <module>',
        "    main()",
        f'  File "{entry}", line 161, in main',
        "    model = DDP(model, device_ids=[local_rank])",
        f'  File "{t.sp}/torch/nn/parallel/distributed.py", line 825, in __init__',
        "    _verify_param_shape_across_processes(self.process_group, parameters)",
        f'  File "{t.sp}/torch/distributed/utils.py", line 288, in _verify_param_shape_across_processes',
        "    return dist._verify_params_across_processes(process_group, tensors, logger)",
    ]
    return [p + x for x in body + err_lines]


def agent_fail(job, t, date, time, agents, ranks, nodes, code=1, local=0):
    for n in nodes:
        r = ranks[n * 8 + local]
        job.e(t.agent("ERROR", date, time, agents[n], "elastic.multiprocessing.api", 874,
                      f"failed (exitcode: {code}) local_rank: {local} (pid: {r.pid}) of binary: {t.py}"), task=n)  # fmt: skip
        job.e(gs.child_failed(t, "/workspace/train.py", r.host, f"{date}_{time[:8]}", r.rank, local, code, r.pid), task=n)
        job.e(f"srun: error: {r.host}: task {n}: Exited with exit code 1", task=n)


def watchdog(t, r, date, time, seq, op="ALLREDUCE", numel=67108864, timeout=600000, enq=None, done=None):
    enq = seq if enq is None else enq
    done = seq - 1 if done is None else done
    wn = f"WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={numel}, NumelOut={numel}, Timeout(ms)={timeout})"
    return [
        t.cxx(r.rank, "E", date, time, "ProcessGroupNCCL.cpp:632",
              f"[Rank {r.rank}] Watchdog caught collective operation timeout: {wn} ran for {timeout + 41} milliseconds before timing out."),  # fmt: skip
        t.cxx(r.rank, "E", date, time, "ProcessGroupNCCL.cpp:2271",
              f"{t.pg(r.rank)}  failure detected by watchdog at work sequence id: {seq} PG status: last enqueued work: {enq}, last completed work: {done}"),  # fmt: skip
    ]


def nccl_tests_header(job, v, ranks, gpu="NVIDIA H100 80GB HBM3", test="all_reduce_perf"):
    code = v.n
    job.o([f"# nccl-tests version 2.13.11 nccl-headers={code} nccl-library={code}",
           f"# Collective test starting: {test}",
           "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0",  # noqa: E501
           "#", "# Using devices"])  # fmt: skip
    for r in ranks:
        bus = BUSID[r.local][:2]
        job.o(f"#  Rank {r.rank:2d} Group  0 Pid {r.pid:6d} on {r.host:>9s} device  0 [0000:{bus}:00] {gpu}")


def nccl_tests_table(job, peak, wrong_from=None, wrong=0, lat=28.0):
    """Rows from 8 B to 8 GiB; busbw ramps up to `peak` at the largest size."""
    job.o(["#",
           "#                                                              out-of-place                       in-place          ",  # noqa: E501
           "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong",  # noqa: E501
           "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       "])  # noqa: E501  # fmt: skip
    total = 0.0
    n = 0
    size = 8
    factor = 2 * 31 / 32
    while size <= 8 << 30:
        bw = peak * size / (size + peak * lat * 1e3 * 2.2)  # latency-bound small sizes
        algbw = bw / factor
        tus = size / (algbw * 1e3) if algbw > 0 else lat
        tus = max(tus, lat)
        algbw = size / tus / 1e3
        bw = algbw * factor
        w = wrong if (wrong_from is not None and size >= wrong_from) else 0
        cells = []
        for j in range(2):
            jitter = 1.0 + (0.004 if j else -0.003)
            cells.append(f"  {tus * (2 - jitter):7.2f}  {algbw * jitter:6.2f}  {bw * jitter:6.2f}  {w:5d}")
        job.o(f"{size:12d}  {size // 4:12d}     float     sum      -1" + "".join(cells))
        total += bw
        n += 1
        size *= 2
    oob = wrong if wrong_from is not None else 0
    job.o([f"# Out of bounds values : {oob} {'FAILED' if oob else 'OK'}", f"# Avg bus bandwidth    : {total / n:.4f} ",
           "#", ""])  # fmt: skip


def topo(r, rate, nics=8):
    """The GRAPH topology dump's NIC lines (NCCL_DEBUG_SUBSYS includes GRAPH)."""
    out = [info(r, f"=== System : maxBw {rate:.1f} totalBw {rate * nics:.1f} ===")]
    for i in range(nics):
        out.append(info(r, f"+ PCI[48.0] - NIC/{i}-{BUSID[i][:2]}000"))
        out.append(info(r, f"                + NET[{rate:.1f}] - NET/{i}-{i} ({i}/0/0/{rate:.6f})"))
    return out


def roce(lines):
    return [x.replace(":1/IB", ":1/RoCE").replace("OOB ib0:10.10.", "OOB eth0:10.20.") for x in lines]


def write(job, exp):
    return job.write(exp)


SIZES: dict[str, int] = {}


def save(job, **exp):
    SIZES[job.name] = job.write(exp)


def std_start(job, v, t, nnodes, date, time, image="nvcr.io#nvidia/pytorch:24.12-py3", script=(), agents=None):
    job.o(list(script))
    pyxis(job, nnodes, image=image)
    for n in range(nnodes):
        job.e(omp_banner(t, date, time, agents[n]), task=n)


def before(lines, marker, new):
    out = []
    for x in lines:
        if marker in x:
            out.append(new)
        out.append(x)
    return out


def drop_hca(r, lines, keep):
    """Rewrite this rank's 'NET/IB : Using' line to list only the HCA indexes in keep."""
    out = []
    for x in lines:
        if "NET/IB : Using [" in x:
            head, tail = x.split("NET/IB : Using ", 1)
            devs, oob = tail.split(" [RO]; OOB ")
            items = [d for d in devs.split() if int(d[1 : d.index("]")]) in keep]
            items = [f"[{i}]{d[d.index(']') + 1 :]}" for i, d in enumerate(items)]
            x = f"{head}NET/IB : Using {' '.join(items)} [RO]; OOB {oob}"
        out.append(x)
    r._nhca = len(keep)
    return out


# ========================================================================================== ib-link-fault
def link_fault_218():
    job = Job("syn-ib-link-fault-2.18-port-error", 301, jobid=40312)
    v, t = ver("2.18.3", 12020), T((2, 1))
    agents, ranks = make_ranks(job)
    date = "2023-11-07"
    std_start(job, v, t, 4, date, "02:10:04.118000", image="nvcr.io#nvidia/pytorch:23.10-py3", agents=agents)
    nccl(job, v, ranks, 4)
    L, _ = step_lines(job.rng, 20, 2400, 20, 402.0, 326.0, hms=(2, 10, 30))
    job.o(L)
    r16, r15 = ranks[16], ranks[15]
    job.o(W(v, r16, "", "transport/net_ib.cc:94", "NET/IB : Got async event : port error", tid=r16.pid + 7))
    job.o(W(v, r15, "", "transport/net_ib.cc:1296",
            f"NET/IB : Got completion from peer {IB_IP['slinky-2']}<50412> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid fe80::ba59:9f03:29a:1b4e remoteGid fe80::ba59:9f03:29a:1c10",  # noqa: E501
            tid=r15.ptid + 2))  # fmt: skip
    job.o([info(r15, "transport/net.cc:1121 -> 6", tid=r15.ptid + 2), info(r15, "proxy.cc:1430 -> 6", tid=r15.ptid + 2)])
    job.e(t.cxx(15, "E", date, "02:27:01.", "ProcessGroupNCCL.cpp:475",
                "[Rank 15] NCCL watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.18.3"))  # noqa: E501  # fmt: skip
    job.e(t.cxx(15, "E", date, "02:27:01.", "ProcessGroupNCCL.cpp:475", "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."))  # noqa: E501  # fmt: skip
    for r in ranks:
        if r.rank != 15:
            job.e(t.cxx(r.rank, "E", date, "02:57:02.", "ProcessGroupNCCL.cpp:475",
                        f"[Rank {r.rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=96121, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800416 milliseconds before timing out."))  # noqa: E501  # fmt: skip
    for r in ranks[:4]:
        job.e(t.cxx(r.rank, "E", date, "02:57:02.", "ProcessGroupNCCL.cpp:489", f"[Rank {r.rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data."))  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "02:57:05.400000", agents, ranks, [1, 0, 2, 3], code=-6)
    save(job, description="NCCL 2.18.3 / PyTorch 2.1: a port on slinky-2 goes down at step ~2400 ('NET/IB : Got async event : port error', old form without the device name); rank 15 on slinky-1 then gets completion error 12 (retry exceeded) sending to slinky-2, all other ranks time out after 30 min",  # noqa: E501
         top="ib-link-fault", expected=["ib-link-fault"], absent=absent("ib-link-fault"),
         culprits={"ib-link-fault": {"hosts": ["slinky-2"]}})  # fmt: skip


def link_fault_221():
    job = Job("syn-ib-link-fault-2.21-peer-port-down", 302, label=True, jobid=52210)
    v, t = ver("2.21.5", 12040), T((2, 4))
    agents, ranks = make_ranks(job)
    date = "2024-09-18"
    std_start(job, v, t, 4, date, "17:40:00.003000", agents=agents, script=["+ export NCCL_DEBUG=INFO"])
    nccl(job, v, ranks, 4)
    L, _ = step_lines(job.rng, 10, 900, 10, 431.0, 304.0, hms=(17, 40, 40))
    job.o(L, task=0)
    r24 = ranks[24]
    job.o(W(v, r24, "", "transport/net_ib.cc:98", "NET/IB : mlx5_6:1 Got async event : port error", tid=r24.pid + 7), task=3)
    for r in (ranks[23], ranks[7]):
        job.o(W(v, r, "", "transport/net_ib.cc:1422",
                f"NET/IB : Got completion from peer {IB_IP['slinky-3']}<4{r.rank}17> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid fe80::ba59:9f03:29a:{r.rank:x}4e remoteGidsfe80::ba59:9f03:29a:1c10",  # noqa: E501
                tid=r.ptid + 2), task=r.node)  # fmt: skip
        job.o(info(r, "transport/net.cc:1190 -> 6", tid=r.ptid + 2), task=r.node)
    for r in ranks:
        if r.rank not in (7, 23):
            job.e(watchdog(t, r, date, "17:57:44.", 4471, numel=50331648), task=r.node)
    for r in (ranks[7], ranks[23]):
        job.e(t.cxx(r.rank, "E", date, "17:47:44.", "ProcessGroupNCCL.cpp:1592",
                    f"[PG 0 Rank {r.rank}] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5"), task=r.node)  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "17:57:49.100000", agents, ranks, [0, 2, 1, 3], code=-6)
    save(job, description="NCCL 2.21.5: slinky-3's mlx5_6 port goes down ('NET/IB : mlx5_6:1 Got async event : port error', 2.20-2.22 form); ranks 7 and 23 sending to slinky-3 get status=12 (remoteGids glued form), the rest time out in the watchdog",  # noqa: E501
         top="ib-link-fault", expected=["ib-link-fault"], absent=absent("ib-link-fault"),
         culprits={"ib-link-fault": {"hosts": ["slinky-3"]}})  # fmt: skip


def link_fault_228_long():
    """Thousands of lines of training with INFO noise; the cause is one WARN line."""
    job = Job("syn-ib-link-fault-2.28-long", 303, merged=False, jobid=88410)
    v, t = ver("2.28.9", 13000), T((2, 9))
    agents, ranks = make_ranks(job)
    date = "2025-11-03"
    std_start(job, v, t, 4, date, "01:00:03.003000", agents=agents, image="nvcr.io#nvidia/pytorch:25.10-py3")
    nccl(job, v, ranks, 4)
    rng = job.rng
    hms = (1, 0, 40)
    for block in range(40):
        L, hms = step_lines(rng, block * 100 + 1, block * 100 + 100, 1, 388.0, 337.0, hms=hms)
        job.o(L)
        if block % 5 == 4:
            job.o(f"[{hms[0]:02d}:{hms[1]:02d}:{hms[2]:02d}] saved checkpoint to /lustre/fs1/proj/llm/ckpt/run-88410/step_{block * 100 + 100}")  # noqa: E501
            for r in ranks[:: 8]:
                job.o(info(r, "Comm config Blocking set to 1"))
        if block == 20:
            # an evaluation sub-communicator: more INFO noise
            for r in ranks:
                job.o(info(r, f"ncclCommSplit comm 0x{rng.getrandbits(44):x} rank {r.rank} nranks 32 cudaDev {r.dev} nvmlDev {r.local} busId {BUSID[r.local]} parent {r.comm} splitCount 1 color 0 key {r.rank} - Init START"))  # noqa: E501
    r = ranks[11]
    job.o(W(v, r, "2025-11-03 01:27:13", "transport/net_ib.cc:2163",
            f"NET/IB: Got completion from peer {IB_IP['slinky-2']}<36455> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid fe80::ba59:9f03:29a:2d4e remoteGidsfe80::ba59:9f03:29a:1c10 hca mlx5_3",  # noqa: E501
            tid=r.ptid + 2))  # fmt: skip
    for k in range(3):
        job.o(W(v, r, "2025-11-03 01:27:13", "transport/net_ib.cc:2163",
                f"NET/IB: Got completion from peer {IB_IP['slinky-2']}<36455> with status=5 opcode=0 len=0 vendor err 249 (Send) localGid fe80::ba59:9f03:29a:2d4e remoteGidsfe80::ba59:9f03:29a:1c10 hca mlx5_3",  # noqa: E501
                tid=r.ptid + 2))  # fmt: skip
    job.o(info(r, "transport/net.cc:1373 -> 6", tid=r.ptid + 2))
    job.e(t.cxx(11, "E", date, "01:27:14.", "ProcessGroupNCCL.cpp:2057",
                "[PG ID 0 PG GUID 0(default_pg) Rank 11] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.28.9"))  # noqa: E501  # fmt: skip
    for rr in ranks:
        if rr.rank != 11:
            job.e(watchdog(t, rr, date, "01:37:14.", 187331), task=rr.node)
    agent_fail(job, t, date, "01:37:20.004000", agents, ranks, [1, 0, 2, 3], code=-6)
    save(job, description="NCCL 2.28.9, 4,000 training steps at full INFO (~6,000 lines): one WARN 'NET/IB: Got completion from peer ... status=12 ... hca mlx5_3' on slinky-1 rank 11 at step ~4000, three status=5 flush errors after it, then 31 watchdog timeouts and ChildFailedError blocks",  # noqa: E501
         top="ib-link-fault", expected=["ib-link-fault"], absent=absent("ib-link-fault"),
         culprits={"ib-link-fault": {"hosts": ["slinky-1"]}})  # fmt: skip


def link_fault_229():
    job = Job("syn-ib-link-fault-2.29-wc-names", 304, jobid=91022)
    v, t = ver("2.29.2", 13000), T((2, 9))
    agents, ranks = make_ranks(job)
    date = "2026-02-14"
    std_start(job, v, t, 4, date, "09:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:26.01-py3")
    nccl(job, v, ranks, 4)
    L, _ = step_lines(job.rng, 50, 1500, 50, 377.0, 341.0, hms=(9, 0, 30))
    job.o(L)
    r0 = ranks[5]
    job.o(W(v, r0, "2026-02-14 09:11:40", "transport/net_ib/init.cc:131", "NET/IB : mlx5_5:1 Got non-fatal async event: port error(10)", tid=r0.pid + 7))  # noqa: E501
    for peer_node in (1, 3):
        job.o(W(v, r0, "2026-02-14 09:12:11", "transport/net_ib/p2p.cc:512",
                f"NET/IB: Got completion from peer {IB_IP[NODES[peer_node]]}<41220> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129  localGid fe80::ba59:9f03:29a:5b4e remoteGidsfe80::ba59:9f03:29a:{peer_node}c10 hca mlx5_5",  # noqa: E501
                tid=r0.ptid + 2))  # fmt: skip
    for r in ranks:
        if r.rank != 5:
            job.e(watchdog(t, r, date, "09:22:11.", 30122), task=r.node)
    agent_fail(job, t, date, "09:22:16.000000", agents, ranks, [0, 1, 2, 3], code=-6, local=5)
    save(job, description="NCCL 2.29.2: slinky-0's mlx5_5 reports 'Got non-fatal async event: port error(10)' (2.28.7+ form), then rank 5 gets status=IBV_WC_RETRY_EXC_ERR(12) (2.29 names) to two peers; the other ranks time out",  # noqa: E501
         top="ib-link-fault", expected=["ib-link-fault"], absent=absent("ib-link-fault"),
         culprits={"ib-link-fault": {"hosts": ["slinky-0"]}})  # fmt: skip


def near_link_fault():
    job = Job("near-ib-link-fault-gid-change", 305, jobid=91188)
    v, t = ver("2.28.9", 13000), T((2, 9))
    agents, ranks = make_ranks(job)
    date = "2025-12-01"
    std_start(job, v, t, 4, date, "11:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:25.10-py3")
    nccl(job, v, ranks, 4)
    L, _ = step_lines(job.rng, 50, 1000, 50, 392.0, 333.0, hms=(11, 0, 30))
    job.o(L[:8])
    for r in ranks[16:24:3]:
        job.o(W(v, r, "2025-12-01 11:03:02", "transport/net_ib/init.cc:131", "NET/IB : mlx5_2:1 Got non-fatal async event: client reregistration(17)", tid=r.pid + 7))  # noqa: E501
        job.o(W(v, r, "2025-12-01 11:03:02", "transport/net_ib/init.cc:131", "NET/IB : mlx5_2:1 Got non-fatal async event: GID table change(18)", tid=r.pid + 7))  # noqa: E501
    job.o(L[8:])
    job.o("training complete")
    save(job, description="NCCL 2.28.9 healthy run: a subnet manager failover makes slinky-2's HCAs report 'client reregistration(17)' and 'GID table change(18)' as non-fatal async events; training continues and completes. No link fault",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


# ================================================================================== ib-hca-mismatch-nodes
def init_fail(job, t, v, ranks, date, time, err, last):
    for r in ranks:
        job.e(traceback(t, r, [
            f"torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, {err}, NCCL version {v.s}",  # noqa: E501
            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. " if "system" in err else "ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",  # noqa: E501
            "Last error:", last]), task=r.node)  # fmt: skip


def hca_mismatch_230():
    job = Job("syn-ib-hca-mismatch-nodes-2.30-counts", 311, jobid=97201)
    v, t = ver("2.30.3", 13000), T((2, 10))
    agents, ranks = make_ranks(job)
    date = "2026-05-11"
    std_start(job, v, t, 4, date, "08:30:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:26.04-py3")

    def mut(r, ph, lines):
        return drop_hca(r, lines, [0, 1, 2, 3, 4, 6, 7]) if (r.node == 3 and ph == "init") else lines

    nccl(job, v, ranks, 4, mut=mut, stop="init")
    for r in ranks:
        job.o(W(v, r, "2026-05-11 08:30:09", "init.cc:1432",
                "Detected mixed local Net device counts across ranks (min 7, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to continue."), task=r.node)  # fmt: skip
        job.o([info(r, "init.cc:1433 -> 2"), info(r, "init.cc:1788 -> 2")], task=r.node)
    init_fail(job, t, v, ranks[::9], date, "08:30:09", "unhandled system error (run with NCCL_DEBUG=INFO for details)",
              "Detected mixed local Net device counts across ranks (min 7, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to continue.")  # fmt: skip
    agent_fail(job, t, date, "08:30:11.000000", agents, ranks, [0, 1, 2, 3])
    save(job, description="NCCL 2.30.3: slinky-3's mlx5_5 port is down, so its 'NET/IB : Using' line lists 7 HCAs (the other nodes 8); every rank stops with 'Detected mixed local Net device counts across ranks (min 7, max 8)'",  # noqa: E501
         top="ib-hca-mismatch-nodes", expected=["ib-hca-mismatch-nodes"], absent=absent("ib-hca-mismatch-nodes"),
         culprits={"ib-hca-mismatch-nodes": {"hosts": ["slinky-3"]}})  # fmt: skip


def hca_mismatch_226_roce():
    job = Job("syn-ib-hca-mismatch-nodes-2.26-ib-roce", 312, label=True, jobid=66120)
    v, t = ver("2.26.5", 12080), T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-06-02"
    std_start(job, v, t, 4, date, "10:11:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:25.05-py3")

    def mut(r, ph, lines):
        if r.node == 1 and ph == "init":
            return [x.replace(":1/IB", ":1/RoCE").replace(f"OOB ib0:{IB_IP['slinky-1']}", "OOB eth0:10.0.0.12") for x in lines]  # noqa: E501
        return lines

    nccl(job, v, ranks, 4, mut=mut, stop="init")
    for r, line in ((ranks[7], "NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and [0]mlx5_0:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA"),  # noqa: E501
                    (ranks[8], "NET/IB : Remote IB device is incompatible with the local [0]mlx5_0:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA"),  # noqa: E501
                    (ranks[15], "NET/IB : Attempted to connect incompatible devices: [7]mlx5_7:1/RoCE and [7]mlx5_7:1/IB. Try selecting NICs of only one link type using NCCL_IB_HCA"),  # noqa: E501
                    (ranks[16], "NET/IB : Remote RoCE device is incompatible with the local [7]mlx5_7:1/IB. Try selecting NICs of only one link type using NCCL_IB_HCA")):  # noqa: E501  # fmt: skip
        job.o(W(v, r, "2025-06-02 10:11:06", "transport/net_ib.cc:1104", line, tid=r.ptid + 2), task=r.node)
        job.o([info(r, "transport/net_ib.cc:1105 -> 3", tid=r.ptid + 2), info(r, "transport/net.cc:703 -> 3", tid=r.ptid + 2)], task=r.node)  # noqa: E501
    init_fail(job, t, v, [ranks[7], ranks[8], ranks[15], ranks[16]], date, "10:11:07",
              "internal error - please report this issue to the NCCL developers",
              "NET/IB : Attempted to connect incompatible devices: [0]mlx5_0:1/IB and [0]mlx5_0:1/RoCE. Try selecting NICs of only one link type using NCCL_IB_HCA")  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "10:11:09.000000", agents, ranks, [0, 1, 2], local=7)
    save(job, description="NCCL 2.26.5: after a firmware update slinky-1's ConnectX ports came up in Ethernet mode (RoCE) while slinky-0/2/3 are InfiniBand; connecting the ring fails with 'Attempted to connect incompatible devices' / 'Remote IB device is incompatible'",  # noqa: E501
         top="ib-hca-mismatch-nodes", expected=["ib-hca-mismatch-nodes"], absent=absent("ib-hca-mismatch-nodes"),
         culprits={"ib-hca-mismatch-nodes": {"hosts": ["slinky-1"]}})  # fmt: skip


def hca_mismatch_221_env():
    job = Job("syn-ib-hca-mismatch-nodes-2.21-node-env-hang", 313, jobid=52044)
    v, t = ver("2.21.5", 12040), T((2, 4))
    agents, ranks = make_ranks(job)
    date = "2024-10-02"
    std_start(job, v, t, 4, date, "13:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:24.09-py3")

    def mut(r, ph, lines):
        if r.node == 2 and ph == "init":
            out = before(lines, "NET/IB : Using", info(r, "NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_3"))
            return drop_hca(r, out, [0, 1, 2, 3])
        return lines

    nccl(job, v, ranks, 4, mut=mut, kw={2: {"extra_env": ("NCCL_IB_HCA set by environment to mlx5_0,mlx5_1,mlx5_2,mlx5_3",)}})  # noqa: E501
    for r in ranks:
        job.e(watchdog(t, r, date, "13:10:31.", 1, numel=262144), task=r.node)
    for r in ranks[::8]:
        job.e(t.cxx(r.rank, "E", date, "13:10:31.", "ProcessGroupNCCL.cpp:1617", f"{t.pg(r.rank)} Process group watchdog thread terminated with exception: [Rank {r.rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE, NumelIn=262144, NumelOut=262144, Timeout(ms)=600000) ran for 600041 milliseconds before timing out."), task=r.node)  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "13:10:36.000000", agents, ranks, [2, 0, 1, 3], code=-6)
    save(job, description="NCCL 2.21.5 (no explicit NIC-count check before 2.30): slinky-2 has a stale /etc/nccl.conf with NCCL_IB_HCA=mlx5_0..mlx5_3, so it uses 4 HCAs where the other nodes use 8; init completes but the first all-reduce hangs and every rank's watchdog fires",  # noqa: E501
         top="ib-hca-mismatch-nodes", expected=["ib-hca-mismatch-nodes"], absent=absent("ib-hca-mismatch-nodes"),
         culprits={"ib-hca-mismatch-nodes": {"hosts": ["slinky-2"]}})  # fmt: skip


def near_hca_mismatch_mount():
    job = Job("near-ib-hca-mismatch-nodes-partial-mount", 314, jobid=78802)
    v, t = ver("2.27.7", 12090), T((2, 8))
    agents, ranks = make_ranks(job)
    date = "2025-08-21"
    std_start(job, v, t, 4, date, "15:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:25.08-py3")

    def mut(r, ph, lines):
        if r.node == 2 and ph == "init":
            out = []
            for x in lines:
                if "NET/IB : Using" in x:
                    for h in range(4, 8):
                        out.append(W(v, r, "2025-08-21 15:00:04", "misc/ibvwrap.cc:216", "Call to ibv_open_device failed"))
                        out.append(W(v, r, "2025-08-21 15:00:04", "transport/net_ib.cc:592", f"NET/IB : Unable to open device mlx5_{h}"))  # noqa: E501
                out.append(x)
            return drop_hca(r, out, [0, 1, 2, 3])
        return lines

    nccl(job, v, ranks, 4, mut=mut)
    for r in ranks:
        job.e(watchdog(t, r, date, "15:10:21.", 1, numel=262144), task=r.node)
    agent_fail(job, t, date, "15:10:26.000000", agents, ranks, [2, 0, 1, 3], code=-6)
    save(job, description="NCCL 2.27.7: slinky-2's node-local enroot config sets MELLANOX_VISIBLE_DEVICES=0,1,2,3, so only uverbs0-3 exist in its container: 'Unable to open device mlx5_4..7', slinky-2 uses 4 HCAs where the others use 8, and the first all-reduce hangs. The HCA-count difference is a consequence of the missing devices, not a second root cause",  # noqa: E501
         top="ib-devices-not-mounted", expected=["ib-devices-not-mounted"],
         absent=absent("ib-devices-not-mounted", allow=("nccl-tcp-fallback",)),
         culprits={"ib-devices-not-mounted": {"hosts": ["slinky-2"]}})  # fmt: skip


def near_hca_mismatch_exclude():
    job = Job("near-ib-hca-mismatch-nodes-same-exclude", 315, jobid=71544)
    v, t = ver("2.23.4", 12060), T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-02-03"
    std_start(job, v, t, 4, date, "06:00:00.003000", agents=agents, script=["+ export NCCL_IB_HCA=^mlx5_8"])
    nccl(job, v, ranks, 4, kw={n: {"extra_env": ("NCCL_IB_HCA set by environment to ^mlx5_8",)} for n in range(4)},
         mut=lambda r, ph, lines: before(lines, "NET/IB : Using", info(r, "NCCL_IB_HCA set to ^mlx5_8")))
    L, _ = step_lines(job.rng, 50, 2000, 50, 401.0, 327.0, hms=(6, 0, 30))
    job.o(L)
    job.o("training complete")
    save(job, description="healthy: every node has 8 compute HCAs plus a storage HCA mlx5_8, and the same NCCL_IB_HCA=^mlx5_8 on every node excludes it; all nodes list the same 8 HCAs",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip



# ========================================================================================= roce-gid-index
ROCE_IP = {n: f"10.20.0.{11 + i}" for i, n in enumerate(NODES)}


def roce_mut(extra=None):
    def mut(r, ph, lines):
        lines = [x.replace(":1/IB", ":1/RoCE").replace(f"OOB ib0:{IB_IP[r.host]}", f"OOB eth0:{ROCE_IP[r.host]}")
                 .replace(f"Using ib0:{IB_IP[r.host]}", f"Using eth0:{ROCE_IP[r.host]}") for x in lines]  # fmt: skip
        return extra(r, ph, lines) if extra else lines

    return mut


def roce_gid_224():
    job = Job("syn-roce-gid-index-2.24-linklocal", 321, jobid=61877)
    v, t = ver("2.24.3", 12060), T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-03-12"
    std_start(job, v, t, 4, date, "20:00:00.003000", agents=agents, script=["+ export NCCL_IB_GID_INDEX=0", "+ export NCCL_SOCKET_IFNAME=eth0"])  # noqa: E501
    env = ("NCCL_IB_GID_INDEX set by environment to 0.",)
    nccl(job, v, ranks, 4, mut=roce_mut(), kw={n: {"extra_env": env, "socket_if": "eth0", "ip": ROCE_IP[NODES[n]]} for n in range(4)}, stop="init")  # noqa: E501
    for r in ranks[7::8]:
        nxt = ranks[(r.rank + 1) % 32]
        job.o(W(v, r, "", "misc/ibvwrap.cc:314",
                f"Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_7:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::ba59:9f03:29a:{r.node}b4e, remote GID fe80::ba59:9f03:29a:{nxt.node}b4e",  # noqa: E501
                tid=r.ptid + 2), task=r.node)  # fmt: skip
        job.o([info(r, "transport/net_ib.cc:1018 -> 2", tid=r.ptid + 2), info(r, "transport/net.cc:743 -> 2", tid=r.ptid + 2)], task=r.node)  # noqa: E501
    init_fail(job, t, v, ranks[7::8], date, "20:00:09", "unhandled system error (run with NCCL_DEBUG=INFO for details)",
              "Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_7:1, curr state INIT, next state RTR, local GID index 0, local GID fe80::ba59:9f03:29a:0b4e, remote GID fe80::ba59:9f03:29a:1b4e")  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "20:00:11.000000", agents, ranks, [0, 1, 2, 3], local=7)
    save(job, description="NCCL 2.24.3 on RoCE: a recipe exports NCCL_IB_GID_INDEX=0, the link-local RoCE v1 GID (fe80::); the queue-pair INIT->RTR transition fails with 22 Invalid argument on every inter-node connection and communicator init fails",  # noqa: E501
         top="roce-gid-index", expected=["roce-gid-index"], absent=absent("roce-gid-index"))  # fmt: skip


def roce_gid_221():
    job = Job("syn-roce-gid-index-2.21-errno", 322, label=True, jobid=55410)
    v, t = ver("2.21.5", 12040), T((2, 4))
    agents, ranks = make_ranks(job)
    date = "2024-10-22"
    std_start(job, v, t, 4, date, "07:00:00.003000", agents=agents, script=["NCCL_IB_GID_INDEX=3 NCCL_DEBUG=INFO"])
    env = ("NCCL_IB_GID_INDEX set by environment to 3.",)
    nccl(job, v, ranks, 4, mut=roce_mut(), kw={n: {"extra_env": env, "socket_if": "eth0", "ip": ROCE_IP[NODES[n]]} for n in range(4)}, stop="init")  # noqa: E501
    for r in ranks[0::8] + ranks[7::8]:
        job.o(W(v, r, "", "misc/ibvwrap.cc:288", "Call to ibv_modify_qp failed with error Invalid argument errno 22", tid=r.ptid + 2), task=r.node)  # noqa: E501
        job.o([info(r, "transport/net_ib.cc:879 -> 2", tid=r.ptid + 2), info(r, "transport/net.cc:692 -> 2", tid=r.ptid + 2), info(r, "proxy.cc:1482 -> 2", tid=r.ptid + 2)], task=r.node)  # noqa: E501
    init_fail(job, t, v, ranks[7::8], date, "07:00:08", "unhandled system error (run with NCCL_DEBUG=INFO for details)",
              "Call to ibv_modify_qp failed with error Invalid argument errno 22")  # fmt: skip
    agent_fail(job, t, date, "07:00:10.000000", agents, ranks, [0, 1, 2, 3], local=7)
    save(job, description="NCCL 2.21.5 on RoCE: NCCL_IB_GID_INDEX=3 copied from another cluster; on these nodes the RoCE v2 IPv4 GID sits on a VLAN interface at another index and entry 3 is empty, so every QP transition fails ('Call to ibv_modify_qp failed with error Invalid argument errno 22', 2.19-2.23 form)",  # noqa: E501
         top="roce-gid-index", expected=["roce-gid-index"], absent=absent("roce-gid-index"))  # fmt: skip


def roce_gid_2307():
    job = Job("syn-roce-gid-index-2.30-hint", 323, jobid=99012)
    v, t = ver("2.30.7", 13000), T((2, 10))
    agents, ranks = make_ranks(job)
    date = "2026-06-20"
    std_start(job, v, t, 4, date, "05:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:26.05-py3",
              script=["+ export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET", "+ export NCCL_IB_GID_INDEX=7"])  # fmt: skip
    nccl(job, v, ranks, 4, mut=roce_mut(), kw={n: {"socket_if": "eth0", "ip": ROCE_IP[NODES[n]]} for n in range(4)}, stop="init")  # noqa: E501
    for r in ranks[7::8]:
        job.o(W(v, r, "2026-06-20 05:00:07", "misc/ibvwrap.cc:322",
                "Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_7:1, curr state INIT, next state RTR, local GID index 7, local GID ::, remote GID ::",  # noqa: E501
                tid=r.ptid + 2, fn="wrap_ibv_modify_qp"), task=r.node)  # fmt: skip
        job.o([info(r, "HINT: In many cases this error occurs when the incorrect GID index is forced by NCCL_IB_GID_INDEX", tid=r.ptid + 2),  # noqa: E501
               info(r, "HINT: To confirm and fix the problem, you can set NCCL_IB_GID_INDEX=-1 to enable automatic detection.", tid=r.ptid + 2),  # noqa: E501
               info(r, "transport/net_ib/connect.cc:911 (ncclIbRtrQp) -> 2", tid=r.ptid + 2)], task=r.node)  # fmt: skip
    init_fail(job, t, v, ranks[7::8], date, "05:00:08", "unhandled system error (run with NCCL_DEBUG=INFO for details)",
              "Call to ibv_modify_qp failed with 22 Invalid argument, on dev mlx5_7:1, curr state INIT, next state RTR, local GID index 7, local GID ::, remote GID ::")  # noqa: E501  # fmt: skip
    agent_fail(job, t, date, "05:00:10.000000", agents, ranks, [0, 1, 2, 3], local=7)
    save(job, description="NCCL 2.30.7 on RoCE with NCCL_IB_GID_INDEX=7 exported by the job script (an empty GID entry, shown as '::'); the WARN carries the 2.30.7 '(function)' and NCCL adds the NCCL_IB_GID_INDEX HINT lines",  # noqa: E501
         top="roce-gid-index", expected=["roce-gid-index"], absent=absent("roce-gid-index"))  # fmt: skip


def near_roce_gid_retry():
    job = Job("near-roce-gid-index-retry-recovered", 324, jobid=84330)
    v, t = ver("2.27.7", 12090), T((2, 8))
    agents, ranks = make_ranks(job)
    date = "2025-09-30"
    std_start(job, v, t, 4, date, "12:00:00.003000", agents=agents, image="nvcr.io#nvidia/pytorch:25.08-py3")

    def extra(r, ph, lines):
        if ph == "conn" and r.rank in (15, 31):
            gid = f"::ffff:{ROCE_IP[r.host]}"
            peer = f"::ffff:{ROCE_IP[NODES[(r.node + 1) % 4]]}"
            lines = [info(r, f"Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_7:1, curr state INIT, next state RTR, local GID index 3, local GID {gid}, remote GID {peer}, retrying 1/5 after 100 msec of sleep", tid=r.ptid + 2)] + lines  # noqa: E501
        return lines

    nccl(job, v, ranks, 4, mut=roce_mut(extra), kw={n: {"socket_if": "eth0", "ip": ROCE_IP[NODES[n]]} for n in range(4)})  # noqa: E501
    L, _ = step_lines(job.rng, 50, 1500, 50, 418.0, 312.0, hms=(12, 0, 40))
    job.o(L)
    job.o("training complete")
    save(job, description="healthy NCCL 2.27.7 RoCE run (GID index chosen automatically, 3 = RoCE v2 IPv4): two ranks log the INFO 'Call to ibv_modify_qp failed with 110 Connection timed out ..., retrying 1/5 after 100 msec of sleep' while the peer's neighbour entry resolves, then connect; training completes",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


# =========================================================================================== gdr-disabled
def gdr_peermem_one_node():
    job = Job("syn-gdr-disabled-no-peermem-one-node", 331, merged=False, jobid=70021)
    v, t = ver("2.23.4", 12060), T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-01-28"
    std_start(job, v, t, 4, date, "03:00:00.003000", agents=agents, script=["+ export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"])  # noqa: E501

    def mut(r, ph, lines):
        lines = [x for x in lines if "DMA-BUF is available" not in x]
        if r.node != 3:
            return before(lines, "Using network IB", info(r, f"NET/IB : GPU Direct RDMA Enabled for HCA {r.local} 'mlx5_{r.local}'")) if ph == "init" else lines  # noqa: E501
        if ph == "init":
            return before(lines, "Using network IB", info(r, f"NET/IB : GPU Direct RDMA Disabled for HCA {r.local} 'mlx5_{r.local}'"))  # noqa: E501
        if ph == "conn":
            return [x.replace("/GDRDMA", "") for x in lines]
        return lines

    nccl(job, v, ranks, 4, mut=mut)
    L, _ = step_lines(job.rng, 10, 1500, 10, 512.0, 256.0, hms=(3, 0, 40))
    job.o(L)
    job.o("training complete")
    save(job, description="NCCL 2.23.4, kernel without DMA-BUF so GDR needs nvidia-peermem; slinky-3 was rebooted and the module was not loaded: 'GPU Direct RDMA Disabled for HCA n' and channel lines 'via NET/IB/<n>' without /GDRDMA on slinky-3 only; the job completes ~25% slower",  # noqa: E501
         top="gdr-disabled", expected=["gdr-disabled"], absent=absent("gdr-disabled"),
         culprits={"gdr-disabled": {"hosts": ["slinky-3"]}})  # fmt: skip


def gdr_level_loc():
    job = Job("syn-gdr-disabled-gdr-level-loc-2.26", 332, label=True, jobid=64090)
    v, t = ver("2.26.2", 12080), T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-05-06"
    std_start(job, v, t, 4, date, "16:00:00.003000", agents=agents, image="registry.example.com#llm/train:2025.05")
    nccl(job, v, ranks, 4, gdr=False, kw={n: {"extra_env": ("NCCL_NET_GDR_LEVEL set by environment to LOC",)} for n in range(4)})  # noqa: E501
    L, _ = step_lines(job.rng, 20, 1000, 20, 538.0, 243.0, hms=(16, 0, 40))
    job.o(L, task=0)
    job.o("[16:09:31] training complete", task=0)
    save(job, description="NCCL 2.26.2: the site image sets NCCL_NET_GDR_LEVEL=LOC (left from a debugging session), so no GPU is ever close enough for GPUDirect RDMA: 'Connected all rings, use ring PXN 0 GDR 0' and plain 'via NET/IB/<n>' channels on every node; training works but slower",  # noqa: E501
         top="gdr-disabled", expected=["gdr-disabled"], absent=absent("gdr-disabled"),
         culprits={"gdr-disabled": {"hosts": ["slinky-0", "slinky-1", "slinky-2", "slinky-3"]}})  # fmt: skip


def near_gdr_single_node():
    job = Job("near-gdr-disabled-single-node", 333, jobid=70555)
    v, t = ver("2.23.4", 12060), T((2, 6))
    agents, ranks = make_ranks(job, nnodes=1)
    date = "2025-02-01"
    std_start(job, v, t, 1, date, "09:00:00.003000", agents=agents, script=["+ export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET"])  # noqa: E501

    def mut(r, ph, lines):
        if ph == "init":
            lines = [x for x in lines if "DMA-BUF is available" not in x]
            return before(lines, "Using network IB", info(r, f"NET/IB : GPU Direct RDMA Disabled for HCA {r.local} 'mlx5_{r.local}'"))  # noqa: E501
        return lines

    nccl(job, v, ranks, 1, mut=mut)
    L, _ = step_lines(job.rng, 10, 500, 10, 380.0, 43.0, hms=(9, 0, 30))
    job.o(L)
    job.o("training complete")
    save(job, description="single node, 8 GPUs over NVLink (P2P/CUMEM): NCCL (SUBSYS=INIT,NET) notes 'GPU Direct RDMA Disabled for HCA n' (no peermem), but no traffic leaves the node, so GDR does not matter; healthy",  # noqa: E501
         top=None, expected=[], absent=absent(), healthy=True)  # fmt: skip


def main():
    for fn in CASES:
        fn()
    for k, n in SIZES.items():
        print(f"{k:50s} {n:8d}")


CASES = [link_fault_218, link_fault_221, link_fault_228_long, link_fault_229, near_link_fault,
         hca_mismatch_230, hca_mismatch_226_roce, hca_mismatch_221_env, near_hca_mismatch_mount, near_hca_mismatch_exclude,
         roce_gid_224, roce_gid_221, roce_gid_2307, near_roce_gid_retry, gdr_peermem_one_node, gdr_level_loc, near_gdr_single_node]  # fmt: skip

if __name__ == "__main__":
    main()
