"""Facts: what the logs say about each host and the job as a whole.

Fact signatures are scanned together with the rules' signatures (one pass); each hit updates
per-process, per-host and per-job records. Everything is bounded by the number of distinct
hosts/processes, never by the size of the log.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from diag.framing import Frame
from diag.literals import best_literal
from diag.rules import Signature

MAX_VALUES = 64


def _sig(name: str, pattern: str, literal: str | None = None) -> Signature:
    lit = literal or best_literal(pattern)
    assert lit, pattern
    return Signature(name, pattern, lit, None, (), True)


FACT_SIGNATURES: tuple[Signature, ...] = (
    _sig("using_network", r"^Using network (?P<net>.+?)\s*$"),
    _sig("assigned_net", r"^Assigned NET plugin (?P<net>\S+) to comm"),
    _sig("channel_net", r"\[(?:send|receive)\] via NET/(?P<net>[^/\s]+)/(?P<dev>\d+)(?P<gdr>/GDRDMA)?"),
    _sig("ib_using", r"^NET/IB ?: Using (?P<devs>.*?)(?:\[RO\])?; OOB (?P<oob>\S+)"),
    _sig("ib_no_device", r"^NET/IB ?: No device found"),
    _sig("socket_using", r"^NET/Socket ?: Using (?P<ifs>.+)$"),
    _sig("env_echo", r"^(?P<var>[A-Z][A-Z0-9_]+) set by environment to (?P<value>.*?)\.?\s*$", " set by environment to "),
    _sig("hca_echo", r"^(?P<var>NCCL_IB_HCA|NCCL_SOCKET_IFNAME) set to (?P<value>\S+)", " set to "),
    _sig("nnodes", r"nRanks (?P<nranks>\d+) nNodes (?P<nnodes>\d+)"),
    _sig("comm_rank", r"comm 0x[0-9a-f]+ rank (?P<rank>\d+) nranks (?P<nranks>\d+) cudaDev (?P<dev>\d+)"),
    _sig("nccl_version", r"NCCL version (?P<version>\d+\.\d+\.\d+)"),
    _sig("bootstrap_if", r"^Bootstrap ?: Using (?:\[\d+\])?(?P<iface>[^\s:]+):(?P<addr>\S+)", "Using "),
    _sig("slurm_nodes", r"\bSLURM_(?:JOB_NUM_NODES|NNODES)=(?P<n>\d+)", "SLURM_"),
    _sig("slurm_task_host", r"^srun: error: (?P<host>[\w.-]+): tasks? (?P<task>[\d,-]+): "),
)  # fmt: skip


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

    def uses_socket(self) -> bool:
        return "Socket" in self.nets or "Socket" in self.channel_nets

    def uses_ib(self) -> bool:
        return bool(self.hcas) or "IB" in self.nets or "IB" in self.channel_nets


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

    def host(self, name: str, order: tuple[int, int]) -> HostFacts:
        facts = self.hosts.get(name)
        if facts is None:
            facts = self.hosts[name] = HostFacts(name, order)
        return facts

    def observe_frame(self, frame: Frame, order: tuple[int, int]) -> None:
        if frame.host and frame.emitter in ("nccl", "ucx", "ompi") and len(self.hosts) < 10_000:
            self.host(frame.host, order)

    def observe(self, sig: Signature, m, frame: Frame, order: tuple[int, int]) -> None:
        name = sig.name
        hf = self.host(frame.host, order) if frame.host else None
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

    # --- questions the diagnosis asks -------------------------------------------------------
    def node_count(self) -> int:
        return max(self.max_nnodes, len(self.hosts), self.slurm_nodes, len(self.slurm_task_hosts))

    def multi_node(self) -> bool:
        return self.node_count() > 1

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
