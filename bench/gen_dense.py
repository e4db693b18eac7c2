"""The ``--shape dense`` job of gen_log.py: a large NCCL_DEBUG=INFO job with many communicators, at a chosen
candidate density.

The job: ``ranks`` GPUs (64-512) on ``ranks / 8`` nodes ``node-000``, ``node-001``, ... of 8 GPUs, one torchrun per
node under ``srun --label``, one process per rank with its own pid, and other thread ids for NCCL's proxy threads.
Megatron-style groups of a mixture-of-experts model (tensor parallel = the 8 GPUs of a node, pipeline parallel across
nodes, data parallel across nodes, the embedding group of the first and last pipeline stage, expert parallel
all-to-all over 8 data-parallel replicas) are created after the world communicator, each
with its own ``commId`` and per-rank ``comm 0x...`` handles; torchrun restarts the worker group (new pids, new
communicators) whenever the whole set has been printed. NCCL lines have the NCCL 2.28 forms of the real captures in
/work/shared/real-logs/nccl-2.28.9-h200 (ring dumps cut at 127 characters with ``...`` as ``dumpLine`` does,
``Trees``, ``via P2P/CUMEM/read``, ``via SHM/direct/direct`` on every 16th node (node-015, node-031, ...: GPUs that
pair over NVLink bridges only), ``[send] via NET/IB/N/GDRDMA``, ``/Shared`` for pipeline send/receive, ``Init COMPLETE``, ``Init timings`` ...).

Density: every line written is labelled as a candidate or not (a candidate is a line that one of slurmdiag's exported
signatures matches, ``rg -c -f``); the writer emits NCCL lines in bursts while the running fraction of candidates is
below ``density`` and training noise (steps, warnings, metrics, tqdm, logging) otherwise. The labels are only the
generator's estimate: gen_log.py ``--measure`` and bench/run.py count the real candidate lines with rg.

Planted faults as in the classic job: node-005 cannot open its HCAs (``Call to ibv_open_device failed``) and falls
back to ``Using network Socket`` / ``via NET/Socket/0`` at every (re)start; at the end rank 25 raises a ValueError
and srun reports ``task 3: Exited with exit code 1``.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from gen_log import TRACEBACK, Job, Writer

GPUS = 8
JOB_ID = 731942
NCCL_VERSION = "2.28.9+cuda12.9"
BAD_NODE = 5
FAIL_RANK = 25  # node 3, local 1
HCAS = [0, 3, 4, 5, 6, 9, 10, 11]  # the compute NICs of an H200 HGX node (the others are storage / Ethernet)
BUS = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"]
SHM_NODE_EVERY = 16  # node 15, 31, ...: GPUs pair over NVLink bridges only, other intra-node hops go through SHM
EP = 8  # expert parallel: all-to-all over 8 data-parallel replicas (on 8 nodes)
BURST = 512  # NCCL lines written in a row once the density is below target
EXPECTED_IDS = ["ib-devices-not-mounted", "nccl-tcp-fallback"]
ABSENT_IDS = ["nccl-ib-disabled", "nccl-socket-ifname", "ib-verbs-library-missing", "node-local-path",
              "pmix-not-used", "pmix-plugin-missing", "pmix-runtime-error", "gdr-disabled"]  # fmt: skip
NEAR_MISSES = [  # (text, is a candidate): rule literals in harmless contexts
    ("libibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': librxe-rdmav34.so: cannot open shared object "
     "file", False),
    ("[INFO] retrying object store request after transient ConnectionError (attempt 1/5)", False),
    ("[INFO] TMPDIR=/tmp/slurm-731942 is node-local; checkpoints go to /lustre/fs1/proj/llm/ckpt", False),
    ("[INFO] export NCCL_IB_DISABLE=0 NCCL_NET_GDR_LEVEL=PHB (from launcher profile)", False),
    ("[INFO] reading tokenizer cache /workspace/.cache/tok.json (No such file or directory: 'tok.json', rebuilding)",
     True),
]  # fmt: skip


def expected_ids(planted: dict[str, int]) -> list[str]:
    """The planted causes that the written lines show: a small log at a low density can end before the first
    communicator, so before ``Using network Socket`` and the ``via NET/Socket`` channels."""
    socket = planted.get("using_network_socket", 0) + planted.get("channel_via_socket", 0)
    return [i for i in EXPECTED_IDS if i != "nccl-tcp-fallback" or socket]


def host(node: int) -> str:
    return f"node-{node:03d}"


def ib_addr(node: int) -> str:
    return f"10.224.{node // 200}.{node % 200 + 10}"


@dataclass
class DRank:
    rank: int
    node: int
    local: int
    pid: int
    host: str

    @property
    def nccl(self) -> str:
        return f"{self.host}:{self.pid}:{self.pid} [{self.local}]"

    def at(self, tid: int) -> str:
        return f"{self.host}:{self.pid}:{tid} [{self.local}]"


@dataclass
class Comm:
    kind: str  # world, tp, pp, dp, emb
    members: list[DRank]
    nch: int
    p2p: str = ""  # "pp": send/receive to the pipeline neighbours, "a2a": to every peer (MoE all-to-all)
    comm_id: int = 0
    nodes: list[list[int]] = field(default_factory=list)  # comm ranks grouped by node, in node order
    rings: list[list[int]] = field(default_factory=list)  # per channel, the ring over comm ranks
    nxt: list[list[int]] = field(default_factory=list)  # per channel, comm rank -> next in the ring
    prv: list[list[int]] = field(default_factory=list)  # per channel, comm rank -> previous in the ring


# The rank (for the srun/torchrun prefix), the line, and False, True (a candidate) or the planted count it adds to
# (every planted line is a candidate).
Line = tuple[DRank, str, "bool | str"]


class DenseJob(Job):
    def __init__(self, rng: random.Random, out: Writer, ranks: int, density: float):
        if ranks % GPUS or not 16 <= ranks <= 4096:
            raise SystemExit(f"--ranks must be a multiple of {GPUS} between 16 and 4096, not {ranks}")
        self.rng = rng
        self.out = out
        self.nodes = ranks // GPUS
        self.world = ranks
        self.density = density
        self.width = len(str(self.nodes - 1))  # srun --label pads the task id to the widest
        self.pp = 4 if self.nodes % 4 == 0 else (2 if self.nodes % 2 == 0 else 1)
        self.dp = self.nodes // self.pp
        self.ranks = self.spawn()
        self.step = 0
        self.clock = 6 * 3600
        self.comms = 0
        self.epochs = 0
        self.near_misses = 0
        self.cands = 0
        self.planted: dict[str, int] = {}

    # -- processes ----------------------------------------------------------------------------------
    def spawn(self) -> list[DRank]:
        """New worker processes (torchrun starts them at launch and at every restart)."""
        ranks = []
        for node in range(self.nodes):
            pid = self.rng.randrange(40_000, 3_900_000)
            for g in range(GPUS):
                pid += self.rng.randrange(1, 40)
                ranks.append(DRank(node * GPUS + g, node, g, pid, host(node)))
        return ranks

    def prefix(self, r) -> str:  # type: ignore[override]
        form = self.rng.random()
        if form < 0.40:
            return ""
        if form < 0.65:
            return f"{r.node:>{self.width}}: "
        if form < 0.80:
            return f"[default{r.local}]:"
        return f"{r.node:>{self.width}}: [default{r.local}]:"

    def tid(self, r: DRank) -> int:
        return r.pid + self.rng.randrange(60, 900)

    # -- the NCCL stream --------------------------------------------------------------------------------
    def nccl_stream(self) -> Iterator[Line]:
        """Every line NCCL prints in the job, forever: process start, the communicators, a restart, again."""
        while True:
            self.epochs += 1
            if self.epochs > 1:
                yield from self.restart()
            yield from self.interleave([self.proc_start(r) for r in self.ranks])
            for comms in self.groups():
                yield from self.interleave([self.comm_rank(c, i) for c in comms for i in range(len(c.members))])

    def interleave(self, per_rank: list[list[Line]]) -> list[Line]:
        """srun interleaves the processes' output: each one prints in order, at its own pace."""
        keyed = []
        for lines in per_rank:
            t, pace = self.rng.random(), self.rng.uniform(0.5, 2.0)
            keyed.extend((t + i * pace + self.rng.random(), line) for i, line in enumerate(lines))
        keyed.sort(key=lambda k: k[0])
        return [line for _, line in keyed]

    def restart(self) -> Iterator[Line]:
        """torchrun restarts the worker group: new processes, so new pids and new communicators."""
        self.clock += 90
        for node in range(self.nodes):
            agent = self.rng.randrange(40_000, 3_900_000)
            t = self.ts()[11:]
            for msg in (f"[default] Detected 1 new nodes from group_rank={BAD_NODE}; will restart worker group",
                        "[default] Stopping worker group",
                        f"[default] Rendezvous complete for workers. Result: restart_count={self.epochs - 1} "
                        f"master_addr={host(0)} master_port=29500 group_rank={node} group_world_size={self.nodes} "
                        f"local_ranks=[0, 1, 2, 3, 4, 5, 6, 7] role_ranks=[{node * GPUS}, ..., {node * GPUS + 7}]"):  # fmt: skip
                self.out.line(f"{node:>{self.width}}: I0506 {t}.{self.rng.randrange(10**6):06d} {agent} "
                              f"torch/distributed/elastic/agent/server/api.py:{self.rng.choice((689, 719, 760))}] {msg}")  # fmt: skip
        self.ranks = self.spawn()
        return iter(())

    def proc_start(self, r: DRank) -> list[Line]:
        """Per process, once: bootstrap, version, net plugin. The planted fault lives here on BAD_NODE."""
        p = r.nccl + " NCCL INFO "
        addr = ib_addr(r.node)
        lines = [(r, p + "ENV/Plugin: Could not find: libnccl-env.so", False),
                 (r, f"{p}Bootstrap: Using ib0:{addr}<0>", True),
                 (r, p + "cudaDriverVersion 12090", False),
                 (r, f"{p}NCCL version {NCCL_VERSION}", True),
                 (r, p + "NET/Plugin: Could not find: libnccl-net.so", True),
                 (r, p + "NCCL_IB_HCA set to " + ",".join(f"mlx5_{h}:1" for h in HCAS), True)]  # fmt: skip
        if r.node != BAD_NODE:
            devs = " ".join(f"[{i}]mlx5_{h}:1/IB" for i, h in enumerate(HCAS))
            lines.append((r, f"{p}NET/IB : Using {devs} [RO]; OOB ib0:{addr}<0>", True))
            lines.append((r, p + "Initialized NET plugin IB", False))
            return lines
        ts = self.ts()
        for h in HCAS:
            lines.append((r, "", False))  # NCCL prints an empty line before each WARN
            lines.append((r, f"[{ts}] {r.nccl} misc/ibvwrap.cc:216 NCCL WARN Call to ibv_open_device failed",
                          "ibv_open_device_failed"))  # fmt: skip
            lines.append((r, "", False))
            lines.append((r, f"[{ts}] {r.nccl} transport/net_ib/init.cc:592 NCCL WARN NET/IB : Unable to open "
                             f"device mlx5_{h}", "unable_to_open_device"))  # fmt: skip
        lines += [(r, p + "NET/IB : No device found.", True),
                  (r, f"{p}NET/IB : Using [RO]; OOB ib0:{addr}<0>", True),
                  (r, p + "Failed to initialize NET plugin IB", True),
                  (r, f"{p}NET/Socket : Using [0]ib0:{addr}<0>", True),
                  (r, p + "Initialized NET plugin Socket", False)]  # fmt: skip
        return lines

    # -- communicators --------------------------------------------------------------------------------
    def groups(self) -> list[list[Comm]]:
        """world, then the tensor-, pipeline-, data-parallel and embedding groups (each set created together).

        Megatron's order: global rank = (stage * dp + replica) * 8 + tensor rank, so node = stage * dp + replica."""
        by_node = [self.ranks[n * GPUS : (n + 1) * GPUS] for n in range(self.nodes)]
        world = [Comm("world", list(self.ranks), 16)]
        tp = [Comm("tp", by_node[n], 24) for n in range(self.nodes)]
        pp = [Comm("pp", [by_node[s * self.dp + d][g] for s in range(self.pp)], 2, p2p="pp")
              for d in range(self.dp) for g in range(GPUS)] if self.pp > 1 else []  # fmt: skip
        dp = [Comm("dp", [by_node[s * self.dp + d][g] for d in range(self.dp)], 4)
              for s in range(self.pp) for g in range(GPUS)] if self.dp > 1 else []  # fmt: skip
        emb = [Comm("emb", [c.members[0], c.members[-1]], 2) for c in pp]
        ep = [Comm("ep", d.members[k : k + EP], 4, p2p="a2a") for d in dp for k in range(0, len(d.members), EP)]
        sets = [world, tp, pp, dp, emb, ep]
        for comms in sets:
            for c in comms:
                c.comm_id = self.rng.getrandbits(64)
                nodes: dict[int, list[int]] = {}
                for i, m in enumerate(c.members):
                    nodes.setdefault(m.node, []).append(i)
                c.nodes = list(nodes.values())
                c.rings = self.rings(c)
                n = len(c.members)
                c.nxt, c.prv = [[0] * n for _ in c.rings], [[0] * n for _ in c.rings]
                for ch, ring in enumerate(c.rings):
                    for k, x in enumerate(ring):
                        c.nxt[ch][x], c.prv[ch][x] = ring[(k + 1) % n], ring[k - 1]
                self.comms += 1
        return [s for s in sets if s]

    def rings(self, c: Comm) -> list[list[int]]:
        """Per channel, the ring over comm ranks: node by node, each node entered at a different GPU."""
        out = []
        for ch in range(c.nch):
            ring = []
            for group in c.nodes:
                k = ch % len(group)
                ring.extend(group[k:] + group[:k])
            out.append(ring)
        return out

    def trees(self, c: Comm, i: int) -> str:
        """NCCL's ``Trees [c] down0/down1/down2->rank->up``: a chain in each node, a binary tree over the nodes
        (mirrored on odd channels, as NCCL's double binary tree is)."""
        groups = c.nodes
        gi = next(k for k, g in enumerate(groups) if i in g)
        q = groups[gi].index(i)
        variants = []
        for flip in (False, True):
            order = groups[::-1] if flip else groups
            pos = order.index(groups[gi])
            g = groups[gi]
            down = [g[q + 1]] if q + 1 < len(g) else []
            if q == 0:
                up = order[(pos - 1) // 2][0] if pos else -1
                down += [order[k][0] for k in (2 * pos + 1, 2 * pos + 2) if k < len(order)]
            else:
                up = g[q - 1]
            down = (down + [-1, -1, -1])[:3]
            variants.append(f"{down[0]}/{down[1]}/{down[2]}->{i}->{up}")
        return "Trees " + " ".join(f"[{ch}] {variants[ch % 2]}" for ch in range(c.nch))

    def comm_rank(self, c: Comm, i: int) -> list[Line]:
        """What rank ``i`` of ``c`` prints: init (NCCL 2.28 order), then its connections at the first collective."""
        r = c.members[i]
        n, d, rng = len(c.members), r.local, self.rng
        p = r.nccl + " NCCL INFO "
        bad = r.node == BAD_NODE
        net = "Socket" if bad else "IB"
        handle = f"0x{0x550000000000 + rng.getrandbits(40):x}"
        bus = BUS[d] + "000"
        head = f"comm {handle} rank {i} nranks {n} cudaDev {d} nvmlDev {d} busId {bus} commId 0x{c.comm_id:016x}"
        group = next(g for g in c.nodes if i in g)
        out = [(r, p + "Comm config Blocking set to 1", False),
               (r, f"{p}Assigned NET plugin {net} to comm", True),
               (r, f"{p}Using network {net}", "using_network_socket" if bad else True),
               (r, f"{p}ncclCommInitRankConfig {head} - Init START", True),
               (r, f"{p}Bootstrap timings total {rng.uniform(0.001, 0.9):.6f} (create 0.000021, send 0.000{rng.randrange(60, 400)}, "
                   f"recv 0.000{rng.randrange(100, 999)}, ring {rng.uniform(0.0001, 0.8):.6f}, delay 0.000001)", False),
               (r, f"{p}Setting affinity for GPU {d} to {'ffffffff,00000000,ffffffff' if d < 4 else 'ffffffff,00000000,ffffffff,00000000'}", False),
               (r, f"{p}comm {handle} rank {i} nRanks {n} nNodes {len(c.nodes)} localRanks {len(group)} "
                   f"localRank {group.index(i)} MNNVL 0", True)]  # fmt: skip
        if i == 0:
            width = len(str(n - 1))
            for ch, ring in enumerate(c.rings):
                text = f"Channel {ch:02d}/{c.nch:02d} :" + "".join(f" {x:>{width}}" for x in ring)
                out.append((r, p + (text if len(text) < 128 else text[:124] + "..."), False))
        out += [(r, p + self.trees(c, i), False),
                (r, p + "P2P Chunksize set to 524288", False),
                (r, p + "PROFILER/Plugin: Could not find: libnccl-profiler.so", False),
                (r, p + "Check P2P Type isAllDirectP2p 0 directMode 0 isAllCudaP2p 1", False),
                (r, f"{r.at(self.tid(r))} NCCL INFO [Proxy Service] Device {d} CPU core {rng.randrange(112)}", False),
                (r, f"{r.at(self.tid(r))} NCCL INFO [Proxy Service UDS] Device {d} CPU core {rng.randrange(112)}", False),
                (r, p + "TUNER/Plugin: Could not find: libnccl-tuner.so", False),
                (r, f"{p}threadThresholds 8/8/64 | {8 * n}/8/64 | 512 | 512", False),
                (r, f"{p}{c.nch} coll channels, {c.nch} collnet channels, {16 if len(group) > 1 else 0} nvls channels, "
                    f"{c.nch} p2p channels, {2 if c.p2p else c.nch // 8 or 1} p2p channels per peer", False),
                (r, p + "CC Off, workFifoBytes 1048576", False),
                (r, f"{p}ncclCommInitRankConfig {head} - Init COMPLETE", True),
                (r, f"{p}Init timings - ncclCommInitRankConfig: rank {i} nranks {n} total {rng.uniform(0.3, 4):.2f} "
                    f"(kernels 0.{rng.randrange(10, 99)}, alloc 0.00, bootstrap 0.{rng.randrange(0, 99):02d}, "
                    f"allgathers 0.0{rng.randrange(10)}, topo 0.{rng.randrange(10, 60)}, graphs 0.00, "
                    f"connections 0.0{rng.randrange(10)}, rest 0.00)", False),
                (r, f"{r.at(self.tid(r))} NCCL INFO [Proxy Progress] Device {d} CPU core {rng.randrange(112)}", False)]  # fmt: skip
        out += self.p2p_connect(c, i) if c.p2p else self.ring_connect(c, i)
        return out

    def via_net(self, r: DRank, sub: int = 0) -> str:
        if r.node == BAD_NODE:
            return "NET/Socket/0" + ("/Shared" if sub else "")
        return f"NET/IB/{r.local}/GDRDMA" + ("/Shared" if sub else "")

    def ring_connect(self, c: Comm, i: int) -> list[Line]:
        r = c.members[i]
        p = r.nccl + " NCCL INFO "
        out: list[Line] = []
        net: bool | str = "channel_via_socket" if r.node == BAD_NODE else True
        if len(c.members) == 1:
            return out
        for ch in range(c.nch):
            prv, nxt = c.prv[ch][i], c.nxt[ch][i]
            mp, mn = c.members[prv], c.members[nxt]
            if mp.node != r.node:
                out.append((r, f"{p}Channel {ch:02d}/0 : {prv}[{mp.local}] -> {i}[{r.local}] [receive] via "
                               f"{self.via_net(r)}", net))  # fmt: skip
            if mn.node != r.node:
                out.append((r, f"{p}Channel {ch:02d}/0 : {i}[{r.local}] -> {nxt}[{mn.local}] [send] via "
                               f"{self.via_net(r)}", net))  # fmt: skip
            else:
                shm = r.node % SHM_NODE_EVERY == SHM_NODE_EVERY - 1 and r.local // 2 != mn.local // 2
                via = "SHM/direct/direct" if shm else "P2P/CUMEM/read"
                out.append((r, f"{p}Channel {ch:02d}/0 : {i}[{r.local}] -> {nxt}[{mn.local}] via {via}", False))
        out.append((r, p + "Connected all rings, use ring PXN 0 GDR 1", False))
        return out

    def p2p_connect(self, c: Comm, i: int) -> list[Line]:
        """Send/receive connections (connIndex 1, ``/Shared`` buffers), 2 channels per peer: from the previous and
        to the next pipeline stage, or from and to every peer of an expert-parallel all-to-all."""
        r = c.members[i]
        p = r.nccl + " NCCL INFO "
        out: list[Line] = []
        net: bool | str = "channel_via_socket" if r.node == BAD_NODE else True
        n = len(c.members)
        if c.p2p == "pp":
            pairs = [(i - 1 if i > 0 else None, i + 1 if i + 1 < n else None)]
        else:
            pairs = [((i - k) % n, (i + k) % n) for k in range(1, n)]
        for src, dst in pairs:
            for ch in range(2):
                if src is not None:
                    m = c.members[src]
                    out.append((r, f"{p}Channel {ch:02d}/1 : {src}[{m.local}] -> {i}[{r.local}] [receive] via "
                                   f"{self.via_net(r, 1)}", net))  # fmt: skip
                if dst is not None:
                    m = c.members[dst]
                    out.append((r, f"{p}Channel {ch:02d}/1 : {i}[{r.local}] -> {dst}[{m.local}] [send] via "
                                   f"{self.via_net(r, 1)}", net))  # fmt: skip
        return out

    # -- the whole log ----------------------------------------------------------------------------------
    def header(self) -> None:
        o, n = self.out, self.nodes
        o.line(f"Job {JOB_ID}: {n} nodes ({host(0)}..{host(n - 1)}), {GPUS} GPUs per node, world size {self.world}, "
               f"tensor parallel {GPUS}, pipeline parallel {self.pp}, data parallel {self.dp}")  # fmt: skip
        o.line(f"SLURM_JOB_NUM_NODES={n} SLURM_JOB_ID={JOB_ID} MASTER_ADDR={host(0)} MASTER_PORT=29500 NCCL_DEBUG=INFO")
        o.line("srun --label --container-image=nvcr.io#nvidia/pytorch:25.01-py3 --container-mounts=/lustre/fs1/proj/llm:"
               f"/workspace torchrun --nnodes={n} --nproc-per-node={GPUS} --max-restarts=100 --tee 3 ...")  # fmt: skip
        for node in range(n):
            o.line(f"{node:>{self.width}}: pyxis: imported docker image: nvcr.io#nvidia/pytorch:25.01-py3")

    def near_miss(self) -> None:
        r = self.rng.choice(self.ranks)
        self.near_misses += 1
        text, cand = self.rng.choice(NEAR_MISSES)
        self.out.line(self.prefix(r) + text)
        self.cands += cand

    def bulk(self, until: int) -> None:
        """NCCL bursts while the candidate fraction is below target, training noise otherwise."""
        noise: list[Callable[[], None]] = [self.step_line, self.nccl_misc, self.py_warning, self.tqdm_line,
                                           self.json_line, self.misc_line]  # fmt: skip
        weights = [50, 10, 4, 4, 2, 30]
        stream = self.nccl_stream()
        out = self.out
        while out.pending() < until:
            if self.cands < self.density * out.lines:
                for _ in range(BURST):
                    r, text, cand = next(stream)
                    out.line(self.prefix(r) + text)
                    if cand:
                        self.cands += 1
                        if cand is not True:
                            self.plant(cand)
            else:
                for kind in self.rng.choices(noise, weights, k=64):
                    kind()
                if self.rng.random() < 64 * 2e-5:
                    self.near_miss()

    def failure(self) -> None:
        r = self.ranks[FAIL_RANK]
        w = self.width
        pre = f"{r.node:>{w}}: [default{r.local}]:[rank{r.rank}]: "
        for text in TRACEBACK:
            self.out.line(pre + text.format(step=self.step))
        self.cands += 2  # Traceback, ValueError
        self.plant("value_error_traceback")
        o = self.out
        o.line(f"{r.node:>{w}}: E0506 {self.ts()[11:]}.402000 {r.pid - 40} torch/distributed/elastic/multiprocessing/"
               f"api.py:869] failed (exitcode: 1) local_rank: {r.local} (pid: {r.pid}) of binary: /usr/bin/python")  # fmt: skip
        o.line(f"srun: error: {r.host}: task {r.node}: Exited with exit code 1")
        o.line(f"srun: Terminating StepId={JOB_ID}.0")
        o.line(f"slurmstepd: error: *** STEP {JOB_ID}.0 ON {host(0)} CANCELLED AT 2025-05-06T{self.ts()[11:]} ***")
        for node in range(self.nodes):
            if node != r.node:
                o.line(f"srun: error: {host(node)}: task {node}: Terminated")
        o.line(f"srun: Force Terminated StepId={JOB_ID}.0")
        self.cands += 3 + self.nodes
        self.plant("srun_task_exit")


def generate(stream, size: int, seed: int, ranks: int, density: float) -> tuple[Writer, DenseJob]:
    """Write the dense job to ``stream`` (binary); the caller writes the expectation."""
    rng = random.Random(seed)
    w = Writer(stream)
    job = DenseJob(rng, w, ranks, density)
    job.header()
    job.bulk(until=size - 8192 - 64 * job.nodes)
    job.failure()
    w.flush()
    return w, job
