"""Inputs: turn the paths a user gives into byte streams, and byte streams into blocks of whole lines.

Nothing here loads a file whole or writes to it. Lines longer than ``MAX_LINE_BYTES`` are cut
(the cut is counted and reported) so a 500 MB line with no newline costs bounded memory.
"""

from __future__ import annotations

import errno
import glob
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import BinaryIO

from diag.input.paste import PASTE_BYTES, repair, repaired

CHUNK_BYTES = 1 << 20
MAX_LINE_BYTES = 64 * 1024
GZIP_READ_BYTES = 64 * 1024
LOG_SUFFIXES = (".out", ".err", ".log", ".txt")
GLOB_CHARS = set("*?[")


@dataclass(frozen=True)
class Source:
    """One input: a file path, or ``-`` for standard input. ``max_bytes`` (a time budget, e.g. in an
    epilog): a larger plain file is read as its first and last ``max_bytes / 2``, the middle skipped."""

    path: str
    max_bytes: int | None = None

    @property
    def is_stdin(self) -> bool:
        return self.path == "-"

    @property
    def is_gzip(self) -> bool:
        return self.path.endswith(".gz")

    def open(self) -> BinaryIO:
        if self.is_stdin:
            return repaired(sys.stdin.buffer, None)
        if self.is_gzip:
            return gzip.open(self.path, "rb")  # type: ignore[return-value]
        stream = open(self.path, "rb")  # noqa: SIM115 - the caller reads and closes it
        try:
            size = os.fstat(stream.fileno()).st_size
        except OSError:
            return stream
        # A budgeted read (max_bytes) seeks in the file itself: only whole small files are repaired.
        return repaired(stream, size) if size <= PASTE_BYTES and not self.max_bytes else stream


class MemorySource(Source):
    """Bytes held in memory under a display name (tests, and programs that already hold a log)."""

    def __init__(self, path: str, data: bytes):
        object.__setattr__(self, "path", path)
        object.__setattr__(self, "data", data)

    @property
    def is_stdin(self) -> bool:
        return False

    def open(self) -> BinaryIO:
        data = self.data  # type: ignore[attr-defined]
        return io.BytesIO(repair(data) if len(data) <= PASTE_BYTES else data)


@dataclass
class InputStats:
    """What was read from one source; reported in every report's ``inputs``."""

    path: str
    bytes_read: int = 0
    lines: int = 0
    truncated_lines: int = 0
    error: str | None = None
    skipped_bytes: int = 0  # the middle of a file over Source.max_bytes, not read
    # Of the last lines, how many say nothing (blank, a code fence, a bare prompt: a paste's tail).
    # The scanner counts them; an analyzer asking whether a line "ends the log" looks past them.
    silent_tail: int = 0

    def add(self, part: InputStats) -> None:
        """Count in what was read of one span of this input."""
        self.silent_tail = self.silent_tail + part.silent_tail if part.silent_tail == part.lines else part.silent_tail
        self.bytes_read += part.bytes_read
        self.lines += part.lines
        self.truncated_lines += part.truncated_lines
        self.skipped_bytes += part.skipped_bytes
        self.error = self.error or part.error

    def to_json(self) -> dict:
        return {
            "path": self.path,
            "bytes": self.bytes_read,
            "lines": self.lines,
            "truncated_lines": self.truncated_lines,
            "error": self.error,
            "skipped_bytes": self.skipped_bytes,
        }


@dataclass(frozen=True)
class InputProblem:
    path: str
    reason: str

    def message(self) -> str:
        return f"slurmdiag: {self.path}: {self.reason}"


@dataclass
class Discovery:
    sources: list[Source] = field(default_factory=list)
    problems: list[InputProblem] = field(default_factory=list)


def _is_log_name(name: str) -> bool:
    base = name[:-3] if name.endswith(".gz") else name
    return base.endswith(LOG_SUFFIXES)


def _walk_logs(directory: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(directory, onerror=None):
        dirs.sort()
        found.extend(os.path.join(root, name) for name in sorted(files) if _is_log_name(name))
    return found


def discover(paths: Iterable[str]) -> Discovery:
    """Expand files, directories, unexpanded globs and ``-`` into sources, in the order given."""
    result = Discovery()
    seen: set[str] = set()

    def add(path: str) -> None:
        key = path if path == "-" else os.path.realpath(path)
        if key not in seen:
            seen.add(key)
            result.sources.append(Source(path))

    for raw in paths:
        if raw == "-":
            add(raw)
            continue
        if os.path.isdir(raw):
            if not os.access(raw, os.R_OK | os.X_OK):
                result.problems.append(InputProblem(raw, "permission denied"))
                continue
            logs = _walk_logs(raw)
            if not logs:
                result.problems.append(
                    InputProblem(raw, "directory holds no *.out, *.err, *.log or *.txt files (or their .gz)")
                )
            for path in logs:
                add(path)
            continue
        if os.path.exists(raw):
            add(raw)
            continue
        if GLOB_CHARS & set(raw):
            matches = sorted(glob.glob(raw, recursive=True))
            files = [m for m in matches if os.path.isfile(m)]
            for directory in (m for m in matches if os.path.isdir(m)):
                files.extend(_walk_logs(directory))
            if not files:
                result.problems.append(InputProblem(raw, "no file matches this pattern"))
            for path in files:
                add(path)
            continue
        result.problems.append(InputProblem(raw, _missing_reason(raw)))
    return result


def _missing_reason(path: str) -> str:
    """Why a named path cannot be opened: a link that leads nowhere is not a missing file."""
    if not os.path.islink(path):
        return "no such file or directory"
    try:
        os.stat(path)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "symbolic link loop"
    try:
        target = os.readlink(path)
    except OSError:  # replaced or removed since: say what is known
        return "broken symbolic link"
    return f"broken symbolic link (points to {target!r}, which does not exist)"


def _describe_error(exc: BaseException) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    if isinstance(exc, FileNotFoundError):
        return "no such file or directory"
    if isinstance(exc, IsADirectoryError):
        return "is a directory"
    if isinstance(exc, EOFError):
        return "truncated gzip file (read up to the damage)"
    if isinstance(exc, (gzip.BadGzipFile, zlib.error)):
        return f"not a valid gzip file ({exc})"
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc) or type(exc).__name__


class _HeadTail(io.RawIOBase):
    """The first ``head`` bytes of a file, a newline (so two half lines never join), then the
    last ``tail`` bytes: what fits a time budget, errors at the start and the end of a job."""

    def __init__(self, stream: BinaryIO, head: int, tail_start: int):
        self.stream, self.left, self.tail_start = stream, head, tail_start

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if self.left is None:
            return self.stream.read(size)
        if self.left > 0:
            data = self.stream.read(min(size, self.left) if size >= 0 else self.left)
            self.left -= len(data)
            if data:
                return data
        self.left = None
        self.stream.seek(self.tail_start)
        return b"\n"

    def close(self) -> None:
        self.stream.close()
        super().close()


def _head_and_tail(stream: BinaryIO, max_bytes: int, stats: InputStats) -> BinaryIO:
    try:
        size = os.fstat(stream.fileno()).st_size
    except (OSError, AttributeError, io.UnsupportedOperation):
        return stream
    if size <= max_bytes:
        return stream
    head = max_bytes // 2
    stats.skipped_bytes = size - max_bytes
    return _HeadTail(stream, head, size - (max_bytes - head))  # type: ignore[return-value]


@dataclass(frozen=True)
class Span:
    """Whole chunks ``[start, stop)`` of a plain file (``stop`` None: to the end), and the state a
    sequential read would carry into ``start``: the unterminated tail of the chunk before it."""

    start: int
    stop: int | None
    carry: bytes = b""
    cut_line: bool = False


def resume_state(path: str, offset: int, chunk_bytes: int) -> Span | None:
    """The read state at chunk boundary ``offset`` (a multiple of ``chunk_bytes``), or None when the
    chunk before it holds no line terminator (its state then depends on the chunks before it)."""
    with open(path, "rb") as stream:
        window = min(chunk_bytes, MAX_LINE_BYTES + 1)
        stream.seek(offset - window)
        data = stream.read(window)
        end = max(data.rfind(b"\n"), data.rfind(b"\r"))
        if end < 0 and window < chunk_bytes:
            stream.seek(offset - chunk_bytes)
            data = stream.read(chunk_bytes)
            end = max(data.rfind(b"\n"), data.rfind(b"\r"))
    if end < 0:
        return None
    tail = data[end + 1 :]
    return Span(offset, None, tail[:MAX_LINE_BYTES], len(tail) > MAX_LINE_BYTES)


def read_blocks(
    source: Source,
    stats: InputStats,
    chunk_bytes: int = CHUNK_BYTES,
    count_lines: bool = True,
    span: Span | None = None,
) -> Iterator[bytes]:
    """Yield blocks of whole lines (each ends with a line terminator or is the file's tail).

    With ``count_lines`` off, ``stats.lines`` only gets the unterminated last line: the caller
    counts the line feeds of each block (the scanner does, in the same pass that numbers its hits).
    With a ``span`` (a plain file only), exactly the blocks a whole-file read yields from the
    span's chunks; the line that runs past ``stop`` belongs to the next span.

    Line terminators are ``\\n``, ``\\r\\n`` and a lone ``\\r`` (progress bars). Any I/O or
    decompression error ends the source and is recorded in ``stats.error``; what was read
    before it is still yielded.
    """
    carry = b""
    cut_line = False  # the current (unterminated) line already exceeded the cap
    left: int | None = None  # bytes the span has still to read
    try:
        stream = source.open()
        if span is not None:
            stream.seek(span.start)
            carry, cut_line = span.carry, span.cut_line
            left = None if span.stop is None else span.stop - span.start
    except Exception as exc:  # noqa: BLE001 - any open failure is an input problem, never a crash
        stats.error = _describe_error(exc)
        return
    if source.max_bytes and not source.is_gzip and not source.is_stdin:
        stream = _head_and_tail(stream, source.max_bytes, stats)
    if source.is_gzip:
        # A truncated gzip raises at the damage; small reads keep what came before it.
        chunk_bytes = min(chunk_bytes, GZIP_READ_BYTES)
    try:
        while True:
            if left is not None and left <= 0:
                return  # the span's last line goes on into the next span, which reads it
            try:
                chunk = stream.read(chunk_bytes)
            except Exception as exc:  # noqa: BLE001
                stats.error = _describe_error(exc)
                break
            if not chunk:
                break
            if left is not None:
                left -= len(chunk)
            stats.bytes_read += len(chunk)
            end = max(chunk.rfind(b"\n"), chunk.rfind(b"\r"))
            if end < 0:
                if cut_line:
                    continue
                carry += chunk
                if len(carry) > MAX_LINE_BYTES:
                    carry = carry[:MAX_LINE_BYTES]
                    cut_line = True
                    stats.truncated_lines += 1
                continue
            head, tail = memoryview(chunk)[: end + 1], chunk[end + 1 :]  # a view: one copy, into the block
            if cut_line:
                # Drop the rest of the over-long line, up to its terminator.
                first = min(i for i in (chunk.find(b"\n", 0, end + 1), chunk.find(b"\r", 0, end + 1)) if i >= 0)
                block = b"".join((carry, head[first:]))
                cut_line = False
            else:
                # A line inside one chunk is bounded by the chunk size; only the carried tail is capped.
                block = b"".join((carry, head))
            if count_lines:
                stats.lines += block.count(b"\n")
            yield block
            carry = tail[:MAX_LINE_BYTES]
            if len(tail) > MAX_LINE_BYTES:
                cut_line = True
                stats.truncated_lines += 1
        if carry:
            stats.lines += 1
            yield carry
    finally:
        if not source.is_stdin:
            stream.close()


# What a time budget assumes a scan reads per second: conservative (bench/ measures far more on
# realistic logs), so a budgeted run on a slow file system still ends in time.
SCAN_BYTES_PER_SECOND = 5e6


def budget_bytes(paths: Sequence[str], seconds: float, bytes_per_second: float) -> int | None:
    """``max_bytes_per_file`` that keeps reading ``paths`` within ``seconds`` at the given rate;
    None when everything fits."""
    sizes = []
    for path in paths:
        try:
            sizes.append(os.path.getsize(path))
        except OSError:
            continue
    allowed = int(seconds * bytes_per_second)
    if sum(sizes) <= allowed or not sizes:
        return None
    # Give every file an equal share; a file under its share leaves the rest to the others.
    sizes.sort()
    remaining, left = allowed, len(sizes)
    for size in sizes:
        share = remaining // left
        if size > share:
            return max(share, 64 * 1024)
        remaining -= size
        left -= 1
    return None
