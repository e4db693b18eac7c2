"""Pasted excerpts are damaged on the way: a chat client or an issue form glues NCCL records onto
one line (``[0] NCCL INFO A. [0] NCCL INFO B``), a progress bar swallows the log line after it
(``...it/s][rank1]:[W516 ...``), markdown wraps each line in a list item and inline code
(``- `srun: error: ...` ``), a terminal copy cuts every long record at the window's width. A small
input gets each glued record back on a line of its own, loses the markdown around a line, and
gets each record cut by the terminal back whole (see :func:`rejoin_wrapped`).

The record is split off with a lone ``\\r``, which ends a line for the scanner but is not counted
as one, so every ``file:line`` of the report still points at the line the user has. Only inputs of
at most :data:`PASTE_BYTES` are repaired: a multi-GB log written by the software itself has its
line ends, and the scan of it stays one pass.
"""

from __future__ import annotations

import io
import os
import re
from typing import BinaryIO

from diag.input.framing import frame_general

PASTE_BYTES = 1 << 20

# The host starts where a word does: tried inside a long run of digits, [\w.-]+ would rescan the run at each one.
_NCCL_HEADER = re.compile(rb"(?:(?<![\w.-])[\w.-]+:\d+:\d+ )?\[\d+\] NCCL (?:INFO|WARN|TRACE|ERROR) ")
_TORCH_GLUED = re.compile(rb"(?<=[^\s\r\n])(?=\[rank\d+\]:\[[WEIF]\d{3,4} )")  # a warning glued to a progress bar


def repair(data: bytes) -> bytes:
    """All the repairs of a whole paste (what the sources apply to an input of at most PASTE_BYTES).
    Ungluing runs again after the rows are rejoined: a record in inline code that the terminal cut
    in two only has both its backticks once it is whole."""
    return rejoin_missing_path(rejoin_banner(unglue(rejoin_wrapped(unglue(dedent(unquote(unemphasize(drop_ray_repeats(drop_orphan_colors(plain_quotes(data)))))))))))


# Typographic quotes: what a web page, a word processor or a chat client makes of the ASCII ones
# (and what GNU tools print in a UTF-8 locale: "cannot stat ‘/tmp/x’"). The rules read ASCII.
_QUOTES = (("\u2018", "'"), ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"'))
_QUOTE_BYTES = tuple((curly.encode(), plain.encode()) for curly, plain in _QUOTES)
_NBSP = "\u00a0".encode()


# A CJK input method's full-width punctuation ("OPAL ERROR\uff1a Not initialized"): U+FF01..U+FF5E are the
# ASCII signs and letters 0x21..0x7E at full width, three UTF-8 bytes each.
_FULL_WIDTH = re.compile(rb"\xef(?:\xbc[\x81-\xbf]|\xbd[\x80-\x9e])")


def _ascii_of_full_width(m: re.Match[bytes]) -> bytes:
    return bytes([ord(m[0].decode()) - 0xFEE0])


def plain_quotes(data: bytes) -> bytes:
    """``data`` with typographic single and double quotes read as ASCII ones, a CJK input method's
    full-width signs (``\uff1a``) as their ASCII ones, and a web page's no-break spaces as spaces, before
    any other repair looks at it (same line numbers). The scanner reads no-break spaces as spaces in
    every input; a paste's repairs need it first."""
    if _NBSP in data:
        data = data.replace(_NBSP, b" ")
    if b"\xef\xbc" in data or b"\xef\xbd" in data:
        data = _FULL_WIDTH.sub(_ascii_of_full_width, data)
    if b"\xe2\x80" not in data:
        return data
    for curly, plain in _QUOTE_BYTES:
        data = data.replace(curly, plain)
    return data


# A terminal's colour codes whose ESC byte a copy or a web page dropped ("[31mFATAL:  [0m container creation
# failed"): read as such only on a line that also holds the reset "[0m", which no log text writes ("[m" opens
# "[mpiexec@node]" too).
_ORPHAN_SGR = re.compile(rb"(?<!\x1b)\[\d{1,3}(?:;\d{1,3})*m")
_ORPHAN_RESET = re.compile(rb"(?<!\x1b)\[0m")
_ORPHAN_LINE = re.compile(rb"^.*(?<!\x1b)\[0m.*$", re.MULTILINE)


def _uncolor(m: re.Match[bytes]) -> bytes:
    return _ORPHAN_SGR.sub(b"", m[0])


def drop_orphan_colors(data: bytes) -> bytes:
    """``data`` without colour codes that lost their ESC byte, on the lines that hold a reset code that lost its
    own; a sequence that kept its ESC is left whole (framing strips those)."""
    if b"[0m" not in data or not _ORPHAN_RESET.search(data):
        return data  # whole escape sequences are framing's to strip
    return _ORPHAN_LINE.sub(_uncolor, data)


# Ray's log deduplication ends a line that several workers printed with how often it was seen; the
# words before it are the record (a rule reading "Using network Socket" to the line's end must not
# take the count for part of the network's name).
_RAY_REPEATED = re.compile(rb" \[repeated \d+x across cluster\](?=\s*$)", re.MULTILINE)


def drop_ray_repeats(data: bytes) -> bytes:
    """``data`` without Ray's `` [repeated 15x across cluster]`` at the end of its lines."""
    return _RAY_REPEATED.sub(b"", data) if b"x across cluster]" in data else data


# Markdown emphasis a user put around part of a record ("**enroot-aufs2ovlfs: failed ...**: /path",
# "_Could not create destination file_"): the markers, never the text. Both ends must touch a word,
# so Slurm's "*** JOB 7 CANCELLED ***", a list's "* item" and Python's "**kwargs" stay as they are.
_BOLD = re.compile(rb"(?<![*\w])\*\*(?=[^\s*])([^*\n]*?[^\s*])\*\*(?![*\w])")
_ITALIC_LINE = re.compile(rb"(?m)^([ \t>]*)_(?=[^\s_])([^\n]*?[^\s_])_(?=[ \t\r]*$)")


def unemphasize(data: bytes) -> bytes:
    """``data`` without markdown bold inside its lines and italics around a whole line (same line numbers)."""
    if b"**" in data:
        data = _BOLD.sub(rb"\1", data)
    if b"_" in data:
        data = _ITALIC_LINE.sub(rb"\1\2", data)
    return data


_QUOTED_ROW = re.compile(rb"^[ \t]*(?:>[ \t]?)+")


def unquote(data: bytes) -> bytes:
    """``data`` without the ``> `` that starts every non-blank row of it: an excerpt quoted in an issue
    comment or a mail reply, whose records then start where no program put them (same line numbers).
    Only when every row is quoted: a lone ``>`` may be a shell's continuation prompt or a program's."""
    if b">" not in data[:4096]:
        return data
    rows = data.split(b"\n")
    if not all(_QUOTED_ROW.match(row) for row in rows if row.strip()):
        return data
    return b"\n".join(_QUOTED_ROW.sub(b"", row, count=1) for row in rows)


def dedent(data: bytes) -> bytes:
    """``data`` without the indentation that every non-blank row of it shares: a paste indented as a
    markdown or mail code block, or copied from a web page's ``<pre>``, starts each record with
    spaces that no program printed (and that rules anchored at a record's start do not expect).
    Rows keep their own indentation beyond the shared part (a traceback's frames)."""
    rows = data.split(b"\n")
    common: bytes | None = None
    for row in rows:
        text = row.rstrip(b"\r")
        if not text.strip():
            continue
        lead = text[: len(text) - len(text.lstrip(b" \t"))]
        if not lead:
            return data
        if common is None or not lead.startswith(common):
            common = lead if common is None else os.path.commonprefix([common, lead])
            if not common:
                return data
    if not common:
        return data
    n = len(common)
    return b"\n".join(row[n:] if row.startswith(common) else row for row in rows)


def unglue(data: bytes) -> bytes:
    """``data`` with every glued record starting a (not counted) line of its own, and the markdown
    around a line in inline code taken off. Line by line, so a growing file's blocks get what the
    whole file would (diag.follow)."""
    if b"`" in data:
        data = _CODE_LINE.sub(rb"\g<code>", data)
        data = _QUOTED_RECORD.sub(b"\r\\g<code>\r", data)
    if b"NCCL " not in data and b"[rank" not in data:
        return data
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if line.count(b" NCCL ") > 1:
            lines[i] = _split_nccl(line)
        if b"[rank" in line:
            lines[i] = _TORCH_GLUED.sub(b"\r", lines[i])
    return b"\n".join(lines)


# A line that is one inline-code span, maybe in a quote or a list item: "> - `text`" or "1. ``text``".
_CODE_LINE = re.compile(
    rb"(?m)^[ \t]*(?:>[ \t]?)*(?:[-*+][ \t]+|\d{1,3}[.)][ \t]+)?(?P<tick>`+)(?P<code>[^`\n]*?[^`\s])(?P=tick)[ \t]*(?=\r?$)"
)

# A Slurm daemon's or command's error record quoted in inline code inside a sentence ("the controller
# timed out: `srun: error: Unable to confirm allocation for job 7: ...` and then ..."): the record
# gets a (not counted) line of its own, as it was printed; the prose around it stays as it is.
_QUOTED_RECORD = re.compile(
    rb"(?<=\S)[ \t]*`(?P<code>(?:srun|sbatch|salloc|slurmstepd|slurmd)(?:\[\d+\])?: (?:error|fatal): [^`\n]*[^`\s])`"
)

# What a terminal wraps: its rows are at least this wide, and at most this wide.
_MIN_WIDTH, _MAX_WIDTH = 60, 400
# Widths a terminal window has unless someone resized it: one record cut once at such a width is
# taken for a cut (a single row of any other width may be a long line that happens to be widest).
_STANDARD_WIDTHS = frozenset((80, 100, 120, 132, 160, 200))
# An srun --label prefix, which starts a record; the rest of a cut "... on host02" may look alike ("93: ...").
_SRUN_LABEL = re.compile(rb"\s*\d{1,5}: ")
# The start of a record of its own: a row that starts so is never a wrapped record's continuation.
_RECORD_START = re.compile(
    rb"^(?:\s*$|#|\s+\d{1,5}: |([-=*#~_])\1{3}|\[|\d{1,5}: |[\w.-]+:\d+:\d+ \[|\d{4}-\d\d-\d\d|[A-Z][a-z]{2} [ \d]\d |[EWIF]\d{4} |Traceback |  File "
    rb"|(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Warning)\b|(?:srun|sbatch|salloc|slurmstepd|pyxis|enroot)\b"
    rb"|NCCL |[\w.-]*\d[\w.-]*: (?:[\w.-]+: )?(?:\d+: )?\[|\*\*\* |> |```"
    # nccl-tests' device rows, all of one width, that a markdown paste took the '#' from
    rb"|\s*Rank +\d+ +(?:Group +\d+ +)?Pid +\d+ )"
)


_SIGN_RULE = re.compile(rb"[ \t]*([-=*#~_+])\1{9,}[ \t]*")


def rejoin_wrapped(data: bytes) -> bytes:
    """A paste copied from a terminal has every record longer than the window cut into rows of
    exactly the window's width. When at least two rows are exactly as wide as the widest (and that
    is as wide as a terminal can be), or one row is as wide as a window that nobody resized, each
    such row gets back the rows that continue it (a row that starts a record of its own never
    does), and those rows are left empty: every ``file:line`` still points at the row where the record
    starts, and no cut-off part is read as a record of its own (a truncated library name, a path
    cut in two)."""
    if len(data) > PASTE_BYTES or b"\n" not in data:
        return data
    rows = data.split(b"\n")
    # A rule of one repeated sign (Open MPI's 74-dash help-box borders) is as wide as its author chose, not
    # the terminal: it neither sets the width nor takes the next row.
    widths = [0 if _SIGN_RULE.fullmatch(row.rstrip(b"\r")) else _width(row) for row in rows]
    width = max(widths)
    cut_rows = widths.count(width)
    if not _MIN_WIDTH <= width <= _MAX_WIDTH or (cut_rows < 2 and width not in _STANDARD_WIDTHS):
        return data
    # A row that looks like an srun label starts a record only in a paste that has labels elsewhere.
    labelled = any(_SRUN_LABEL.match(row) for i, row in enumerate(rows) if i == 0 or widths[i - 1] != width)
    tabular = _table_rows(rows)
    out = list(rows)
    i = 0
    while i < len(rows):
        j = i
        while (
            j + 1 < len(rows)
            and widths[j] == width
            and j not in tabular
            and j + 1 not in tabular
            and rows[j + 1] != rows[j]  # the same record printed again (by another process), not its rest
            and _continues(rows[j + 1], labelled)
        ):
            j += 1
        if j > i:
            out[i] = b"".join(row.rstrip(b"\r") for row in rows[i : j + 1]) + rows[j][len(rows[j].rstrip(b"\r")) :]
            out[i + 1 : j + 1] = [b""] * (j - i)
        i = j + 1
    return b"\n".join(out)


_BANNER_HEAD = re.compile(rb"\*\*\* (?:JOB|STEP) \S+ (?:ON \S+ )?CANCELLED AT \S+[ \t]*\r?$")
# The reason's row may carry the same prefix as every row of the paste (an srun label, a timestamp, "> ").
_BANNER_TAIL = re.compile(rb"(?P<prefix>[^\r\n*]{0,40}?)(?P<tail>DUE (?:TO|to) [^\r\n]*\*\*\*)[ \t]*\r?$")


def rejoin_banner(data: bytes) -> bytes:
    """Slurm's ``*** JOB 38193 ON gra533 CANCELLED AT <time> DUE TO TIME LIMIT ***`` wrapped by hand or by
    a narrow page before "DUE TO" (a blank row between, in a double-spaced paste): the reason goes back
    on the banner's row, its own row left empty."""
    if len(data) > PASTE_BYTES or b"CANCELLED AT" not in data or b"DUE " not in data:
        return data
    rows = data.split(b"\n")
    for i in range(len(rows) - 1):
        if not _BANNER_HEAD.search(rows[i]):
            continue
        j = i + 2 if not rows[i + 1].strip() and i + 2 < len(rows) else i + 1
        tail = _BANNER_TAIL.match(rows[j])
        if tail:
            cr = b"\r" if rows[i].endswith(b"\r") else b""
            rows[i] = rows[i].rstrip(b"\r").rstrip() + b" " + tail["tail"] + cr
            rows[j] = b"\r" if rows[j].endswith(b"\r") else b""
    return b"\n".join(rows)


# Python's "No such file or directory: '/path'" wrapped by hand or by a narrow page before the path:
# the path's row starts with its quote (or the path) and holds nothing else.
_MISSING_HEAD = re.compile(rb"No such file or directory:[ \t]*\r?$")
_MISSING_PATH = re.compile(rb"[ \t]*(?P<path>['\"]?/[^\s'\"]+['\"]?)[ \t]*\r?$")


def rejoin_missing_path(data: bytes) -> bytes:
    """A ``FileNotFoundError: ... No such file or directory:`` whose path went to the next row gets it
    back on its own row, the path's row left empty (the way :func:`rejoin_banner` mends Slurm's banner)."""
    if len(data) > PASTE_BYTES or b"No such file or directory:" not in data:
        return data
    rows = data.split(b"\n")
    for i in range(len(rows) - 1):
        path = _MISSING_HEAD.search(rows[i]) and _MISSING_PATH.match(rows[i + 1])
        if path:
            cr = b"\r" if rows[i].endswith(b"\r") else b""
            rows[i] = rows[i].rstrip(b"\r").rstrip() + b" " + path["path"] + cr
            rows[i + 1] = b"\r" if rows[i + 1].endswith(b"\r") else b""
    return b"\n".join(rows)


# The dashed rule under a fixed-width table's header (sacct, squeue -o, sinfo -o): its rows are padded to
# one width by the program, so being as wide as the widest row says nothing about a terminal's cut.
_TABLE_RULE = re.compile(rb"\s*-{2,}(?: +-{2,})+\s*\r?$")


def _table_rows(rows: list[bytes]) -> set[int]:
    """The indexes of a fixed-width table's rule and of the rows after it that keep to its columns
    (a blank at every gap between two dashed columns)."""
    tabular: set[int] = set()
    for i, row in enumerate(rows):
        if not _TABLE_RULE.match(row):
            continue
        rule = row.rstrip(b"\r")
        gaps = [k for k in range(1, len(rule)) if rule[k] == 0x20 and rule[k - 1] == 0x2D]
        tabular.add(i)
        for k in range(i + 1, len(rows)):
            cells = rows[k].rstrip(b"\r")
            if not cells.strip() or any(g < len(cells) and cells[g] != 0x20 for g in gaps):
                break
            tabular.add(k)
    return tabular


def _continues(row: bytes, labelled: bool) -> bool:
    """Whether ``row``, after a row as wide as the terminal, is the rest of that row's record."""
    if not row.rstrip(b"\r"):
        return False
    label = None if labelled else _SRUN_LABEL.match(row)
    if label and not _RECORD_START.match(row[label.end() :]):
        return True
    return not _starts_a_record(row)


def _starts_a_record(row: bytes) -> bool:
    """Whether ``row`` begins a record of its own: a known prefix, or a shape records start with."""
    if _RECORD_START.match(row):
        return True
    frame = frame_general(row.decode("utf-8", "replace").rstrip("\r"))
    return frame.payload != frame.text or frame.emitter is not None


def _width(row: bytes) -> int:
    """How many characters a terminal shows of ``row``: UTF-8 continuation bytes take no column."""
    row = row.rstrip(b"\r")
    return len(row) - sum(1 for b in row if 0x80 <= b < 0xC0) if max(row, default=0) >= 0x80 else len(row)


def _split_nccl(line: bytes) -> bytes:
    """In each part of the line, every NCCL record header after the first starts a part of its own
    (the space before it goes); parts already split by ``\\r`` stay as they are."""
    return b"\r".join(_split_part(part) for part in line.split(b"\r"))


def _split_part(part: bytes) -> bytes:
    cuts = [m.start() for m in _NCCL_HEADER.finditer(part)][1:]
    out, last = [], 0
    for cut in cuts:
        head = part[last:cut]
        out.append(head[:-1] if head.endswith(b" ") else head)
        last = cut
    out.append(part[last:])
    return b"\r".join(out)


def repaired(stream: BinaryIO, size: int | None) -> BinaryIO:
    """``stream`` ungluing what :func:`unglue` repairs when the whole input is a paste's size.
    ``size`` None (a pipe): the first PASTE_BYTES + 1 bytes tell; a larger input is passed on whole."""
    if size is not None and size > PASTE_BYTES:
        return stream
    head = stream.read(PASTE_BYTES + 1)
    if len(head) <= PASTE_BYTES:
        return io.BytesIO(repair(head))
    return _Prefixed(head, stream)  # type: ignore[return-value]


class _Prefixed(io.RawIOBase):
    """``head`` then the rest of ``stream``: what was read to measure a pipe is not lost."""

    def __init__(self, head: bytes, stream: BinaryIO):
        self._head, self._stream = memoryview(head), stream

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self._head:
            n = len(self._head) if size is None or size < 0 else min(size, len(self._head))
            out, self._head = bytes(self._head[:n]), self._head[n:]
            return out
        return self._stream.read(size)
