#!/usr/bin/env python3
"""Generator of the origin: synthetic cases of the slurmdiag corpus.

Every line template is a message form taken from ../../shared/reference/log-signatures.md or from the real
captures in ../../shared/real-logs (NCCL 2.28.9 INFO boilerplate, torchrun ChildFailedError block, Open MPI
boxes, srun/slurmstepd lines).  Version-dependent details (NCCL 2.18 .. 2.28 wording, WARN timestamps from
2.26, PyTorch log prefixes by era) are switched by the `V` (NCCL) and `T` (PyTorch) profiles below.

Deterministic: `python3 gen_synthetic.py` rewrites every syn-* case directory with identical bytes.
"""

import json
import random
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent
NODES = [f"slinky-{i}" for i in range(4)]
IB_IP = {n: f"10.10.0.{11 + i}" for i, n in enumerate(NODES)}
ETH_IP = {n: f"10.0.0.{11 + i}" for i, n in enumerate(NODES)}
BUSID = ["18000", "2a000", "3a000", "5d000", "9a000", "ab000", "ba000", "db000"]
HCAS = [f"mlx5_{i}" for i in range(8)]
IMAGE = "nvcr.io#nvidia/pytorch:24.05-py3"


# ----------------------------------------------------------------------------------------------- helpers
class Rank:
    def __init__(self, rng, node, local, agent_pid):
        self.node, self.local = node, local
        self.host = NODES[node]
        self.rank = node * 8 + local
        self.pid = agent_pid + 19 + local * 3 + rng.randint(0, 2)
        self.comm = "0x%x" % rng.randint(0x55D000000000, 0x55DFFFFFFFFF)
        self.dev = local
        self.ptid = self.pid + rng.randint(60, 95)  # async / proxy thread ids


def interleave(rng, seqs):
    """Random merge of per-process line lists, keeping each list's own order (how srun interleaves)."""
    seqs = [list(s) for s in seqs if s]
    idx = [0] * len(seqs)
    out = []
    while True:
        live = [i for i in range(len(seqs)) if idx[i] < len(seqs[i])]
        if not live:
            return out
        i = rng.choice(live)
        # emit short bursts, like a process flushing a few lines at once
        for _ in range(rng.randint(1, 3)):
            if idx[i] < len(seqs[i]):
                out.append(seqs[i][idx[i]])
                idx[i] += 1
    return out


class V:
    """NCCL version profile."""

    def __init__(self, s, cuda):
        self.s = s
        a, b, c = (int(x) for x in s.split("."))
        self.n = a * 10000 + b * 100 + c
        self.cuda = cuda

    def ts(self, t):  # WARN timestamp prefix (2.26+)
        return f"[{t}] " if self.n >= 22600 else ""

    def bootstrap(self):
        return "Bootstrap: Using" if self.n >= 22400 else "Bootstrap : Using"

    def plugin_lines(self):
        n = self.n
        if n < 21900:
            return [
                "NET/Plugin : Plugin load (libnccl-net.so) returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory",
                "NET/Plugin : No plugin found, using internal implementation",
            ]
        if n < 22200:
            return [
                "NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
                "NET/Plugin: Using internal network plugin.",
            ]
        if n < 22600:
            return ["NET/Plugin: Could not find: libnccl-net.so. Using internal network plugin."]
        if n < 22700:
            return ["NET/Plugin: Could not find: libnccl-net.so. Using internal net plugin."]
        if n < 22800:
            return ["NET/Plugin: Could not find: libnccl-net.so. "]
        return ["NET/Plugin: Could not find: libnccl-net.so"]

    def init_fn(self):
        if self.n >= 22300:
            return "ncclCommInitRankConfig "
        if self.n >= 22100:
            return "ncclCommInitRank "
        return ""


def info(r, msg, tid=None):
    return f"{r.host}:{r.pid}:{tid or r.pid} [{r.dev}] NCCL INFO {msg}"


def warn(v, r, t, fileline, msg, tid=None):
    # NCCL prints the WARN's leading newline and the line with one fprintf: keep them as one unit
    return [f"\n{v.ts(t)}{r.host}:{r.pid}:{tid or r.pid} [{r.dev}] {fileline} NCCL WARN {msg}"]


def ring_str(v, nranks):
    if v.n >= 22600:
        return " ".join(str(i) for i in range(nranks))
    return "".join("%4d" % i for i in range(nranks))


def trees(r, nch, nnodes):
    parts = []
    for c in range(nch):
        l, n = r.local, r.node
        if l == 0 and nnodes > 1:
            # node heads form an inter-node tree; alternate the root between channels
            up = -1 if n == (c % nnodes) else ((c % nnodes) * 8)
            down0 = r.rank + 1
            kids = [str(down0)] + ["-1", "-1"]
            if up == -1:
                kids = [str(down0), str(((n + 1) % nnodes) * 8), "-1"]
            parts.append(f"[{c}] {'/'.join(kids)}->{r.rank}->{up}")
        else:
            down = r.rank + 1 if l < 7 else -1
            up = r.rank - 1 if l > 0 else -1
            parts.append(f"[{c}] {down}/-1/-1->{r.rank}->{up}")
    return "Trees " + " ".join(parts)


def nccl_rank_init(
    v,
    r,
    nranks,
    nnodes,
    net,
    *,
    hca_env=None,
    ib_disable=None,
    ib_fail=None,
    nch=16,
    socket_if="ib0",
    socket_env=None,
    extra_env=(),
    gdr=True,
    ip=None,
    socket_threads=None,
    connect_retry=False,
):
    """Per-rank init lines up to Init COMPLETE.  net: 'IB' or 'Socket'.
    ib_fail: None | 'not-mounted' | 'no-device' | 'verbs-lib' | 'provider'."""
    ip = ip or (IB_IP if socket_if == "ib0" else ETH_IP)[r.host]
    L = []
    A = L.append
    if v.n >= 22800:
        A(info(r, "ENV/Plugin: Could not find: libnccl-env.so"))
    if socket_env:
        A(info(r, f"NCCL_SOCKET_IFNAME set by environment to {socket_env}"))
    A(info(r, f"{v.bootstrap()} {socket_if}:{ip}<0>"))
    if v.n >= 21900:
        A(info(r, f"cudaDriverVersion {v.cuda}"))
    if v.n >= 22200:
        A(info(r, f"NCCL version {v.s}+cuda{v.cudastr}"))
    if v.n >= 22700:
        A(info(r, "Comm config Blocking set to 1"))
    for e in extra_env:
        A(info(r, e))
    for p in v.plugin_lines():
        A(info(r, p))
    if ib_disable is not None:
        A(info(r, f"NCCL_IB_DISABLE set by environment to {ib_disable}."))
    hcas = HCAS
    if ib_disable == 1:
        pass
    elif ib_fail == "verbs-lib":
        A(info(r, "Failed to open libibverbs.so[.1]"))
    else:
        if hca_env:
            A(info(r, f"NCCL_IB_HCA set to {hca_env}"))
        if ib_fail == "not-mounted":
            for i, h in enumerate(HCAS):
                L.extend(
                    warn(
                        v,
                        r,
                        r._t,
                        "misc/ibvwrap.cc:212" if v.n < 22300 else "misc/ibvwrap.cc:216",
                        "Call to ibv_open_device failed",
                    )
                )
                L.extend(
                    warn(
                        v,
                        r,
                        r._t,
                        "transport/net_ib.cc:%d" % (530 if v.n < 22300 else 592),
                        f"NET/IB : Unable to open device {h}",
                    )
                )
        if ib_fail in ("not-mounted", "no-device", "provider") or net == "Socket-noib":
            A(info(r, "NET/IB : No device found."))
            if v.n >= 22700:
                A(info(r, f"NET/IB : Using [RO]; OOB {socket_if}:{ip}<0>"))
                A(info(r, "Failed to initialize NET plugin IB"))
        else:
            if hca_env and hca_env.startswith("mlx5_0:1,mlx5_1:1"):
                hcas = HCAS[:2]
            r._nhca = len(hcas)
            devs = " ".join(f"[{i}]{h}:1/IB" for i, h in enumerate(hcas))
            A(info(r, f"NET/IB : Using {devs} [RO]; OOB {socket_if}:{ip}<0>"))
            if v.n >= 22700:
                A(info(r, "Initialized NET plugin IB"))
                A(info(r, "Assigned NET plugin IB to comm"))
    if net.startswith("Socket"):
        if socket_env:
            A(info(r, f"NCCL_SOCKET_IFNAME set by environment to {socket_env}"))
        ifs = f"[0]{socket_if}:{ip}<0>"
        if socket_if == "ib0":
            ifs += f" [1]eth0:{ETH_IP[r.host]}<0>"
        A(info(r, f"NET/Socket : Using {ifs}"))
        if v.n >= 22700:
            A(info(r, "Initialized NET plugin Socket"))
            A(info(r, "Assigned NET plugin Socket to comm"))
    if 21900 <= v.n < 22200:
        A(info(r, "Using non-device net plugin version 0"))
    A(info(r, f"Using network {'IB' if net == 'IB' else 'Socket'}"))
    if net == "IB" and v.n < 22700:
        A(info(r, f"DMA-BUF is available on GPU device {r.dev}"))
    commid = r._commid
    A(
        info(
            r,
            f"{v.init_fn()}comm {r.comm} rank {r.rank} nranks {nranks} cudaDev {r.dev} nvmlDev {r.local} busId {BUSID[r.local]} commId {commid} - Init START",
        )
    )
    if connect_retry:
        A(info(r, "Call to connect returned Connection refused, retrying"))
    if v.n >= 22600:
        A(info(r, "RAS client listening socket at 127.0.0.1<28028>"))
        A(
            info(
                r,
                "Bootstrap timings total %.6f (create 0.000031, send 0.000142, recv %.6f, ring %.6f, delay 0.000001)"
                % (r._btot, r._btot * 0.6, r._btot * 0.3),
            )
        )
    if v.n < 22600:
        cpus = "ffffffff,00000000,ffffffff" if r.local < 4 else "ffffffff,00000000,ffffffff,00000000"
        A(info(r, f"Setting affinity for GPU {r.dev} to {cpus}"))
    mn = " MNNVL 0" if v.n >= 22000 else ""
    A(
        info(
            r,
            f"comm {r.comm} rank {r.rank} nRanks {nranks} nNodes {nnodes} localRanks {nranks // nnodes} localRank {r.local}{mn}",
        )
    )
    if r.rank == 0:
        for c in range(nch):
            A(info(r, f"Channel {c:02d}/{nch:02d} : {ring_str(v, nranks)}"))
    A(info(r, trees(r, nch, nnodes)))
    A(info(r, "P2P Chunksize set to 131072"))
    if v.n >= 22600:
        A(info(r, "PROFILER/Plugin: Could not find: libnccl-profiler.so"))
        A(info(r, "Check P2P Type isAllDirectP2p 1 directMode 0 isAllCudaP2p 1"))
        A(info(r, f"[Proxy Service] Device {r.dev} CPU core {r.local * 12 + 3}", tid=r.ptid))
        A(info(r, f"[Proxy Service UDS] Device {r.dev} CPU core {r.local * 12 + 5}", tid=r.ptid + 1))
        A(info(r, "TUNER/Plugin: Could not find: libnccl-tuner.so"))
    return L


def nccl_rank_connect(v, r, nranks, nnodes, net, nch=16, gdr=True):
    L = []
    A = L.append
    p2p = "P2P/CUMEM/read" if v.n >= 21900 else "P2P/IPC/read"
    nxt = (r.rank + 1) % nranks
    prv = (r.rank - 1) % nranks
    net_dev = r.local * getattr(r, "_nhca", 8) // 8
    suffix = "/GDRDMA" if (gdr and net == "IB") else ""
    netname = "IB" if net == "IB" else "Socket"
    if v.n >= 22600:
        A(info(r, f"[Proxy Progress] Device {r.dev} CPU core {r.local * 12 + 7}", tid=r.ptid + 2))
    for c in range(nch):
        if r.local == 0 and nnodes > 1:
            A(
                info(
                    r,
                    f"Channel {c:02d}/0 : {prv}[7] -> {r.rank}[0] [receive] via NET/{netname}/{net_dev if net == 'IB' else 0}{suffix}",
                )
            )
        if r.local == 7 and nnodes > 1:
            A(
                info(
                    r,
                    f"Channel {c:02d}/0 : {r.rank}[7] -> {nxt}[0] [send] via NET/{netname}/{net_dev if net == 'IB' else 0}{suffix}",
                )
            )
        elif r.local < 7 or nnodes == 1:
            A(info(r, f"Channel {c:02d}/0 : {r.rank}[{r.local}] -> {nxt}[{(r.local + 1) % 8}] via {p2p}"))
    if v.n >= 22400:
        A(info(r, f"Connected all rings, use ring PXN 0 GDR {1 if (gdr and net == 'IB') else 0}"))
    else:
        A(info(r, "Connected all rings"))
        A(info(r, "Connected all trees"))
    return L


def nccl_rank_complete(v, r, nranks, nch=16):
    L = []
    A = L.append
    A(info(r, "threadThresholds 8/8/64 | 256/8/64 | 512 | 512"))
    coll = (
        f"{nch} coll channels, {nch} collnet channels, 0 nvls channels"
        if v.n >= 22000
        else f"{nch} coll channels, 0 nvls channels"
    )
    A(info(r, f"{coll}, {nch} p2p channels, 2 p2p channels per peer"))
    if v.n >= 22600:
        A(info(r, "CC Off, workFifoBytes 1048576"))
    A(
        info(
            r,
            f"{v.init_fn()}comm {r.comm} rank {r.rank} nranks {nranks} cudaDev {r.dev} nvmlDev {r.local} busId {BUSID[r.local]} commId {r._commid} - Init COMPLETE",
        )
    )
    if v.n >= 22600:
        A(
            info(
                r,
                f"Init timings - {v.init_fn().strip()}: rank {r.rank} nranks {nranks} total 1.%02d (kernels 0.41, alloc 0.03, bootstrap 0.%02d, allgathers 0.02, topo 0.19, graphs 0.01, connections 0.21, rest 0.02)"
                % (r.local * 3 + 7, r.local + 11),
            )
        )
    return L


class T:
    """PyTorch era profile: glog-style (>=2.4) or [ts] module: [LEVEL] (2.1-2.3)."""

    def __init__(self, ver, py="/usr/bin/python", sp="/usr/local/lib/python3.10/dist-packages"):
        self.ver = ver
        self.py = py
        self.sp = sp
        self.glog = ver >= (2, 4)

    def agent(self, level, date, time, pid, mod, line, msg):
        """torchrun agent logger line.  date 'MMDD'/'YYYY-MM-DD', time 'HH:MM:SS.ffffff'."""
        if self.glog:
            mmdd = date[5:7] + date[8:10]
            return f"{level[0]}{mmdd} {time[:15]} {pid} torch/distributed/{mod.replace('.', '/')}.py:{line}] {msg}"
        return f"[{date} {time[:8]},{time[9:12]}] torch.distributed.{mod}: [{level}] {msg}"

    def cxx(self, rank, level, date, time, fileline, msg):
        mmdd = date[5:7] + date[8:10]
        if self.ver >= (2, 3):
            return (
                f"[rank{rank}]:[{level}{mmdd} {time}{(rank * 7919 + 12345) * 104729 % 1000000000:09d} {fileline}] {msg}"
            )
        return f"[{level} {fileline}] {msg}"

    def pg(self, rank):
        return f"[PG ID 0 PG GUID 0(default_pg) Rank {rank}]" if self.ver >= (2, 3) else f"[PG 0 Rank {rank}]"


def omp_banner(t, date, time, pid):
    msgs = [
        "",
        "*****************************************",
        "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
        "*****************************************",
    ]
    line = 793 if t.glog else None
    return [t.agent("WARNING", date, time, pid, "run", line, m) for m in msgs]


def child_failed(t, entry, host, date_us, rank, local, code, pid, traceback=None):
    tb = traceback or "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
    return [
        "Traceback (most recent call last):",
        '  File "/usr/local/bin/torchrun", line 8, in <module>',
        "    sys.exit(main())",
        f'  File "{t.sp}/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper',
        "    return f(*args, **kwargs)",
        f'  File "{t.sp}/torch/distributed/run.py", line 919, in main',
        "    run(args)",
        f'  File "{t.sp}/torch/distributed/run.py", line 910, in run',
        "    elastic_launch(",
        f'  File "{t.sp}/torch/distributed/launcher/api.py", line 138, in __call__',
        "    return launch_agent(self._config, self._entrypoint, list(args))",
        f'  File "{t.sp}/torch/distributed/launcher/api.py", line 269, in launch_agent',
        "    raise ChildFailedError(",
        "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
        "============================================================",
        f"{entry} FAILED",
        "------------------------------------------------------------",
        "Failures:",
        "  <NO_OTHER_FAILURES>",
        "------------------------------------------------------------",
        "Root Cause (first observed failure):",
        "[0]:",
        f"  time      : {date_us}",
        f"  host      : {host}",
        f"  rank      : {rank} (local_rank: {local})",
        f"  exitcode  : {code} (pid: {pid})",
        "  error_file: <N/A>",
        f"  traceback : {tb}",
        "============================================================",
    ]


class Job:
    def __init__(self, name, seed, label=False, merged=True, jobid=None):
        self.name = name
        self.rng = random.Random(seed)
        self.label = label
        self.merged = merged
        self.jobid = jobid or self.rng.randint(40000, 99999)
        self.out, self.err = [], []

    def o(self, lines, task=None):
        self._add(self.out, lines, task)

    def e(self, lines, task=None):
        self._add(self.err if not self.merged else self.out, lines, task)

    def _add(self, dst, lines, task):
        if isinstance(lines, str):
            lines = [lines]
        lines = [y for x in lines for y in x.split("\n")]
        for ln in lines:
            if self.label and task is not None:
                dst.append(f"{task}: {ln}")
            else:
                dst.append(ln)

    def write(self, expected, stem="train"):
        d = OUT / self.name
        d.mkdir(parents=True, exist_ok=True)
        for f in d.iterdir():
            f.unlink()
        if self.merged:
            (d / f"{stem}-{self.jobid}.out").write_text("\n".join(self.out) + "\n")
        else:
            (d / f"{stem}-{self.jobid}.out").write_text("\n".join(self.out) + ("\n" if self.out else ""))
            (d / f"{stem}-{self.jobid}.err").write_text("\n".join(self.err) + ("\n" if self.err else ""))
        lines = [f"description: {json.dumps(expected['description'])}", "origin: synthetic"]
        if "top" in expected:
            lines.append(f"top: {expected['top'] or 'null'}")
        lines.append("expected: [" + ", ".join(expected.get("expected", [])) + "]")
        lines.append("absent: [" + ", ".join(expected.get("absent", [])) + "]")
        lines.append(f"healthy: {'true' if expected.get('healthy') else 'false'}")
        if expected.get("culprits"):
            lines.append("culprits:")
            for cid, c in expected["culprits"].items():
                parts = []
                if "hosts" in c:
                    parts.append("hosts: [" + ", ".join(c["hosts"]) + "]")
                if "ranks" in c:
                    parts.append("ranks: [" + ", ".join(str(x) for x in c["ranks"]) + "]")
                lines.append(f"  {cid}: {{{', '.join(parts)}}}")
        (d / "expected.yaml").write_text("\n".join(lines) + "\n")
        size = sum(f.stat().st_size for f in d.iterdir())
        assert size < 1_000_000, (self.name, size)
        return size


FAB = [
    "ib-devices-not-mounted",
    "ib-verbs-library-missing",
    "nccl-ib-hca-wrong",
    "nccl-ib-disabled",
    "nccl-socket-ifname",
]
PMIX = ["pmix-plugin-missing", "pmix-not-used", "pmix-runtime-error"]


def others(*keep, extra=()):
    return [x for x in FAB + PMIX + ["node-local-path", "unexplained-failure"] + list(extra) if x not in keep]


# ------------------------------------------------------------------------------------ torch job builder
def make_ranks(job, nnodes=4):
    rng = job.rng
    agents = [rng.randint(180000, 260000) for _ in range(nnodes)]
    commid = "0x%016x" % rng.getrandbits(64)
    ranks = []
    for n in range(nnodes):
        for l in range(8):
            r = Rank(rng, n, l, agents[n])
            r._commid = commid
            r._btot = rng.uniform(0.05, 0.4)
            r._t = ""
            ranks.append(r)
    return agents, ranks


def header(job, lines):
    job.o(lines)


def pyxis(job, nnodes=4, image=IMAGE):
    for _ in range(nnodes):
        job.e(f"pyxis: importing docker image: {image}")
    for _ in range(nnodes):
        job.e(f"pyxis: imported docker image: {image}")


def tqdm_line(desc, total, secs):
    parts = []
    for i in range(total + 1):
        pct = int(100 * i / total)
        bar = ("█" * int(10 * i / total)).ljust(10)
        if i == 0:
            parts.append(f"{desc}:   0%|          | 0/{total} [00:00<?, ?it/s]")
        else:
            el = secs * i / total
            rem = secs - el
            parts.append(
                f"{desc}: {pct:3d}%|{bar}| {i}/{total} [00:{int(el):02d}<00:{int(rem):02d}, {total / secs:5.2f}it/s]"
            )
    return "\r" + "\r".join(parts)


def step_lines(rng, start, stop, every, ms, tok, loss0=7.9, hms=(10, 5, 0), prefix=""):
    L = []
    loss = loss0
    h, m, s = hms
    for st in range(start, stop + 1, every):
        loss = max(1.9, loss - rng.uniform(0.01, 0.08) * (loss - 1.8) / 3)
        s += int(ms * every / 1000)
        m += s // 60
        s %= 60
        h += m // 60
        m %= 60
        L.append(
            f"{prefix}[{h:02d}:{m:02d}:{s:02d}] step {st:5d} | loss {loss:.4f} | lr {min(3e-4, 3e-4 * st / 500):.2e} | {ms + rng.uniform(-0.03, 0.03) * ms:.1f} ms/it | {tok * rng.uniform(0.97, 1.03):.1f}k tok/s"
        )
    return L, (h, m, s)


def torch_job(
    job, v, t, ranks, nnodes, net_by_node, init_kw_by_node, date, t0, *, tee=False, stop_after=None, gdr=True, nch=16
):
    """Emit NCCL init + connect for all ranks (interleaved); returns nothing."""
    rng = job.rng
    nranks = len(ranks)
    seqs_init, seqs_conn, seqs_done = [], [], []
    for r in ranks:
        r._t = f"{date} {t0}"
        kw = init_kw_by_node[r.node]
        net = net_by_node[r.node]
        pre = f"[default{r.local}]:" if tee else ""
        kw = dict(kw)
        if r.rank in kw.pop("retry_ranks", ()):
            kw["connect_retry"] = True
        seqs_init.append(
            [
                ("\n".join(pre + y for y in x.split("\n")) if pre else x, r.node)
                for x in nccl_rank_init(v, r, nranks, nnodes, net, nch=nch, **kw)
            ]
        )
        conn = nccl_rank_connect(v, r, nranks, nnodes, "IB" if net == "IB" else "Socket", nch=nch, gdr=gdr)
        if stop_after == "connect-hang":
            conn = [x for x in conn if "Connected all" not in x]
        seqs_conn.append([(pre + x, r.node) for x in conn])
        seqs_done.append([(pre + x, r.node) for x in nccl_rank_complete(v, r, nranks, nch=nch)])
    # bare version line (<=2.21): printed once by rank 0, lands among other ranks' lines
    merged = interleave(rng, seqs_init)
    if v.n < 22200:
        pos = rng.randint(len(merged) // 4, len(merged) // 2)
        merged.insert(pos, (("[default0]:" if tee else "") + f"NCCL version {v.s}+cuda{v.cudastr}", 0))
    for phase in (
        merged,
        interleave(rng, seqs_conn) if stop_after != "init" else [],
        interleave(rng, seqs_done) if stop_after is None else [],
    ):
        for ln, node in phase:
            job.o(ln, task=node)


def _task_of(line, ranks):
    for i, n in enumerate(NODES):
        if f"{n}:" in line[:40]:
            return i
    return None


def run():
    sizes = {}

    # ===================================================================== 1. ib-devices-not-mounted, one node
    job = Job("syn-ib-not-mounted-one-node", 101, jobid=48213)
    v = V("2.23.4", 12060)
    v.cudastr = "12.6"
    t = T((2, 6))
    agents, ranks = make_ranks(job)
    date, t0 = "2025-01-14", "09:12:41"
    job.o(
        [
            "Job 48213: 4 nodes (slinky-[0-3]), 8 GPUs per node, world size 32",
            "MASTER_ADDR=slinky-0 MASTER_PORT=29500",
            "srun --container-image=nvcr.io#nvidia/pytorch:24.12-py3 --container-mounts=/lustre/fs1/proj/llm:/workspace,/etc/slurm:/etc/slurm:ro torchrun --nnodes=4 --nproc-per-node=8 ...",
        ]
    )
    pyxis(job, image="nvcr.io#nvidia/pytorch:24.12-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "09:12:38.118000", agents[n]))
    net = {0: "IB", 1: "IB", 2: "Socket", 3: "IB"}
    kw = {0: {}, 1: {}, 3: {}, 2: {"ib_fail": "not-mounted"}}
    torch_job(job, v, t, ranks, 4, net, kw, date, t0, stop_after="connect-hang")
    # init hangs in transport setup (IB ranks vs. Socket ranks cannot connect); 30 min later the time limit hits
    job.e("slurmstepd: error: *** JOB 48213 ON slinky-0 CANCELLED AT 2025-01-14T09:42:45 DUE TO TIME LIMIT ***")
    job.e("slurmstepd: error: *** STEP 48213.0 ON slinky-0 CANCELLED AT 2025-01-14T09:42:45 DUE TO TIME LIMIT ***")
    job.e("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    for n in range(4):
        job.e(
            t.agent(
                "WARNING",
                date,
                "09:42:45.201000",
                agents[n],
                "elastic.agent.server.api",
                723,
                "Received Signals.SIGTERM death signal, shutting down workers",
            )
        )
        for l in range(8):
            job.e(
                t.agent(
                    "WARNING",
                    date,
                    "09:42:45.203000",
                    agents[n],
                    "elastic.multiprocessing.api",
                    897,
                    f"Sending process {ranks[n * 8 + l].pid} closing signal SIGTERM",
                )
            )
    for n in range(4):
        job.e(f"srun: error: {NODES[n]}: task {n}: Terminated")
    job.e("srun: Force Terminated StepId=48213.0")
    sizes[job.name] = job.write(
        {
            "description": "slinky-2 started without /dev/infiniband in the container: ibv_open_device fails on every HCA, NCCL falls back to Socket there while slinky-0/1/3 use IB; init never completes and the job hits its time limit",
            "top": "ib-devices-not-mounted",
            "expected": ["ib-devices-not-mounted", "nccl-tcp-fallback"],
            "absent": others("ib-devices-not-mounted"),
            "healthy": False,
            "culprits": {
                "ib-devices-not-mounted": {"hosts": ["slinky-2"]},
                "nccl-tcp-fallback": {"hosts": ["slinky-2"]},
            },
        }
    )

    # ===================================================================== 2. ib-devices-not-mounted, all nodes (2.21)
    job = Job("syn-ib-not-mounted-all-nodes", 102, label=True, merged=False, jobid=51877)
    v = V("2.21.5", 12040)
    v.cudastr = "12.4"
    t = T((2, 3))
    agents, ranks = make_ranks(job)
    date = "2024-08-14"
    job.o(["+ export NCCL_DEBUG=INFO", "+ MASTER_ADDR=slinky-0"])
    pyxis(job)
    for n in range(4):
        job.e(omp_banner(t, date, "10:02:11.345000", agents[n]), task=n)
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "Socket" for n in range(4)},
        {n: {"ib_fail": "not-mounted"} for n in range(4)},
        date,
        "10:02:14",
    )
    L, _ = step_lines(job.rng, 10, 600, 10, 9840.0, 13.3, hms=(10, 3, 5))
    job.o(L, task=0)
    job.o("[11:41:39] training finished: 600 steps", task=0)
    sizes[job.name] = job.write(
        {
            "description": "NCCL 2.21, the container on every node lacks /dev/infiniband: ibv_open_device fails for all 8 HCAs, all 4 nodes fall back to NET/Socket and training runs ~25x slower (9.8 s/it)",
            "top": "ib-devices-not-mounted",
            "expected": ["ib-devices-not-mounted", "nccl-tcp-fallback"],
            "absent": others("ib-devices-not-mounted"),
            "healthy": False,
        },
        stem="pretrain",
    )

    # ===================================================================== 3. ib-verbs-library-missing (libibverbs absent), 2.26
    job = Job("syn-ib-verbs-lib-missing", 103, jobid=60314)
    v = V("2.26.2", 12080)
    v.cudastr = "12.8"
    t = T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-04-02"
    pyxis(job, image="registry.example.com#llm/train:slim-2025.03")
    for n in range(4):
        job.e(omp_banner(t, date, "14:20:03.551000", agents[n]))
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "Socket" for n in range(4)},
        {n: {"ib_fail": "verbs-lib"} for n in range(4)},
        date,
        "14:20:06",
    )
    L, _ = step_lines(job.rng, 50, 1000, 50, 7215.0, 18.2, hms=(14, 21, 0))
    job.o(L)
    job.o("[16:16:07] saved checkpoint to /lustre/fs1/proj/llm/ckpt/slim/step_1000")
    sizes[job.name] = job.write(
        {
            "description": "slim image without rdma-core/libibverbs: 'Failed to open libibverbs.so[.1]' on every rank, IB never loads, all 4 nodes use NET/Socket over ib0/eth0 (IPoIB present) and train slowly",
            "top": "ib-verbs-library-missing",
            "expected": ["ib-verbs-library-missing", "nccl-tcp-fallback"],
            "absent": others("ib-verbs-library-missing"),
            "healthy": False,
        }
    )

    # ===================================================================== 4. ib-verbs-library-missing (mlx5 provider), 2.28
    job = Job("syn-ib-verbs-provider-missing", 104, label=True, jobid=61002)
    v = V("2.28.9", 13000)
    v.cudastr = "13.0"
    t = T((2, 9))
    agents, ranks = make_ranks(job)
    date = "2025-11-20"
    pyxis(job, image="registry.example.com#llm/train:2025.11")
    for n in range(4):
        job.e(omp_banner(t, date, "08:00:41.020000", agents[n]), task=n)
    for r in ranks:
        job.e(
            "libibverbs: Warning: couldn't load driver 'libmlx5-rdmav34.so': libmlx5-rdmav34.so: cannot open shared object file: No such file or directory",
            task=r.node,
        )
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "Socket" for n in range(4)},
        {n: {"ib_fail": "provider"} for n in range(4)},
        date,
        "08:00:44",
    )
    L, _ = step_lines(job.rng, 20, 400, 20, 8120.0, 16.1, hms=(8, 1, 30))
    job.o(L, task=0)
    sizes[job.name] = job.write(
        {
            "description": "image ships libibverbs but not the mlx5 provider: libibverbs 'couldn't load driver libmlx5-rdmav34.so' on every rank, NET/IB : No device found, all nodes on Socket",
            "top": "ib-verbs-library-missing",
            "expected": ["ib-verbs-library-missing", "nccl-tcp-fallback"],
            "absent": others("ib-verbs-library-missing"),
            "healthy": False,
        }
    )

    # ===================================================================== 5. nccl-ib-hca-wrong (typo), 2.23
    job = Job("syn-ib-hca-typo", 105, jobid=70555)
    v = V("2.23.4", 12060)
    v.cudastr = "12.6"
    t = T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-02-03"
    job.o(["NCCL_IB_HCA=mlx5_9:1", "NCCL_DEBUG=INFO"])
    pyxis(job, image="nvcr.io#nvidia/pytorch:24.12-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "11:30:00.700000", agents[n]))
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "Socket" for n in range(4)},
        {n: {"ib_fail": "no-device", "hca_env": "mlx5_9:1"} for n in range(4)},
        date,
        "11:30:03",
    )
    L, _ = step_lines(job.rng, 10, 300, 10, 9120.0, 14.4, hms=(11, 31, 0))
    job.o(L)
    sizes[job.name] = job.write(
        {
            "description": "NCCL_IB_HCA=mlx5_9:1 (typo; the nodes have mlx5_0..mlx5_7): NCCL_IB_HCA echo followed by NET/IB : No device found on every rank, Socket on all 4 nodes",
            "top": "nccl-ib-hca-wrong",
            "expected": ["nccl-ib-hca-wrong", "nccl-tcp-fallback"],
            "absent": others("nccl-ib-hca-wrong"),
            "healthy": False,
        }
    )

    # ===================================================================== 6. nccl-ib-hca-wrong, UCX variant (MPI)
    job = Job("syn-ucx-net-devices-wrong", 106, label=True, merged=False, jobid=70871)
    rng = job.rng
    job.o(["== UCX_NET_DEVICES=mlx5_9:1", "== srun --mpi=pmix -N4 --ntasks-per-node=8 ./allreduce_bench -n 268435456"])
    pids = {}
    tsec = 1738581000
    for task in range(32):
        node = task // 8
        pid = 412000 + node * 1311 + task * 7
        pids[task] = pid
    order = list(range(32))
    rng.shuffle(order)
    ucx_out = []
    for task in order:
        node = task // 8
        h = NODES[node]
        us = rng.randint(100000, 999999)
        ucx_out.append(
            (
                task,
                f"[{tsec}.{us:06d}] [{h}:{pids[task]}:0]     ucp_context.c:1014 UCX  WARN  network device 'mlx5_9:1' is not available, please use one or more of: 'eth0'(tcp), 'ib0'(tcp), 'lo'(tcp), 'mlx5_0:1'(ib), 'mlx5_1:1'(ib), 'mlx5_2:1'(ib), 'mlx5_3:1'(ib), 'mlx5_4:1'(ib), 'mlx5_5:1'(ib), 'mlx5_6:1'(ib), 'mlx5_7:1'(ib)",
            )
        )
    for task in order:
        node = task // 8
        us = rng.randint(100000, 999999)
        ucx_out.append(
            (
                task,
                f"[{tsec + 1}.{us:06d}] [{NODES[node]}:{pids[task]}:0]          select.c:549  UCX  ERROR   no active messages transport to <no debug data>: Unsupported operation",
            )
        )
    for task, ln in ucx_out:
        job.o(f"{ln}", task=f"{task:2d}")
    for task in order:
        node = task // 8
        peer = 0 if node != 0 else 8
        p = f"[{NODES[node]}:{pids[task]}]"
        job.e(
            [
                f"{p} ../../../../../../ompi/mca/pml/ucx/pml_ucx.c:419  Error: ucp_ep_create(proc={peer}) failed: Destination is unreachable",
                f"{p} ../../../../../../ompi/mca/pml/ucx/pml_ucx.c:472  Error: Failed to resolve UCX endpoint for rank {peer}",
                f"{p} *** An error occurred in MPI_Allreduce",
                f"{p} *** reported by process [2316107777,{task}]",
                f"{p} *** on communicator MPI_COMM_WORLD",
                f"{p} *** MPI_ERR_OTHER: known error not in list",
                f"{p} *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
                f"{p} ***    and potentially your MPI job)",
            ],
            task=f"{task:2d}",
        )
        if task == order[0]:
            job.e("slurmstepd: error: *** STEP 70871.0 ON slinky-0 CANCELLED AT 2025-02-03T11:10:02 ***")
            job.e("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    for n in range(4):
        job.e(f"srun: error: {NODES[n]}: tasks {n * 8}-{n * 8 + 7}: Exited with exit code 16")
    job.o("srun exit code: 16")
    sizes[job.name] = job.write(
        {
            "description": "Open MPI/UCX job with UCX_NET_DEVICES=mlx5_9:1 (not present): UCX WARN 'network device mlx5_9:1 is not available' on every rank, no transport between nodes, MPI_Allreduce aborts",
            "top": "nccl-ib-hca-wrong",
            "expected": ["nccl-ib-hca-wrong"],
            "absent": others("nccl-ib-hca-wrong", extra=["nccl-tcp-fallback"]),
            "healthy": False,
        },
        stem="bench",
    )

    # ===================================================================== 7. nccl-ib-disabled inherited, 2.18
    job = Job("syn-ib-disabled-inherited", 107, jobid=39002)
    v = V("2.18.3", 12020)
    v.cudastr = "12.2"
    t = T((2, 1))
    agents, ranks = make_ranks(job)
    date = "2023-11-07"
    job.o(["Loading environment from /lustre/fs1/proj/llm/env/single-node.env", "NCCL_IB_DISABLE=1 NCCL_DEBUG=INFO"])
    pyxis(job, image="nvcr.io#nvidia/pytorch:23.10-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "16:44:10.101000", agents[n]))
    torch_job(
        job, v, t, ranks, 4, {n: "Socket" for n in range(4)}, {n: {"ib_disable": 1} for n in range(4)}, date, "16:44:12"
    )
    L, _ = step_lines(job.rng, 25, 500, 25, 6650.0, 19.7, hms=(16, 45, 0))
    job.o(L)
    sizes[job.name] = job.write(
        {
            "description": "NCCL_IB_DISABLE=1 inherited from a single-node env file on a 4-node job: every rank echoes it, no 'No device found', NET/Socket on all nodes, slow training",
            "top": "nccl-ib-disabled",
            "expected": ["nccl-ib-disabled", "nccl-tcp-fallback"],
            "absent": others("nccl-ib-disabled"),
            "healthy": False,
        }
    )

    # ===================================================================== 8. nccl-socket-ifname eth9, 2.28
    job = Job("syn-socket-ifname-eth9", 108, merged=False, jobid=82117)
    v = V("2.28.9", 13000)
    v.cudastr = "13.0"
    t = T((2, 9), py="/usr/bin/python", sp="/usr/local/lib/python3.12/dist-packages")
    agents, ranks = make_ranks(job)
    date = "2025-12-01"
    pyxis(job, image="nvcr.io#nvidia/pytorch:25.11-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "13:05:10.441000", agents[n]))
    r0 = ranks[0]
    job.o(
        [
            info(r0, "ENV/Plugin: Could not find: libnccl-env.so"),
            info(r0, "NCCL_SOCKET_IFNAME set by environment to eth9"),
            "",
            f"[2025-12-01 13:05:19] {r0.host}:{r0.pid}:{r0.pid} [0] bootstrap.cc:114 NCCL WARN Bootstrap : no socket interface found",
            info(r0, "init.cc:126 -> 5"),
            info(r0, "init.cc:160 -> 5"),
        ]
    )
    tb = [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 412, in <module>',
        "    main()",
        '  File "/workspace/train.py", line 301, in main',
        "    model = build_model(cfg).to(device)",
        '  File "/workspace/train.py", line 188, in build_model',
        "    dist.broadcast(p.data, src=0)",
        f'  File "{t.sp}/torch/distributed/c10d_logger.py", line 83, in wrapper',
        "    return func(*args, **kwargs)",
        f'  File "{t.sp}/torch/distributed/distributed_c10d.py", line 2824, in broadcast',
        "    work = group.broadcast([tensor], opts)",
    ]
    job.e(
        [f"[rank0]: {x}" for x in tb]
        + [
            "[rank0]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3135, invalid usage (run with NCCL_DEBUG=WARN for details), NCCL version 2.28.9",
            "[rank0]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.",
            "[rank0]: Last error:",
            "[rank0]: Bootstrap : no socket interface found",
            "[rank0]:[W1201 13:05:19.882151374 ProcessGroupNCCL.cpp:1575] Warning: WARNING: destroy_process_group() was not called before program exit, which can leak resources. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())",
        ]
    )
    job.o(info(r0, "ENV/Plugin: Closing env plugin ncclEnvDefault"))
    for l in range(1, 8):
        job.e(
            t.agent(
                "WARNING",
                date,
                "13:05:20.101000",
                agents[0],
                "elastic.multiprocessing.api",
                908,
                f"Sending process {ranks[l].pid} closing signal SIGTERM",
            )
        )
    job.e(
        t.agent(
            "ERROR",
            date,
            "13:05:20.402000",
            agents[0],
            "elastic.multiprocessing.api",
            882,
            f"failed (exitcode: 1) local_rank: 0 (pid: {r0.pid}) of binary: /usr/bin/python",
        )
    )
    job.e(child_failed(t, "/workspace/train.py", "slinky-0", "2025-12-01_13:05:20", 0, 0, 1, r0.pid))
    # ranks on the other nodes were waiting for the NCCL unique id in the store hosted on slinky-0
    tbs = []
    for r in ranks[8:]:
        tbs.append(
            [f"[rank{r.rank}]: {x}" for x in tb]
            + [
                f"[rank{r.rank}]: torch.distributed.DistBackendError: [{r.rank}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible application crash on rank 0 or a network set up issue."
            ]
        )
    job.e(interleave(job.rng, tbs))
    for r in []:
        job.e(
            f"[rank{r.rank}]: torch.distributed.DistBackendError: [{r.rank}] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer. This may indicate a possible application crash on rank 0 or a network set up issue."
        )
    job.e("srun: error: slinky-0: task 0: Exited with exit code 1")
    for n in (1, 2, 3):
        job.e(
            t.agent(
                "ERROR",
                date,
                "13:05:21.0%d0000" % n,
                agents[n],
                "elastic.multiprocessing.api",
                882,
                f"failed (exitcode: 1) local_rank: 0 (pid: {ranks[n * 8].pid}) of binary: /usr/bin/python",
            )
        )
        job.e(f"srun: error: {NODES[n]}: task {n}: Exited with exit code 1")
    sizes[job.name] = job.write(
        {
            "description": "NCCL_SOCKET_IFNAME=eth9 (nodes have eth0/ib0): rank 0 gets 'Bootstrap : no socket interface found' creating the NCCL id, DistBackendError; ranks on slinky-1..3 then lose the store",
            "top": "nccl-socket-ifname",
            "expected": ["nccl-socket-ifname"],
            "absent": others("nccl-socket-ifname"),
            "healthy": False,
        }
    )

    # ===================================================================== 9. nccl-socket-ifname docker0, 2.27
    job = Job("syn-socket-ifname-docker0", 109, label=True, jobid=83020)
    v = V("2.27.7", 12090)
    v.cudastr = "12.9"
    t = T((2, 8))
    agents, ranks = make_ranks(job)
    date = "2025-09-09"
    port = 43521
    for n in range(4):
        job.e(omp_banner(t, date, "07:40:01.300000", agents[n]), task=n)
    seqs = []
    for r in ranks:
        L = [
            info(r, "NCCL_SOCKET_IFNAME set by environment to docker0"),
            info(r, "Bootstrap: Using docker0:172.17.0.1<0>"),
            info(r, "cudaDriverVersion 12090"),
            info(r, "NCCL version 2.27.7+cuda12.9"),
            info(r, "Comm config Blocking set to 1"),
            info(r, "NET/Plugin: Could not find: libnccl-net.so. "),
        ]
        if r.node != 0:
            for k in range(1, 35):
                L.append(
                    info(
                        r,
                        f"socketStartConnect: connect to 172.17.0.1<{port}> returned Connection refused, retrying ({k}/34) after sleep for {k * 100} msec",
                    )
                )
            L += [
                f"\n[2025-09-09 07:41:{(2 + r.local):02d}] {r.host}:{r.pid}:{r.pid} [{r.dev}] misc/socket.cc:{633} NCCL WARN socketStartConnect: connect to 172.17.0.1<{port}> returned Connection refused, exceeded error retry count after 34 attempts",
                info(r, "misc/socket.cc:755 -> 6"),
                info(r, "bootstrap.cc:603 -> 6"),
                info(r, "init.cc:1560 -> 6"),
                info(r, "init.cc:1839 -> 6"),
            ]
        seqs.append(L)
    for ln, node in interleave(job.rng, [[(x, r.node) for x in sq] for sq, r in zip(seqs, ranks)]):
        job.o(ln, task=node)
    for r in ranks[8:]:
        job.e(
            [
                f"[rank{r.rank}]: torch.distributed.DistBackendError: NCCL error in: /opt/pytorch/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, remote process exited or there was a network error, NCCL version 2.27.7",
                f"[rank{r.rank}]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                f"[rank{r.rank}]: Last error:",
                f"[rank{r.rank}]: socketStartConnect: connect to 172.17.0.1<{port}> returned Connection refused, exceeded error retry count after 34 attempts",
            ],
            task=r.node,
        )
    for n in (1, 2, 3):
        job.e(
            t.agent(
                "ERROR",
                date,
                "07:41:16.210000",
                agents[n],
                "elastic.multiprocessing.api",
                874,
                f"failed (exitcode: 1) local_rank: 0 (pid: {ranks[n * 8].pid}) of binary: /usr/bin/python",
            ),
            task=n,
        )
        job.e(f"srun: error: {NODES[n]}: task {n}: Exited with exit code 1")
    job.e("srun: Terminating StepId=83020.0")
    job.e("slurmstepd: error: *** STEP 83020.0 ON slinky-0 CANCELLED AT 2025-09-09T07:41:17 ***")
    job.e(
        t.agent(
            "WARNING",
            date,
            "07:41:17.012000",
            agents[0],
            "elastic.agent.server.api",
            719,
            "Received Signals.SIGTERM death signal, shutting down workers",
        ),
        task=0,
    )
    job.e("srun: error: slinky-0: task 0: Terminated")
    sizes[job.name] = job.write(
        {
            "description": "NCCL_SOCKET_IFNAME=docker0: every node bootstraps on docker0 172.17.0.1 (the same address everywhere), ranks on slinky-1..3 connect to their own docker0 and get Connection refused after 34 attempts",
            "top": "nccl-socket-ifname",
            "expected": ["nccl-socket-ifname"],
            "absent": others("nccl-socket-ifname"),
            "healthy": False,
        }
    )

    # ===================================================================== 10. pmix-plugin-missing pmix_v5 (23.11)
    job = Job("syn-pmix-v5-missing", 110, merged=False, jobid=90233)
    job.o(
        [
            "=== hpl-gpu 4 nodes x 8 GPUs, HPC-X 2.19 / Open MPI 4.1.7",
            "srun --mpi=pmix_v5 --container-image=nvcr.io#nvidia/hpc-benchmarks:24.03 --container-mounts=/lustre/fs1/bench:/bench ./hpl.sh --dat /bench/HPL-4N.dat",
        ]
    )
    job.e(
        [
            "srun: error: Couldn't find the specified plugin name for mpi/pmix_v5 looking at all files",
            "srun: error: cannot find mpi plugin for mpi/pmix_v5",
            "srun: error: MPI: Cannot create context for mpi/pmix_v5",
            "srun: error: MPI: Unable to load any plugin",
            "srun: error: Invalid MPI type 'pmix_v5', --mpi=list for acceptable types",
        ]
    )
    job.o("hpl exit code: 1")
    sizes[job.name] = job.write(
        {
            "description": "srun --mpi=pmix_v5 inside a 4-node job on a Slurm that only has pmix_v4: srun refuses to launch (22.05+ wording)",
            "top": "pmix-plugin-missing",
            "expected": ["pmix-plugin-missing"],
            "absent": others("pmix-plugin-missing"),
            "healthy": False,
        },
        stem="hpl",
    )

    # ===================================================================== 11. pmix-plugin-missing <=21.08
    job = Job("syn-pmix-v3-missing-slurm2108", 111, jobid=13377)
    job.o(["Running OSU allreduce on 4 nodes", "srun --mpi=pmix_v3 ./osu_allreduce -d cuda -m 1048576:268435456"])
    job.o(
        [
            "srun: error: Couldn't find the specified plugin name for mpi/pmix_v3 looking at all files",
            "srun: error: cannot find mpi plugin for mpi/pmix_v3",
            "srun: error: cannot create mpi context for mpi/pmix_v3",
            "srun: error: invalid MPI type 'pmix_v3', --mpi=list for acceptable types",
        ]
    )
    sizes[job.name] = job.write(
        {
            "description": "Slurm 21.08: srun --mpi=pmix_v3 where only pmix_v4 is installed; lower-case 'invalid MPI type' / 'cannot create mpi context' wording",
            "top": "pmix-plugin-missing",
            "expected": ["pmix-plugin-missing"],
            "absent": others("pmix-plugin-missing"),
            "healthy": False,
        },
        stem="osu",
    )

    # ===================================================================== 12. pmix-not-used, Open MPI 5 box
    job = Job("syn-pmix-not-used-ompi5", 112, label=True, merged=False, jobid=91550)
    rng = job.rng
    job.o("srun -N4 --ntasks-per-node=8 --gpus-per-task=1 ./lulesh-cuda -s 120 -i 500")
    order = list(range(32))
    rng.shuffle(order)
    for task in order:
        h = NODES[task // 8]
        pid = 733000 + (task // 8) * 977 + task * 5
        job.e(
            [
                "--------------------------------------------------------------------------",
                "PMIx_Init failed for the following reason:",
                "",
                "  PMIX_ERR_UNREACH",
                "",
                "Open MPI requires access to a local PMIx server to execute. Please ensure",
                'that either you are operating in a PMIx-enabled environment, or use "mpirun"',
                "to execute the job.",
                "--------------------------------------------------------------------------",
                "*** An error occurred in MPI_Init",
                "*** on a NULL communicator",
                "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
                "***    and MPI will try to terminate your MPI job as well)",
                f"[{h}:{pid}] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!",
            ],
            task=f"{task:2d}",
        )
    for n in range(4):
        job.e(f"srun: error: {NODES[n]}: tasks {n * 8}-{n * 8 + 7}: Exited with exit code 1")
    sizes[job.name] = job.write(
        {
            "description": "Open MPI 5 application launched by plain srun (MpiDefault=none, no --mpi): 'PMIx_Init failed' box and MPI_Init abort on all 32 ranks",
            "top": "pmix-not-used",
            "expected": ["pmix-not-used"],
            "absent": others("pmix-not-used"),
            "healthy": False,
        },
        stem="lulesh",
    )

    # ===================================================================== 13. pmix-not-used, silent singletons
    job = Job("syn-pmix-not-used-singletons", 113, jobid=91702)
    rng = job.rng
    v = V("2.21.5", 12040)
    v.cudastr = "12.4"
    job.o("srun -N4 --ntasks-per-node=8 --gpus-per-task=1 python train_mpi.py --config cfg/7b.yaml")
    seqs = []
    for task in range(32):
        node, local = task // 8, task % 8
        r = Rank(rng, node, local, 500000 + node * 2000)
        r.dev = 0
        h = NODES[node]
        c = "0x%016x" % rng.getrandbits(64)
        L = [
            f"[mpi4py] world_size=1 rank=0 local_rank=0 host={h}",
            info(r, f"Bootstrap : Using ib0:{IB_IP[h]}<0>"),
            info(r, "cudaDriverVersion 12040"),
        ]
        L += [info(r, p) for p in v.plugin_lines()]
        L += [
            info(
                r,
                "NET/IB : Using "
                + " ".join(f"[{i}]{x}:1/IB" for i, x in enumerate(HCAS))
                + f" [RO]; OOB ib0:{IB_IP[h]}<0>",
            ),
            info(r, "Using non-device net plugin version 0"),
            info(r, "Using network IB"),
            "NCCL version 2.21.5+cuda12.4",
            info(
                r,
                f"ncclCommInitRank comm {r.comm} rank 0 nranks 1 cudaDev 0 nvmlDev {local} busId {BUSID[local]} commId {c} - Init START",
            ),
            info(r, f"comm {r.comm} rank 0 nRanks 1 nNodes 1 localRanks 1 localRank 0 MNNVL 0"),
            info(r, "Trees [0] -1/-1/-1->0->-1 [1] -1/-1/-1->0->-1"),
            info(r, "P2P Chunksize set to 131072"),
            info(r, "Connected all rings"),
            info(r, "Connected all trees"),
            info(
                r,
                f"ncclCommInitRank comm {r.comm} rank 0 nranks 1 cudaDev 0 nvmlDev {local} busId {BUSID[local]} commId {c} - Init COMPLETE",
            ),
        ]
        seqs.append(L)
    job.o(interleave(rng, seqs))
    steps = []
    for task in range(32):
        L, _ = step_lines(rng, 100, 300, 100, 1310.0, 25.0, hms=(3, 12, 0))
        steps.append([f"[rank 0/1] {x}" for x in L])
    job.o(interleave(rng, steps))
    sizes[job.name] = job.write(
        {
            "description": "mpi4py-based launcher started by srun without --mpi: all 32 tasks initialise as MPI singletons (rank 0 of 1), NCCL shows 'rank 0 nranks 1' on all 4 hosts; 32 independent copies train",
            "top": "pmix-not-used",
            "expected": ["pmix-not-used"],
            "absent": others("pmix-not-used", extra=["nccl-tcp-fallback"]),
            "healthy": False,
        }
    )

    # ===================================================================== 14. pmix-runtime-error, ring fence timeout (23.02)
    job = Job("syn-pmix-fence-timeout-ring", 114, label=True, merged=False, jobid=77310)
    rng = job.rng
    job.o("srun --mpi=pmix -N4 --ntasks-per-node=8 ./cp2k.psmp -i H2O-dft-ls.inp")
    ptr = {n: "0x%x" % (rng.randint(0x7F0000000000, 0x7FFFFFFFFFFF) & ~0xF) for n in range(3)}
    ctxp = {n: ["0x%x" % (int(ptr[n], 16) + 0x1D8 + 0x98 * k) for k in range(3)] for n in range(3)}
    for n in range(3):
        h = NODES[n]
        pre = "slurmstepd: error:  mpi/pmix_v4: "
        # ring fence: contributions travel 0->1->2->3->0; slinky-3 never contributed, so node n has only
        # received the contributions of slinky-0..n-1 (hostlist ranged strings as Slurm prints them)
        done = ["-", "slinky-0", "slinky-[0-1]"][n]
        wait = ["slinky-[1-3]", "slinky-[2-3]", "slinky-3"][n]
        nxt, prv = (n + 1) % 4, (n - 1) % 4
        job.e(
            [
                f"{pre}pmixp_coll_ring_reset_if_to: {h} [{n}]: pmixp_coll_ring.c:742: {ptr[n]}: collective timeout seq=0",
                f"{pre}pmixp_coll_log: {h} [{n}]: pmixp_coll.c:286: Dumping collective state",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:760: {ptr[n]}: COLL_FENCE_RING state seq=0",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:762: my peerid: {n}:{h}",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:769: neighbor id: next {nxt}:{NODES[nxt]}, prev {prv}:{NODES[prv]}",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:779: Context ptr={ctxp[n][0]}, #0, in-use=0",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:779: Context ptr={ctxp[n][1]}, #1, in-use=0",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:779: Context ptr={ctxp[n][2]}, #2, in-use=1",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:790: \t seq=0 contribs: loc=1/prev={n}/fwd={n + 1}",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:792: \t neighbor contribs [4]:",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:825: \t\t done contrib: {done}",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:827: \t\t wait contrib: {wait}",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:829: \t status=COLL_RING_COLLECT",
                f"{pre}pmixp_coll_ring_log: {h} [{n}]: pmixp_coll_ring.c:833: \t buf (offset/size): {5410 + n * 3}/{16415}",
            ]
        )
    for task in sorted(range(24), key=lambda x: rng.random()):
        h = NODES[task // 8]
        pid = 655000 + task * 11
        job.e(
            [
                "*** An error occurred in MPI_Init",
                "*** on a NULL communicator",
                "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
                "***    and potentially your MPI job)",
                f"[{h}:{pid}] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!",
            ],
            task=f"{task:2d}",
        )
    job.e(
        [
            "srun: error: slinky-0: tasks 0-7: Exited with exit code 1",
            "srun: Terminating StepId=77310.0",
            "slurmstepd: error: *** STEP 77310.0 ON slinky-0 CANCELLED AT 2025-03-18T22:17:40 ***",
            "srun: error: slinky-1: tasks 8-15: Exited with exit code 1",
            "srun: error: slinky-2: tasks 16-23: Exited with exit code 1",
            "srun: error: slinky-3: tasks 24-31: Killed",
        ]
    )
    sizes[job.name] = job.write(
        {
            "description": "Slurm 23.02 mpi/pmix_v4: the PMIx fence of MPI_Init times out on slinky-0..2 (ring dumps: wait contrib slinky-[1-3] / slinky-[2-3] / slinky-3); slinky-3 never contributed; MPI_Init aborts",
            "top": "pmix-runtime-error",
            "expected": ["pmix-runtime-error"],
            "absent": others("pmix-runtime-error"),
            "healthy": False,
            "culprits": {"pmix-runtime-error": {"hosts": ["slinky-3"]}},
        },
        stem="cp2k",
    )

    # ===================================================================== 15. pmix-runtime-error <=20.11 format
    job = Job("syn-pmix-fence-timeout-slurm2011", 115, jobid=2291)
    rng = job.rng
    job.o("srun --mpi=pmix_v3 -N4 --ntasks-per-node=8 ./gromacs_mpi mdrun -s bench.tpr -nb gpu")
    p = "0x%x" % (rng.randint(0x7F0000000000, 0x7FFFFFFFFFFF) & ~0xF)
    pre = "slurmstepd: error: slinky-0 [0] "
    job.o(
        [
            f"{pre}pmixp_coll_tree.c:1317 [pmixp_coll_tree_reset_if_to] mpi/pmix: ERROR: {p}: collective timeout seq=0",
            f"{pre}pmixp_coll.c:286 [pmixp_coll_log] mpi/pmix: ERROR: Dumping collective state",
            f"{pre}pmixp_coll_tree.c:1336 [pmixp_coll_tree_log] mpi/pmix: ERROR: {p}: COLL_FENCE_TREE state seq=0 contribs: loc=1/prnt=0/child=2",
            f"{pre}pmixp_coll_tree.c:1338 [pmixp_coll_tree_log] mpi/pmix: ERROR: my peerid: 0:slinky-0",
            f"{pre}pmixp_coll_tree.c:1341 [pmixp_coll_tree_log] mpi/pmix: ERROR: root host: 0:slinky-0",
            f"{pre}pmixp_coll_tree.c:1355 [pmixp_coll_tree_log] mpi/pmix: ERROR: child contribs [3]:",
            f"{pre}pmixp_coll_tree.c:1382 [pmixp_coll_tree_log] mpi/pmix: ERROR: \t done contrib: slinky-[1-2]",
            f"{pre}pmixp_coll_tree.c:1384 [pmixp_coll_tree_log] mpi/pmix: ERROR: \t wait contrib: slinky-3",
            f"{pre}pmixp_coll_tree.c:1391 [pmixp_coll_tree_log] mpi/pmix: ERROR: status: coll=COLL_COLLECT upfw=COLL_SND_NONE dfwd=COLL_SND_NONE",
            f"{pre}pmixp_coll_tree.c:1393 [pmixp_coll_tree_log] mpi/pmix: ERROR: dfwd status: dfwd_cb_cnt=0, dfwd_cb_wait=0",
            f"{pre}pmixp_coll_tree.c:1396 [pmixp_coll_tree_log] mpi/pmix: ERROR: bufs (offset/size): upfw 8814/16415, dfwd 64/16415",
        ]
    )
    for task in sorted(range(24), key=lambda x: rng.random()):
        h = NODES[task // 8]
        pid = 31000 + task * 13
        job.o(
            [
                "*** An error occurred in MPI_Init",
                "*** on a NULL communicator",
                "*** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,",
                "***    and potentially your MPI job)",
                f"[{h}:{pid:05d}] Local abort before MPI_INIT completed completed successfully, but am not able to aggregate error messages, and not able to guarantee that all other processes were killed!",
            ]
        )
    job.o(
        [
            "srun: error: slinky-0: tasks 0-7: Exited with exit code 1",
            "srun: launch/slurm: _step_signal: Terminating StepId=2291.0",
            "slurmstepd: error: *** STEP 2291.0 ON slinky-0 CANCELLED AT 2021-06-30T04:11:52 ***",
            "srun: error: slinky-1: tasks 8-15: Exited with exit code 1",
            "srun: error: slinky-2: tasks 16-23: Exited with exit code 1",
            "srun: error: slinky-3: tasks 24-31: Killed",
        ]
    )
    sizes[job.name] = job.write(
        {
            "description": "Slurm 20.11 mpi/pmix (old 'host [id] file:line [func] mpi/pmix: ERROR:' format): tree fence timeout on slinky-0 with wait contrib slinky-3; MPI_Init aborts",
            "top": "pmix-runtime-error",
            "expected": ["pmix-runtime-error"],
            "absent": others("pmix-runtime-error"),
            "healthy": False,
            "culprits": {"pmix-runtime-error": {"hosts": ["slinky-3"]}},
        },
        stem="gmx",
    )

    # ===================================================================== 16. node-local-path: /tmp checkpoint
    job = Job("syn-node-local-ckpt-tmp", 116, merged=False, jobid=55120)
    v = V("2.21.5", 12040)
    v.cudastr = "12.4"
    t = T((2, 4))
    agents, ranks = make_ranks(job)
    date = "2024-09-23"
    job.o(["CKPT_DIR=/tmp/ckpt", "DATA=/lustre/fs1/datasets/fineweb-edu/tokenized"])
    pyxis(job)
    for n in range(4):
        job.e(omp_banner(t, date, "18:03:00.551000", agents[n]))
    for n in range(4):
        job.e(tqdm_line("Loading dataset shards", 16, 9.0) + "")
    torch_job(job, v, t, ranks, 4, {n: "IB" for n in range(4)}, {n: {} for n in range(4)}, date, "18:03:02")
    L, hms = step_lines(job.rng, 50, 1000, 50, 412.0, 318.0, hms=(18, 3, 40))
    job.o(L)
    job.o(
        [
            "[18:10:33] saving checkpoint to /tmp/ckpt/step_1000.pt",
            "[18:10:41] saved /tmp/ckpt/step_1000.pt (13.4 GB)",
            "[18:10:41] reloading consolidated weights on all ranks",
        ]
    )
    tbr = ranks[8:]
    job.rng.shuffle(tbr)
    tb_lines = []
    for r in tbr:
        tb_lines.append(
            [
                f"[rank{r.rank}]: Traceback (most recent call last):",
                f'[rank{r.rank}]:   File "/workspace/train.py", line 530, in <module>',
                f"[rank{r.rank}]:     main()",
                f'[rank{r.rank}]:   File "/workspace/train.py", line 497, in main',
                f"[rank{r.rank}]:     state = torch.load(ckpt_path, map_location=device)",
                f'[rank{r.rank}]:   File "{t.sp}/torch/serialization.py", line 1065, in load',
                f"[rank{r.rank}]:     with _open_file_like(f, 'rb') as opened_file:",
                f'[rank{r.rank}]:   File "{t.sp}/torch/serialization.py", line 468, in _open_file_like',
                f"[rank{r.rank}]:     return _open_file(name_or_buffer, mode)",
                f'[rank{r.rank}]:   File "{t.sp}/torch/serialization.py", line 449, in __init__',
                f"[rank{r.rank}]:     super().__init__(open(name, mode))",
                f"[rank{r.rank}]: FileNotFoundError: [Errno 2] No such file or directory: '/tmp/ckpt/step_1000.pt'",
            ]
        )
    job.e(interleave(job.rng, tb_lines))
    for n in (1, 2, 3):
        for l in range(1, 8):
            job.e(
                t.agent(
                    "WARNING",
                    date,
                    "18:10:43.1%02d000" % l,
                    agents[n],
                    "elastic.multiprocessing.api",
                    858,
                    f"Sending process {ranks[n * 8 + l].pid} closing signal SIGTERM",
                )
            )
        job.e(
            t.agent(
                "ERROR",
                date,
                "18:10:43.900000",
                agents[n],
                "elastic.multiprocessing.api",
                833,
                f"failed (exitcode: 1) local_rank: 0 (pid: {ranks[n * 8].pid}) of binary: /usr/bin/python",
            )
        )
        job.e(child_failed(t, "/workspace/train.py", NODES[n], "2024-09-23_18:10:42", n * 8, 0, 1, ranks[n * 8].pid))
        job.e(f"srun: error: {NODES[n]}: task {n}: Exited with exit code 1")
    job.e("srun: Terminating StepId=55120.0")
    job.e("slurmstepd: error: *** STEP 55120.0 ON slinky-0 CANCELLED AT 2024-09-23T18:10:44 ***")
    job.e("srun: error: slinky-0: task 0: Terminated")
    sizes[job.name] = job.write(
        {
            "description": "rank 0 on slinky-0 saves /tmp/ckpt/step_1000.pt (node-local), then ranks 8-31 on slinky-1..3 fail torch.load with FileNotFoundError",
            "top": "node-local-path",
            "expected": ["node-local-path"],
            "absent": others("node-local-path", extra=["nccl-tcp-fallback"]),
            "healthy": False,
            "culprits": {"node-local-path": {"hosts": ["slinky-1", "slinky-2", "slinky-3"]}},
        }
    )

    # ===================================================================== 17. node-local-path: pyxis named container
    job = Job("syn-node-local-pyxis-container-name", 117, merged=False, jobid=57004)
    job.o(
        [
            "+ srun -N1 --container-image=nvcr.io#nvidia/pytorch:24.05-py3 --container-name=train pip install -r requirements.txt",
            "Successfully installed sentencepiece-0.2.0 tiktoken-0.7.0 wandb-0.17.2",
            "+ srun -N4 --ntasks-per-node=1 --container-name=train --container-mounts=/lustre/fs1/proj/llm:/workspace torchrun --nnodes=4 --nproc-per-node=8 /workspace/train.py",
        ]
    )
    job.e([f"pyxis: importing docker image: {IMAGE}", f"pyxis: imported docker image: {IMAGE}"])
    for n in (2, 1, 3):
        job.e(
            [
                'slurmstepd: error: pyxis: error: a container with name "train" does not exist, and --container-image is not set',
                "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
                "slurmstepd: error: Failed to invoke spank plugin stack",
            ]
        )
    job.e(
        [
            "srun: error: slinky-2: task 2: Exited with exit code 1",
            "srun: Terminating StepId=57004.1",
            "slurmstepd: error: *** STEP 57004.1 ON slinky-0 CANCELLED AT 2024-07-02T10:22:13 ***",
            "srun: error: slinky-1: task 1: Exited with exit code 1",
            "srun: error: slinky-3: task 3: Exited with exit code 1",
            "srun: error: slinky-0: task 0: Terminated",
        ]
    )
    sizes[job.name] = job.write(
        {
            "description": "a named pyxis container 'train' is created by a 1-node step on slinky-0; the 4-node step with --container-name=train and no --container-image fails on slinky-1..3 (named containers are node-local)",
            "top": "node-local-path",
            "expected": ["node-local-path"],
            "absent": others("node-local-path"),
            "healthy": False,
            "culprits": {"node-local-path": {"hosts": ["slinky-1", "slinky-2", "slinky-3"]}},
        }
    )

    # ===================================================================== 18. unexplained-failure: ValueError on rank 13
    job = Job("syn-unexplained-valueerror", 118, label=True, jobid=66210)
    v = V("2.26.2", 12080)
    v.cudastr = "12.8"
    t = T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-05-06"
    pyxis(job, image="nvcr.io#nvidia/pytorch:25.03-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "20:14:09.330000", agents[n]), task=n)
    torch_job(job, v, t, ranks, 4, {n: "IB" for n in range(4)}, {n: {} for n in range(4)}, date, "20:14:11", tee=True)
    L, _ = step_lines(job.rng, 10, 1750, 10, 405.0, 321.0, hms=(20, 14, 40), prefix="[default0]:")
    job.o(L, task=0)
    r13 = ranks[13]
    tb = [
        "Traceback (most recent call last):",
        '  File "/workspace/train.py", line 612, in <module>',
        "    main()",
        '  File "/workspace/train.py", line 571, in main',
        "    batch = next(train_iter)",
        '  File "/workspace/data/packed.py", line 143, in __iter__',
        "    yield self._pack(sample)",
        '  File "/workspace/data/packed.py", line 98, in _pack',
        '    raise ValueError(f"sample {idx} has {len(tokens)} tokens, exceeds seq_len={self.seq_len}")',
        "ValueError: sample 48213557 has 9217 tokens, exceeds seq_len=8192",
    ]
    job.e([f"[default5]:[rank13]: {x}" for x in tb], task=1)
    for l in range(8):
        if l != 5:
            job.e(
                t.agent(
                    "WARNING",
                    date,
                    "20:26:31.1%02d000" % l,
                    agents[1],
                    "elastic.multiprocessing.api",
                    897,
                    f"Sending process {ranks[8 + l].pid} closing signal SIGTERM",
                ),
                task=1,
            )
    job.e(
        t.agent(
            "ERROR",
            date,
            "20:26:32.404000",
            agents[1],
            "elastic.multiprocessing.api",
            869,
            f"failed (exitcode: 1) local_rank: 5 (pid: {r13.pid}) of binary: /usr/bin/python",
        ),
        task=1,
    )
    job.e(child_failed(t, "/workspace/train.py", "slinky-1", "2025-05-06_20:26:30", 13, 5, 1, r13.pid), task=1)
    job.e("srun: error: slinky-1: task 1: Exited with exit code 1")
    job.e("srun: Terminating StepId=66210.0")
    job.e("slurmstepd: error: *** STEP 66210.0 ON slinky-0 CANCELLED AT 2025-05-06T20:26:33 ***")
    for n in (0, 2, 3):
        job.e(
            t.agent(
                "WARNING",
                date,
                "20:26:33.051000",
                agents[n],
                "elastic.agent.server.api",
                719,
                "Received Signals.SIGTERM death signal, shutting down workers",
            ),
            task=n,
        )
    for n in (0, 2, 3):
        job.e(f"srun: error: {NODES[n]}: task {n}: Terminated")
    job.e("srun: Force Terminated StepId=66210.0")
    sizes[job.name] = job.write(
        {
            "description": "healthy IB run until rank 13 (slinky-1, local rank 5) raises ValueError in the data packer at step ~1750; torchrun ChildFailedError on slinky-1, srun kills the step",
            "top": "unexplained-failure",
            "expected": ["unexplained-failure"],
            "absent": others("unexplained-failure", extra=["nccl-tcp-fallback"]),
            "healthy": False,
            "culprits": {"unexplained-failure": {"hosts": ["slinky-1"], "ranks": [13]}},
        }
    )

    # ===================================================================== 19. healthy IB + GDR, 2.23 + benign noise
    job = Job("syn-healthy-ib-gdr", 119, merged=False, jobid=71133)
    v = V("2.23.4", 12060)
    v.cudastr = "12.6"
    t = T((2, 6))
    agents, ranks = make_ranks(job)
    date = "2025-01-20"
    pyxis(job, image="nvcr.io#nvidia/pytorch:24.12-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "06:00:12.003000", agents[n]))
    for r in ranks:
        job.e(
            "libibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': librxe-rdmav34.so: cannot open shared object file: No such file or directory"
        )
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "IB" for n in range(4)},
        {n: {"retry_ranks": (24, 25, 27)} for n in range(4)},
        date,
        "06:00:15",
    )
    for r in ranks:
        job.e(
            t.cxx(
                r.rank,
                "W",
                date,
                "06:00:19.",
                "ProcessGroupNCCL.cpp:4115",
                f"[PG ID 0 PG GUID 0 Rank {r.rank}]  using GPU {r.local} to perform barrier as devices used by this process are currently unknown. This can potentially cause a hang if this rank to GPU mapping is incorrect. Specify device_ids in barrier() to force use of a particular device,or call init_process_group() with a device_id.",
            )
        )
    job.e(
        [
            "/usr/local/lib/python3.12/dist-packages/torch/utils/data/dataloader.py:617: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 14, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
            "  warnings.warn(",
        ]
    )
    L, _ = step_lines(job.rng, 10, 2000, 10, 398.0, 329.0, hms=(6, 0, 40))
    job.o(L)
    job.o(["[06:14:01] saved checkpoint to /lustre/fs1/proj/llm/ckpt/run-71133/step_2000", "training complete"])
    for r in ranks:
        job.o(
            info(r, f"comm {r.comm} rank {r.rank} nranks 32 cudaDev {r.dev} busId {BUSID[r.local]} - Destroy COMPLETE")
        )
    for r in ranks[8:20]:
        job.e(
            t.cxx(
                r.rank,
                "W",
                date,
                "06:14:04.",
                "ProcessGroupNCCL.cpp:1496",
                f'[PG ID 0 PG GUID 0(default_pg) Rank {r.rank}] Failed to check the "should dump" flag on TCPStore, (maybe TCPStore server has shut down too early), with error: Failed to recv, got 0 bytes. Connection was likely closed. Did the remote server shutdown or crash?',
            )
        )
    sizes[job.name] = job.write(
        {
            "description": "healthy 4x8 H100 run over IB with GPUDirect RDMA (NCCL 2.23.4); benign noise: librxe driver warning, NET/Plugin not found, early 'Call to connect ... retrying', barrier GPU hint, OMP banner, TCPStore 'should dump' teardown warnings",
            "top": None,
            "expected": [],
            "absent": others(extra=["nccl-tcp-fallback"]),
            "healthy": True,
        }
    )

    # ===================================================================== 20. healthy Ethernet-only cluster
    job = Job("syn-healthy-ethernet-only", 120, jobid=30117)
    v = V("2.26.2", 12080)
    v.cudastr = "12.8"
    t = T((2, 7))
    agents, ranks = make_ranks(job)
    date = "2025-03-11"
    pyxis(job, image="nvcr.io#nvidia/pytorch:25.02-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "12:00:02.114000", agents[n]))
    kw = {
        n: {
            "socket_if": "eth0",
            "ib_fail": "no-device",
            "extra_env": [
                "NCCL_SOCKET_NTHREADS set by environment to 4.",
                "NCCL_NSOCKS_PERTHREAD set by environment to 8.",
            ],
        }
        for n in range(4)
    }
    torch_job(job, v, t, ranks, 4, {n: "Socket-noib" for n in range(4)}, kw, date, "12:00:05", gdr=False)
    for r in ranks:
        if r.local in (0, 7):
            job.o(info(r, "NET/Socket: Using 4 threads and 8 sockets per thread", tid=r.ptid + 3))
    L, _ = step_lines(job.rng, 10, 500, 10, 2310.0, 56.0, hms=(12, 0, 40))
    job.o(L)
    job.o("finetune done")
    sizes[job.name] = job.write(
        {
            "description": "4-node cluster with 100GbE only (no HCAs, nothing asks for IB): NET/IB : No device found, NET/Socket over eth0 with tuned threads; run completes - healthy",
            "top": None,
            "expected": [],
            "absent": others(),
            "healthy": True,
        }
    )

    # ===================================================================== 21. healthy single node NVLink
    job = Job("syn-healthy-single-node-nvlink", 121, jobid=30388)
    v = V("2.27.7", 12090)
    v.cudastr = "12.9"
    t = T((2, 8))
    agents, ranks = make_ranks(job, nnodes=1)
    date = "2025-08-01"
    job.e(omp_banner(t, date, "09:30:01.000000", agents[0]))
    torch_job(
        job,
        v,
        t,
        ranks,
        1,
        {0: "Socket-noib"},
        {0: {"socket_if": "eth0", "ib_fail": "no-device"}},
        date,
        "09:30:04",
        gdr=False,
        nch=24,
    )
    L, _ = step_lines(job.rng, 20, 800, 20, 188.0, 88.0, hms=(9, 30, 30))
    job.o(L)
    sizes[job.name] = job.write(
        {
            "description": "single node, 8 GPUs over NVLink (P2P/CUMEM); no IB device, 'Using network Socket' is irrelevant on one node - healthy",
            "top": None,
            "expected": [],
            "absent": others(),
            "healthy": True,
        }
    )

    # ===================================================================== 22. near-miss: NCCL_IB_HCA echoed and valid
    job = Job("syn-nearmiss-ib-hca-valid", 122, label=True, jobid=44001)
    v = V("2.21.5", 12040)
    v.cudastr = "12.4"
    t = T((2, 3))
    agents, ranks = make_ranks(job)
    date = "2024-06-12"
    pyxis(job)
    for n in range(4):
        job.e(omp_banner(t, date, "15:15:15.150000", agents[n]), task=n)
    torch_job(
        job,
        v,
        t,
        ranks,
        4,
        {n: "IB" for n in range(4)},
        {n: {"hca_env": "mlx5_0:1,mlx5_1:1"} for n in range(4)},
        date,
        "15:15:18",
    )
    L, _ = step_lines(job.rng, 10, 1000, 10, 611.0, 214.0, hms=(15, 15, 50))
    job.o(L, task=0)
    sizes[job.name] = job.write(
        {
            "description": "NCCL_IB_HCA=mlx5_0:1,mlx5_1:1 is echoed and both HCAs are used (NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB); healthy IB run",
            "top": None,
            "expected": [],
            "absent": others(extra=["nccl-tcp-fallback"]),
            "healthy": True,
        }
    )

    # ===================================================================== 23. near-miss: NCCL_IB_DISABLE=0
    job = Job("syn-nearmiss-ib-disable-0", 123, jobid=38890)
    v = V("2.18.3", 12020)
    v.cudastr = "12.2"
    t = T((2, 1))
    agents, ranks = make_ranks(job)
    date = "2023-10-30"
    pyxis(job, image="nvcr.io#nvidia/pytorch:23.10-py3")
    for n in range(4):
        job.e(omp_banner(t, date, "21:01:00.000000", agents[n]))
    torch_job(
        job, v, t, ranks, 4, {n: "IB" for n in range(4)}, {n: {"ib_disable": 0} for n in range(4)}, date, "21:01:03"
    )
    L, _ = step_lines(job.rng, 50, 1500, 50, 455.0, 288.0, hms=(21, 1, 30))
    job.o(L)
    sizes[job.name] = job.write(
        {
            "description": "NCCL_IB_DISABLE set by environment to 0. (explicitly enabled) and IB with GDRDMA used on all nodes; healthy",
            "top": None,
            "expected": [],
            "absent": others(extra=["nccl-tcp-fallback"]),
            "healthy": True,
        }
    )

    for k, s in sizes.items():
        print(f"{k:45s} {s:8d}")


if __name__ == "__main__":
    run()
