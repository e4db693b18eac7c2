"""Follow growing files by polling (``tail -F`` semantics), yielding blocks of whole lines.

Polling, not inotify: inotify does not see writes other hosts make on NFS, Lustre or GPFS, where
job logs live. Each poll ``stat``s the file and reads only ``[offset, size)``. The unterminated
last line is kept until its terminator arrives; a file that shrinks (truncated) or whose inode
changes (replaced, rotated) is read again from the start. Lines are cut at ``MAX_LINE_BYTES`` and
split at ``\\n``, ``\\r\\n`` and a lone ``\\r`` exactly as :func:`diag.input.sources.read_blocks`
does, so a followed file yields the lines a whole-file read would.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from diag.input.sources import CHUNK_BYTES, MAX_LINE_BYTES, InputStats


@dataclass
class Poll:
    """What one poll of a file brought: a block of whole lines (possibly empty), whether the file
    was reset (truncated or replaced: everything read before is void), and whether it grew."""

    block: bytes = b""
    reset: bool = False
    grew: bool = False


class LineTail:
    """Splits a byte stream that arrives in pieces into blocks of whole lines, with the same carry
    and cut rules as :func:`diag.input.sources.read_blocks`."""

    def __init__(self, stats: InputStats):
        self.stats = stats
        self.carry = b""
        self.cut_line = False

    def feed(self, chunk: bytes) -> bytes:
        """The whole lines ``chunk`` completes (b"" when it completes none)."""
        self.stats.bytes_read += len(chunk)
        end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
        if end < 0:
            if not self.cut_line:
                self.carry += chunk
                if len(self.carry) > MAX_LINE_BYTES:
                    self.carry = self.carry[:MAX_LINE_BYTES]
                    self.cut_line = True
                    self.stats.truncated_lines += 1
            return b""
        head, tail = chunk[: end + 1], chunk[end + 1 :]
        if self.cut_line:
            first = min(i for i in (chunk.find(b"\n", 0, end + 1), chunk.find(b"\r", 0, end + 1)) if i >= 0)
            block = self.carry + head[first:]
            self.cut_line = False
        else:
            block = self.carry + head
        self.carry = tail[:MAX_LINE_BYTES]
        if len(tail) > MAX_LINE_BYTES:
            self.cut_line = True
            self.stats.truncated_lines += 1
        return block

    def finish(self) -> bytes:
        """The unterminated last line, once the file is known to be complete."""
        carry, self.carry = self.carry, b""
        if carry:
            self.stats.lines += 1
        return carry


class FileTail:
    """One followed file: its read offset, identity and partial line."""

    def __init__(self, path: str, chunk_bytes: int = CHUNK_BYTES):
        self.path = path
        self.chunk_bytes = chunk_bytes
        self.stats = InputStats(path)
        self.lines = LineTail(self.stats)
        self.offset = 0
        self.inode: tuple[int, int] | None = None

    def restart(self) -> None:
        """Read the file again from its start at the next poll."""
        self.inode = None
        self.stats = InputStats(self.path)
        self.lines = LineTail(self.stats)
        self.offset = 0

    def poll(self, max_bytes: int | None = None) -> Poll:
        """Read what was appended since the last poll (at most ``max_bytes``, so one poll of a
        fast-growing file stays bounded; the rest comes next poll)."""
        out = Poll()
        try:
            st = os.stat(self.path)
        except OSError:
            return out  # not there (yet, or being replaced): try again next poll
        ident = (st.st_dev, st.st_ino)
        if self.inode is not None and (ident != self.inode or st.st_size < self.offset):
            self.restart()
            out.reset = True
        self.inode = ident
        if st.st_size <= self.offset:
            return out
        want = st.st_size - self.offset
        if max_bytes is not None:
            want = min(want, max_bytes)
        try:
            with open(self.path, "rb") as fh:
                opened = os.fstat(fh.fileno())
                if (opened.st_dev, opened.st_ino) != ident:
                    return out  # replaced between stat and open: next poll sees the new one
                fh.seek(self.offset)
                data = fh.read(want)
        except OSError as exc:
            self.stats.error = exc.strerror or str(exc)
            return out
        self.offset += len(data)
        out.grew = bool(data)
        blocks = []
        for start in range(0, len(data), self.chunk_bytes):
            block = self.lines.feed(data[start : start + self.chunk_bytes])
            if block:
                blocks.append(block)
        out.block = b"".join(blocks)
        return out
