"""Pathological inputs for the scanner benchmark: deterministic, written in pieces (never whole in memory).

* ``long_line``: one line of ``size`` printable bytes with no ``\\n`` and no ``\\r``, with three fault
  strings embedded (near the start, in the middle, near the end).
* ``tiny_lines``: ``count`` lines of 0-8 bytes each.
* ``random_binary``: ``size`` bytes of seeded random data.
* ``adversarial_lines``: ``count`` lines of 60 KB, each the signatures' own literals among long runs of one
  character class (digits, a path of slashes, blanks, letters, dashes, ...): the shape on which a backtracking
  pattern that can start anywhere in a run rescans it from every character.
"""

from __future__ import annotations

import os
import random
import string

PIECE = 1 << 20
FAULT = b" slinky-2:4411:4411 [0] misc/ibvwrap.cc:216 NCCL WARN Call to ibv_open_device failed "
ALPHABET = (string.ascii_letters + string.digits + " .,:;=/-_[]()|#%").encode()
TINY = ["", "ok", "1", "42", "step", "done", ".", "loss 2", "\u2713", "x=1", "#", "GPU 3"]


def _write_atomically(path: str, pieces) -> None:
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        for piece in pieces:
            f.write(piece)
    os.replace(tmp, path)


def long_line(path: str, size: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    block = bytes(rng.choice(ALPHABET) for _ in range(PIECE))
    at = {4096, size // 2, size - 4096}

    def pieces():
        written = 0
        while written < size:
            n = min(PIECE, size - written)
            piece = bytearray(block[:n])
            for off in at:
                if written <= off < written + n - len(FAULT):
                    piece[off - written : off - written + len(FAULT)] = FAULT
            written += n
            yield bytes(piece)

    _write_atomically(path, pieces())


def tiny_lines(path: str, count: int, seed: int = 1) -> None:
    rng = random.Random(seed)
    template_lines = 10_000
    template = "".join(rng.choice(TINY) + "\n" for _ in range(template_lines)).encode()

    def pieces():
        left = count
        while left > 0:
            n = min(template_lines, left)
            yield template if n == template_lines else b"".join(template.splitlines(True)[:n])
            left -= n

    _write_atomically(path, pieces())


def random_binary(path: str, size: int, seed: int = 1) -> None:
    rng = random.Random(seed)

    def pieces():
        written = 0
        while written < size:
            n = min(PIECE * 4, size - written)
            written += n
            yield rng.randbytes(n)

    _write_atomically(path, pieces())


FILLERS = ["9", "/a", " ", "a", "-", "_", ".", "'", ":", "a/"]


def adversarial_lines(path: str, literals: list[str], count: int, seed: int = 1, width: int = 60_000) -> None:
    rng = random.Random(seed)

    def pieces():
        for _ in range(count):
            parts, size = [], 0
            while size < width:
                literal, fill = rng.choice(literals), rng.choice(FILLERS)
                run = fill * (rng.randrange(2_000, 8_000) // len(fill))
                parts += [literal, run]
                size += len(literal) + len(run)
            yield ("".join(parts)[:width] + "\n").encode()

    _write_atomically(path, pieces())
