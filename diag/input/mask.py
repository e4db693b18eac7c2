"""Masking: a framed payload with its variable parts replaced by placeholders.

Two lines that differ only in a number, an address, a path or a host name mask to the same text,
so a job keeps one of them and a template miner sees one shape (``<NUM>``, ``<HEX>``, ``<IP>``,
``<PATH>``, ``<HOST>``, ``<UUID>``). Masking also keeps a fleet record free of the addresses, paths
and host names a line carried; secrets are the redactor's job (diag.formats.redact), run first.

Which lines are worth keeping is decided here too (:func:`looks_like_error`): a generic
error-word test, deliberately broad. What it lets through that healthy jobs print as well is
subtracted later, when templates are mined (diag.fleet.templates).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

PLACEHOLDERS = ("<UUID>", "<IP>", "<PATH>", "<HEX>", "<HOST>", "<NUM>")
PLACEHOLDER_RE = re.compile(r"<(?:UUID|IP|PATH|HEX|HOST|NUM)>")

_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
# IPv4 (an optional :port goes with it), bracketed or bare IPv6 with at least three groups.
_IP = re.compile(
    r"(?<![\w.])(?:\d{1,3}\.){3}\d{1,3}(?::\d{1,5})?(?![\w.])"
    r"|\[?(?<![\w:])(?:[0-9a-fA-F]{0,4}:){2,7}[0-9a-fA-F]{1,4}(?![\w:])\]?(?::\d{1,5})?"
)
# An absolute or home-relative path of two or more parts (``/home/alice/run.py``, ``~/x/y``); a
# lone ``/`` or ``NET/IB`` (no leading slash) is not a path.
_PATH = re.compile(r"(?<![\w./-])(?:~|\.{1,2})?(?:/[\w.@%+=:,~-]+){2,}/?")
_HEX = re.compile(r"\b0[xX][0-9a-fA-F]+\b|\b(?=[0-9a-fA-F]*\d)(?=[0-9a-fA-F]*[a-fA-F])[0-9a-fA-F]{8,}\b")
# Host names as clusters name nodes: letters, then a hyphen or dot and digits (``gpu-007``,
# ``node12-ib``, ``dgx-a100-03.cluster``) or a short prefix and digits (``n12``, ``nid001234``).
_HOST = re.compile(
    r"(?<![\w./-])(?:[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*-\d+[A-Za-z0-9]*"
    r"|(?:n|nid|node|cn|gpu|compute|host|worker)\d+)(?:-[A-Za-z0-9]+)*(?:\.[A-Za-z][\w-]*)*(?![\w-])"
)
# Drain3's number mask (a run of digits not glued to a letter or digit), plus decimals.
_NUM = re.compile(r"(?<![A-Za-z0-9])[-+]?\d+(?:\.\d+)?(?![A-Za-z0-9])")
MAX_MASKED = 300  # characters kept of a masked line: a template needs its head, not a 10 KB dump

# The error words: one of them (or an error level from the frame) makes a line worth keeping. No
# word boundary on the left, so that ``RuntimeError`` and ``TimeoutException`` count.
_WORDS = (
    "error", "errno", "fail", "fatal", "panic", "abort", "exception", "denied", "refused", "timeout", "timed out",
    "time out", "cannot", "can't", "unable", "invalid", "segmentation fault", "killed", "corrupt", "mismatch",
    "unreachable", "not found", "no such", "illegal", "unrecoverable", "assert",
)  # fmt: skip
# Searched in the lower-cased line: 8x faster than the same alternation with (?i).
_ERROR_WORDS = re.compile("|".join(re.escape(w) for w in _WORDS))
ERROR_LEVELS = frozenset({"WARN", "WARNING", "ERROR", "FATAL"})
# What the scan's prefilter looks for before has_error_word confirms: each word as written in lower
# case, capitalised and in capitals (the prefilter engines compare bytes), and NCCL's WARN level.
ERROR_LITERALS: tuple[str, ...] = tuple(
    dict.fromkeys([v for w in _WORDS for v in (w, w.capitalize(), w.upper())] + ["WARN"])
)


def has_error_word(text: str) -> bool:
    return _ERROR_WORDS.search(text.lower()) is not None


def looks_like_error(payload: str, level: str | None) -> bool:
    return level in ERROR_LEVELS or has_error_word(payload)


def mask(text: str, hosts: Iterable[str] = ()) -> str:
    """``text`` with its variable parts replaced by placeholders; ``hosts`` are names known to be
    hosts (the job's nodes) whatever their shape. Idempotent: a masked line masks to itself."""
    text = text.strip()[: MAX_MASKED * 2]
    text = _UUID.sub("<UUID>", text)
    text = _IP.sub("<IP>", text)
    text = _PATH.sub("<PATH>", text)
    text = _HEX.sub("<HEX>", text)
    known = sorted({h for h in hosts if h and len(h) >= 2}, key=len, reverse=True)
    if known:
        text = re.sub(r"(?<![\w-])(?:" + "|".join(map(re.escape, known)) + r")(?:\.[\w-]+)*(?![\w-])", "<HOST>", text)
    text = _HOST.sub("<HOST>", text)
    text = _NUM.sub("<NUM>", text)
    text = re.sub(r"\s+", " ", text)
    return text[:MAX_MASKED]
