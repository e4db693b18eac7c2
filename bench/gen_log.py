"""Generate a deterministic, realistic multi-node training job log of a given size, streaming.

The job: 4 nodes (slinky-[0-3]) x 8 GPUs, torchrun under srun, NCCL 2.28 at NCCL_DEBUG=INFO. Most
lines are training steps, NCCL INFO lines (every prefix form: bare ``host:pid:tid [dev]``, srun
``--label`` ``" 3: "``, torchrun ``[default3]:``, both stacked, and 2.26+ ``[YYYY-MM-DD HH:MM:SS]``
WARN timestamps with the blank line NCCL prints before each WARN), tqdm ``\\r`` progress lines,
long JSON metric lines, Python warnings and misc logging.

Planted faults: slinky-2 cannot open its HCAs (``Call to ibv_open_device failed`` / ``NET/IB :
Unable to open device mlx5_N``) and falls back to ``Using network Socket`` and ``via NET/Socket/0``
channels, while the other nodes use ``Using network IB`` and ``via NET/IB/N/GDRDMA``; near the end
rank 9 raises a ValueError and srun reports ``task 9: Exited with exit code 1``. Near-misses
(rule literals in harmless contexts) are sprinkled at a low rate. The expectation is written to
``<out>.expected.json``.

    python bench/gen_log.py --size 100M --seed 1 --out bench/data/job-100M.log
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

NODES = 4
GPUS = 8
BAD_NODE = 2
FAIL_RANK = 9
JOB_ID = 48213
NCCL_VERSION = "2.28.9+cuda12.9"
FLUSH_BYTES = 1 << 20
EXPECTED_IDS = ["ib-devices-not-mounted", "nccl-tcp-fallback"]
ABSENT_IDS = ["nccl-ib-disabled", "nccl-ib-hca-wrong", "nccl-socket-ifname", "ib-verbs-library-missing",
              "node-local-path", "pmix-not-used", "pmix-plugin-missing", "pmix-runtime-error"]  # fmt: skip
NEAR_MISS_RATE = 5e-5
COMM_EVERY_LINES = 20_000  # a new NCCL communicator (sub-group) every ~20k lines
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text: str) -> int:
    """``100M`` -> 104857600 (binary units K/M/G; a bare number is bytes)."""
    text = text.strip().upper().removesuffix("B")
    if text and text[-1] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def host(node: int) -> str:
    return f"slinky-{node}"


def ib_addr(node: int) -> str:
    return f"10.10.0.{11 + node}"


@dataclass
class Rank:
    rank: int
    node: int
    local: int
    pid: int

    @property
    def nccl(self) -> str:
        return f"{host(self.node)}:{self.pid}:{self.pid} [{self.local}]"


def make_ranks(rng: random.Random) -> list[Rank]:
    ranks = []
    for node in range(NODES):
        base = rng.randrange(180_000, 260_000)
        ranks.extend(Rank(node * GPUS + g, node, g, base + 29 + g * 3) for g in range(GPUS))
    return ranks


@dataclass
class Writer:
    """Buffers lines and writes them in ~1 MB pieces; counts bytes and lines as written."""

    stream: object
    written: int = 0
    lines: int = 0
    buf: list[str] = field(default_factory=list)
    buf_chars: int = 0

    def line(self, text: str, end: str = "\n") -> None:
        self.buf.append(text + end)
        self.buf_chars += len(text) + 1
        self.lines += 1
        if self.buf_chars >= FLUSH_BYTES:
            self.flush()

    def flush(self) -> None:
        data = "".join(self.buf).encode()
        self.stream.write(data)  # type: ignore[attr-defined]
        self.written += len(data)
        self.buf.clear()
        self.buf_chars = 0

    def pending(self) -> int:
        return self.written + self.buf_chars


class Job:
    """All the line templates of the job; ``rng`` makes every choice, so output is a function of the seed."""

    def __init__(self, rng: random.Random, out: Writer):
        self.rng = rng
        self.out = out
        self.ranks = make_ranks(rng)
        self.step = 0
        self.clock = 6 * 3600  # seconds since midnight
        self.comms = 0
        self.near_misses = 0
        self.planted: dict[str, int] = {}

    # -- prefixes -------------------------------------------------------------------------------
    def prefix(self, r: Rank) -> str:
        """One of the four prefix forms a line of rank ``r`` can carry."""
        form = self.rng.random()
        if form < 0.40:
            return ""
        if form < 0.65:
            return f"{r.node:>2}: "
        if form < 0.80:
            return f"[default{r.local}]:"
        return f"{r.node:>2}: [default{r.local}]:"

    def ts(self) -> str:
        s = self.clock
        return f"2025-05-06 {s // 3600 % 24:02d}:{s // 60 % 60:02d}:{s % 60:02d}"

    def info(self, r: Rank, msg: str) -> None:
        self.out.line(f"{self.prefix(r)}{r.nccl} NCCL INFO {msg}")

    def warn(self, r: Rank, src: str, msg: str) -> None:
        pre = self.prefix(r)
        self.out.line(pre)  # NCCL prints an empty line before each WARN (srun --label still labels it)
        self.out.line(f"{pre}[{self.ts()}] {r.nccl} {src} NCCL WARN {msg}")

    def plant(self, key: str, n: int = 1) -> None:
        self.planted[key] = self.planted.get(key, 0) + n

    # -- job start --------------------------------------------------------------------------------
    def header(self) -> None:
        o = self.out
        o.line(f"Job {JOB_ID}: {NODES} nodes (slinky-[0-{NODES - 1}]), {GPUS} GPUs per node, world size {NODES * GPUS}")
        o.line(f"SLURM_JOB_NUM_NODES={NODES} SLURM_JOB_ID={JOB_ID} MASTER_ADDR=slinky-0 MASTER_PORT=29500")
        o.line("srun --label --container-image=nvcr.io#nvidia/pytorch:25.01-py3 "
               "--container-mounts=/lustre/fs1/proj/llm:/workspace torchrun --nnodes=4 --nproc-per-node=8 ...")  # fmt: skip
        for node in range(NODES):
            o.line(f"{node:>2}: pyxis: imported docker image: nvcr.io#nvidia/pytorch:25.01-py3")
        for node in range(NODES):
            pid = 200_000 + node * 17_311
            for text in ("", "*" * 41, "Setting OMP_NUM_THREADS environment variable for each process to be 1 in "
                         "default, to avoid your system being overloaded, please further tune the variable for "
                         "optimal performance in your application as needed. ", "*" * 41):  # fmt: skip
                o.line(f"{node:>2}: W0506 06:00:12.003000 {pid} torch/distributed/run.py:851] {text}")

    def net_init(self, r: Rank) -> None:
        """Per-process network setup: the planted fault lives here on BAD_NODE."""
        self.info(r, f"Bootstrap: Using ib0:{ib_addr(r.node)}<0>")
        self.info(r, "cudaDriverVersion 12090")
        self.info(r, f"NCCL version {NCCL_VERSION}")
        self.info(r, "NCCL_IB_DISABLE set by environment to 0.")  # near-miss: IB explicitly enabled
        self.info(r, "NET/Plugin: Could not find: libnccl-net.so")
        if r.node != BAD_NODE:
            devs = " ".join(f"[{i}]mlx5_{i}:1/IB" for i in range(GPUS))
            self.info(r, f"NET/IB : Using {devs} [RO]; OOB ib0:{ib_addr(r.node)}<0>")
            self.info(r, "Initialized NET plugin IB")
            self.info(r, "Using network IB")
            return
        for i in range(GPUS):
            self.warn(r, "misc/ibvwrap.cc:216", "Call to ibv_open_device failed")
            self.warn(r, "transport/net_ib/init.cc:592", f"NET/IB : Unable to open device mlx5_{i}")
        self.plant("ibv_open_device_failed", GPUS)
        self.plant("unable_to_open_device", GPUS)
        self.info(r, "NET/IB : No device found.")
        self.info(r, "Failed to initialize NET plugin IB")
        self.info(r, f"NET/Socket : Using [0]ib0:{ib_addr(r.node)}<0>")
        self.info(r, "Initialized NET plugin Socket")
        self.info(r, "Assigned NET plugin Socket to comm")
        self.info(r, "Using network Socket")
        self.plant("using_network_socket")

    def comm_init(self) -> None:
        """A communicator over all 32 ranks: rank order interleaved as srun interleaves output."""
        self.comms += 1
        comm_id = self.rng.getrandbits(64)
        order = list(self.ranks)
        self.rng.shuffle(order)
        for r in order:
            self.comm_rank(r, comm_id)

    def comm_rank(self, r: Rank, comm_id: int) -> None:
        world = NODES * GPUS
        comm = f"0x{self.rng.getrandbits(44):x}"
        bus = f"{(r.local * 0x10 + 0x18):x}000"
        self.info(r, f"ncclCommInitRankConfig comm {comm} rank {r.rank} nranks {world} cudaDev {r.local} "
                     f"nvmlDev {r.local} busId {bus} commId 0x{comm_id:016x} - Init START")  # fmt: skip
        self.info(r, "Comm config Blocking set to 1")
        self.info(r, f"Setting affinity for GPU {r.local} to ffffffff,00000000,ffffffff,00000000")
        self.info(r, f"comm {comm} rank {r.rank} nRanks {world} nNodes {NODES} localRanks {GPUS} "
                     f"localRank {r.local} MNNVL 0")  # fmt: skip
        nxt, prv = (r.rank + 1) % world, (r.rank - 1) % world
        trees = " ".join(f"[{c}] {nxt}/-1/-1->{r.rank}->{prv}" for c in range(16))
        self.info(r, f"Trees {trees}")
        self.info(r, "P2P Chunksize set to 131072")
        for ch in range(self.rng.randrange(4, 9)):
            self.channel(r, ch)
        self.info(r, "Connected all rings, use ring PXN 0 GDR 1")
        self.info(r, "Connected all trees")
        self.info(r, f"ncclCommInitRankConfig comm {comm} rank {r.rank} nranks {world} cudaDev {r.local} "
                     f"nvmlDev {r.local} busId {bus} commId 0x{comm_id:016x} - Init COMPLETE")  # fmt: skip
        if self.comms > 1:  # the previous sub-group communicator is torn down
            self.info(r, f"[Service thread] Connection closed by localRank {r.local}")
            self.info(r, f"comm 0x{self.rng.getrandbits(44):x} rank {r.rank} nranks {world} cudaDev {r.local} "
                         f"busId {bus} - Destroy COMPLETE")  # fmt: skip

    def channel(self, r: Rank, ch: int) -> None:
        world = NODES * GPUS
        if r.local in (0, GPUS - 1):  # node boundary: network transport
            peer = (r.rank + (1 if r.local == GPUS - 1 else -1)) % world
            kind = "send" if r.local == GPUS - 1 else "receive"
            if r.node == BAD_NODE:
                via = "NET/Socket/0"
                self.plant("channel_via_socket")
            else:
                via = f"NET/IB/{ch % GPUS}/GDRDMA"
            self.info(r, f"Channel {ch:02d}/0 : {r.rank}[{r.local}] -> {peer}[{peer % GPUS}] [{kind}] via {via}")
        else:
            peer = r.rank + 1
            self.info(r, f"Channel {ch:02d}/0 : {r.rank}[{r.local}] -> {peer}[{peer % GPUS}] via P2P/CUMEM/read")

    # -- the bulk: training -------------------------------------------------------------------------
    def step_line(self) -> None:
        self.step += 1
        self.clock += self.rng.choice((0, 0, 1))
        h, m, s = self.clock // 3600 % 24, self.clock // 60 % 60, self.clock % 60
        loss = 2.0 + 6.0 / (1 + self.step / 400) + self.rng.uniform(-0.05, 0.05)
        pre = self.prefix(self.ranks[0])
        self.out.line(f"{pre}[{h:02d}:{m:02d}:{s:02d}] step {self.step:>7} | loss {loss:.4f} | lr 3.00e-04 | "
                      f"{self.rng.uniform(388, 410):.1f} ms/it | {self.rng.uniform(318, 339):.1f}k tok/s")  # fmt: skip

    def tqdm_line(self) -> None:
        total = 500
        parts = []
        for done in range(0, total + 1, self.rng.choice((25, 50, 100))):
            pct = done * 100 // total
            bar = "\u2588" * (pct // 10) + " " * (10 - pct // 10)
            parts.append(f"eval: {pct:3d}%|{bar}| {done}/{total} [00:{done // 25:02d}<00:{(total - done) // 25:02d}, "
                         f"{self.rng.uniform(20, 26):.2f}it/s]")  # fmt: skip
        self.out.line("\r".join(parts))

    def json_line(self) -> None:
        n = self.rng.randrange(8, 80)
        metrics = {f"layer{i}.grad_norm": round(self.rng.uniform(0.01, 3.0), 5) for i in range(n)}
        record = {"event": "metrics", "step": self.step, "time": self.ts(), "loss": round(self.rng.uniform(2, 3), 4),
                  "throughput": {"tok_s": round(self.rng.uniform(318e3, 339e3))}, "grad_norms": metrics}  # fmt: skip
        self.out.line(json.dumps(record, separators=(",", ":")))

    def py_warning(self) -> None:
        r = self.rng.choice(self.ranks)
        pre = self.prefix(r)
        w = self.rng.choice(PY_WARNINGS)
        self.out.line(pre + w[0])
        self.out.line(pre + w[1])

    def misc_line(self) -> None:
        r = self.rng.choice(self.ranks)
        self.out.line(self.prefix(r) + self.rng.choice(MISC_LINES).format(step=self.step, rank=r.rank, ts=self.ts()))

    def nccl_misc(self) -> None:
        r = self.rng.choice(self.ranks)
        self.info(r, self.rng.choice(NCCL_MISC).format(rank=r.rank, local=r.local))

    def near_miss(self) -> None:
        r = self.rng.choice(self.ranks)
        self.near_misses += 1
        text = self.rng.choice(NEAR_MISSES).format(step=self.step, rank=r.rank, host=host(r.node))
        self.out.line(self.prefix(r) + text)

    def bulk(self, until: int) -> None:
        kinds: list[Callable[[], None]] = [self.step_line, self.nccl_misc, self.py_warning, self.tqdm_line,
                                           self.json_line, self.misc_line]  # fmt: skip
        weights = [50, 22, 4, 4, 2, 18]
        next_comm = self.out.lines + COMM_EVERY_LINES
        while self.out.pending() < until:
            for kind in self.rng.choices(kinds, weights, k=256):
                kind()
            if self.rng.random() < NEAR_MISS_RATE * 256:
                self.near_miss()
            if self.out.lines >= next_comm:
                self.comm_init()
                next_comm = self.out.lines + COMM_EVERY_LINES

    # -- the end: rank 9 fails ----------------------------------------------------------------------
    def failure(self) -> None:
        r = self.ranks[FAIL_RANK]
        pre = f"{r.node:>2}: [default{r.local}]:[rank{r.rank}]: "
        for text in TRACEBACK:
            self.out.line(pre + text.format(step=self.step))
        self.plant("value_error_traceback")
        o = self.out
        o.line(f"{r.node:>2}: E0506 {self.ts()[11:]}.402000 {r.pid - 40} torch/distributed/elastic/multiprocessing/"
               f"api.py:869] failed (exitcode: 1) local_rank: {r.local} (pid: {r.pid}) of binary: /usr/bin/python")  # fmt: skip
        o.line(f"srun: error: {host(r.node)}: task {r.rank}: Exited with exit code 1")
        o.line(f"srun: Terminating StepId={JOB_ID}.0")
        o.line(f"slurmstepd: error: *** STEP {JOB_ID}.0 ON slinky-0 CANCELLED AT 2025-05-06T{self.ts()[11:]} ***")
        for node in range(NODES):
            if node != r.node:
                o.line(f"srun: error: {host(node)}: task {node * GPUS}: Terminated")
        o.line(f"srun: Force Terminated StepId={JOB_ID}.0")
        self.plant("srun_task_exit")


PY_WARNINGS = [
    ("/usr/local/lib/python3.12/dist-packages/torch/utils/checkpoint.py:87: UserWarning: None of the inputs have "
     "requires_grad=True. Gradients will be None", "  warnings.warn("),
    ("/usr/local/lib/python3.12/dist-packages/torch/distributed/fsdp/_state_dict_utils.py:773: FutureWarning: "
     "FSDP.state_dict_type() and FSDP.set_state_dict_type() are being deprecated.", "  warnings.warn("),
    ("/workspace/train.py:212: UserWarning: To copy construct from a tensor, it is recommended to use "
     "sourceTensor.clone().detach()", "  batch = torch.tensor(batch)"),
    ("/usr/local/lib/python3.12/dist-packages/torch/_dynamo/eval_frame.py:632: UserWarning: torch.utils.checkpoint: "
     "the use_reentrant parameter should be passed explicitly.", "  return fn(*args, **kwargs)"),
]  # fmt: skip

MISC_LINES = [
    "[{ts}][INFO][data.py:141] rank {rank}: prefetched 64 shards, queue depth 8",
    "[{ts}][INFO][trainer.py:388] step {step}: grad norm clipped, scale 65536.0",
    "[{ts}][INFO][checkpoint.py:77] async checkpoint of step {step} to /lustre/fs1/proj/llm/ckpt/step_{step} queued",
    "[{ts}][DEBUG][dataloader.py:55] worker 3 of rank {rank} reseeded",
    "I0506 06:14:02.118000 4411 torch/distributed/elastic/agent/server/api.py:525] [default] heartbeat ok",
    "[{ts}][INFO][monitor.py:33] gpu_mem_alloc=61.2GiB gpu_mem_reserved=72.0GiB host_rss=18.4GiB",
]  # fmt: skip

NCCL_MISC = [
    "Channel {local:02d}/1 : {rank}[{local}] -> {rank}[{local}] via P2P/IPC",
    "PROFILER/Plugin: Could not find: libnccl-profiler.so.",
    "CC Off, workFifoBytes 1048576",
    "Allocated 4194656 bytes of shareable host memory",
    "threadThresholds 8/8/64 | 256/8/64 | 512 | 512",
    "16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer",
]  # fmt: skip

NEAR_MISSES = [
    "{host}:4711:4711 [0] NCCL INFO NCCL_IB_DISABLE set by environment to 0.",
    "{host}:4711:4711 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0,mlx5_1,mlx5_2,mlx5_3,mlx5_4,mlx5_5,mlx5_6,mlx5_7",
    "libibverbs: Warning: couldn't load driver 'librxe-rdmav34.so': librxe-rdmav34.so: cannot open shared object file",
    "[INFO] reading tokenizer cache /workspace/.cache/tok.json (No such file or directory: 'tok.json', rebuilding)",
    "[INFO] retrying object store request after transient ConnectionError (attempt 1/5)",
    "[INFO] TMPDIR=/tmp/slurm-48213 is node-local; checkpoints go to /lustre/fs1/proj/llm/ckpt",
    "[INFO] export NCCL_IB_DISABLE=0 NCCL_NET_GDR_LEVEL=PHB (from launcher profile)",
    "[INFO] step {step}: eval Exception count 0, skipped batches 0",
]  # fmt: skip

TRACEBACK = [
    "Traceback (most recent call last):",
    '  File "/workspace/train.py", line 612, in <module>',
    "    main()",
    '  File "/workspace/data/packed.py", line 98, in _pack',
    '    raise ValueError(f"sample {{idx}} has {{len(tokens)}} tokens, exceeds seq_len={{self.seq_len}}")',
    "ValueError: sample 48213557 has 9217 tokens, exceeds seq_len=8192 (step {step})",
]


def generate(out_path: str, size: int, seed: int, shape: str = "classic", ranks: int = 256,
             density: float = 0.13) -> dict:  # fmt: skip
    """Write the log and return the expectation (also written to ``<out>.expected.json``)."""
    if shape == "dense":
        return _generate_dense(out_path, size, seed, ranks, density)
    rng = random.Random(seed)
    tmp = out_path + ".part"
    with open(tmp, "wb") as stream:
        w = Writer(stream)
        job = Job(rng, w)
        job.header()
        for r in job.ranks:
            job.net_init(r)
        job.comm_init()
        job.bulk(until=size - 8192)
        job.failure()
        w.flush()
    os.replace(tmp, out_path)
    expected = {
        "size_arg": size, "seed": seed, "bytes": w.written, "lines": w.lines, "comms": job.comms,
        "near_misses": job.near_misses, "planted": job.planted, "expected_ids": EXPECTED_IDS,
        "absent_ids": ABSENT_IDS, "culprit_hosts": {"ib-devices-not-mounted": [host(BAD_NODE)]},
    }  # fmt: skip
    _write_expected(out_path, expected)
    return expected


def _write_expected(out_path: str, expected: dict) -> None:
    with open(out_path + ".expected.json", "w") as f:
        json.dump(expected, f, indent=2)
        f.write("\n")


def _generate_dense(out_path: str, size: int, seed: int, ranks: int, density: float) -> dict:
    import gen_dense  # imports this module: loaded here, not at the top

    tmp = out_path + ".part"
    with open(tmp, "wb") as stream:
        w, job = gen_dense.generate(stream, size, seed, ranks, density)
    os.replace(tmp, out_path)
    expected = {
        "shape": "dense", "size_arg": size, "seed": seed, "ranks": ranks, "density": density, "bytes": w.written,
        "lines": w.lines, "candidates_estimated": job.cands, "comms": job.comms, "restarts": job.epochs - 1,
        "near_misses": job.near_misses, "planted": job.planted, "expected_ids": gen_dense.expected_ids(job.planted),
        "absent_ids": gen_dense.ABSENT_IDS, "culprit_hosts": {"ib-devices-not-mounted": [gen_dense.host(gen_dense.BAD_NODE)]},
    }  # fmt: skip
    _write_expected(out_path, expected)
    return expected


def measure_density(path: str) -> tuple[int, int] | None:
    """(candidate lines, lines) of ``path``: ``rg --no-unicode -c -f`` with slurmdiag's exported signatures, as
    bench/run.py counts them; None without rg."""
    import run  # imports this module: loaded here, not at the top

    rg = run.shutil.which("rg")
    if rg is None:
        return None
    os.makedirs(run.OUT, exist_ok=True)
    rg_path, _, _ = run.write_patterns(run.export_patterns())
    res = run.subprocess.run([rg, "--no-unicode", "-c", "-f", rg_path, path], capture_output=True, text=True)
    with open(path, "rb") as f:
        lines = sum(block.count(b"\n") for block in iter(lambda: f.read(16 << 20), b""))
    return int(res.stdout.strip() or 0), lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="100M", help="target size, e.g. 20M, 100M, 1G (binary units)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", required=True)
    ap.add_argument("--shape", choices=("classic", "dense"), default="classic",
                    help="classic: the 32-rank job; dense: a large job with many communicators (see gen_dense.py)")  # fmt: skip
    ap.add_argument("--ranks", type=int, default=256, help="dense: GPUs (8 per node), 64-512 (default 256)")
    ap.add_argument("--density", type=float, default=0.13,
                    help="dense: target fraction of candidate lines, e.g. 0.005, 0.02, 0.13, 0.30 (default 0.13)")  # fmt: skip
    ap.add_argument("--measure", action="store_true", help="count the candidate lines with rg afterwards")
    args = ap.parse_args(argv)
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    exp = generate(args.out, parse_size(args.size), args.seed, args.shape, args.ranks, args.density)
    print(f"{args.out}: {exp['bytes']:,} bytes, {exp['lines']:,} lines, {exp['comms']} communicators, "
          f"{exp['near_misses']} near-misses", file=sys.stderr)  # fmt: skip
    if "candidates_estimated" in exp:
        est = exp["candidates_estimated"]
        print(f"  {exp['restarts']} restarts; candidate lines estimated {est:,} ({est / exp['lines']:.2%})",
              file=sys.stderr)  # fmt: skip
    if args.measure:
        got = measure_density(args.out)
        if got is None:
            print("  rg not found: apt-get install ripgrep", file=sys.stderr)
        else:
            print(f"  candidate lines measured (rg -c -f): {got[0]:,} of {got[1]:,} ({got[0] / got[1]:.2%})",
                  file=sys.stderr)  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
