"""slurmdiag: name the root cause of a failed or slow multi-node GPU job from its logs."""

from __future__ import annotations

__version__ = "0.1.0"

__all__ = ["__version__", "diagnose"]


def diagnose(*args, **kwargs):  # thin re-export that keeps `import diag` (and --version) fast
    from diag.api import diagnose as _diagnose

    return _diagnose(*args, **kwargs)
