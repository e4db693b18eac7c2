"""Template miners behind one adapter: our own small Drain, or the ``drain3`` package when installed.

Drain (He et al., ICWS 2017) routes a line down a fixed-depth parse tree (its token count, then its
first tokens; a token with a digit or a placeholder goes down the ``<*>`` branch) to a short list
of clusters, joins the most similar one (the share of positions whose tokens are equal) if that
share reaches the threshold, and turns the positions where they differ into ``<*>``; else it opens
a cluster. The lines reaching a miner here are masked already (diag.input.mask), so the miner does
no masking of its own.

``drain3`` (MIT, dormant since 2022) is optional (``pip install 'slurmdiag[templates]'``): our own
miner is the default so that no new dependency is required, and both sit behind :class:`Miner`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diag.input.mask import PLACEHOLDER_RE

WILDCARD = "<*>"
MINERS = ("drain", "drain3")


class MinerUnavailable(Exception):
    """The named miner cannot run here (drain3 not installed); the message says what to do."""


class Miner:
    """What ``fleet templates`` needs of a miner: learn a line (its cluster id), match a line
    without learning (a cluster id or None), and a cluster's template."""

    name = ""

    def add(self, line: str) -> int:
        raise NotImplementedError

    def match(self, line: str) -> int | None:
        raise NotImplementedError

    def template(self, cluster: int) -> str:
        raise NotImplementedError


def tokens(line: str) -> list[str]:
    return line.split()


def _has_param(token: str) -> bool:
    return token == WILDCARD or any(c.isdigit() for c in token) or PLACEHOLDER_RE.search(token) is not None


@dataclass
class _Cluster:
    template: list[str]
    size: int = 0


@dataclass
class _Node:
    children: dict[str, _Node] = field(default_factory=dict)
    clusters: list[int] = field(default_factory=list)


class DrainMiner(Miner):
    """Drain with a fixed-depth tree. ``depth`` counts the root and the length layer, as Drain3's
    does: depth 4 routes on the first two tokens."""

    name = "drain"

    def __init__(self, sim_th: float = 0.5, depth: int = 4, max_children: int = 100) -> None:
        if depth < 3:
            raise ValueError("depth must be at least 3")
        self.sim_th = sim_th
        self.prefix = depth - 2
        self.max_children = max_children
        self.root = _Node()
        self.clusters: list[_Cluster] = []

    def _leaf(self, toks: list[str], create: bool) -> _Node | None:
        node = self.root.children.get(str(len(toks)))
        if node is None:
            if not create:
                return None
            node = self.root.children[str(len(toks))] = _Node()
        for token in toks[: self.prefix]:
            key = WILDCARD if _has_param(token) else token
            child = node.children.get(key)
            if child is None and key != WILDCARD:
                child = node.children.get(WILDCARD) if not create else None
            if child is None:
                if not create:
                    return None
                if key != WILDCARD and len(node.children) >= self.max_children:
                    key = WILDCARD  # a full layer sends new tokens down the wildcard branch
                child = node.children.setdefault(key, _Node())
            node = child
        return node

    @staticmethod
    def _similarity(template: list[str], toks: list[str]) -> tuple[float, int]:
        same = params = 0
        for a, b in zip(template, toks):
            if a == WILDCARD:
                params += 1
            elif a == b:
                same += 1
        return (same / len(toks) if toks else 1.0), params

    def _best(self, leaf: _Node, toks: list[str], threshold: float) -> int | None:
        best, best_key = None, (-1.0, -1)
        for cid in leaf.clusters:
            sim, params = self._similarity(self.clusters[cid].template, toks)
            if sim >= threshold and (sim, params) > best_key:
                best, best_key = cid, (sim, params)
        return best

    def add(self, line: str) -> int:
        toks = tokens(line)
        leaf = self._leaf(toks, create=True)
        assert leaf is not None
        cid = self._best(leaf, toks, self.sim_th)
        if cid is None:
            cid = len(self.clusters)
            self.clusters.append(_Cluster(list(toks)))
            leaf.clusters.append(cid)
        else:
            cluster = self.clusters[cid]
            cluster.template = [a if a == b else WILDCARD for a, b in zip(cluster.template, toks)]
        self.clusters[cid].size += 1
        return cid

    def match(self, line: str) -> int | None:
        """The cluster whose template fits ``line`` exactly (every non-wildcard token equal)."""
        toks = tokens(line)
        leaf = self._leaf(toks, create=False)
        if leaf is None:
            return None
        for cid in leaf.clusters:
            template = self.clusters[cid].template
            if all(a in (WILDCARD, b) for a, b in zip(template, toks)):
                return cid
        return None

    def template(self, cluster: int) -> str:
        return " ".join(self.clusters[cluster].template)


class Drain3Miner(Miner):
    """The ``drain3`` package through the same interface (its masking off: lines come masked)."""

    name = "drain3"

    def __init__(self, sim_th: float = 0.5, depth: int = 4, max_children: int = 100) -> None:
        try:
            from drain3 import TemplateMiner
            from drain3.template_miner_config import TemplateMinerConfig
        except ImportError as exc:
            raise MinerUnavailable(
                "--miner drain3 needs the drain3 package: pip install 'slurmdiag[templates]' (or: pip install drain3)"
            ) from exc
        config = TemplateMinerConfig()
        config.drain_sim_th = sim_th
        config.drain_depth = depth
        config.drain_max_children = max_children
        config.masking_instructions = []
        config.profiling_enabled = False
        self._miner = TemplateMiner(config=config)

    def add(self, line: str) -> int:
        return int(self._miner.add_log_message(line)["cluster_id"])

    def match(self, line: str) -> int | None:
        cluster = self._miner.match(line)
        return None if cluster is None else int(cluster.cluster_id)

    def template(self, cluster: int) -> str:
        for c in self._miner.drain.clusters:
            if c.cluster_id == cluster:
                return c.get_template()
        raise KeyError(cluster)


def make_miner(name: str = "drain", sim_th: float = 0.5, depth: int = 4) -> Miner:
    if name == "drain":
        return DrainMiner(sim_th, depth)
    if name == "drain3":
        return Drain3Miner(sim_th, depth)
    raise MinerUnavailable(f"unknown miner {name!r}; one of {', '.join(MINERS)}")
