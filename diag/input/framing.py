"""Framing: read what a line's prefixes say about where it came from, and strip them.

Prefixes stack outside-in (log-signatures §0.6): srun ``--label`` → torchrun ``[default1]:`` /
PyTorch ``[rank1]:`` → C++ glog header → NCCL ``host:pid:tid [dev]``. Each layer is peeled in a
loop; what remains is the payload rules match against. Framing never drops or rejects a line:
a line nothing recognises comes back unchanged, with no context.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from diag import regex_walk
from diag.input import launchers

ANSI_RE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[@-Z\\-_])")
ANSI_BYTES_RE = re.compile(ANSI_RE.pattern.encode())

# Names that precede ": " on a line but are programs, not pdsh/deepspeed host prefixes.
_NOT_HOSTS = re.compile(
    r"^(?:srun|sbatch|salloc|scontrol|sacct|slurmstepd|slurmd|pyxis|enroot(?:-[a-z0-9-]+)?|nvidia-container-cli"
    r"|mksquashfs|unsquashfs|squashfuse|apptainer|singularity|docker|podman|libibverbs|mpirun|orterun|prterun"
    r"|torchrun|python\d*(?:\.\d+)?|bash|sh|warning|error|info|debug|note|nccl|ucx|pmix|opal|ompi|cuda|http|https"
    r"|rank|task|step|epoch|iter|loss|gpu|time|host|file|line|stdout|stderr)\d*$",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Frame:
    """One line with its context. ``payload`` is what is left after the prefixes."""

    text: str
    payload: str
    host: str | None = None
    pid: int | None = None
    rank: int | None = None  # global rank ([rankN]:, Open MPI tag)
    local_rank: int | None = None  # torchrun tee [defaultN]:
    task: int | None = None  # srun --label task id
    level: str | None = None  # INFO/WARN/TRACE/ERROR/...
    timestamp: str | None = None
    emitter: str | None = None  # nccl, torch, slurm, ompi, ucx, enroot


_SRUN_LABEL = re.compile(r"^ *(?:P\d+ +)?(?P<task>\d{1,18}): ")
_TORCH_RANK = re.compile(r"^\[rank(?P<rank>\d{1,18})\]: ?")
_TORCHRUN_TEE = re.compile(r"^\[(?P<role>[A-Za-z_][A-Za-z_]*?)(?P<local>\d{1,18})\]:")
# Open MPI --tag-output "[1,3]<stdout>:", as SageMaker's launcher prints it "[1,mpirank:3,algo-1]<stdout>:"
# (with the host), and as horovodrun prints it "[3]<stdout>:" (no job id).
_OMPI_TAG = re.compile(
    r"^\[(?:(?P<job>\d{1,18}),)?(?:mpirank:)?(?P<rank>\d{1,18})(?:,(?P<host>[\w.-]+))?\]<(?:stdout|stderr|stddiag)>: ?"
)
_MPICH_LABEL = re.compile(r"^\[(?P<rank>\d{1,18})\] ")
_GLOG_BRACKET = re.compile(
    r"^\[(?P<lvl>[EWIF])(?:(?P<md>\d{4}) (?P<time>\d\d:\d\d:\d\d(?:\.\d+)?))? ?(?:\d+ )?[\w./-]+:\d+\] "
)
_GLOG_BARE = re.compile(r"^(?P<lvl>[EWIF])(?P<md>\d{4}) (?P<time>\d\d:\d\d:\d\d\.\d+) +(?:\d+ )?[\w./-]+:\d+\] ")
_ISO_TS = re.compile(r"^\[?(?P<ts>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\]?(?: |$)")
_SYSLOG = re.compile(
    r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?) (?P<host>[\w.-]+) (?P<prog>[\w./-]+)(?:\[\d+\])?: "
)
_DMESG_TS = re.compile(r"^\[ *(?P<ts>\d+\.\d+)\] ")
# UCX's fatal-error and backtrace lines (ucs/debug): "[host:pid:thread:tid]  ud_ep.c:280  Fatal: ...".
_UCX_FATAL = re.compile(r"^\[(?P<host>[\w.-]+):(?P<pid>\d{1,18}):\d{1,9}:\d{1,18}\] +\S+\.c:\d+ +")
_UCX = re.compile(r"^\[(?P<ts>\d+\.\d+)\] +\[(?P<host>[\w.-]+):(?P<pid>\d{1,18}) *:\w+\] +\S+:\d+ +UCX +(?P<level>[A-Z]+) +")
_OMPI_HOST = re.compile(r"^\[(?P<host>[A-Za-z][\w.-]*):(?P<pid>\d{1,18})\] ")
# DeepSpeed's pdsh runner prefixes each line with the hostfile's name for the node, which is as often an
# IPv4 address ("10.10.23.10: node:pid:tid [0] ... NCCL WARN ...") as a host name.
# The letters before the host's first digit exclude digits, so the digit is found in one pass (with [\w.-]*\d a
# long run of digits makes the match try every split of it).
_PDSH = re.compile(r"^(?P<host>[A-Za-z](?:[^\W\d]|[.-])*\d[\w.-]*|\d{1,3}(?:\.\d{1,3}){3}): ")
# Ray forwards a worker's output as "(RayTrainWorker pid=11904, ip=jwb0582i) ..." / "(pid=1234) ...";
# SkyPilot as "(head, rank=0, pid=1234) ", "(worker1, rank=1, pid=N, ip=X) ", "(setup pid=N, ip=X) "
# (its rank is the node's, not a process's: it is not read as one).
_RAY = re.compile(
    r"^\((?:[A-Za-z_][\w.-]*,? )?(?:rank=\d{1,9}, )?(?:(?:ip=(?P<host0>[\w.:-]+), )?pid=(?P<pid>\d{1,18})"
    r"(?:, ip=(?P<host>[\w.:-]+))?)\) "
)
# vLLM's and similar loggers: "ERROR 02-12 02:14:01 worker_base.py:574] ...", since vLLM 0.8
# "ERROR 05-30 22:22:26 [worker_base.py:620] ...".
_LOGGER_MD = re.compile(
    r"^(?P<lvl>DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<md>\d\d-\d\d) (?P<time>\d\d:\d\d:\d\d)(?:\.\d+)? "
    r"(?:\[[\w./-]+:\d+\]|[\w./-]+:\d+\]) "
)
_LOGGER_LEVELS = {"DEBUG": "DEBUG", "INFO": "INFO", "WARNING": "WARNING", "ERROR": "ERROR", "CRITICAL": "FATAL"}
_NCCL = re.compile(
    r"^(?:\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\] )?"
    r"(?P<host>[^\s:\[\]`*>]+):(?P<pid>\d{1,18}):(?P<tid>\d{1,18}) "
    r"(?:\[(?P<dev>\d{1,18})\] )?(?:\d+(?:\.\d+)? )?"
    r"(?:(?P<src>\S+:(?:\d+|[Xx]+)) (?:\([^)\s]*\) )?)?"  # "XXX": a line number redacted
    r"(?:NCCL )?(?P<level>INFO|WARN|TRACE|CALL|ERROR) ?"  # NCCL 2.0-2.3 printed no "NCCL"
)
# What a paste leaves of an NCCL header: "[0] NCCL INFO ..." or "NCCL WARN ..." with no host:pid:tid,
# or with the host name cut out of it ("::16674:17023 [0] ..."); docs and redacted pastes write the
# source line as "XXX". Net plugins (HPC-X's ib_plugin.c, ucx_plugin.c) and NCCL up to 2.3 (ibvwrap.c)
# name C files.
_NCCL_HOSTLESS = re.compile(
    r"^(?::+\d{1,18}:\d{1,18} )?(?:\[(?P<dev>\d{1,18})\] )?(?:(?P<src>[\w./-]+\.(?:cc|cu|h|cpp|c): ?(?:\d+|[Xx]+)) )?NCCL (?P<level>INFO|WARN|TRACE|ERROR) ?"
)
# Markdown a user's paste wraps lines in: quote markers ("> > "), fences and inline code, bold.
_PASTE_MARKUP = re.compile(r"^(?:(?:> ?)+|`{1,3}(?=\S)|\*\*(?=\S))")
_STEPD_HOST = re.compile(r"slurmstepd-(?P<host>[\w.-]+): ")
_SLURM_LEVEL = re.compile(r"^(?:srun|sbatch|salloc|slurmstepd(?:-[\w.-]+)?): (?P<lvl>error|warning|fatal)?")

_GLOG_LEVELS = {"E": "ERROR", "W": "WARNING", "I": "INFO", "F": "FATAL"}
_MAX_LAYERS = 12


def strip_ansi(text: str) -> str:
    return ANSI_RE.sub("", text) if "\x1b" in text else text


# The stack that fills NCCL_DEBUG=INFO logs: [srun label] [torchrun tee or rank] NCCL header, in one
# match. Whatever it accepts, the general loop below would read the same way (a test checks it).
_COMMON_NCCL = re.compile(
    r"(?: *(?P<task>\d{1,18}): )?(?:\[rank(?P<rank>\d{1,18})\]: ?|\[(?!rank\d+\])[A-Za-z_][A-Za-z_]*?(?P<local>\d{1,18})\]:)?"
    + _NCCL.pattern[1:]
)


def _ascii_bytes_pattern(pattern: str) -> re.Pattern[bytes]:
    """``pattern`` for bytes that reads an ASCII line exactly as the str pattern reads its text.

    On str, ``\\s`` also matches the separators ``\\x1c``-``\\x1f``; on bytes it does not, so they
    are added. ``\\d``, ``\\w`` and ``\\b`` agree on ASCII (a test checks the whole pattern)."""
    out = []
    for token, in_class in regex_walk.tokens(pattern):
        if token == "\\s":
            out.append("\\s\\x1c-\\x1f" if in_class else "[\\s\\x1c-\\x1f]")
        elif token == "\\S":
            assert not in_class, pattern
            out.append("[^\\s\\x1c-\\x1f]")
        else:
            out.append(token)
    return re.compile("".join(out).encode())


# For ASCII lines without escape sequences only (match_common_nccl checks; the scanner checks once per block).
COMMON_NCCL_BYTES = _ascii_bytes_pattern(_COMMON_NCCL.pattern)


def match_common_nccl(line: bytes) -> re.Match[bytes] | None:
    """The scanner's fast path: the common NCCL prefix stack read from an ASCII line's bytes,
    with the groups of :data:`_COMMON_NCCL` (task, rank, local, ts, host, pid, tid, dev, src,
    level), without decoding the line. None when the line is not ASCII, holds an escape sequence,
    or does not start that way: :func:`frame_fields` then reads it."""
    if not line.isascii() or b"\x1b" in line:
        return None
    return COMMON_NCCL_BYTES.match(line)


# What ends the head of most NCCL lines: frame_head reads a line's prefix from the line up to it.
NCCL_INFO = b" NCCL INFO "


def frame_head(line: bytes) -> tuple | None:
    """What :data:`COMMON_NCCL_BYTES` reads off an ASCII line without escape sequences, as the
    scanner ships it: (payload offset, level as bytes, host, pid, rank, local rank, task, level,
    timestamp), or None where it does not match.

    The scanner (its loop without the compiled core) calls this with the line cut just after its
    first :data:`NCCL_INFO`, and keeps the answer per cut: every line of a process starts alike.
    The cut does not change the answer, because no way through the pattern reads past a head
    ending in ``INFO``: it would have to take the head's last byte, a space, and go on, and the
    only parts of the pattern that end on a space and are followed by more (a ``task: `` label,
    ``[rankN]: ``, a timestamp, ``host:pid:tid ``, ``[dev] ``, a number, ``src:line ``,
    ``(func) ``, ``NCCL ``) cannot end on ``INFO `` (``tests/input/test_framing.py`` compares
    both on prefix stacks with any tail); the pattern's last part, ``LEVEL ?``, ends the match.
    Every other step reads no further than a space before it (host, source and the rest stop at
    one; the ``rank`` look-ahead stops at its first byte that is neither a digit nor ``]``)."""
    m = COMMON_NCCL_BYTES.match(line)
    if m is None:
        return None
    task, rank, local, ts, host, pid, _, _, _, level = m.groups()
    return (
        m.end(), level, host.decode("ascii"), int(pid), int(rank) if rank else None, int(local) if local else None,
        int(task) if task else None, level.decode("ascii"), ts.decode("ascii") if ts else None,
    )  # fmt: skip


def frame(line: str) -> Frame:
    """Parse ``line`` (without its terminator) into a :class:`Frame`."""
    text = strip_ansi(line)
    m = _COMMON_NCCL.match(text)
    if m is None:
        return frame_general(text)
    _, cut, *context = _common_fields(text, m)
    return Frame(text, text[cut:], *context)


def frame_fields(line: str) -> tuple:
    """The scanner's form of :func:`frame`: ``(text, payload offset in text, host, pid, rank,
    local_rank, task, level, timestamp, emitter)``, without building a Frame on the common path."""
    text = strip_ansi(line)
    m = _COMMON_NCCL.match(text)
    if m is not None:
        return _common_fields(text, m)
    f = frame_general(text)
    return (text, len(text) - len(f.payload), f.host, f.pid, f.rank, f.local_rank, f.task, f.level, f.timestamp,
            f.emitter)  # fmt: skip


def _common_fields(text: str, m: re.Match) -> tuple:
    task, rank, local, ts, host, pid, _, _, _, level = m.groups()
    return (
        text, m.end(), host, int(pid), int(rank) if rank else None, int(local) if local else None,
        int(task) if task else None, level, ts, "nccl",
    )  # fmt: skip


def frame_general(text: str) -> Frame:
    """The layer-by-layer reading of every prefix stack ``frame`` knows (``text`` without ANSI)."""
    payload = text
    ctx: dict = {}

    for _ in range(_MAX_LAYERS):
        m = _SRUN_LABEL.match(payload)
        if m:
            ctx.setdefault("task", int(m["task"]))
            payload = payload[m.end() :]
            continue
        if payload.startswith("["):
            m = _TORCH_RANK.match(payload)
            if m:
                ctx.setdefault("rank", int(m["rank"]))
                ctx.setdefault("emitter", "torch")
                payload = payload[m.end() :]
                continue
            m = _OMPI_TAG.match(payload)
            if m:
                ctx.setdefault("rank", int(m["rank"]))
                if m["host"]:
                    ctx.setdefault("host", m["host"])
                payload = payload[m.end() :]
                continue
            m = _TORCHRUN_TEE.match(payload)
            if m:
                ctx.setdefault("local_rank", int(m["local"]))
                payload = payload[m.end() :]
                continue
            m = _GLOG_BRACKET.match(payload)
            if m:
                ctx.setdefault("level", _GLOG_LEVELS[m["lvl"]])
                if m["time"]:
                    ctx.setdefault("timestamp", f"{m['md']} {m['time']}")
                ctx.setdefault("emitter", "torch")
                payload = payload[m.end() :]
                continue
            m = _UCX.match(payload)
            if m:
                ctx.setdefault("host", m["host"])
                ctx.setdefault("pid", int(m["pid"]))
                ctx.setdefault("level", m["level"])
                ctx.setdefault("timestamp", m["ts"])
                ctx["emitter"] = "ucx"
                payload = payload[m.end() :]
                continue
            m = _UCX_FATAL.match(payload)
            if m:
                ctx.setdefault("host", m["host"])
                ctx.setdefault("pid", int(m["pid"]))
                ctx["emitter"] = "ucx"
                payload = payload[m.end() :]
                continue
            m = _NCCL.match(payload)  # 2.26+ WARN: "[date time] host:pid:tid ..."
            if m:
                _take_nccl(ctx, m)
                payload = payload[m.end() :]
                break
            m = _ISO_TS.match(payload) or _DMESG_TS.match(payload)
            if m:
                ctx.setdefault("timestamp", m["ts"])
                payload = payload[m.end() :]
                continue
            m = _OMPI_HOST.match(payload)
            if m:
                ctx.setdefault("host", m["host"])
                ctx.setdefault("pid", int(m["pid"]))
                ctx.setdefault("emitter", "ompi")
                payload = payload[m.end() :]
                continue
            m = _NCCL_HOSTLESS.match(payload)
            if m:
                _take_hostless_nccl(ctx, m)
                payload = payload[m.end() :]
                break
            m = _MPICH_LABEL.match(payload)
            if m:
                ctx.setdefault("rank", int(m["rank"]))
                payload = payload[m.end() :]
                continue
            cut = launchers.peel(payload, ctx)
            if cut:
                payload = payload[cut:]
                continue
            break
        m = _NCCL.match(payload)
        if m:
            _take_nccl(ctx, m)
            payload = payload[m.end() :]
            break
        m = _NCCL_HOSTLESS.match(payload)
        if m:
            _take_hostless_nccl(ctx, m)
            payload = payload[m.end() :]
            break
        m = _PASTE_MARKUP.match(payload)
        if m and m.end():
            payload = payload[m.end() :]
            continue
        m = _GLOG_BARE.match(payload)
        if m:
            ctx.setdefault("level", _GLOG_LEVELS[m["lvl"]])
            ctx.setdefault("timestamp", f"{m['md']} {m['time']}")
            payload = payload[m.end() :]
            continue
        m = _ISO_TS.match(payload)
        if m:
            ctx.setdefault("timestamp", m["ts"])
            payload = payload[m.end() :]
            continue
        m = _SYSLOG.match(payload)
        if m:
            ctx.setdefault("timestamp", m["ts"])
            ctx.setdefault("host", m["host"])
            payload = payload[m.end() :]
            continue
        m = _RAY.match(payload)
        if m:
            ctx.setdefault("pid", int(m["pid"]))
            if m["host"] or m["host0"]:
                ctx.setdefault("host", m["host"] or m["host0"])
            payload = payload[m.end() :]
            continue
        m = _LOGGER_MD.match(payload)
        if m:
            ctx.setdefault("level", _LOGGER_LEVELS[m["lvl"]])
            ctx.setdefault("timestamp", f"{m['md'].replace('-', '')} {m['time']}")
            payload = payload[m.end() :]
            continue
        m = _PDSH.match(payload)
        if m and not _NOT_HOSTS.match(m["host"]) and not m["host"].startswith("slurmstepd"):
            ctx.setdefault("host", m["host"])
            payload = payload[m.end() :]
            continue
        cut = launchers.peel(payload, ctx)
        if cut:
            payload = payload[cut:]
            continue
        break

    if "emitter" not in ctx:
        m = _SLURM_LEVEL.match(payload)
        if m:
            ctx["emitter"] = "slurm"
            if m["lvl"]:
                ctx.setdefault("level", m["lvl"].upper())
            step = _STEPD_HOST.match(payload)
            if step:
                ctx.setdefault("host", step["host"])
        elif payload.startswith("NCCL version "):
            ctx["emitter"] = "nccl"
    return Frame(text=text, payload=payload, **ctx)


def _take_nccl(ctx: dict, m: re.Match) -> None:
    ctx["emitter"] = "nccl"
    ctx["host"] = m["host"]
    ctx["pid"] = int(m["pid"])
    ctx["level"] = m["level"]
    if m["ts"]:
        ctx.setdefault("timestamp", m["ts"])


def _take_hostless_nccl(ctx: dict, m: re.Match) -> None:
    ctx["emitter"] = "nccl"
    ctx.setdefault("level", m["level"])
