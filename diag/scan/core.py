"""The optional compiled core (diag/scan/_core.c): the per-candidate loop of the scanner in C.

Built by ``pip install`` where a C compiler, the Python headers and libpcre2 are present (setup.py
marks it optional); otherwise, or with ``SLURMDIAG_NO_CORE=1``, the scanner runs the same loop in
Python. Both give the same records, hence byte-identical reports (tests/scan/test_core.py and the
equivalence tests run both).

What the core does per candidate line: find the line around a Hyperscan match (``lines``), read
the common NCCL prefix off its bytes with PCRE2 (JIT) instead of Python's ``re``, look its payload
up in the scanner's memo, and count a repeat whose fold key folding has already seen. Confirming
signatures, describing matches and every fold decision that changes state stay in Python, called
from the core only for the lines that need them.
"""

from __future__ import annotations

import os
import re
import warnings

from diag.catalog.model import Signature
from diag.input.framing import COMMON_NCCL_BYTES

NO_CORE_ENV = "SLURMDIAG_NO_CORE"


try:
    from diag.scan import _core  # type: ignore[attr-defined]
except ImportError:
    _core = None


def built() -> bool:
    """Whether the extension was built (whatever ``SLURMDIAG_NO_CORE`` says)."""
    return _core is not None


def module():
    """The extension module for a scanner made now: None when it was not built or ``SLURMDIAG_NO_CORE``
    is set (read at each call, so a test can switch it per scanner)."""
    if os.environ.get(NO_CORE_ENV, "").strip() not in ("", "0"):
        return None
    return _core


def compile_frame(core):
    """The common NCCL prefix (diag.input.framing.COMMON_NCCL_BYTES, already written for bytes)
    compiled by ``core`` with PCRE2, anchored as ``re.match`` is (tests/scan/test_core.py compares
    the two on random lines)."""
    return core.compile(COMMON_NCCL_BYTES.pattern, True)


PENDING = False  # a signature whose confirmer is not compiled yet: the core asks Python, which compiles it


def confirmer(core, sig: Signature) -> tuple | None:
    """What the core confirms ``sig`` with: (PCRE2 regex, levels as bytes, numbers of its named
    groups in ``groupdict`` order), or None when only Python may run it. Compiled the first time a
    candidate line needs it, as Python compiles its own regexes (start-up stays short)."""
    form = pcre2_form(sig.pattern)
    if form is None:
        return None
    try:
        regex = core.compile(form, False)
    except ValueError:
        return None
    groups = tuple(re.compile(sig.pattern).groupindex.values())
    return (regex, tuple(level.encode("ascii") for level in sig.levels), groups)


_GROUP_OPENERS = ("(?:", "(?P<", "(?P=", "(?=", "(?!", "(?<=", "(?<!")


def pcre2_form(pattern: str) -> bytes | None:
    r"""``pattern`` (Python ``re`` syntax, matched against a str) as a PCRE2 pattern that matches an
    ASCII payload exactly as Python does, with the same groups; None when it uses anything whose
    meaning may differ (inline flags, ``{,n}``, POSIX-looking classes, escapes outside a small
    safe set, non-ASCII text, a pattern only the ``regex`` package compiles).

    The one rewrite: Python's ``\s`` on a str also matches the separators ``\x1c``-``\x1f``;
    PCRE2's (like bytes) does not, so they are added (a ``\S`` inside a class is refused)."""
    if not pattern.isascii():
        return None
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "possible nested set": refused below anyway
            compiled = re.compile(pattern)
    except re.error:
        return None
    numbers = list(compiled.groupindex.values())
    if numbers != sorted(numbers):
        return None  # groupdict follows groupindex: keep the core's order the same
    out: list[str] = []
    i, size, in_class = 0, len(pattern), False
    while i < size:
        ch = pattern[i]
        if ch == "\\":
            esc = pattern[i + 1 : i + 2]
            if esc in ("s", "S"):
                if in_class and esc == "S":
                    return None
                out.append("\\s\\x1c-\\x1f" if in_class else ("[\\s\\x1c-\\x1f]" if esc == "s" else "[^\\s\\x1c-\\x1f]"))
                i += 2
            elif esc and (esc in "dDwWbBntrf" or not esc.isalnum()):
                out.append(pattern[i : i + 2])
                i += 2
            elif esc == "x" and re.fullmatch(r"[0-9a-fA-F]{2}", pattern[i + 2 : i + 4]):
                out.append(pattern[i : i + 4])
                i += 4
            else:
                return None  # \A, \Z, backreferences, \u, \N{...}, \v...: not needed, not risked
            continue
        if in_class:
            if ch == "[" and pattern[i + 1 : i + 2] in (":", ".", "="):
                return None  # PCRE2 reads [:alpha:] as a POSIX class, Python as characters
            if ch == "]":
                in_class = False
            out.append(ch)
            i += 1
            continue
        if ch == "[":
            j = i + 1
            if pattern.startswith("^", j):
                j += 1
            if pattern.startswith("]", j):
                j += 1  # a leading ] is a member
            out.append(pattern[i:j])
            i, in_class = j, True
            continue
        if ch == "(" and pattern.startswith("(?", i) and not pattern.startswith(_GROUP_OPENERS, i):
            return None  # inline flags, atomic groups, comments, conditionals
        if ch == "{" and pattern.startswith("{,", i):
            return None  # Python reads {,n} as {0,n}; PCRE2 10.42 as text
        out.append(ch)
        i += 1
    return "".join(out).encode("ascii")
