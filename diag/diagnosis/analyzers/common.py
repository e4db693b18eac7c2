"""Helpers shared by several analyzer families (node-local prefixes, timeout cascades, wording)."""

from __future__ import annotations

import re

from diag.catalog.causes import severity_rank
from diag.catalog.model import fill_action
from diag.diagnosis.context import SUCCESS_VERDICT, Context
from diag.evidence import Evidence, time_key
from diag.input.framing import frame_fields

NODE_LOCAL_PREFIXES = ("/tmp/", "/var/tmp/", "/dev/shm/", "/scratch/local/", "/local/", "/raid/", "/run/user/")
# Inside a path: per-user caches that frameworks fill on the node that downloads (HF datasets and
# hub, ModelScope, vLLM, torch extensions), and local scratch that a Slurm prolog hands out.
# Also the per-job local directories sites hand out as $SLURM_TMPDIR / $TMPDIR (Compute Canada's
# /localscratch, NIH's /lscratch, Rocks' /state/partition1), cloud VMs' instance disks (Azure
# /mnt/resource, AWS DLAMI /opt/dlami/nvme, Databricks /local_disk0) and unexpanded variables.
NODE_LOCAL_PARTS = (
    "/.cache/",
    "/local/scratch/",
    "/localscratch/",
    "/local_scratch/",
    "/scratch/local/",
    "/scratch_local/",
    "/lscratch/",
    "/node_local/",
    "/state/partition1/",
    "/mnt/resource/",
    "/mnt/local",
    "/mnt/nvme",
    "/opt/dlami/nvme/",
    "/local_disk0/",
    "/local_nvme/",  # a site's per-node NVMe (/local_nvme, /mnt/local_nvme)
    "$TMPDIR",
    "${TMPDIR}",
    "SLURM_TMPDIR",
    "SLURM_JOB_TMP",
)


def node_local(path: str) -> bool:
    """Whether ``path`` is, by its name, on storage only one node sees."""
    return path.startswith(NODE_LOCAL_PREFIXES) or path in ("/tmp", "/dev/shm") or any(p in path for p in NODE_LOCAL_PARTS)


CANCELLED_TASK_ENDINGS = (": Terminated", ": Killed")  # srun's task lines for tasks a cancel ended

# Lines that are the cascade of a collective timeout or a lost peer, never a cause of their own.
TIMEOUT_CASCADE = (
    "ncclRemoteError",
    "DistBackendError",
    "WorkNCCL",
    "atchdog",
    "remote process exited",
    "closed by remote peer",
    "communicator was aborted",
    "ChildFailedError",
    "SignalException",
    # PyTorch before 2.2 rethrows the watchdog's timeout from its thread: the type alone, its what() below.
    "instance of 'std::runtime_error'",
    "instance of 'c10::DistBackendError'",
    "NCCL error",
    "Connection reset by peer",
    "operation to complete",  # Gloo's "Timed out waiting <ms>ms for recv operation to complete"
    "timeout caused pair closure",
    "NCCL Operation Timed Out",
    "collective operation timeout",
    "failed to pass monitoredBarrier",  # PyTorch's monitored_barrier names the ranks that never came
    "timed out in blocking wait",  # TORCH_NCCL_BLOCKING_WAIT
    "] Read timeout [",  # Gloo's transports waiting for a peer
    "] Write timeout [",
    "] Send timeout [",
    "Timeout waiting for memory region",
    "JAX distributed service detected fatal errors",  # JAX's coordination service: another task died
    "stopped sending heartbeats",
    "Task with incarnation id",
    # A store read that ran out waiting on a late rank (TCPStore doWait 2.2+, the NCCL unique id fetch)
    "wait timeout after ",
    "ncclUniqueId from [",
    # nccl-tests after its own --timeout fired: the timeout line, then each frame it returned through.
    ": Test timeout (",
    ": Test failure ",
)


def timeline_key(ev: Evidence) -> tuple:
    """Order by timestamp where the line carries one, else by file order."""
    tk = time_key(ev.timestamp)
    return (0, tk, ev.order) if tk else (1, (), ev.order)


def is_timeout_cascade(text: str) -> bool:
    return any(marker in text for marker in TIMEOUT_CASCADE)


# A thread's prose about what the user already tried ("Tried `export NCCL_IB_DISABLE=1`, didn't
# work"): the setting it names is an attempted fix, not the failing job's configuration.
_ATTEMPTED = re.compile(
    r"(?i)\b(?:i(?:'ve| have)? tried|tried (?:to |with |setting |adding |using )?|also tried|trying|"
    r"(?:did ?n[o']t|does ?n[o']t|do ?n[o']t|won'?t) (?:work|help|change|fix)|no luck|to no avail|"
    r"(?:still|same) (?:fails|failing|error|problem|issue|hangs?))"
)


def attempted_in_prose(text: str) -> bool:
    """Whether a line is someone's prose about a fix they tried, rather than the job's own output."""
    return bool(_ATTEMPTED.search(text))


def plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def failure_is_timeout_cascade(ctx: Context, texts: list[str]) -> bool:
    """True when a collective-timeout finding exists and every failure line given is its cascade."""
    found = ctx.findings.get("nccl-timeout")
    if found is None or severity_rank(found.severity) < severity_rank("error"):
        return False
    return all(is_timeout_cascade(t) for t in texts)


# What launchers print as ranks end, whatever ended them: srun's task lines and step banners,
# slurmstepd's, Open MPI's and torchrun's summaries. After a collective timeout these are the ranks
# the watchdog aborted (SIGABRT) and those srun or mpirun then killed: no failure of their own.
LAUNCHER_EXIT = (
    ": Aborted",
    ": Killed",
    ": Terminated",
    ": Exited with exit code ",
    "noticed that process rank ",
    "exited with non-zero status",
    "Per user-direction, the job has been aborted",  # Open MPI's box on the first non-zero exit
    "_step_signal: Terminating",
    "Force Terminated",
    "Job step aborted",
    " CANCELLED AT ",
    "FAILED (non-zero exit code",
    "failed (exitcode: ",
    "Root Cause (first observed failure)",
)


def is_launcher_exit(text: str) -> bool:
    return any(marker in text for marker in LAUNCHER_EXIT)


def failure_rests_on_timeout(ctx: Context) -> bool:
    """Whether every failure line in the logs is a collective timeout's cascade or a launcher's note of
    ranks ending: the timeout is then the first failure, not a sign of one nobody printed."""
    texts = [ev.text for name, st in ctx.failure_signatures() if name != "traceback" for ev, _ in st.samples]
    return bool(texts) and failure_is_timeout_cascade(ctx, [t for t in texts if not is_launcher_exit(t)])


def first_or(values: list[str], default: str = "") -> str:
    return values[0] if values else default


# --------------------------------------------------------------------------- sentences per signature
# A finding that gathers several signatures says what went wrong one sentence per signature, filled
# from the first line's captures: a table of (signatures, template) in the order they are said. A
# template is a str (a placeholder the line did not capture drops its parenthesis, see fill_action;
# values are cut at MAX_SENTENCE_VALUE) or a function (rule, ctx, chosen) -> str | None.
MAX_SENTENCE_VALUE = 160


def fixed_sentence(name: str, text: str):
    """The sentence of a signature that captures nothing, said when it matched."""

    def say(rule, ctx: Context, chosen: set[str]) -> str | None:
        return text if name in chosen else None

    return say


def sentences(rule, ctx: Context, chosen: set[str], table) -> list[str]:
    parts = []
    for sigs, say in table:
        if callable(say):
            if part := say(rule, ctx, chosen):
                parts.append(part)
            continue
        for _ev, g in ctx.samples(rule, sigs)[:1]:
            parts.append(fill_action(say, {k: v[:MAX_SENTENCE_VALUE] for k, v in g.items() if v}))
    return parts


# --------------------------------------------------------------------------- a run that did its work
# unexplained-failure's success_* facts: lines a run prints once its work is done and went well.
# A verdict is the scheduler's or operator's word on the whole job (wherever it is printed); a run
# marker is the program's own end of its work (what it prints after it may still fail); a process
# marker is one launcher's processes ending well (other nodes may still have failed).
SUCCESS_RUN = (
    "success_nccl_tests", "success_training", "success_lightning", "success_megatron", "success_benchmark", "success_mlperf",
)
SUCCESS_PROCESS = ("success_torchrun", "success_torchrun_local", "success_deepspeed")


def success_lines(ctx: Context) -> tuple[list[Evidence], list[Evidence], list[Evidence]]:
    """The verdicts, run markers and process markers of success in the logs, each in file order."""
    rule = ctx.rules.get("unexplained-failure")
    if rule is None:
        return [], [], []
    return tuple(  # type: ignore[return-value]
        sorted((ev for ev, _ in ctx.samples(rule, names)), key=Evidence.file_order)
        for names in (SUCCESS_VERDICT, SUCCESS_RUN, SUCCESS_PROCESS)
    )


def said(ev: Evidence, limit: int = 120) -> str:
    """A line's message without its framing (timestamps, host and rank labels, logger prefixes), cut to ``limit``."""
    text, cut = frame_fields(ev.text)[:2]
    return text[cut:].strip()[:limit]


def after_success(ev: Evidence, markers: list[Evidence]) -> bool:
    """Whether ``ev`` comes after a success marker of its own file: printed at teardown, once the work was done."""
    return any(m.path == ev.path and m.line < ev.line for m in markers)


# A store key that only exists once a process group does: the prefix every group's keys carry
# (PrefixStore "default_pg/0/", then the group's own "/<n>//cuda//" or "//cpu//" for its backend).
_GROUP_KEY = re.compile(r"(?:^|/)default_pg/|//(?:cuda|cpu|xpu)//")


def group_store_waits(ctx: Context) -> list[tuple[Evidence, dict]]:
    """Store reads that timed out inside a process group that already existed: a rank waiting for the
    NCCL unique id rank 0 publishes at its first collective (``store->get('0') got error: Socket Timeout``
    or ``wait timeout after <ms>``), or a get/wait on a key under the group's prefix. The store answered
    them (the client had connected and sent the wait), so the processes had met; the wait ran out on a
    process that had not reached the same point. Empty unless every such read is of that kind."""
    rule = ctx.rules.get("rendezvous-failure")
    if rule is None:
        return []
    gets = ctx.samples(rule, ["store_get"])
    waits = ctx.samples(rule, ["store_wait"])
    if any("timeout" not in g.get("error", "").lower() for _, g in gets):
        return []  # a reset or closed connection: the store itself went away, not a late peer
    if any(not _GROUP_KEY.search(g.get("keys", "")) for _, g in waits):
        return []  # a rendezvous' own keys (torchrun's agents) or a program's: no group shown yet
    return sorted(gets + waits, key=lambda s: s[0].order)
