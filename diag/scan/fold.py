"""Folding repeated lines into counts before they are applied.

NCCL prints the same lines again for every communicator it builds (``comm ... rank 3 nranks 32``,
one channel line per peer): on a long job most candidate lines are repeats. A repeat changes the
job's statistics only by counting once more, when nothing it depends on changed since its first
sighting, so the digesting side folds it into a count instead of shipping it to the ordered
apply. The result is the one applying every line would give:

* a repeat has the same host and emitter and the same matches: signatures and captured values (a
  comm pointer that differs is not captured, so it does not matter). Not necessarily the same
  process: the facts a line sets are per host, and a rule match's evidence depends on the process
  only through its rank (below) once the evidence samples are full;
* the last-wins facts are tracked *per key* (diag.scan.facts.overwrites: the rank of a process, the
  host of a rank, a host's setting). A repeat that writes a key is folded only while that key
  still holds the value it writes (writing it again changes nothing); a rule match whose line
  names no rank reads its process's rank, so that rank (as far as this task has seen it written)
  is part of the repeat's identity. One process changing rank between communicators therefore no
  longer stops every other line from folding;
* a rule's matches are folded only once this task already shipped ``MAX_SAMPLES`` of them, so the
  evidence samples (the first ones, in order) are full before any fold;
* what is folded is what commutes: match counts, per-host counts and the GDR channel counters;
  order-dependent facts (diag.scan.facts FACT_KIND "ordered") are never folded.

Memory is bounded whatever the job's size and however many hosts, ranks or workers: at most
``_MAX_SEEN`` distinct lines and ``_MAX_SHADOW`` last-wins keys are remembered; when either fills,
both are forgotten together (forgetting only means shipping more, since a forgotten line is
shipped as a first sighting). A line capturing more than ``_MAX_VALUES_CHARS`` characters is never
folded, so no table holds long text.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from diag.scan.facts import FACT_KIND, HOST_OF, RANK_OF, counter, overwrites

_MAX_SEEN = 65536  # distinct lines remembered per task
_MAX_SHADOW = 65536  # last-wins keys remembered per task
_MAX_VALUE_IDS = 65536  # ids of captured values remembered per scanner (apart: the fold tables may fill first)
_MAX_DESCRIPTIONS = 4096  # describe's answers remembered per folder (the ids above outlive them)
_MAX_VALUES_CHARS = 1024  # a line capturing more is never folded, so no table holds long captures
_MAX_ASSUMED = 65536  # folds made on the assumption below, remembered per task (more: the task is digested again)
_UNSET = object()
# Ids of captured values, unique in the process: the scanner describes the lines it frames itself
# (Scanner._describe) and a folder describes the others (Folder.keep), and both kinds of keys meet in
# one folder's memory, so two numberings starting at 0 could make unequal values look alike there.
_VALUE_IDS = itertools.count()
_INHERITED = "@inherited"  # a key this task has not written: whatever it held when the task began
_FACT, _LAST_WINS, _ORDERED, _RULE = "fact", "last-wins", "ordered", "rule"


@dataclass
class Folded:
    """What the folded lines add: match counts per (entry, host) and counter increments per (host, counter)."""

    matches: dict[tuple[int, str], int] = field(default_factory=dict)
    counters: dict[tuple[str, str], int] = field(default_factory=dict)


class Folder:
    # What the compiled core (diag/scan/_core.c) reads to decide as keep_described does.
    RANK_KEY = RANK_OF
    HOST_KEY = HOST_OF
    INHERITED = _INHERITED
    MAX_SEEN = _MAX_SEEN
    MAX_SHADOW = _MAX_SHADOW
    MAX_ASSUMED = _MAX_ASSUMED

    def __init__(self, entries: list, facts_owner: str, max_samples: int, from_start: bool = False):
        """``from_start``: this folder sees the job from its first line, so a key it has not seen
        written holds nothing (a process's rank is not known yet) rather than something unknown."""
        self.entries = entries
        self._inherited_known = from_start
        self.facts_owner = facts_owner
        self.max_samples = max_samples
        self.folded = Folded()
        self._seen: set[tuple] = set()  # keys of the lines shipped since the memory was last cleared
        self._shipped: dict[int, int] = {}  # rule entry -> records shipped with it
        self._full: set[int] = set()  # rule entries shipped max_samples times: their samples are full
        self._shadow: dict[tuple, object] = {}  # last-wins key -> the value this task last set
        self._kinds = [
            _RULE if owner != facts_owner else _kind(FACT_KIND.get(sig.name, "set")) for owner, sig in entries
        ]
        self._names = [sig.name for _, sig in entries]
        self._value_ids: dict[tuple, int] = {}
        self._next_id = _VALUE_IDS  # shared: a fold key never holds one folder's id meaning another's values
        self._descriptions: dict[int, tuple] = {}  # value id -> describe's answer (a pure function of the values)
        # See assume(): while on, a process whose rank this task has not written is taken to have none,
        # and each fold that took it so is listed here as (host, pid, rule entries) for the apply to check.
        self._assume = False
        self._assumed: set[tuple] = set()
        # The compiled core's table of keys it folded (diag/scan/_core.c, FoldCache), kept here between its
        # calls: it holds while _epoch (bumped whenever the memory is forgotten), _seen and _full stay.
        self._epoch = 0
        self._core_cache = None
        # Whether _seen may hold a key whose token is (_INHERITED, pid) (carry drops those): only made while
        # the folder neither saw the job from its start nor assumes, which a worker's span rarely is.
        self._inherited_keys = False

    def describe(self, matches: tuple) -> tuple:
        """What folding needs to know of a line's ``matches``, computed once per distinct payload
        (the scanner keeps it next to the matches): (an id of the matched signatures and captured
        values, rule entries, last-wins observations, order-dependent, counters a repeat
        increments, rule entries as a set, and the rank a lone ``comm_rank`` observation writes or None).
        The id stands for the values in fold keys: a small int hashes at once. The last item lets the
        compiled core compute that observation's writes (facts.overwrites) without calling Python."""
        values = tuple([(i, *groups.values()) for i, groups in matches])
        # Lines that differ only in what no signature captures (channel lines of other ranks, a new comm
        # pointer) describe alike: known values are answered from their id (only short values get one).
        vid = self._value_ids.get(values)
        if vid is not None:
            known = self._descriptions.get(vid)
            if known is not None:
                return known
        kinds, names = self._kinds, self._names
        rules: list[int] = []
        last_wins: list[tuple] = []
        counters: list[str] = []
        ordered = False
        for i, groups in matches:
            kind = kinds[i]
            if kind is _RULE:
                rules.append(i)
            elif kind is _LAST_WINS:
                last_wins.append((names[i], groups))
            elif kind is _ORDERED:
                ordered = True
            else:
                name = counter(names[i], groups)
                if name:
                    counters.append(name)
        rank_write = int(last_wins[0][1]["rank"]) if len(last_wins) == 1 and last_wins[0][0] == "comm_rank" else None
        if sum(len(v) for _, *vs in values for v in vs if v) > _MAX_VALUES_CHARS:
            return None, tuple(rules), tuple(last_wins), True, (), frozenset(rules), None  # shipped, not remembered
        if vid is None:
            ids = self._value_ids
            if len(ids) >= _MAX_VALUE_IDS:
                ids.clear()  # ids are never reused, so a forgotten value only gets a new one
            vid = ids[values] = next(self._next_id)
        known = vid, tuple(rules), tuple(last_wins), ordered, tuple(counters), frozenset(rules), rank_write
        if len(self._descriptions) >= _MAX_DESCRIPTIONS:
            self._descriptions.clear()
        self._descriptions[vid] = known
        return known

    def keep(self, host: str | None, pid: int | None, rank: int | None, emitter: str | None, matches: tuple) -> bool:
        """True: ship this record. False: it was folded into :attr:`folded`."""
        if host is None:
            return True  # its rank and host are looked up at apply time: never folded
        return self.keep_described(host, pid, rank, emitter, self.describe(matches))

    def keep_described(self, host: str, pid: int | None, rank: int | None, emitter: str | None, desc: tuple) -> bool:
        """:meth:`keep` for a line with a host, its matches given by :meth:`describe`."""
        values, rules, last_wins, ordered, counters, rule_set, _ = desc
        shadow = self._shadow
        # A rule's matches fold only once its evidence samples are full.
        foldable = not ordered and (not rules or rule_set <= self._full)
        writes = None
        if last_wins:
            if desc[6] is not None and host and pid is not None:  # a lone comm_rank: its writes (facts.overwrites)
                writes = (((RANK_OF, host, pid), desc[6]), ((HOST_OF, desc[6]), host))
            else:
                writes = [w for name, groups in last_wins for w in overwrites(name, groups, host, pid)]
        # What the line's effect depends on besides its matches: its host, and for a rule match the
        # rank its evidence gets (diag.scan.scanner.apply: the line's own, or rank_for(host, pid)).
        # Not the pid itself: every rank prints the same lines, and they fold across processes.
        assumed = False
        if not rules or rank is not None:
            token = rank if rules else None  # facts read a line's rank only when order-dependent
        else:
            token = shadow.get((RANK_OF, host, pid), _UNSET)
            if token is _UNSET:
                if self._inherited_known:
                    token = None
                elif self._assume:
                    token, assumed = None, True
                else:
                    token = (_INHERITED, pid)
                    self._inherited_keys = True
        key = (host, emitter, token, values)
        seen = self._seen
        if foldable and key in seen:
            if writes:
                for k, v in writes:
                    if shadow.get(k, _UNSET) != v:
                        foldable = False  # writing it changes a last-wins fact: ship it
                        break
            if foldable:
                if assumed and len(self._assumed) < _MAX_ASSUMED:  # at the cap the apply digests the task again
                    self._assumed.add((host, pid, rule_set))
                folded = self.folded
                matches_, counters_ = folded.matches, folded.counters
                for i in rules:
                    matches_[(i, host)] = matches_.get((i, host), 0) + 1
                for name in counters:
                    counters_[(host, name)] = counters_.get((host, name), 0) + 1
                return False
        if rules:
            shipped = self._shipped
            for i in rules:
                n = shipped[i] = shipped.get(i, 0) + 1
                if n >= self.max_samples:
                    self._full.add(i)
        if writes:
            for k, v in writes:
                shadow[k] = v
        if len(seen) >= _MAX_SEEN or len(shadow) >= _MAX_SHADOW:
            self._forget()
        if values is not None:
            seen.add(key)
        return True

    def wrote(self, writes) -> None:
        """Last-wins values (key, value) written by lines applied without passing :meth:`keep`
        (diag.scan.runs): a later repeat is compared against them, as if those lines had shipped."""
        shadow = self._shadow
        shadow.update(writes)
        if len(shadow) >= _MAX_SHADOW:
            self._forget()

    def carry(self) -> tuple:
        """What a later span's folder in the same worker may start from (:meth:`adopt`): the lines
        shipped so far and the rules whose samples they filled. Sound because a worker takes its
        spans in input order, so everything it shipped is applied (or folded as a repeat of a line
        applied before it) ahead of its next span: a key says the same there (host, emitter, the
        evidence rank, captured values), except one whose rank is "whatever the process had when
        this span began", which is dropped. Last-wins values are not carried: a repeat that writes
        one still ships until its span wrote the same value. Two workers on a 256 MB log at 30%
        candidates shipped 155,000 records without this, for 85,000 that one process ships."""
        kept = self._seen
        if self._inherited_keys:  # (_INHERITED, pid): this span's own
            kept = {key for key in kept if type(key[2]) is not tuple}
        return kept, self._shipped, self._full

    def adopt(self, carried: tuple) -> None:
        """Start from what :meth:`carry` gave (before this folder sees a line)."""
        self._seen, self._shipped, self._full = carried
        self._inherited_keys = False  # carry() left none

    def assume(self) -> None:
        """For a task that does not start the job (a worker's span): fold a rule match on a line
        without a rank of its own as if its process had no rank when the task began, when this
        task has not written one. Without it, such a line's fold key holds (INHERITED, pid), so
        each process's first lines of a span (its NCCL version, plugin and HCA lines) shipped one
        record per process: 51,900 of the 62,700 records two workers shipped from a 256 MB log at
        30% candidates. Only a *fold* can be wrong under the assumption, and only in one way: a
        line whose process did have a rank R adds nothing to its rules' ``ranks`` where applying
        it would add R. Each such fold is listed in :attr:`_assumed`, and the apply checks the
        list against the job's facts before the task's records (:func:`assumption_holds`); where
        the check fails, the main process digests the task again without assuming. A key stored
        with the token None stays sound for the lines that fold against it later: such a line's
        effect is its counts, its host and captured values, which the stored line's already made."""
        self._assume = not self._inherited_known

    def _forget(self) -> None:
        # Both at once: a line remembered across a cleared shadow would compare its writes and
        # its rank token against values no longer known.
        self._seen.clear()
        self._shadow.clear()
        self._epoch += 1
        self._inherited_keys = False
        self._inherited_known = False  # what the forgotten keys held is no longer known
        self._assume = False  # nor what the processes had when the task began


def _kind(fact_kind: str) -> str:
    return {"last-wins": _LAST_WINS, "ordered": _ORDERED}.get(fact_kind, _FACT)


def assumption_holds(assumed: set[tuple], rank_of_process: dict, rule_stats: list, max_distinct: int) -> bool:
    """Whether the folds a worker made under :meth:`Folder.assume` are what applying those lines
    would do, given the job's facts when the worker's task begins: each folded line's process had
    no rank then, or its rank is already among each of its rules' ``ranks`` (or those are full).
    ``rule_stats``: per entry, a function giving that rule's statistics (None: none yet)."""
    if len(assumed) >= _MAX_ASSUMED:
        return False  # the list was cut: not every such fold is in it
    for host, pid, rule_set in assumed:
        rank = rank_of_process.get((host, pid))
        if rank is None:
            continue
        for i in rule_set:
            stats = rule_stats(i)
            if stats is None or (rank not in stats.ranks and len(stats.ranks) < max_distinct):
                return False
    return True
