"""Builds the optional compiled core of the scanner (diag/scan/_core.c, see diag/scan/core.py).

Everything else is declared in pyproject.toml. The extension is optional: without a C compiler,
Python headers or libpcre2 (Debian: ``apt-get install -y gcc python3-dev libpcre2-dev``),
``pip install .`` still succeeds and the scanner runs its pure-Python path, with the same reports.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "diag.scan._core",
            sources=["diag/scan/_core.c"],
            libraries=["pcre2-8"],
            extra_compile_args=["-O2", "-std=c99", "-Wall", "-Wno-unused-parameter"],
            optional=True,
        )
    ]
)
