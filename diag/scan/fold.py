"""Folding repeated lines into counts before they are applied.

NCCL prints the same lines again for every communicator it builds (``comm ... rank 3 nranks 32``,
one channel line per peer): on a long job most candidate lines are repeats. A repeat changes the
job's statistics only by counting once more, when nothing it depends on changed since its first
sighting, so the digesting side folds it into a count instead of shipping it to the ordered
apply. The result is the one applying every line would give:

* a repeat has the same frame (host, pid, rank, emitter) and the same matches: signatures and
  captured values (a comm pointer that differs is not captured, so it does not matter);
* it is folded only while no last-wins fact (the rank of a process, a host's setting) changed
  since that first sighting; a per-task version counts such changes;
* a rule's matches are folded only once this task already shipped ``MAX_SAMPLES`` of them, so the
  evidence samples (the first ones, in order) are full before any fold;
* what is folded is what commutes: match counts, per-host counts and the GDR channel counters;
  order-dependent facts (diag.facts.ORDER_DEPENDENT) are never folded.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from diag.scan.facts import ORDER_DEPENDENT, counter, overwrites

_MAX_SEEN = 65536  # distinct lines remembered per task; forgetting only means folding less
_UNSET = object()
_FACT, _ORDERED, _RULE = "fact", "ordered", "rule"


@dataclass
class Folded:
    """What the folded lines add: match counts per (entry, host) and counter increments per (host, counter)."""

    matches: dict[tuple[int, str], int] = field(default_factory=dict)
    counters: dict[tuple[str, str], int] = field(default_factory=dict)


class Folder:
    def __init__(self, entries: list, facts_owner: str, max_samples: int):
        self.entries = entries
        self.facts_owner = facts_owner
        self.max_samples = max_samples
        self.folded = Folded()
        self._seen: dict[tuple, int] = {}  # line key -> version when it was last shipped
        self._shipped: dict[int, int] = {}  # rule entry -> records shipped with it
        self._shadow: dict[tuple, object] = {}  # last-wins keys -> the value this task last set
        self._version = 0
        self._kinds = [
            _RULE if owner != facts_owner else _ORDERED if sig.name in ORDER_DEPENDENT else _FACT
            for owner, sig in entries
        ]

    def keep(self, host: str | None, pid: int | None, rank: int | None, emitter: str | None, matches: tuple) -> bool:
        """True: ship this record. False: it was folded into :attr:`folded`."""
        if host is None:
            return True  # its rank and host are looked up at apply time: never folded
        kinds, shipped, max_samples = self._kinds, self._shipped, self.max_samples
        foldable = True
        for i, _ in matches:
            kind = kinds[i]
            if kind is _ORDERED:
                return True
            if kind is _RULE and shipped.get(i, 0) < max_samples:
                foldable = False
        key = (host, pid, rank, emitter, *[(i, *groups.values()) for i, groups in matches])
        if foldable and self._seen.get(key) == self._version:
            self._fold(host, matches)
            return False
        self._ship(host, pid, matches)
        if len(self._seen) >= _MAX_SEEN:
            self._seen.clear()
        self._seen[key] = self._version
        return True

    def _fold(self, host: str, matches: tuple) -> None:
        folded = self.folded
        for i, groups in matches:
            owner, sig = self.entries[i]
            if owner == self.facts_owner:
                name = counter(sig.name, groups)
                if name:
                    folded.counters[(host, name)] = folded.counters.get((host, name), 0) + 1
            else:
                folded.matches[(i, host)] = folded.matches.get((i, host), 0) + 1

    def _ship(self, host: str, pid: int | None, matches: tuple) -> None:
        shadow = self._shadow
        for i, groups in matches:
            owner, sig = self.entries[i]
            if owner != self.facts_owner:
                self._shipped[i] = self._shipped.get(i, 0) + 1
                continue
            for key, value in overwrites(sig.name, groups, host, pid):
                if shadow.get(key, _UNSET) != value:  # a first write may differ from what came before this task
                    shadow[key] = value
                    self._version += 1
