"""Derive the literal every match of a signature must contain, for the scan's prefilter.

Signatures stay in the subset of syntax that ``re``, RE2 and Hyperscan share, so Python's own
regex parser can read them: the longest run of literal characters on the pattern's top-level
sequence (or inside a capture group that is always present) is a substring of every match.
"""

from __future__ import annotations

from diag import regex_walk

try:  # Python 3.11+
    import re._constants as _c
    import re._parser as _parser
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _c  # type: ignore[no-redef]
    import sre_parse as _parser  # type: ignore[no-redef]

MIN_LITERAL = 4


def required_literals(pattern: str) -> list[str]:
    """All maximal literal runs that every match contains, longest first."""
    runs: list[str] = []
    _collect(_parser.parse(pattern), runs)
    return sorted({r for r in runs if r}, key=len, reverse=True)


def best_literal(pattern: str) -> str | None:
    runs = required_literals(pattern)
    return runs[0] if runs and len(runs[0]) >= MIN_LITERAL else None


def _collect(seq, runs: list[str]) -> None:
    current: list[str] = []
    for op, arg in seq:
        if op is _c.LITERAL:
            current.append(chr(arg))
            continue
        if op is _c.SUBPATTERN:
            # (group, add_flags, del_flags, subpattern) on 3.6+
            sub = arg[-1]
            flags = arg[1] if len(arg) > 2 else 0
            if flags & _c.SRE_FLAG_IGNORECASE:
                runs.append("".join(current))
                current = []
                continue
            inner: list[str] = []
            _collect(sub, inner)
            # A group's literal text joins the run only when the group is one literal run.
            if len(sub) and all(o is _c.LITERAL for o, _ in sub):
                current.append("".join(chr(a) for _, a in sub))
                continue
            runs.append("".join(current))
            current = []
            runs.extend(inner)
            continue
        if op in (_c.MAX_REPEAT, _c.MIN_REPEAT):
            low, _high, sub = arg
            runs.append("".join(current))
            current = []
            if low >= 1:
                _collect(sub, runs)
            continue
        runs.append("".join(current))
        current = []
    runs.append("".join(current))


MAX_DIGITS = 30


def bound_digit_runs(pattern: str) -> str:
    """``pattern`` with every ``\\d+`` outside a class bounded to :data:`MAX_DIGITS` digits.

    Analyzers turn captured numbers into ints; Python refuses strings of over 4,300 digits, and a log
    line may hold any bytes. No real count, pid or size has 30 digits, so a longer run simply does not
    match, where it would otherwise stop the diagnosis."""
    out: list[str] = []
    for token, in_class in regex_walk.tokens(pattern):
        if token == "+" and not in_class and out and out[-1] == "\\d":
            out[-1] = f"\\d{{1,{MAX_DIGITS}}}"
            continue
        out.append(token)
    return "".join(out)
