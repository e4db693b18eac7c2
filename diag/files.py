"""Writing a file others read while it is written: a report beside a job's output, a fleet record
in a shared spool. Leaf module: it imports nothing from diag."""

from __future__ import annotations

import contextlib
import os
import tempfile


def write_atomic(path: str, text: str) -> None:
    """Create a temporary file beside ``path``, then rename it into place: a reader (compact) sees the
    whole file or none of it, and two producers never write into one file. No locks, so it is safe
    on NFS/Lustre, where rename within a directory is atomic."""
    directory = os.path.dirname(path) or "."
    fd, tmp = tempfile.mkstemp(prefix=".slurmdiag-", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
