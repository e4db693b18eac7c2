"""Make untrusted log text safe to print: no escape sequences, no control characters."""

from __future__ import annotations

import re

from diag.framing import strip_ansi

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def safe_text(text: str) -> str:
    """Strip ANSI sequences, then show any other control character as a visible escape."""
    text = strip_ansi(text)
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}" if ord(m[0]) < 0x100 else f"\\u{ord(m[0]):04x}", text)
