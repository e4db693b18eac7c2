"""Builds the optional compiled core of the scanner (diag/scan/_core.c, see diag/scan/core.py).

Everything else is declared in pyproject.toml. The extension is optional: without a C compiler,
Python headers or libpcre2 (Debian: ``apt-get install -y gcc python3-dev libpcre2-dev``),
``pip install .`` still succeeds and the scanner runs its pure-Python path, with the same reports.
Where libhs is found too (Debian: ``libhyperscan-dev``), the core also runs Hyperscan itself;
without it the core uses the ``hyperscan`` package's database instead, with the same lines.
``SLURMDIAG_BUILD_NO_HS=1`` builds without libhs even where it is found (from a clean tree, or with
``build_ext --force``: setuptools reuses the objects in build/ otherwise).
"""

from __future__ import annotations

import os
import shutil
import subprocess

from setuptools import Extension, setup


def _libhs() -> tuple[list[str], list[str]] | None:
    """Include directories and libraries of libhs, or None when it is not installed."""
    if os.environ.get("SLURMDIAG_BUILD_NO_HS", "").strip() not in ("", "0"):
        return None
    if shutil.which("pkg-config"):
        try:
            cflags = subprocess.run(
                ["pkg-config", "--cflags-only-I", "libhs"], capture_output=True, text=True, check=True
            ).stdout.split()
            return [flag[2:] for flag in cflags], ["hs"]
        except (OSError, subprocess.CalledProcessError):
            pass
    for prefix in ("/usr/include", "/usr/local/include"):
        if os.path.exists(os.path.join(prefix, "hs", "hs.h")):
            return [os.path.join(prefix, "hs")], ["hs"]
    return None


hs = _libhs()
setup(
    ext_modules=[
        Extension(
            "diag.scan._core",
            sources=["diag/scan/_core.c"],
            include_dirs=hs[0] if hs else [],
            libraries=["pcre2-8", *(hs[1] if hs else [])],
            define_macros=[("SLURMDIAG_HS", "1")] if hs else [],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
