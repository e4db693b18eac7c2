"""Scan: find every line any signature can match, in one pass over large blocks.

A combined prefilter (the engine) locates candidate lines in each block of whole lines. Each
candidate is *digested* (decoded, framed, tried against every signature the engine saw there, so
two rules matching one line both fire) into a small record that depends on that line alone; the
records are then *applied*, in file order, to the job's bounded statistics and facts. Digesting
can therefore run in worker processes (diag.parallel) while applying stays in order, and the
result is the same however the input is split.
"""

from __future__ import annotations

import gc
from array import array
from collections.abc import Iterable, Iterator, Set
from dataclasses import dataclass, field

from diag.catalog.model import RuleSet, Signature
from diag.evidence import MAX_EVIDENCE_TEXT, Evidence
from diag.input.allocator import keep_block_buffers
from diag.input.framing import ANSI_BYTES_RE, COMMON_NCCL_BYTES, NCCL_INFO, Frame, frame_fields, frame_head
from diag.input.lines import count_newlines, trailing_silent_lines
from diag.input.sources import CHUNK_BYTES, InputStats, Source, Span, read_blocks
from diag.scan import core, runs
from diag.scan.engines import Pattern, make_engine
from diag.scan.facts import FACT_SIGNATURES, Facts
from diag.scan.fold import Folded, Folder
from diag.scan.runs import MAX_DISTINCT, RankRun, condense
from diag.scan.sample import SAMPLE_INDEX, ErrorSample, Sampler

MAX_SAMPLES = 64
FACTS_OWNER = "@facts"
_MEMO_ENTRIES = 4096  # payloads whose matches are remembered (NCCL repeats its channel lines per communicator)
_MEMO_MAX_PAYLOAD = 512  # longer payloads are matched every time: the memos hold at most ~4 MB
_HOST_EMITTERS = ("nccl", "ucx", "ompi")
_MAX_HEAD = 256  # a line whose NCCL_INFO starts later is framed on its own, its head not remembered
_MAX_HEADS = 1024  # heads remembered (about a process each: 500 bytes with their fields), all forgotten when full
_UNSEEN = object()
# digest_block reads the prefix's groups by number.
assert list(COMMON_NCCL_BYTES.groupindex) == ["task", "rank", "local", "ts", "host", "pid", "tid", "dev", "src", "level"]

# A digested line: (line number, Frame fields..., matches). A plain tuple, so it crosses a
# process boundary cheaply. ``matches`` holds (entry index, every named group) per signature hit.
Record = tuple
Match = tuple[int, dict]

NBSP = "\u00a0".encode()


@dataclass
class SigStats:
    """What one signature of one rule matched across the whole job."""

    count: int = 0
    samples: list[tuple[Evidence, dict[str, str]]] = field(default_factory=list)
    hosts: dict[str, int] = field(default_factory=dict)
    ranks: set[int] = field(default_factory=set)
    captures: dict[str, dict[str, None]] = field(default_factory=dict)  # ordered distinct values

    def add(self, ev: Evidence, groups: dict[str, str]) -> None:
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append((ev, groups))
        self.count_hit(ev.host, ev.rank, groups)

    def count_hit(self, host: str | None, rank: int | None, groups: dict[str, str | None]) -> None:
        """:meth:`add` once the samples are full: no Evidence needed."""
        self.count += 1
        if host and (host in self.hosts or len(self.hosts) < MAX_DISTINCT):
            self.hosts[host] = self.hosts.get(host, 0) + 1
        if rank is not None and len(self.ranks) < MAX_DISTINCT:
            self.ranks.add(rank)
        for key, value in groups.items():
            if value is None:
                continue
            values = self.captures.setdefault(key, {})
            if len(values) < MAX_DISTINCT:
                values[value] = None


@dataclass
class ScanResult:
    stats: dict[tuple[str, str], SigStats] = field(default_factory=dict)
    facts: Facts = field(default_factory=Facts)
    inputs: list[InputStats] = field(default_factory=list)
    error_sample: ErrorSample = field(default_factory=ErrorSample)  # filled only when the Scanner samples

    def sig(self, rule_id: str, name: str) -> SigStats:
        return self.stats.get((rule_id, name)) or SigStats()


class Scanner:
    """All signatures of a rule set (plus the fact signatures), compiled once."""

    def __init__(
        self,
        rules: RuleSet,
        chunk_bytes: int = CHUNK_BYTES,
        engine: str = "auto",
        jobs: int | None = None,
        sample_errors: bool = False,
    ):
        """``sample_errors``: also keep a bounded sample of error lines no rule knows (diag.scan.sample)."""
        self.chunk_bytes = chunk_bytes
        self.jobs = jobs
        self.parallel_options: dict[str, int] = {}  # tests shrink the thresholds to split small inputs
        entries: list[tuple[str, Signature]] = [(FACTS_OWNER, s) for s in FACT_SIGNATURES]
        for rule in rules.rules:
            entries.extend((rule.id, s) for s in rule.signatures)
        self.entries = entries
        # The communicator line of a process (comm_rank alone) is applied without a Frame (Facts.observe_rank_line).
        self._rank_entry = next(i for i, (o, sig) in enumerate(entries) if o == FACTS_OWNER and sig.name == "comm_rank")
        self.engine = make_engine(engine, [Pattern(sig.pattern, sig.literal) for _, sig in entries])
        self._memo: dict[tuple, tuple[Match, ...]] = {}
        self._bytes_memo: dict[tuple, tuple] = {}  # (payload, level, members) -> (matches, fold description)
        self._old_memo: dict[tuple, tuple] = {}
        self._hosts: dict[bytes, str] = {}
        self._heads: dict[bytes, tuple | None] = {}  # without the core: line heads -> frame_head's answer
        self._member_order: dict[Set[int], tuple] = {}  # members -> ((entry, its levels, its search), ...) in entry order
        self._describe = self.folder().describe
        self.sampler = Sampler(engine, self, FACTS_OWNER) if sample_errors else None
        self._core = core.module()  # the compiled per-candidate loop (diag.scan.core), or None
        self._frame = core.compile_frame(self._core) if self._core is not None else None
        # How the core confirms each entry's signature (None: only Python), and what it confirmed:
        # (entry, captured bytes) of every match -> (matches, fold description), as _resolve gives.
        self._confirmers: list = [core.PENDING] * len(entries) if self._core else []
        self._by_matches: dict[tuple, tuple] = {}
        self._by_groups: dict[tuple, tuple] = {}  # the fallback's: ((entry, m.groups()), ...) -> (matches, description)
        self._answers = self._core.Answers() if self._core else None  # the same answers, held in C
        # The core's memo keys by their bytes (payload, level, member set): a repeat finds the key it
        # would build, so the memo answers it without a new key object (diag/scan/_core.c, digest).
        self._memo_keys = self._core.Answers() if self._core else None

    # --- the whole scan --------------------------------------------------------------------
    def scan(self, sources: Iterable[Source]) -> ScanResult:
        # The scan makes a tuple or two per candidate line and keeps few of them: the cyclic
        # collector, woken every 700 allocations, found nothing to free and cost 3-5% of a dense
        # log's scan. Reference counting still frees everything; the collector runs again after.
        collecting = gc.isenabled()
        gc.disable()
        try:
            return self._scan(list(sources))
        finally:
            if collecting:
                gc.enable()

    def _scan(self, sources: list[Source]) -> ScanResult:
        from diag.scan import parallel  # only large inputs need it

        keep_block_buffers()
        plan = parallel.plan(sources, self.jobs, self.chunk_bytes, **self.parallel_options)
        if plan is not None:
            result = ScanResult(inputs=[InputStats(s.path) for s in sources])
            if parallel.run(self, sources, plan, result):
                return result
        result = ScanResult(inputs=[InputStats(s.path) for s in sources])  # one core, or the workers failed
        folder = self.folder(from_start=True)  # one for the whole job: repeats fold across files too
        for index, source in enumerate(sources):
            records = self.digest_source(index, source, result.inputs[index], folder=folder)
            self.apply(records, source.path, index, result)
        self.apply_folded(folder.folded, result)
        return result

    def folder(self, from_start: bool = False) -> Folder:
        """``from_start``: the folder will see every record from the job's first line (diag.scan.fold)."""
        return Folder(self.entries, FACTS_OWNER, MAX_SAMPLES, from_start)

    # --- digesting: pure, one source (or one byte range of it) at a time ---------------------
    def digest_source(
        self, index: int, source: Source, stats: InputStats, span: Span | None = None, folder: Folder | None = None
    ) -> Iterator[Record]:
        """Records of the candidate lines of ``source`` (or of one span of it, its lines numbered
        from the span's start); fills ``stats``. Repeats go into ``folder`` instead (diag.fold)."""
        line_no = 0
        for block in read_blocks(source, stats, self.chunk_bytes, count_lines=False, span=span):
            if b"\x1b" in block:
                block = ANSI_BYTES_RE.sub(b"", block)
            # Text copied from a web page (docs, forums) spaces its words with U+00A0. Its last byte is
            # looked for first: one byte is found at memchr speed, two bytes are searched far slower.
            if b"\xa0" in block and NBSP in block:
                block = block.replace(NBSP, b" ")
            shipped = self.digest_block(block, folder)
            # Only shipped lines need a number (most repeats fold): count the line feeds before those.
            if self._core is not None:
                numbered, total = self._core.number(block, shipped, line_no)
                yield from numbered
            else:
                starts = [start for start, _ in shipped]
                before, total = count_newlines(block, starts)
                for (_, record), newlines in zip(shipped, before):
                    yield (line_no + newlines + 1, *record[1:])
            line_no += total
            stats.lines += total
            silent, all_silent = trailing_silent_lines(block)
            stats.silent_tail = stats.silent_tail + silent if all_silent else silent

    def digest_block(self, block: bytes, folder: Folder | None) -> list[tuple[int, Record]]:
        """(line start, record) of the candidate lines of ``block`` that ``folder`` did not fold.

        The common case, an ASCII line with an NCCL prefix stack, is framed on its bytes
        (diag.input.framing.match_common_nccl), its matches and what folding needs of them are
        remembered per payload, and the line is decoded only when it is shipped: a repeat costs a
        slice, one prefix match, two dictionary lookups and the fold. The compiled core
        (diag.scan.core) runs this same loop in C when it is built."""
        if self._core is not None:
            hs = getattr(self.engine, "hs", None)
            if hs is not None:  # the core's own Hyperscan: its lines are digested as it finds them, no list
                engine = self.engine
                shipped = hs.digest(block, engine.members, engine._unions, self._frame, self, folder, self._slow(block, folder))
            else:
                lines = self.engine.lines(block)
                shipped = self._core.digest(block, lines, self._frame, self, folder, self._slow(block, folder))
            if len(self._hosts) > _MEMO_ENTRIES:
                self._hosts.clear()
        else:
            shipped = self._digest_in_python(block, folder)
        if self.sampler is not None:
            sampled = self.sampler.digest(block)
            if sampled:  # line numbers are counted over ascending starts; a stable sort keeps a line's own first
                shipped = sorted(shipped + sampled, key=lambda item: item[0])
        return shipped

    def _digest_in_python(self, block: bytes, folder: Folder | None) -> list[tuple[int, Record]]:
        heads = self._heads
        keep = folder.keep_described if folder is not None else None
        seen = folder._seen if folder is not None else None  # cleared in place when the folder forgets
        counters = folder.folded.counters if folder is not None else None
        # One pass over an ASCII block (the usual case) instead of a check per line.
        plain = b"\x1b" not in block
        ascii_block = plain and block.isascii()
        shipped: list[tuple[int, Record]] = []
        slow = self._slow(block, folder)
        memo_get = self._bytes_memo.get
        for start, end, members in self.engine.lines(block):
            raw = block[start:end]
            framed = None
            if ascii_block or (plain and raw.isascii()):  # else match_common_nccl would give None
                at = raw.find(NCCL_INFO)
                if 0 <= at < _MAX_HEAD:
                    # The prefix's fields depend on the line up to its first " NCCL INFO " only
                    # (frame_head): each process's head is matched once, not once per line.
                    head = raw[: at + len(NCCL_INFO)]
                    framed = heads.get(head, _UNSEEN)
                    if framed is _UNSEEN:
                        if len(heads) >= _MAX_HEADS:
                            heads.clear()
                        framed = heads[head] = frame_head(head)
                else:
                    framed = frame_head(raw)
            if framed is None:
                record = slow(start, end, members)
                if record is not None:
                    shipped.append((start, record))
                continue
            cut, level_b, host, pid, rank = framed[:5]
            key = (raw[cut:], level_b, members)
            known = memo_get(key)
            if known is None:
                known = self._resolve(key, end - start - cut)
                memo_get = self._bytes_memo.get  # the memo may have turned over
            if keep is not None:
                desc = known[1]
                if not (desc[1] or desc[2] or desc[3]) and desc[0] is not None:
                    # Facts that only count (two lines in three at 30% candidates): keep_described's
                    # own steps for such a line, inline: a repeat of its (host, emitter, values) folds.
                    key = (host, "nccl", None, desc[0])
                    if key in seen:
                        for name in desc[4]:
                            counters[(host, name)] = counters.get((host, name), 0) + 1
                        continue
                if not keep(host, pid, rank, "nccl", desc):
                    continue
            shipped.append((start, (0, raw.decode("ascii"), cut, host, pid, rank, *framed[5:], "nccl", known[0])))
        return shipped

    def _slow(self, block: bytes, folder: Folder | None):
        """The path of a candidate line that the common NCCL prefix does not frame: its record, or
        None when it says nothing or ``folder`` folded it."""

        def slow(start: int, end: int, members: frozenset[int]) -> Record | None:
            record = self.digest(block[start:end], 0, members)
            if record is not None and (
                folder is None or folder.keep(record[3], record[4], record[5], record[10], record[11])
            ):
                return record
            return None

        return slow

    def _resolve(self, key: tuple, payload_size: int, confirmed: tuple | None = None) -> tuple:
        """(matches, fold description) of a framed payload ``key`` = (payload, level, members) that
        the current memo generation does not hold; remembered unless the payload is long.

        ``confirmed``: what the compiled core's PCRE2 forms matched on it, ((entry, captured bytes),
        ...). Where Python's own matches say the same, the core may answer any payload that gives
        those matches from ``_by_matches`` without asking again."""
        if confirmed is None and self._core is not None:
            self._prepare_confirmers(key[2])
        known = self._old_memo.get(key)
        if known is None:
            payload, level_b, members = key
            if self._core is None:
                known = self._confirm_known(payload.decode("ascii"), level_b.decode("ascii"), members)
            else:
                matches = self._confirm(payload.decode("ascii"), level_b.decode("ascii"), members)
                known = (matches, self._describe(matches))
        if payload_size <= _MEMO_MAX_PAYLOAD:  # a long one is matched every time
            self._remember(key, known)
        if confirmed is not None:
            mine = tuple(
                (i, tuple(None if v is None else v.encode("ascii") for v in groups.values())) for i, groups in known[0]
            )
            if mine == confirmed and sum(len(v) for _, vs in mine for v in vs if v) <= _MEMO_MAX_PAYLOAD:
                if len(self._by_matches) >= _MEMO_ENTRIES:
                    self._by_matches.clear()
                self._by_matches[confirmed] = known
        return known

    def _confirm_known(self, payload: str, level: str, members: Set[int]) -> tuple:
        """(matches, fold description) of a payload no memo holds, without the compiled core: the
        answer of an earlier payload whose signatures captured the same groups when there is one
        (as the core's ``_by_matches``). Channel lines differ in ranks no signature captures: at
        30% candidates four lines in ten miss the memos, and most are answered here."""
        order = self._member_order.get(members)
        if order is None:
            order = self._order_members(members)
        found = []
        for i, levels, search in order:  # Signature.match without its call
            if levels and level not in levels:
                continue
            m = search(payload)
            if m is not None:
                found.append((i, m))
        groups = tuple([(i, m.groups()) for i, m in found])  # a match's groups decide its groupdict
        known = self._by_groups.get(groups)
        if known is None:
            matches = tuple([(i, m.groupdict()) for i, m in found])
            known = (matches, self._describe(matches))
            if sum(len(v) for _, vs in groups for v in vs if v) <= _MEMO_MAX_PAYLOAD:
                if len(self._by_groups) >= _MEMO_ENTRIES:
                    self._by_groups.clear()
                self._by_groups[groups] = known
        return known

    def _order_members(self, members: Set[int]) -> tuple:
        """((entry, its signature's levels, its compiled search), ...) of ``members`` in entry order, remembered
        per set: Signature.match's steps, without a call per signature."""
        if len(self._member_order) >= _MEMO_ENTRIES:
            self._member_order.clear()
        entries = self.entries
        order = self._member_order[members] = tuple(
            (i, entries[i][1].levels, entries[i][1].searcher()) for i in sorted(members)
        )
        return order

    def _prepare_confirmers(self, members: Set[int]) -> None:
        """Compile the core's confirmers of ``members`` (the next such payload is confirmed in C)."""
        confirmers = self._confirmers
        for i in members:
            if confirmers[i] is core.PENDING:
                confirmers[i] = core.confirmer(self._core, self.entries[i][1])

    def _remember(self, key: tuple, known: tuple) -> dict:
        """Add to the payload memo; returns the current generation."""
        memo = self._bytes_memo
        if len(memo) >= _MEMO_ENTRIES:
            # Two generations: what was used since the last turn survives it. Most payloads that
            # miss are one-off (a comm pointer); they must not push out the repeats.
            self._old_memo, memo = memo, {}
            self._bytes_memo = memo
        memo[key] = known
        return memo

    def digest(self, raw: bytes, line_no: int, members: Set[int]) -> Record | None:
        """What one candidate line says (numbered ``line_no``), or None when it says nothing to
        the facts or the rules."""
        text, cut, host, pid, rank, local_rank, task, level, timestamp, emitter = frame_fields(
            raw.decode("utf-8", "replace")
        )
        payload = text[cut:]
        key = (payload, level, members)
        matches = self._memo.get(key)
        if matches is None:
            matches = self._confirm(payload, level, members)
            if len(self._memo) >= _MEMO_ENTRIES:
                self._memo.clear()
            if len(payload) <= _MEMO_MAX_PAYLOAD:
                self._memo[key] = matches
        if not matches and not (host and emitter in _HOST_EMITTERS):
            return None
        return (line_no, text, cut, host, pid, rank, local_rank, task, level, timestamp, emitter, matches)

    def _confirm(self, payload: str, level: str | None, members: Set[int]) -> tuple[Match, ...]:
        """The signatures among ``members`` that match ``payload``, in entry order, with their groups."""
        # The members in entry order, sorted once per distinct set: without the compiled core, four
        # candidate lines in ten (channel lines, each naming other ranks) miss the memos and come here.
        order = self._member_order.get(members)
        if order is None:
            order = self._order_members(members)
        found = []
        for i, levels, search in order:  # Signature.match without its call
            if levels and level not in levels:
                continue
            m = search(payload)
            if m is not None:
                found.append((i, m.groupdict()))
        return tuple(found)

    def condense(self, records: list, shipped: dict[int, int]) -> list:
        """``records`` with long runs of communicator lines condensed (diag.scan.runs); ``shipped``:
        the rule entries' shipped counts (Folder._shipped) before the first of them."""
        if self._core is not None:  # the same loop in C; None when a record is not one it reads
            out = self._core.condense(records, (
                self._rank_entry, self._rule_key_list(), shipped, MAX_SAMPLES, runs.MIN_RUN, RankRun, array,
            ))  # fmt: skip
            if out is not None:
                return out
        return condense(records, self.entries, FACTS_OWNER, self._rank_entry, shipped, MAX_SAMPLES)

    # --- applying: in file order, into the job's statistics -----------------------------------
    def apply(
        self,
        records: Iterable[Record],
        path: str,
        index: int,
        result: ScanResult,
        line_base: int = 0,
        folder: Folder | None = None,
        described: dict[int, tuple] | None = None,
    ) -> None:
        """Apply ``records`` in order; repeats that only count go into ``folder`` (add
        ``folder.folded`` with :meth:`apply_folded` once every record is in). ``described``: the
        descriptions of matches already made for records of the same task (diag.scan.parallel)."""
        facts = result.facts
        stats_of = result.stats
        entries = self.entries
        keep = None
        if folder is not None:  # the compiled core decides most records' fold in C (diag.scan.core)
            keep = self._core.Keeper(folder) if self._core is not None else folder.keep_described
        # A worker's records share one matches tuple per distinct payload, and pickling keeps
        # that sharing: describe each once. The tuple is held here, so its id stays its own.
        if described is None:
            described = {}
        rule_tails: dict[int, tuple] = {}  # id(matches) -> (matches, _rule_keys of all but the first)
        sampling = self.sampler is not None
        rank_entry = self._rank_entry

        def one(record: Record, decided: bool = False) -> None:
            """Apply one record (``decided``: the fold already kept it)."""
            line_no, text, cut, host, pid, rank, local_rank, task, level, timestamp, emitter, matches = record
            if sampling and matches and matches[0][0] == SAMPLE_INDEX:  # nothing else sees a sampled line
                at = line_no + line_base
                result.error_sample.add(
                    text[cut:], host, Evidence(path, at, text[:MAX_EVIDENCE_TEXT], (index, at), host, rank, task)
                )
                return
            if keep is not None and host is not None and not decided:
                known = described.get(id(matches))
                if known is None or known[0] is not matches:
                    known = described[id(matches)] = (matches, folder.describe(matches))  # type: ignore[union-attr]
                if not keep(host, pid, rank, emitter, known[1]):
                    return
            line_no += line_base
            if host and pid is not None and matches and matches[0][0] == rank_entry:
                if len(matches) == 1:
                    facts.observe_rank_line(host, pid, emitter, level, matches[0][1], (index, line_no))
                    return
                # NCCL's "Init COMPLETE" line: the process's rank, then rule matches that only count once
                # their samples are full. The same effects in the same order as below, without a Frame.
                tail = rule_tails.get(id(matches))
                if tail is None or tail[0] is not matches:
                    tail = rule_tails[id(matches)] = (matches, self._rule_keys(matches[1:]))
                counted = tail[1] and [stats_of.get(key) for key in tail[1]]
                if counted and all(stats is not None and len(stats.samples) >= MAX_SAMPLES for stats in counted):
                    facts.observe_rank_line(host, pid, emitter, level, matches[0][1], (index, line_no))
                    ev_rank = rank if rank is not None else facts.rank_for(host, pid)
                    for stats, (_, groups) in zip(counted, matches[1:]):
                        stats.count_hit(host, ev_rank, groups)
                    return
            fr = Frame(text, text[cut:], host, pid, rank, local_rank, task, level, timestamp, emitter)
            order = (index, line_no)
            facts.observe_frame(fr, order)
            ev: Evidence | None = None
            located = False
            for i, groups in matches:
                owner, sig = entries[i]
                if owner == FACTS_OWNER:
                    facts.observe(sig, groups, fr, order)
                    continue
                if not located:  # after the line's own facts (entry order), as its evidence sees them
                    located = True
                    ev_rank = rank if rank is not None else facts.rank_for(host, pid)
                    ev_host = host if host is not None or ev_rank is None else facts.host_of_rank.get(ev_rank)
                key = (owner, sig.name)
                stats = stats_of.get(key)
                if stats is None:
                    stats = stats_of[key] = SigStats()
                if len(stats.samples) >= MAX_SAMPLES:
                    stats.count_hit(ev_host, ev_rank, groups)
                    continue
                if ev is None:
                    ev = Evidence(
                        path=path, line=line_no, text=text[:MAX_EVIDENCE_TEXT], order=order, host=ev_host,
                        rank=ev_rank, task=task, local_rank=local_rank, pid=pid, timestamp=timestamp,
                    )  # fmt: skip
                stats.add(ev, {k: v for k, v in groups.items() if v is not None})

        if self._core is None:
            for record in records:
                one(record)
            return
        # The compiled core applies the communicator lines (most records of a dense log) itself, folding
        # them with ``folder`` as the Keeper does, and hands every other record to ``one``, in order.
        self._core.apply(records, (
            line_base, index, facts, stats_of, self._rule_key_list(), rank_entry, MAX_SAMPLES, MAX_DISTINCT,
            described, folder.describe if folder is not None else None, folder, one,
        ))  # fmt: skip

    def _rule_key_list(self) -> list:
        """The statistics key (owner, name) of each entry, None for a fact's (the core's apply reads it)."""
        keys = self.__dict__.get("_rule_key_cache")
        if keys is None:
            keys = self._rule_key_cache = [
                None if owner == FACTS_OWNER else (owner, sig.name) for owner, sig in self.entries
            ]
        return keys

    def _rule_keys(self, matches: tuple) -> tuple | None:
        """The statistics keys of ``matches`` when all of them are rule matches, else None."""
        keys = []
        for i, _ in matches:
            owner, sig = self.entries[i]
            if owner == FACTS_OWNER:
                return None
            keys.append((owner, sig.name))
        return tuple(keys)

    def apply_folded(self, folded: Folded, result: ScanResult) -> None:
        """Add the counts of folded repeats; their first sightings were applied already."""
        for (i, host), n in folded.matches.items():
            owner, sig = self.entries[i]
            stats = result.stats[(owner, sig.name)]
            stats.count += n
            if host in stats.hosts:
                stats.hosts[host] += n
        for (host, name), n in folded.counters.items():
            facts = result.facts.hosts[host]
            setattr(facts, name, getattr(facts, name) + n)
