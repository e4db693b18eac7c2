"""Scan: find every line any signature can match, in one pass over large blocks.

A combined literal prefilter locates candidate lines in each block of whole lines; only those
lines are decoded, framed and tried against the signatures whose literal they contain (every
candidate signature, so two rules matching one line both fire). Hits are kept as bounded
statistics: counts, distinct hosts/ranks/captures, and the first few evidence lines.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from diag.engines import Pattern, line_end, make_engine
from diag.evidence import MAX_EVIDENCE_TEXT, Evidence
from diag.facts import FACT_SIGNATURES, Facts
from diag.framing import ANSI_BYTES_RE, frame
from diag.rules import RuleSet, Signature
from diag.sources import CHUNK_BYTES, InputStats, Source, read_blocks

MAX_SAMPLES = 64
MAX_DISTINCT = 256
FACTS_OWNER = "@facts"


@dataclass
class SigStats:
    """What one signature of one rule matched across the whole job."""

    count: int = 0
    samples: list[tuple[Evidence, dict[str, str]]] = field(default_factory=list)
    hosts: dict[str, int] = field(default_factory=dict)
    ranks: set[int] = field(default_factory=set)
    captures: dict[str, dict[str, None]] = field(default_factory=dict)  # ordered distinct values

    def add(self, ev: Evidence, groups: dict[str, str]) -> None:
        self.count += 1
        if len(self.samples) < MAX_SAMPLES:
            self.samples.append((ev, groups))
        if ev.host and (ev.host in self.hosts or len(self.hosts) < MAX_DISTINCT):
            self.hosts[ev.host] = self.hosts.get(ev.host, 0) + 1
        if ev.rank is not None and len(self.ranks) < MAX_DISTINCT:
            self.ranks.add(ev.rank)
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

    def sig(self, rule_id: str, name: str) -> SigStats:
        return self.stats.get((rule_id, name)) or SigStats()


class Scanner:
    """All signatures of a rule set (plus the fact signatures), compiled once."""

    def __init__(self, rules: RuleSet, chunk_bytes: int = CHUNK_BYTES, engine: str = "auto"):
        self.chunk_bytes = chunk_bytes
        entries: list[tuple[str, Signature]] = [(FACTS_OWNER, s) for s in FACT_SIGNATURES]
        for rule in rules.rules:
            entries.extend((rule.id, s) for s in rule.signatures)
        by_literal: dict[str, list[int]] = {}
        for i, (_, sig) in enumerate(entries):
            by_literal.setdefault(sig.literal, []).append(i)
        self.by_literal = by_literal
        self.literals = sorted(by_literal, key=len, reverse=True)
        self.entries = entries
        self.engine = make_engine(engine, [Pattern(sig.pattern, sig.literal) for _, sig in entries])

    def scan(self, sources: Iterable[Source]) -> ScanResult:
        result = ScanResult()
        for index, source in enumerate(sources):
            stats = InputStats(source.path)
            result.inputs.append(stats)
            self._scan_source(index, source, stats, result)
        return result

    def _scan_source(self, index: int, source: Source, stats: InputStats, result: ScanResult) -> None:
        engine = self.engine
        base_line = 0  # lines before this block (read_blocks counts them as it yields)
        for block in read_blocks(source, stats, self.chunk_bytes):
            if b"\x1b" in block:
                block = ANSI_BYTES_RE.sub(b"", block)
            done_to, counted_to, line_no = -1, 0, base_line
            hits = engine.hits(block) if hasattr(engine, "hits") else [(p, None) for p in engine.positions(block)]
            for hit, members in hits:
                if hit <= done_to:
                    continue  # same line as the previous candidate
                nl_before = block.rfind(b"\n", 0, hit)
                start = max(nl_before, block.rfind(b"\r", nl_before + 1, hit)) + 1
                end = line_end(block, hit)
                line_no += block.count(b"\n", counted_to, start)
                counted_to = start
                self._line(block[start:end], source.path, index, line_no + 1, result, members)
                done_to = end
            base_line = stats.lines

    def _candidates(self, payload: str, members: set[int] | None) -> list[tuple[str, Signature]]:
        """The signatures to try on a line, facts first then rules in load order (so the result never
        depends on the engine): those the engine saw match, else those whose literal is there."""
        if members is None:
            by_literal = self.by_literal
            members = {i for lit in self.literals if lit in payload for i in by_literal[lit]}
        entries = self.entries
        return [entries[i] for i in sorted(members)]

    def _line(
        self, raw: bytes, path: str, index: int, line_no: int, result: ScanResult, members: set[int] | None = None
    ) -> None:
        text = raw.decode("utf-8", "replace")
        fr = frame(text)
        payload = fr.payload
        order = (index, line_no)
        facts = result.facts
        facts.observe_frame(fr, order)
        ev: Evidence | None = None
        for owner, sig in self._candidates(payload, members):
            m = sig.match(payload, fr.level)
            if m is None:
                continue
            if owner == FACTS_OWNER:
                facts.observe(sig, m, fr, order)
                continue
            if ev is None:
                rank = fr.rank if fr.rank is not None else facts.rank_for(fr.host, fr.pid)
                host = fr.host if fr.host is not None or rank is None else facts.host_of_rank.get(rank)
                ev = Evidence(
                    path=path, line=line_no, text=fr.text[:MAX_EVIDENCE_TEXT], order=order, host=host,
                    rank=rank, task=fr.task, local_rank=fr.local_rank, pid=fr.pid, timestamp=fr.timestamp,
                )  # fmt: skip
            key = (owner, sig.name)
            stats = result.stats.get(key)
            if stats is None:
                stats = result.stats[key] = SigStats()
            stats.add(ev, {k: v for k, v in m.groupdict().items() if v is not None})
