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
    """The common NCCL prefix (diag.input.framing.COMMON_NCCL_BYTES) compiled by ``core`` with PCRE2."""
    return core.compile_frame(COMMON_NCCL_BYTES.pattern)
