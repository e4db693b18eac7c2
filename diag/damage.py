"""What pasting does to a log, as functions of its bytes: the damage ``slurmdiag eval --damage``
applies to labelled cases, and that a verdict must survive; and the thin paste ``eval --thin`` cuts
a case down to, which a verdict should survive as far as the lines left can carry it.

Each kind of damage is one a real paste shows (issue threads, chat, mail, terminal copies, web pages); none
removes a word of the log or adds one that names a cause, so the cause a case is labelled with stays
in it, and a case whose verdict changes under one is a rule or a framing that reads the shape instead
of the words. (An srun label does say which task printed a line: a case that expects other tasks to be
named, as the bundled Slurm captures do, loses that under ``srun-label``.)
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from typing import NamedTuple


class Damage(NamedTuple):
    name: str
    what: str
    apply: Callable[[bytes], bytes]


def terminal_rows(data: bytes, width: int) -> bytes:
    """``data`` as a terminal ``width`` columns wide shows it (a byte for a column: exact for ASCII)."""
    rows = []
    for line in data.split(b"\n"):
        while len(line) > width:
            rows.append(line[:width])
            line = line[width:]
        rows.append(line)
    return b"\n".join(rows)


def _each_line(data: bytes, prefix: bytes, blank_too: bool = True) -> bytes:
    return b"\n".join(prefix + line if blank_too or line.strip() else line for line in data.split(b"\n"))


_PROGRESS = b"Epoch 1:  12%|#2        | 120/1000 [00:10<01:10, 12.1it/s, loss=2.31]"


def _interleave_progress(data: bytes) -> bytes:
    out = []
    for i, line in enumerate(data.split(b"\n")):
        out.append(line)
        if i % 3 == 0:
            out.append(_PROGRESS)
    return b"\n".join(out)


DAMAGES: tuple[Damage, ...] = (
    Damage("terminal-80", "copied from an 80-column terminal: long records cut into rows", lambda d: terminal_rows(d, 80)),
    Damage("terminal-132", "copied from a 132-column terminal", lambda d: terminal_rows(d, 132)),
    Damage("crlf", "CRLF line ends (Windows, a mail client)", lambda d: d.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")),
    Damage("indented", "a mail or markdown code block: every line indented by 4 spaces", lambda d: _each_line(d, b"    ")),
    Damage("quoted-fenced", "a fence in a mail quote: '> ' before every line", lambda d: b"> ```\n" + _each_line(d, b"> ") + b"\n> ```\n"),
    Damage("markdown-list-code", "each line a list item in inline code",
           lambda d: b"\n".join(b"- `" + x + b"`" if x.strip() else x for x in d.split(b"\n"))),
    Damage("typographic-quotes", "a web page or a chat client turned the quotes typographic",
           lambda d: d.replace(b"'", "\u2019".encode()).replace(b'"', "\u201d".encode())),
    Damage("non-breaking-spaces", "copied from a web page: words spaced with U+00A0", lambda d: d.replace(b" ", "\u00a0".encode())),
    Damage("source-lines-redacted", "NCCL's source line numbers written as XXX",
           lambda d: re.sub(rb"(\.(?:cc|cu|h|cpp)):\d+ ", rb"\1:XXX ", d)),
    Damage("srun-label", "srun --label: a task number before every line", lambda d: _each_line(d, b"3: ")),
    Damage("timestamps", "a shipper's timestamp before every line", lambda d: _each_line(d, b"[2024-03-01 10:11:12] ", False)),
    Damage("double-spaced", "a blank line after every line", lambda d: d.replace(b"\n", b"\n\n")),
    Damage("progress-bars", "a progress bar's lines between the records", _interleave_progress),
)  # fmt: skip

BY_NAME = {d.name: d for d in DAMAGES}


def thin_paste(data: bytes, lines: Iterable[int], around: int) -> bytes:
    """What a user pastes who keeps only the lines that matter: ``lines`` (1-based) and ``around``
    lines either side, in file order, a gap left between windows shown as ``...`` as threads do."""
    rows = (data[:-1] if data.endswith(b"\n") else data).split(b"\n")
    keep = sorted({n for line in lines for n in range(line - 1 - around, line + around) if 0 <= n < len(rows)})
    out: list[bytes] = []
    for i, n in enumerate(keep):
        if i and n != keep[i - 1] + 1:
            out.append(b"...")
        out.append(rows[n])
    return b"\n".join(out) + b"\n"
