"""A synthetic job-log archive for the fleet tests and bench/fleet.py, built from corpus cases.

Every job is a copy of a corpus case's logs whose host names (``slinky-N``, ``nN``, ``vm``) are
rewritten to the job's allocation out of a pool of nodes. Planted bad nodes carry an InfiniBand
link fault or a GPU Xid in most of the jobs they run, across all users; healthy nodes carry healthy
logs and the background failures every fleet has (user errors: OOM, a wrong NCCL_SOCKET_IFNAME,
a Python exception), spread at random. One user's broken script always lands on the same healthy
node: a trap for a report that counts blame without counting users. Slurm's record of every job is
saved the way a site would dump it: one ``sacct -P`` file at the archive's top.
"""

from __future__ import annotations

import random
import re
import time
from dataclasses import dataclass, field
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "corpus"
# (case, the case's host the fault names): the fault lands on a bad node by mapping that host to it.
FAULTS = {
    "ib": [("syn-ib-link-fault-2.28-long", "slinky-1"), ("syn-ib-link-fault-2.29-wc-names", "slinky-0")],
    "xid": [("syn-gpu-xid-79-epilog", "slinky-1"), ("syn-gpu-xid-48-ecc", "slinky-2")],
}
HEALTHY = ["syn-healthy-ib-gdr", "syn-healthy-roce", "real-nccl-01-baseline-torchrun"]
BACKGROUND = [
    ("syn-unexplained-valueerror", "slinky-1"),
    ("syn-socket-ifname-eth9", "slinky-0"),
    ("syn-cuda-oom-rank0-store-2.5", None),
    ("real-slurm-task-nonzero-exit", "n2"),
    ("real-slurm-oom", "n0"),
]
SCRIPT_BUG = ("syn-unexplained-valueerror", "slinky-1")
_HOST = re.compile(r"(?<![\w.-])(slinky-\d+|n\d|vm)(?![\w-])")
SACCT_HEADER = "JobIDRaw|JobID|JobName|User|Account|Partition|State|ExitCode|DerivedExitCode|NodeList|NNodes|Start|End"


@dataclass
class Archive:
    root: Path
    jobs: int
    bad: dict[str, str]  # node -> fault kind
    script_bug_node: str
    script_bug_user: str
    nodes: list[str] = field(default_factory=list)


def _logs(case: str) -> dict[str, str]:
    folder = CORPUS / case
    return {p.name: p.read_text(errors="replace") for p in sorted(folder.iterdir()) if p.name != "expected.yaml"}


def _hosts(texts: dict[str, str]) -> list[str]:
    return sorted({m for t in texts.values() for m in _HOST.findall(t)})


def build_archive(
    root: Path,
    jobs: int = 500,
    nodes: int = 40,
    users: int = 10,
    seed: int = 7,
    fault_rate: float = 0.6,
    background_rate: float = 0.12,
    script_bug_jobs: int = 25,
    end: float | None = None,
    spacing: float = 60.0,
    rising: tuple[str, str | None] | None = None,
    rising_rate: float = 0.0,
) -> Archive:
    """``spacing``: seconds between two jobs' ends (3000 jobs 300 s apart span ten days).
    ``rising``: a (case, host) whose share of the jobs grows from 0 to ``rising_rate`` over the
    archive, as the cube of time: a cause that takes off in the last days, for the report's trend."""
    rng = random.Random(seed)
    pool = [f"gpu-{i:03d}" for i in range(1, nodes + 1)]
    bad = {pool[6]: "ib", pool[22]: "xid", pool[30]: "ib"}
    trap_node, trap_user = pool[14], "mallory"
    names = [f"user{i:02d}" for i in range(users)]
    cache: dict[str, dict[str, str]] = {}
    end = end or time.time()
    sacct = [SACCT_HEADER]
    root.mkdir(parents=True, exist_ok=True)

    def write_job(index: int, case: str, focus: str | None, allocation: list[str], target: str | None, user: str) -> None:
        texts = cache.setdefault(case, _logs(case))
        rest = [n for n in allocation if n != target]
        mapping = {focus: target} if focus and target else {}
        for host in _hosts(texts):
            if host not in mapping:
                mapping[host] = rest.pop(0)
        allocation = sorted(set(allocation) | set(mapping.values()))
        job_id = str(500000 + index)
        folder = root / user / f"job-{job_id}"
        folder.mkdir(parents=True, exist_ok=True)
        for name, text in texts.items():
            new_name = re.sub(r"\d{2,}", job_id, name, count=1) if re.search(r"\d{2,}", name) else f"{job_id}-{name}"
            (folder / new_name).write_text(_HOST.sub(lambda m: mapping.get(m[1], m[1]), text))
        stop = end - (jobs - index) * spacing
        start_s = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(stop - 600))
        stop_s = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(stop))
        state = "COMPLETED" if case in HEALTHY else "FAILED"
        code = "0:0" if state == "COMPLETED" else "1:0"
        node_list = ",".join(sorted(allocation))
        sacct.append(
            f"{job_id}|{job_id}|train|{user}|acct-{user[-1]}|gpu|{state}|{code}|{code}|{node_list}|{len(allocation)}|"
            f"{start_s}|{stop_s}"
        )

    trap_left = script_bug_jobs
    for index in range(jobs):
        if trap_left and index % max(jobs // script_bug_jobs, 1) == 0:
            trap_left -= 1
            allocation = [trap_node, *rng.sample([n for n in pool if n != trap_node], 3)]
            write_job(index, SCRIPT_BUG[0], SCRIPT_BUG[1], allocation, trap_node, trap_user)
            continue
        user = rng.choice(names)
        allocation = rng.sample(pool, 4)
        on_bad = [n for n in allocation if n in bad]
        if rising and rng.random() < rising_rate * (index / jobs) ** 3:
            write_job(index, rising[0], rising[1], allocation, rng.choice(allocation) if rising[1] else None, user)
        elif on_bad and rng.random() < fault_rate:
            case, focus = rng.choice(FAULTS[bad[on_bad[0]]])
            write_job(index, case, focus, allocation, on_bad[0], user)
        elif rng.random() < background_rate:
            case, focus = rng.choice(BACKGROUND)
            write_job(index, case, focus, allocation, rng.choice(allocation) if focus else None, user)
        else:
            write_job(index, rng.choice(HEALTHY), None, allocation, None, user)
    (root / "sacct.txt").write_text("\n".join(sacct) + "\n")
    return Archive(root, jobs, bad, trap_node, trap_user, pool)


# --- a fleet for template mining ------------------------------------------------------------------

NEW_ERROR = (
    "{host}:{pid}:{pid} [{dev}] NCCL WARN Fabric agent: partition {part} failed health probe from {ip} (attempt {n})"
)
SHARED_WARNING = "[rank{rank}]: Warning: checkpoint writer retry {n} failed on /scratch/{user}/ckpt-{n}, will retry"
ONE_OFF_ERRORS = (
    "[rank0]: AssertionError: tokenizer vocabulary hash differs from the checkpoint's",
    "[rank1]: custom_op fatal: unsupported dtype bfloat8 requested by the kernel registry",
    "[rank0]: OSError: dataset manifest is empty, refusing to start",
)


@dataclass
class TemplateFleet:
    root: Path
    new_jobs: set[str]  # job ids whose logs print NEW_ERROR
    new_nodes: set[str]  # hosts that printed it
    new_users: set[str]
    sample_new_line: str  # one raw NEW_ERROR line as a log holds it


def _nccl_preamble(hosts: list[str], rng: random.Random) -> list[str]:
    lines = []
    for i, host in enumerate(hosts):
        pid = rng.randint(1000, 99999)
        lines += [
            f"{host}:{pid}:{pid} [0] NCCL INFO NCCL version 2.21.5+cuda12.4",
            f"{host}:{pid}:{pid} [0] NCCL INFO Bootstrap : Using ib0:10.0.{i}.{rng.randint(2, 250)}<0>",
            f"{host}:{pid}:{pid} [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.0.{i}.7<0>",
        ]
    return lines


def build_template_fleet(root: Path, new_jobs: int = 12, healthy_jobs: int = 16, seed: int = 3) -> TemplateFleet:
    """Jobs in an archive (with a sacct -P dump): ``new_jobs`` failed jobs no rule explains that
    print one new NCCL warning with numbers, addresses and the host varying from job to job, and
    the shared checkpoint warning; healthy jobs that print only the shared warning; and a few
    failed jobs with one-off errors of their own."""
    rng = random.Random(seed)
    pool = [f"gpu-{i:03d}" for i in range(1, 25)]
    users = [f"user{i:02d}" for i in range(6)]
    sacct = [SACCT_HEADER]
    fleet = TemplateFleet(root, set(), set(), set(), "")
    stop = time.time() - 3600

    def job(index: int, user: str, hosts: list[str], lines: list[str], state: str) -> str:
        job_id = str(700000 + index)
        folder = root / user / f"job-{job_id}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"slurm-{job_id}.out").write_text("\n".join(lines) + "\n")
        code = "0:0" if state == "COMPLETED" else "1:0"
        end = stop - index * 60
        start_s = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(end - 600))
        stop_s = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(end))
        sacct.append(f"{job_id}|{job_id}|train|{user}|acct|gpu|{state}|{code}|{code}|{','.join(hosts)}|{len(hosts)}|"
                     f"{start_s}|{stop_s}")  # fmt: skip
        return job_id

    index = 0
    for i in range(new_jobs):
        user, hosts = users[i % len(users)], sorted(rng.sample(pool, 2))
        culprit = hosts[i % 2]
        lines = _nccl_preamble(hosts, rng)
        lines += [f"step {s} loss {rng.uniform(1, 3):.3f}" for s in range(0, 300, 100)]
        lines.append(SHARED_WARNING.format(rank=i % 2, n=rng.randint(1, 9), user=user))
        for _ in range(1 + i % 2):  # once or twice, numbers differing
            line = NEW_ERROR.format(host=culprit, pid=rng.randint(1000, 99999), dev=rng.randint(0, 7),
                                    part=rng.randint(1, 64), ip=f"10.{rng.randint(0, 9)}.{rng.randint(0, 255)}.{i + 2}",
                                    n=rng.randint(1, 5))  # fmt: skip
            lines.append(line)
        fleet.sample_new_line = fleet.sample_new_line or line
        fleet.new_jobs.add(job(index, user, hosts, lines, "FAILED"))
        fleet.new_nodes.add(culprit)
        fleet.new_users.add(user)
        index += 1
    for i in range(healthy_jobs):
        user, hosts = rng.choice(users), sorted(rng.sample(pool, 2))
        lines = _nccl_preamble(hosts, rng) + [f"step {s} loss {rng.uniform(1, 3):.3f}" for s in range(0, 500, 100)]
        lines.append(SHARED_WARNING.format(rank=i % 2, n=rng.randint(1, 9), user=user))
        job(index, user, hosts, lines, "COMPLETED")
        index += 1
    for line in ONE_OFF_ERRORS:
        user, hosts = rng.choice(users), sorted(rng.sample(pool, 2))
        job(index, user, hosts, _nccl_preamble(hosts, rng) + [line], "FAILED")
        index += 1
    (root / "sacct.txt").write_text("\n".join(sacct) + "\n")
    return fleet
