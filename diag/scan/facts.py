"""Facts: what the logs say about each host and the job as a whole.

Fact signatures are scanned together with the rules' signatures (one pass); each hit updates
per-process, per-host and per-job records. Everything is bounded by the number of distinct
hosts/processes, never by the size of the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diag.catalog.literals import best_literal, bound_digit_runs
from diag.catalog.model import Signature
from diag.input.framing import Frame

MAX_VALUES = 64
# Where NCCL lines of a paste carry no host:pid:tid, their facts still count, under this name; it
# is never counted as a node.
UNNAMED_HOST = "(host not shown)"


# How an observation acts on the facts, declared once with its pattern; diag.scan.fold reads it to
# know which repeats it may fold into a count:
#   "set"       adds to sets and counts (repeats commute)
#   "last-wins" overwrites a per-key value (a process's rank, a host's setting): see overwrites()
#   "counter"   increments a HostFacts counter: see counter()
#   "ordered"   its effect depends on order or on every sighting (progress, result rows): never folded
FACT_KINDS = ("set", "last-wins", "counter", "ordered")
FACT_KIND: dict[str, str] = {}


def _sig(name: str, pattern: str, literal: str | None = None, kind: str = "set") -> Signature:
    lit = literal or best_literal(pattern)
    assert lit, pattern
    assert kind in FACT_KINDS and FACT_KIND.setdefault(name, kind) == kind, (name, kind)
    return Signature(name, bound_digit_runs(pattern), lit, None, (), True)


# The "-T" timestamp nccl-tests may end a result row with (util.cu TIME_STRING_FORMAT), then the line end.
TESTS_STAMP = r"(?:\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)?\s*$"


FACT_SIGNATURES: tuple[Signature, ...] = (
    _sig("using_network", r"^Using network (?P<net>.+?)\s*$"),
    # NCCL 2.3 (init.cu): "Using internal Network IB", "Using external Network <plugin>".
    _sig("using_network", r"^Using internal Network (?P<net>.+?)\s*$"),
    _sig("using_network", r"^Using external Network (?P<net>.+?)\s*$"),
    _sig("assigned_net", r"^Assigned NET plugin (?P<net>\S+) to comm"),
    _sig("channel_net", r"\[(?:send|receive)\] via NET/(?P<net>[^/\s]+)/(?P<dev>\d+)(?P<gdr>/GDRDMA)?", kind="counter"),
    _sig("ib_using", r"^NET/IB ?: Using (?P<devs>.*?)(?:\[RO\])?; OOB (?P<oob>\S+)", "NET/IB"),
    _sig("ib_no_device", r"^NET/IB ?: No device found"),
    _sig("socket_using", r"^NET/Socket ?: Using (?P<ifs>.+)$"),
    _sig("env_echo", r"^(?P<var>[A-Z][A-Z0-9_]+) set by environment to (?P<value>.*?)\.?\s*$", " set by environment to ", kind="last-wins"),
    _sig("hca_echo", r"^(?P<var>NCCL_IB_HCA) set to (?P<value>\S+)", "NCCL_IB_HCA set to ", kind="last-wins"),
    _sig("hca_echo", r"^(?P<var>NCCL_SOCKET_IFNAME) set to (?P<value>\S+)", "NCCL_SOCKET_IFNAME set to ", kind="last-wins"),
    _sig("nnodes", r"nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+)"),
    _sig("comm_rank", r"comm 0x[0-9a-f]+ rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<dev>\d+)", kind="last-wins"),
    _sig("nccl_version", r"NCCL version (?P<version>\d+\.\d+\.\d+)"),
    _sig("bootstrap_if", r"^Bootstrap ?: Using (?:\[\d+\])?(?P<iface>[^\s:]+):(?P<addr>\S+)", "Bootstrap"),
    _sig("slurm_nodes", r"\bSLURM_(?:JOB_NUM_NODES|NNODES)=(?P<n>\d+)", "SLURM_"),
    _sig("slurm_task_host", r"^srun: error: (?P<host>[\w.-]+): tasks? (?P<task>[\d,-]+): "),
    # Fabric/collective facts (per rank or per test row; read by the nodes and collectives analyzers).
    _sig("work_nccl", r"WorkNCCL\((?:SeqNum=(?P<seq>-?\d+), )?OpType=(?P<op>\w+)(?:[^)]*?Timeout\(ms\)=(?P<timeout>\d+))?", kind="ordered"),
    _sig("pg_status", r"[Ll]ast enqueued (?:NCCL )?work: (?P<enq>-?\d+), last completed (?:NCCL )?work: (?P<done>-?\d+)",
         "ast enqueued ", kind="ordered"),
    _sig("nic_rate", r"\+ NET\[(?P<bw>\d+(?:\.\d+)?)\] - NET/(?P<dev>\S+)", "+ NET["),
    # nccl-tests result rows (src/common.cu, src/util.cu): size count type redop root, then time algbw
    # busbw #wrong out of place and in place; "-T" (2.18+) appends a timestamp. Rooted collectives
    # (broadcast, gather, scatter) print redop "none" and their root instead of -1; "-J" (2026+)
    # adds min/max/p99/cv% after each #wrong.
    _sig("busbw_row", r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+-1\s+(?P<t1>[\d.]+)\s+"
         r"(?P<algbw1>[\d.]+)\s+(?P<busbw1>[\d.]+)\s+(?P<wrong1>\d+|N/A)(?:\s+(?P<t2>[\d.]+)\s+(?P<algbw2>[\d.]+)\s+"
         r"(?P<busbw2>[\d.]+)\s+(?P<wrong2>\d+|N/A))?" + TESTS_STAMP, "      -1  ", kind="ordered"),
    _sig("busbw_row", r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+none\s+\d+\s+(?P<t1>[\d.]+)\s+"
         r"(?P<algbw1>[\d.]+)\s+(?P<busbw1>[\d.]+)\s+(?P<wrong1>\d+|N/A)(?:\s+(?P<t2>[\d.]+)\s+(?P<algbw2>[\d.]+)\s+"
         r"(?P<busbw2>[\d.]+)\s+(?P<wrong2>\d+|N/A))?" + TESTS_STAMP, "  none  ", kind="ordered"),
    _sig("busbw_row", r"^\s*(?P<size>\d+)\s+(?P<count>\d+)\s+(?P<type>\w+)\s+(?P<redop>\w+)\s+-1\s+(?P<t1>[\d.]+)\s+"
         r"(?P<algbw1>[\d.]+)\s+(?P<busbw1>[\d.]+)\s+(?P<wrong1>\d+|N/A)(?:\s+[\d.]+){4}\s+(?P<t2>[\d.]+)\s+"
         r"(?P<algbw2>[\d.]+)\s+(?P<busbw2>[\d.]+)\s+(?P<wrong2>\d+|N/A)(?:\s+[\d.]+){4}" + TESTS_STAMP, "      -1  ",
         kind="ordered"),
    # What kinds of output the logs hold at all (the report's coverage): Slurm's own messages and a
    # launcher's. Such lines are few, so making them candidates costs nothing measurable.
    _sig("slurm_message", r"^srun: ", "srun: "),
    _sig("slurm_message", r"^sbatch: ", "sbatch: "),
    _sig("slurm_message", r"^salloc: ", "salloc: "),
    _sig("slurm_message", r"^slurmstepd(?:-[\w.-]+)?: ", "slurmstepd"),
    _sig("launcher", r"\btorch\.distributed\.(?:elastic|run|launch)\b", "torch.distributed."),
    _sig("launcher", r"\btorchrun\b", "torchrun"),
    _sig("launcher", r"\bmpirun\b", "mpirun"),
    _sig("launcher", r"\bmpiexec\b", "mpiexec"),
    _sig("launcher", r"\bprterun\b", "prterun"),
    # nccl-tests' device list (2.13+; a markdown paste drops the '#').
    _sig("tests_device", r"(?:#|^)\s*Rank\s+(?P<rank>\d+)\s+Group\s+\d+\s+Pid\s+\d+\s+on\s+(?P<host>\S+)\s+device\s+"
         r"\d+\s+\[[^\]]+\]\s+(?P<gpu>.+?)\s*$", " Group "),
)  # fmt: skip


# The last-wins key of a process's rank, (RANK_OF, host, pid): diag.scan.fold (and the compiled core through it)
# reads it to know the rank a line without one of its own gets.
RANK_OF = "rank_of"
HOST_OF = "host_of"  # the last-wins key of a rank's host, (HOST_OF, rank)

ORDER_DEPENDENT = frozenset(name for name, kind in FACT_KIND.items() if kind == "ordered")


# Facts whose text only NCCL prints: they count for the unnamed host even when a paste dropped the whole
# "host:pid:tid [dev] NCCL INFO" header.
_NCCL_ONLY_TEXT = frozenset({"channel_net"})


def overwrites(name: str, groups: dict, host: str | None, pid: int | None) -> tuple[tuple[tuple, object], ...]:
    """The last-wins entries an observation sets, as (key, value): what may change between two
    sightings of the same line. What each one sets mirrors :meth:`Facts.observe`."""
    if FACT_KIND.get(name) != "last-wins":
        return ()
    if name == "comm_rank" and host and pid is not None:
        rank = int(groups["rank"])
        return (((RANK_OF, host, pid), rank), ((HOST_OF, rank), host))
    if name in ("env_echo", "hca_echo") and host:
        return ((("env", host, groups["var"]), groups["value"]),)
    return ()


def counter(name: str, groups: dict) -> str | None:
    """The HostFacts counter an observation increments, if any (a repeat adds one more)."""
    if FACT_KIND.get(name) == "counter" and name == "channel_net" and groups["net"] == "IB":
        return "gdr_channels" if groups["gdr"] else "plain_ib_channels"
    return None


@dataclass
class HostFacts:
    host: str
    first: tuple[int, int]
    nets: set[str] = field(default_factory=set)  # networks NCCL chose (IB, Socket, plugin name)
    channel_nets: set[str] = field(default_factory=set)  # networks seen on NET channel lines
    gdr_channels: int = 0
    plain_ib_channels: int = 0
    hcas: list[str] = field(default_factory=list)  # from "NET/IB : Using [0]mlx5_0:1/IB ..."
    ib_no_device: bool = False
    env: dict[str, str] = field(default_factory=dict)
    versions: set[str] = field(default_factory=set)
    bootstrap_ifaces: set[str] = field(default_factory=set)
    ranks: set[int] = field(default_factory=set)
    roce: bool = False  # an HCA NCCL uses is RoCE ("NET/IB : Using [0]mlx5_0:1/RoCE")
    nic_rate_gbs: float | None = None  # per-NIC GB/s from the topology dump ("+ NET[50.0] - NET/0")

    def uses_socket(self) -> bool:
        return "Socket" in self.nets or "Socket" in self.channel_nets

    def uses_ib(self) -> bool:
        return bool(self.hcas) or "IB" in self.nets or "IB" in self.channel_nets


@dataclass
class RankCollective:
    """What the PyTorch watchdog said about one rank's collectives (first failure, progress)."""

    order: tuple[int, int]
    timestamp: str | None
    kind: str | None = None  # "timeout" (watchdog caught) or "error" (async exception) of the first failure
    seq: int | None = None  # SeqNum of the first failing collective
    op: str | None = None
    timeout_ms: int | None = None
    min_enqueued: int | None = None
    max_completed: int | None = None


@dataclass
class BusbwRow:
    """One row of an nccl-tests result table: message size, best busbw of the row, wrong results."""

    order: tuple[int, int]
    text: str
    size: int
    busbw: float
    wrong: int | None


_PG_RANK_RE = re.compile(r"\bRank (\d{1,18})\]")
_HCA_RE = re.compile(r"\[\d+\]([\w.-]+:\d+)(?::\d+:\d+)?/(?:IB|RoCE)")


@dataclass
class Facts:
    hosts: dict[str, HostFacts] = field(default_factory=dict)
    env: dict[str, list[str]] = field(default_factory=dict)  # job-wide: var -> values seen
    max_nnodes: int = 0
    max_nranks: int = 0
    slurm_nodes: int = 0
    slurm_task_hosts: set[str] = field(default_factory=set)
    rank_of_process: dict[tuple[str, int], int] = field(default_factory=dict)
    host_of_rank: dict[int, str] = field(default_factory=dict)
    versions: set[str] = field(default_factory=set)
    collectives: dict[int, RankCollective] = field(default_factory=dict)
    busbw_rows: list[BusbwRow] = field(default_factory=list)
    tests_hosts: set[str] = field(default_factory=set)
    tests_gpus: set[str] = field(default_factory=set)
    # nccl-tests' "#  Rank  0 ... on HOST" line per host (first seen): (order, text). One run prints it on
    # one host; a host of its own means that process ran a world of its own.
    tests_rank0: dict[str, tuple[tuple[int, int], str]] = field(default_factory=dict)
    nccl_info: bool = False  # an NCCL INFO line was read (NCCL_DEBUG=INFO)
    slurm_messages: bool = False  # srun/sbatch/salloc/slurmstepd printed something
    launcher: bool = False  # torchrun / torch.distributed / mpirun printed something

    def host(self, name: str, order: tuple[int, int]) -> HostFacts:
        facts = self.hosts.get(name)
        if facts is None:
            facts = self.hosts[name] = HostFacts(name, order)
        return facts

    def observe_frame(self, frame: Frame, order: tuple[int, int]) -> None:
        if frame.emitter == "nccl" and frame.level == "INFO":
            self.nccl_info = True
        elif frame.emitter == "slurm":
            self.slurm_messages = True
        if frame.host and frame.emitter in ("nccl", "ucx", "ompi") and len(self.hosts) < 10_000:
            self.host(frame.host, order)

    def observe_rank_line(
        self, host: str, pid: int, emitter: str | None, level: str | None, m: dict, order: tuple[int, int]
    ) -> None:
        """:meth:`observe_frame` then :meth:`observe` of a line with a host and a pid whose only match is
        ``comm_rank``: the same effects in the same order, without a Frame. A dense NCCL log applies
        tens of thousands of them (each gives a process its rank in the next communicator)."""
        if emitter == "nccl" and level == "INFO":
            self.nccl_info = True
        elif emitter == "slurm":
            self.slurm_messages = True
        if emitter in ("nccl", "ucx", "ompi") and len(self.hosts) < 10_000:
            self.host(host, order)
        hf = self.host(host, order)
        rank = int(m["rank"])
        self.max_nranks = max(self.max_nranks, int(m["nranks"]))
        self.rank_of_process[(host, pid)] = rank
        if len(self.host_of_rank) < 100_000:
            self.host_of_rank[rank] = host
        if len(hf.ranks) < 4096:
            hf.ranks.add(rank)

    def observe(self, sig: Signature, m, frame: Frame, order: tuple[int, int]) -> None:
        name = sig.name
        if name == "slurm_message" or name == "launcher":
            # Only whether such output exists; a slurmstepd-HOST prefix must not make HOST a fact host.
            if name == "slurm_message":
                self.slurm_messages = True
            else:
                self.launcher = True
            return
        # An NCCL record whose header lost its host:pid:tid (a paste) still tells about a host; so does
        # a channel line pasted without any header, since only NCCL prints "[send] via NET/...".
        host = frame.host or (
            UNNAMED_HOST if (frame.emitter == "nccl" and frame.level) or name in _NCCL_ONLY_TEXT else None
        )
        hf = self.host(host, order) if host else None
        if name == "using_network" or name == "assigned_net":
            if hf:
                hf.nets.add(m["net"])
        elif name == "channel_net":
            if hf:
                hf.channel_nets.add(m["net"])
                if m["net"] == "IB":
                    if m["gdr"]:
                        hf.gdr_channels += 1
                    else:
                        hf.plain_ib_channels += 1
        elif name == "ib_using":
            if hf:
                hf.roce = hf.roce or "/RoCE" in m["devs"]
                for hca in _HCA_RE.findall(m["devs"]):
                    if hca not in hf.hcas and len(hf.hcas) < MAX_VALUES:
                        hf.hcas.append(hca)
        elif name == "ib_no_device":
            if hf:
                hf.ib_no_device = True
        elif name in ("env_echo", "hca_echo"):
            var, value = m["var"], m["value"]
            values = self.env.setdefault(var, [])
            if value not in values and len(values) < MAX_VALUES:
                values.append(value)
            if hf:
                hf.env[var] = value
        elif name == "nnodes":
            self.max_nnodes = max(self.max_nnodes, int(m["nnodes"]))
            self.max_nranks = max(self.max_nranks, int(m["nranks"]))
        elif name == "comm_rank":
            self.max_nranks = max(self.max_nranks, int(m["nranks"]))
            if frame.host and frame.pid is not None:
                self.rank_of_process[(frame.host, frame.pid)] = int(m["rank"])
                if len(self.host_of_rank) < 100_000:
                    self.host_of_rank[int(m["rank"])] = frame.host
                if hf and len(hf.ranks) < 4096:
                    hf.ranks.add(int(m["rank"]))
        elif name == "nccl_version":
            self.versions.add(m["version"])
            if hf:
                hf.versions.add(m["version"])
        elif name == "bootstrap_if":
            if hf:
                hf.bootstrap_ifaces.add(m["iface"])
        elif name == "slurm_nodes":
            self.slurm_nodes = max(self.slurm_nodes, int(m["n"]))
        elif name == "slurm_task_host" and len(self.slurm_task_hosts) < 10_000:
            self.slurm_task_hosts.add(m["host"])
        elif name in ("work_nccl", "pg_status"):
            self._observe_collective(name, m, frame, order)
        elif name == "nic_rate":
            if hf:
                hf.nic_rate_gbs = max(hf.nic_rate_gbs or 0.0, float(m["bw"]))
        elif name == "busbw_row" and len(self.busbw_rows) < 10_000:
            busbw = max(float(m["busbw1"]), float(m["busbw2"] or 0))
            wrongs = [int(w) for w in (m["wrong1"], m["wrong2"]) if w and w.isdigit()]
            row = BusbwRow(order, frame.text[:300], int(m["size"]), busbw, sum(wrongs) if wrongs else None)
            self.busbw_rows.append(row)
        elif name == "tests_device" and len(self.tests_hosts) < 10_000:
            self.tests_hosts.add(m["host"])
            self.tests_gpus.add(m["gpu"])
            if m["rank"] == "0" and m["host"] not in self.tests_rank0:
                self.tests_rank0[m["host"]] = (order, frame.text[:300])

    def _observe_collective(self, name: str, m, frame: Frame, order: tuple[int, int]) -> None:
        rank = frame.rank
        if rank is None:
            found = _PG_RANK_RE.search(frame.payload)
            rank = int(found[1]) if found else None
        if rank is None or (rank not in self.collectives and len(self.collectives) >= 100_000):
            return
        state = self.collectives.get(rank)
        if state is None:
            state = self.collectives[rank] = RankCollective(order, frame.timestamp)
        if name == "work_nccl":
            if state.kind is None and m["seq"] is not None:
                text = frame.payload
                if "Watchdog caught collective operation timeout" in text:
                    state.kind = "timeout"
                elif "raised the following async exception" in text or "exception" in text:
                    state.kind = "error"
                else:
                    return
                state.seq, state.op = int(m["seq"]), m["op"]
                state.timeout_ms = int(m["timeout"]) if m["timeout"] else None
                state.order, state.timestamp = order, frame.timestamp
        else:
            enq, done = int(m["enq"]), int(m["done"])
            state.min_enqueued = enq if state.min_enqueued is None else min(state.min_enqueued, enq)
            state.max_completed = done if state.max_completed is None else max(state.max_completed, done)

    # --- questions the diagnosis asks -------------------------------------------------------
    def node_count(self) -> int:
        named = len(self.hosts) - (UNNAMED_HOST in self.hosts)
        return max(self.max_nnodes, named, self.slurm_nodes, len(self.slurm_task_hosts))

    def saw_nccl_info(self) -> bool:
        """Whether NCCL_DEBUG=INFO output was read: an INFO line, or a fact only INFO lines give."""
        return (
            self.nccl_info
            or self.max_nranks > 0
            or any(
                h.nets or h.channel_nets or h.hcas or h.ib_no_device or h.bootstrap_ifaces for h in self.hosts.values()
            )
        )

    def multi_node(self) -> bool:
        return self.node_count() > 1

    def nodes_known(self) -> bool | None:
        """Three-valued: True when the logs show several nodes, False when they show one (NCCL's
        ``nNodes 1``, ``SLURM_NNODES=1``), None when they do not say (an excerpt of one host)."""
        if self.multi_node():
            return True
        if self.max_nnodes == 1 or self.slurm_nodes == 1 or len(self.tests_hosts) == 1:
            return False  # nccl-tests lists the host of every rank it runs
        return None

    def env_values(self, var: str) -> list[str]:
        return self.env.get(var, [])

    def rank_for(self, host: str | None, pid: int | None) -> int | None:
        if host is None or pid is None:
            return None
        return self.rank_of_process.get((host, pid))

    def to_json(self) -> dict:
        return {
            "nodes": self.node_count(),
            "ranks": self.max_nranks or None,
            "nccl_versions": sorted(self.versions),
            "env": {k: v for k, v in sorted(self.env.items())},
            "hosts": {
                name: {
                    "network": sorted(h.nets | h.channel_nets),
                    "hcas": h.hcas,
                    "gdr": (h.gdr_channels > 0) if (h.gdr_channels or h.plain_ib_channels) else None,
                    "nccl_versions": sorted(h.versions),
                    "bootstrap_interfaces": sorted(h.bootstrap_ifaces),
                    "env": dict(sorted(h.env.items())),
                }
                for name, h in sorted(self.hosts.items())
            },
        }
