"""Analyzers for the fabric causes of the catalogue (registered into diag.analyzers.ANALYZERS)."""

from __future__ import annotations

from diag.analyzers import register  # noqa: F401 - used by the analyzers defined here
