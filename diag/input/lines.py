"""Counting line feeds in a block: the one pass over every byte that Python itself has to make.

``bytes.count`` runs at about 1 GB/s; NumPy (optional, ``slurmdiag[fast]``) at memory speed. Both
give the same numbers: the count of ``\\n`` before each candidate line and in the whole block.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

_NUMPY_MIN_BLOCK = 256 * 1024  # below this, importing and calling NumPy costs more than it saves


@functools.cache
def _load_numpy():
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def preload() -> None:
    """Import NumPy now (if installed), e.g. once before forking workers rather than in each."""
    _load_numpy()


def count_newlines(block: bytes, starts: Sequence[int]) -> tuple[list[int], int]:
    """For each offset in ``starts`` (ascending), how many ``\\n`` precede it; and the block's total."""
    np = _load_numpy() if len(block) >= _NUMPY_MIN_BLOCK else None
    out: list[int] = []
    seen = pos = 0
    if np is not None:
        is_newline = np.frombuffer(block, dtype=np.uint8) == 10
        count_true = np.count_nonzero
        for start in starts:
            seen += int(count_true(is_newline[pos:start]))
            pos = start
            out.append(seen)
        return out, seen + int(count_true(is_newline[pos:]))
    count = block.count
    for start in starts:
        seen += count(b"\n", pos, start)
        pos = start
        out.append(seen)
    return out, seen + count(b"\n", pos)


# A line that says nothing at the end of a paste: blank, a code fence, quote markers, an
# ellipsis, or a shell prompt with no command ("[user@host ~]$", "(env) $").
_SAYS_NOTHING = re.compile(
    rb"(?:>\s*)*(?:[-*+]\s+)?(?:`+|~{3,}|\.{3,}|\xe2\x80\xa6"
    rb"|(?:\([\w.-]+\)\s*)?(?:\[[^\]\n]{0,80}\]|[\w.-]+@[\w.-]+(?::\S*)?)?\s*[$#%]|)\s*"
)


# A paste's tail is a few lines; past this many the walk stops (the tail then reads as shorter than it is).
MAX_SILENT_WALK = 64


def _says_nothing(line: bytes) -> bool:
    """Whether ``line`` says nothing, once its prefixes (an srun label, a timestamp) are read off."""
    if _SAYS_NOTHING.fullmatch(line):
        return True
    if len(line) > 200:
        return False
    from diag.input.framing import frame_general  # framing is the heavier module; only a tail line needs it

    return bool(_SAYS_NOTHING.fullmatch(frame_general(line.decode("utf-8", "replace")).payload.encode()))


def trailing_silent_lines(block: bytes) -> tuple[int, bool]:
    """How many of ``block``'s last lines say nothing (see ``_SAYS_NOTHING``), and whether that is
    all of them. Lines as the scanner numbers them: ended by ``\\n``, a final unterminated piece
    being a line of its own. Read from the end, so a block whose last line says something costs one
    line's look."""
    if not block:
        return 0, True
    pos = len(block) - 1 if block.endswith(b"\n") else len(block)
    count = 0
    while pos >= 0:
        if count == MAX_SILENT_WALK:
            # A long silent run: if all that is left is blank (a file of newlines), count it in C.
            rest = block[: pos + 1]
            return (count + rest.count(b"\n"), True) if not rest.strip() else (count, False)
        start = block.rfind(b"\n", 0, pos) + 1
        if not _says_nothing(block[start:pos]):
            return count, False
        count += 1
        if start == 0:
            return count, True
        pos = start - 1
    return count, True
