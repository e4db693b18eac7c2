"""Pasted excerpts lose their line ends: a chat client or an issue form glues NCCL records onto
one line (``[0] NCCL INFO A. [0] NCCL INFO B``), a progress bar swallows the log line after it
(``...it/s][rank1]:[W516 ...``). A small input gets each glued record back on a line of its own.

The record is split off with a lone ``\\r``, which ends a line for the scanner but is not counted
as one, so every ``file:line`` of the report still points at the line the user has. Only inputs of
at most :data:`PASTE_BYTES` are repaired: a multi-GB log written by the software itself has its
line ends, and the scan of it stays one pass.
"""

from __future__ import annotations

import io
import re
from typing import BinaryIO

PASTE_BYTES = 1 << 20

_NCCL_HEADER = re.compile(rb"(?:[\w.-]+:\d+:\d+ )?\[\d+\] NCCL (?:INFO|WARN|TRACE|ERROR) ")
_TORCH_GLUED = re.compile(rb"(?<=[^\s\r\n])(?=\[rank\d+\]:\[[WEIF]\d{3,4} )")  # a warning glued to a progress bar


def unglue(data: bytes) -> bytes:
    """``data`` with every glued record starting a (not counted) line of its own."""
    if b"NCCL " not in data and b"[rank" not in data:
        return data
    lines = data.split(b"\n")
    for i, line in enumerate(lines):
        if line.count(b" NCCL ") > 1:
            lines[i] = _split_nccl(line)
        if b"[rank" in line:
            lines[i] = _TORCH_GLUED.sub(b"\r", lines[i])
    return b"\n".join(lines)


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
        return io.BytesIO(unglue(head))
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
