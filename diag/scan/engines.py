"""Engines that locate candidate lines in a block of whole lines, as fast as the machine allows.

An engine only answers "where might a signature match?": ``lines(block)`` gives the candidate
lines, each with the signatures that may match there. The scanner then runs those signatures, with
the same Python regexes whatever the engine, so the diagnosis never depends on the engine.
Engines may over-report (a candidate that does not confirm costs a little time), never
under-report.

* ``hyperscan`` (a default dependency on x86-64 Linux, where wheels exist): all signatures in one database.
* ``re2`` (``google-re2``, a default dependency where wheels exist): one alternation of all
  signatures, searched with ``(?m)`` over the block, and an RE2 set for each candidate line.
* ``python`` (always there): the distinct required literals, each found with ``bytes.find``.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from diag import cache
from diag.input import lines as lines_module
from diag.scan import core

ENGINE_NAMES = ("auto", "hyperscan", "re2", "python")


class EngineUnavailable(Exception):
    """The requested engine's library is not installed or cannot compile the signatures."""


@dataclass(frozen=True)
class Pattern:
    regex: str  # Python syntax, matched against a line's payload
    literal: str  # required literal of every match


def line_end(block: bytes, pos: int) -> int:
    """Offset of the terminator (``\\n`` or ``\\r``) of the line holding ``pos``, or len(block)."""
    nl = block.find(b"\n", pos)
    cr = block.find(b"\r", pos, nl if nl >= 0 else len(block))
    if cr >= 0:
        return cr
    return nl if nl >= 0 else len(block)


def line_span(block: bytes, pos: int) -> tuple[int, int]:
    """Start and terminator offset of the line holding ``pos`` (``\\n`` and a lone ``\\r`` end lines)."""
    nl = block.rfind(b"\n", 0, pos)
    return max(nl, block.rfind(b"\r", nl + 1, pos)) + 1, line_end(block, pos)


# A candidate line: (start, terminator offset, indexes of the patterns to try on it). A frozenset:
# the scanner remembers what it confirmed per (payload, members).
Line = tuple[int, int, frozenset[int]]


# Not \\v: in PCRE syntax (Hyperscan) it is the class of vertical whitespace, line feed included.
_LINE_SAFE_ESCAPES = {"\\s": "[ \\t\\f\\x0b]", "\\W": "[^\\w\\n\\r]", "\\D": "[^\\d\\n\\r]"}


def prefilter_regex(pattern: str) -> str:
    """The signature as a pattern over the raw block: it matches on every line where the signature
    can match, and never across a line end.

    The payload is a suffix of the line, so anchors (``^``, ``$``) are dropped wherever they stand
    (Hyperscan and RE2 would tie them to the block); a trailing unbounded tail is dropped. Both
    only widen the match. Everything that could consume a line terminator (``.``, ``\\s``, ``\\W``,
    ``\\D``, negated classes) is confined to the line, so the match ends on the line it starts on.
    """
    out: list[str] = []
    i, size = 0, len(pattern)
    while i < size:
        ch = pattern[i]
        if ch == "\\":
            esc = pattern[i : i + 2]
            out.append(_LINE_SAFE_ESCAPES.get(esc, esc))
            i += 2
        elif ch == "[":
            i = _class(pattern, i, out)
        elif ch == ".":
            out.append("[^\\n\\r]")
            i += 1
        elif ch in "^$":
            i += 1
        else:
            out.append(ch)
            i += 1
    text = "".join(out)
    text = re.sub(r"(?:\(\?P<\w+>\[\^\\n\\r\][*+]\??\)|\[\^\\n\\r\][*+]\??)$", "", text)  # open tail
    return text or re.escape(pattern)


def _class(pattern: str, i: int, out: list[str]) -> int:
    """Copy the character class at ``i``, keeping line terminators out of it; return the index after it."""
    j = i + 1
    negated = pattern.startswith("^", j)
    if negated:
        j += 1
    body: list[str] = []
    if j < len(pattern) and pattern[j] == "]":
        body.append("\\]")
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        if pattern[j] == "\\":
            esc = pattern[j : j + 2]
            body.append(" \\t\\f\\x0b" if esc == "\\s" and not negated else esc)
            j += 2
        else:
            body.append(pattern[j])
            j += 1
    if negated:
        body.append("\\n\\r")
    out.append("[" + ("^" if negated else "") + "".join(body) + "]")
    return j + 1


class _Engine:
    def lines(self, block: bytes) -> list[Line]:
        raise NotImplementedError

    def positions(self, block: bytes) -> list[int]:
        """Where the candidate lines start."""
        return [start for start, _, _ in self.lines(block)]


class PythonEngine(_Engine):
    """Each distinct literal located with ``bytes.find``: C speed per literal, no regex at all."""

    name = "python"

    def __init__(self, patterns: Sequence[Pattern]):
        literals = {p.literal.encode() for p in patterns}
        # A literal containing another adds nothing: wherever it occurs, the shorter one does.
        self.literals = sorted(
            (lit for lit in literals if not any(other != lit and other in lit for other in literals)),
            key=len,
            reverse=True,
        )
        # Where a kept literal occurs, every pattern whose literal contains it may match.
        self.members = {lit: {i for i, p in enumerate(patterns) if lit in p.literal.encode()} for lit in self.literals}

    def lines(self, block: bytes) -> list[Line]:
        found: dict[int, Line] = {}
        find = block.find
        for lit in self.literals:
            members = self.members[lit]
            pos = find(lit)
            while pos >= 0:
                start, end = line_span(block, pos)
                if start in found:
                    found[start][2].update(members)
                else:
                    found[start] = (start, end, set(members))
                pos = find(lit, end + 1)  # only the line matters
        return [(start, found[start][1], frozenset(found[start][2])) for start in sorted(found)]


class RE2Engine(_Engine):
    """One alternation of every signature, compiled by RE2 into a linear-time automaton."""

    name = "re2"

    def __init__(self, patterns: Sequence[Pattern]):
        try:
            import re2
        except ImportError as exc:
            raise EngineUnavailable("google-re2 is not installed (pip install google-re2)") from exc
        parts, self.members = _grouped(patterns)
        options = re2.Options()
        options.max_mem = 256 << 20
        try:
            self.regex = re2.compile(("(?m)(?:" + "|".join(parts) + ")").encode(), options)
            # Which signatures a candidate line holds: an RE2 set answers in one pass over the line.
            self.set = re2.Set.SearchSet(options)
            for part in parts:
                self.set.Add(part.encode())
            self.set.Compile()
        except re2.error as exc:  # type: ignore[attr-defined]
            raise EngineUnavailable(f"RE2 cannot compile the signatures: {exc}") from exc

    def lines(self, block: bytes) -> list[Line]:
        """Candidate lines, each with the patterns that match on it."""
        found: list[Line] = []
        search, match_set, members = self.regex.search, self.set.Match, self.members
        pos, size = 0, len(block)
        while pos < size:
            m = search(block, pos)
            if m is None:
                break
            start, end = line_span(block, m.start())
            found.append((start, end, frozenset(i for expr in match_set(block[start:end]) for i in members[expr])))
            pos = end + 1
        return found


class HyperscanEngine(_Engine):
    """All signatures in one Hyperscan database, scanned in block mode."""

    name = "hyperscan"

    def __init__(self, patterns: Sequence[Pattern]):
        parts, members = _grouped(patterns)
        self.members = [frozenset(m) for m in members]
        self._unions: dict[tuple, frozenset[int]] = {}  # the core's shared member sets of lines with several exprs
        self.core = core.module()  # finds the lines of the matches in C; same lines as below
        exprs = [part.encode() for part in parts]
        self.hs = None  # the core's own database, where it was built with libhs: no Python call per match
        if self.core is not None and hasattr(self.core, "hs_compile"):
            self.hs = _cached_core_database(self.core, exprs)
            return
        try:
            import hyperscan
        except ImportError as exc:
            raise EngineUnavailable("hyperscan is not installed (pip install hyperscan; x86-64 Linux wheels)") from exc
        self.db = _cached_database(hyperscan, exprs)
        self.scratch = hyperscan.Scratch(self.db)
        self._collector = self.core.Collector() if self.core is not None else None  # records matches in C
        self._combos = _Combos(self.members)  # the NumPy path's member sets of lines with several expressions

    def lines(self, block: bytes) -> list[Line]:
        """Candidate lines, each with the patterns that matched on it."""
        if self.hs is not None:
            return self.hs.lines(block, self.members, self._unions)
        ends: list[int] = []
        exprs: list[int] = []
        end_append, expr_append = ends.append, exprs.append

        def on_match(expr_id: int, _start: int, end: int, _flags: int, _ctx: object) -> None:
            end_append(end)  # Hyperscan does not promise end-offset order across patterns
            expr_append(expr_id)
            return None

        if self.core is not None:
            collector = self._collector
            try:
                self.db.scan(block, match_event_handler=collector, scratch=self.scratch)
            except BaseException:
                collector.clear()
                raise
            return collector.lines(block, self.members, self._unions)
        self.db.scan(block, match_event_handler=on_match, scratch=self.scratch)
        if len(ends) >= _VECTOR_MIN_MATCHES:
            np = lines_module._load_numpy()
            if np is not None:
                return _lines_of_matches(np, block, ends, exprs, self.members, self._combos)
        return lines_of_ends(block, ends, exprs, self.members)


def lines_of_ends(block: bytes, ends: list[int], exprs: list[int], members: list[frozenset[int]]) -> list[Line]:
    """The candidate lines of the matches (``ends[k]``, ``exprs[k]``): the line holding each match's
    last byte, with the union of the ``members`` of the expressions matched on it. The reference
    that the NumPy path and the compiled core (diag.scan.core) must equal."""
    found: list[Line] = []
    last_end = -1
    for end, expr_id in sorted(zip(ends, exprs)):
        if end <= last_end and found:
            start, stop, tried = found[-1]
            if not members[expr_id] <= tried:  # same line: more patterns to try
                found[-1] = (start, stop, tried | members[expr_id])
            continue
        start, last_end = line_span(block, max(end - 1, 0))
        found.append((start, last_end, members[expr_id]))
    return found


_VECTOR_MIN_MATCHES = 64  # below this, NumPy's per-call overhead costs more than line_span


def _lines_of_matches(
    np, block: bytes, ends: list[int], exprs: list[int], members: list[frozenset[int]], combos: _Combos | None = None
) -> list[Line]:
    """The candidate lines of the matches (``ends[k]``, ``exprs[k]``), as line_span finds them
    one by one, with NumPy: every terminator is located in one pass, and the line holding offset
    ``pos`` runs from just after the last terminator before ``pos`` to the first one at or after
    it. A line matched by several expressions gets the union of their members from ``combos``,
    built once per distinct combination: on a dense NCCL log most candidate lines match two or
    three expressions, and a Python step per extra match cost as much as the scan's callbacks."""
    data = np.frombuffer(block, dtype=np.uint8)
    terminators = np.flatnonzero((data == 10) | (data == 13) if b"\r" in block else data == 10)
    end_array = np.array(ends, dtype=np.int64)
    order = np.argsort(end_array, kind="stable")
    which = np.searchsorted(terminators, np.maximum(end_array[order] - 1, 0), side="left")
    expr_array = np.array(exprs, dtype=np.int64)[order]
    first = np.empty(len(which), dtype=bool)
    first[0] = True
    np.not_equal(which[1:], which[:-1], out=first[1:])
    lines = which[first]
    bounds = np.concatenate(([-1], terminators, [len(block)]))
    if combos is None:
        combos = _Combos(members)
    combos.start_block()
    if len(lines) == len(which):  # one match per line
        state = expr_array
    else:
        # The distinct (line, expression) pairs, in line order, then expression order.
        width = len(members)
        pairs = _distinct(np, (np.cumsum(first) - 1) * width + expr_array)
        pair_line = pairs // width
        pair_expr = pairs - pair_line * width
        head = np.flatnonzero(np.concatenate(([True], pair_line[1:] != pair_line[:-1])))
        count = np.diff(np.append(head, len(pairs)))
        state = pair_expr[head]  # a set id per line: an expression's own id while it holds one
        k = 1
        several = np.flatnonzero(count > 1)
        while len(several):  # add each line's k-th expression: one step per distinct (set, expression)
            keys = state[several] * width + pair_expr[head[several] + k]
            order = np.argsort(keys, kind="stable")
            distinct = _distinct(np, keys[order], presorted=True)
            step = combos.step
            ids = np.array([step(key // width, key % width) for key in distinct.tolist()], dtype=np.int64)
            state[several[order]] = ids[np.searchsorted(distinct, keys[order])]
            k += 1
            several = several[count[several] > k]
    tried = list(map(combos.sets.__getitem__, state.tolist()))
    return list(zip((bounds[lines] + 1).tolist(), bounds[lines + 1].tolist(), tried))


def _distinct(np, values, presorted: bool = False):
    """The distinct values of a NumPy integer array, ascending (``np.unique`` without its hash table,
    which left each worker a few MB larger)."""
    if not presorted:
        values = values.copy()
        values.sort()
    if len(values) < 2:
        return values
    return values[np.concatenate(([True], values[1:] != values[:-1]))]


class _Combos:
    """Member sets of lines matched by several expressions, shared by id: ids below
    ``len(members)`` stand for one expression's members, each further id for a set extended by one
    expression (:meth:`step`). At most ``_MAX_COMBOS`` are kept; the table starts over between blocks."""

    def __init__(self, members: list[frozenset[int]]):
        self.members = members
        self.sets: list[frozenset[int]] = list(members)
        self._ids: dict[tuple[int, int], int] = {}

    def start_block(self) -> None:
        if len(self.sets) > len(self.members) + _MAX_COMBOS:
            self.sets = list(self.members)
            self._ids = {}

    def step(self, set_id: int, expr: int) -> int:
        """The id of set ``set_id`` with the members of expression ``expr`` added."""
        found = self._ids.get((set_id, expr))
        if found is None:
            have, more = self.sets[set_id], self.members[expr]
            found = self._ids[(set_id, expr)] = len(self.sets)
            self.sets.append(have if more <= have else have | more)
        return found


_MAX_COMBOS = 4096


def _cached_core_database(core_module, exprs: list[bytes]):
    """The compiled core's database (libhs, linked by setup.py), cached as the Python one is; its
    key holds libhs's version, since a serialized database is only valid for the library that wrote it."""
    key = hashlib.sha256(b"\0".join([core_module.hs_version().encode(), *exprs])).hexdigest()[:32]
    name = f"hyperscan-core-{key}.db"
    cached = cache.read_bytes(name)
    if cached is not None:
        try:
            return core_module.hs_load(cached, len(exprs))
        except ValueError:  # a damaged cache entry is simply rebuilt
            pass
    try:
        db = core_module.hs_compile(exprs)
    except ValueError as exc:
        raise EngineUnavailable(f"Hyperscan cannot compile the signatures: {exc}") from exc
    cache.write_bytes(name, db.serialize())
    return db


def _cached_database(hyperscan, exprs: list[bytes]):
    """Compiling the database costs far more than a small log's scan: keep it, keyed by content."""
    key = hashlib.sha256(b"\0".join([str(hyperscan.__version__).encode(), *exprs])).hexdigest()[:32]
    name = f"hyperscan-{key}.db"
    cached = cache.read_bytes(name)
    if cached is not None:
        try:
            return hyperscan.loadb(cached, mode=hyperscan.HS_MODE_BLOCK)
        except Exception:  # noqa: BLE001 - a damaged cache entry is simply rebuilt
            pass
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    try:
        db.compile(
            expressions=exprs,
            ids=list(range(len(exprs))),
            elements=len(exprs),
            flags=[hyperscan.HS_FLAG_ALLOWEMPTY] * len(exprs),
        )
    except hyperscan.error as exc:
        raise EngineUnavailable(f"Hyperscan cannot compile the signatures: {exc}") from exc
    cache.write_bytes(name, hyperscan.dumpb(db))
    return db


@functools.lru_cache(maxsize=8192)  # a fleet scan builds a scanner per job: derive each expression once
def engine_expression(p: Pattern) -> str:
    """What an engine looks for: the prefilter regex, or just the required literal when the regex
    starts with a class or group. A leading ``[A-Z][A-Z0-9_]+`` or ``(?:a|b)`` must be tracked at
    every byte, and such patterns made the whole Hyperscan database half as fast, while the
    literal alone picked the same lines on the benchmark log."""
    expr = _no_groups(prefilter_regex(p.regex))
    return trim_tail(expr) if _starts_with_literal(expr) else re.escape(p.literal)


def _atoms(expr: str) -> list[tuple[int, int, int]] | None:
    """The top-level atoms of ``expr`` as (start, end of the atom, end with its quantifier); None
    when ``expr`` has a top-level alternation (its tail is not one atom)."""
    atoms: list[tuple[int, int, int]] = []
    i, size = 0, len(expr)
    while i < size:
        start, ch = i, expr[i]
        if ch == "|":
            return None
        if ch == "\\":
            i += 2
        elif ch == "[":
            i += 1
            if expr.startswith("^", i):
                i += 1
            if expr.startswith("]", i):
                i += 1
            while i < size and expr[i] != "]":
                i += 2 if expr[i] == "\\" else 1
            i += 1
        elif ch == "(":
            depth = 0
            while i < size:
                c = expr[i]
                if c == "\\":
                    i += 2
                    continue
                if c == "[":  # a class may hold parentheses
                    i += 1
                    if expr.startswith("^", i):
                        i += 1
                    if expr.startswith("]", i):
                        i += 1
                    while i < size and expr[i] != "]":
                        i += 2 if expr[i] == "\\" else 1
                elif c == "(":
                    depth += 1
                elif c == ")":
                    depth -= 1
                    if depth == 0:
                        i += 1
                        break
                i += 1
        else:
            i += 1
        end = i
        if i < size and expr[i] in "*+?":
            i += 1
        elif i < size and expr[i] == "{":
            close = expr.find("}", i)
            i = close + 1 if close > 0 else i + 1
        if end < i and i < size and expr[i] == "?":
            i += 1  # lazy
        atoms.append((start, end, i))
    return atoms


def trim_tail(expr: str) -> str:
    """``expr`` without a repeated or optional tail (``(?:\\S+)``, ``\\d+``, ``[ \\t]*``, ``(?:/GDRDMA)?``).

    Hyperscan reports every offset where an expression matches: ``NCCL_IB_HCA set to \\S+`` fires
    once per character of the value, and the Python callback per report cost more than the scan.
    Matching only the fixed part (one occurrence of a ``+`` atom, nothing of a ``*`` or ``?`` one)
    reports each line about once; it only widens what the engine finds, which is allowed."""
    while True:
        atoms = _atoms(expr)
        if not atoms or len(atoms) < 2:
            return expr
        start, end, stop = atoms[-1]
        quant = expr[end:stop]
        if len(quant) > 1 and quant.endswith("?"):
            quant = quant[:-1]  # lazy or greedy, the same offsets can match
        atom = expr[start:end]
        if quant in ("*", "?") or re.fullmatch(r"\{0?,\d*\}", quant):
            expr = expr[:start]  # may occur zero times: drop it
        elif quant == "+" or quant.startswith("{"):
            expr = expr[:start] + atom  # at least once: once is enough
            return expr if not atom.startswith("(") else trim_tail(expr)
        elif atom.startswith("(?:") and _atoms(atom[3:-1]) is not None:
            expr = expr[:start] + atom[3:-1]  # a plain group: its content is the tail
        elif atom.startswith("(?:") and not quant:
            branches = [trim_tail(b) if _atoms(b) else b for b in _branches(atom[3:-1])]
            return expr[:start] + "(?:" + "|".join(branches) + ")"  # an alternation: each branch's tail
        else:
            return expr


def _branches(expr: str) -> list[str]:
    """``expr`` split at its top-level ``|``."""
    parts, depth, last, i, size = [], 0, 0, 0, len(expr)
    in_class = False
    while i < size:
        c = expr[i]
        if c == "\\":
            i += 2
            continue
        if in_class:
            in_class = c != "]"
        elif c == "[":
            in_class = True
            if expr.startswith("]", i + 1) or expr.startswith("^]", i + 1):
                i += 3 if expr[i + 1] == "^" else 2  # a leading ] is a member
                continue
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "|" and depth == 0:
            parts.append(expr[last:i])
            last = i + 1
        i += 1
    parts.append(expr[last:])
    return parts


def _starts_with_literal(expr: str) -> bool:
    """Whether the first atom is one fixed character (``a``, or ``\\[``: escaped punctuation), not
    made optional or repeated."""
    if not expr or expr[0] in "([.^$|)":
        return False
    width = 1
    if expr[0] == "\\":
        if expr[1:2].isalnum() or not expr[1:2]:
            return False  # \d \s \w \b \x..: a class or an assertion
        width = 2
    return expr[width : width + 1] not in ("?", "*", "+", "{")


def _grouped(patterns: Sequence[Pattern]) -> tuple[list[str], list[tuple[int, ...]]]:
    """The distinct engine expressions, and for each the patterns it stands for (the scanner
    then tries only those on a line where it matched).

    Deriving them costs 40-50 ms for the whole catalogue, a sixth of a small log's run: they are
    kept in the per-user cache, keyed by the patterns, this module's source (which derives them)
    and the Python version (``re.escape``)."""
    digest = hashlib.sha256(_SOURCE_KEY)
    for p in patterns:
        regex, literal = p.regex.encode("utf-8", "surrogatepass"), p.literal.encode("utf-8", "surrogatepass")
        digest.update(b"\0\0%b\0%b" % (regex, literal))
    name = f"engine-exprs-{digest.hexdigest()[:32]}.pickle"
    known = _GROUPED.get(name) or cache.load_object(name)
    if _valid_grouping(known, len(patterns)):
        _GROUPED[name] = known
        return list(known[0]), list(known[1])
    exprs, members = _derive_grouped(patterns)
    if len(_GROUPED) >= 64:
        _GROUPED.clear()
    _GROUPED[name] = (tuple(exprs), tuple(members))
    cache.store_object(name, _GROUPED[name])
    return exprs, members


def _source_key() -> bytes:
    import sys

    try:
        with open(__file__, "rb") as f:
            source = f.read()
    except OSError:  # no source next to the module: a key no run shares, so nothing is reused
        source = os.urandom(16)
    return sys.version.encode() + b"\0" + source


_GROUPED: dict[str, tuple] = {}  # this process's groupings (a fleet scan builds a scanner per job)


def _valid_grouping(known, count: int) -> bool:
    """A cached grouping is used only if it has the shape _derive_grouped gives (a damaged or foreign
    entry is rebuilt): distinct str expressions, each with a tuple of pattern indexes, every index once."""
    if not (isinstance(known, tuple) and len(known) == 2):
        return False
    exprs, members = known
    if not (isinstance(exprs, tuple) and isinstance(members, tuple) and len(exprs) == len(members)):
        return False
    if not all(isinstance(e, str) for e in exprs) or len(set(exprs)) != len(exprs):
        return False
    seen = [i for m in members if isinstance(m, tuple) for i in m]
    return len(seen) == count and sorted(seen) == list(range(count)) and all(type(i) is int for i in seen)


def _derive_grouped(patterns: Sequence[Pattern]) -> tuple[list[str], list[tuple[int, ...]]]:
    by_expr: dict[str, list[int]] = {}
    for index, p in enumerate(patterns):
        by_expr.setdefault(engine_expression(p), []).append(index)
    exprs = sorted(by_expr)
    return exprs, [tuple(by_expr[e]) for e in exprs]


def _no_groups(pattern: str) -> str:
    return re.sub(r"\(\?P<\w+>", "(?:", pattern)


_SOURCE_KEY = _source_key()

_ENGINES: dict[str, Callable[[Sequence[Pattern]], object]] = {
    "hyperscan": HyperscanEngine,
    "re2": RE2Engine,
    "python": PythonEngine,
}


def make_engine(name: str, patterns: Iterable[Pattern]):
    """The named engine, or for ``auto`` the fastest one that is installed and compiles."""
    patterns = list(patterns)
    if name != "auto":
        if name not in _ENGINES:
            raise EngineUnavailable(f"unknown engine {name!r}; one of {', '.join(ENGINE_NAMES)}")
        return _ENGINES[name](patterns)
    for candidate in ("hyperscan", "re2"):
        try:
            return _ENGINES[candidate](patterns)
        except EngineUnavailable:
            continue
    return PythonEngine(patterns)


def available_engines() -> list[str]:
    names = []
    probe = [Pattern("probe literal", "probe literal")]
    for name in ("hyperscan", "re2", "python"):
        try:
            _ENGINES[name](probe)
            names.append(name)
        except EngineUnavailable:
            pass
    return names
