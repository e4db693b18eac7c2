"""Expand Slurm hostlist expressions (``slinky-[1-3,5]``) as Slurm and PMIx print them."""

from __future__ import annotations

import re

_RANGE = re.compile(r"^(?P<prefix>[^\[\],]*)\[(?P<body>[^\]]+)\](?P<rest>.*)$")
MAX_HOSTS = 4096


def expand(expression: str) -> list[str]:
    """``a[1-3],b`` -> ``[a1, a2, a3, b]``; zero padding kept; anything malformed kept verbatim."""
    hosts: list[str] = []
    for part in _split_top(expression.strip()):
        hosts.extend(_expand_one(part))
        if len(hosts) >= MAX_HOSTS:
            return hosts[:MAX_HOSTS]
    return hosts


def _split_top(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(ch)
    parts.append("".join(current))
    return [p for p in parts if p]


def _expand_one(part: str) -> list[str]:
    m = _RANGE.match(part)
    if not m:
        return [part]
    out: list[str] = []
    for item in m["body"].split(","):
        lo, _, hi = item.partition("-")
        if not lo.isdigit() or (hi and not hi.isdigit()) or len(lo) > 18 or len(hi) > 18:
            return [part]
        width = len(lo)
        for n in range(int(lo), int(hi or lo) + 1):
            for tail in _expand_one(m["rest"]) if m["rest"] else [""]:
                out.append(f"{m['prefix']}{n:0{width}d}{tail}")
            if len(out) >= MAX_HOSTS:
                return out
    return out


# What a user puts where a host name was before pasting: "xxxxx", "XXX-node", "<hostname>", "***", "[REDACTED]".
_REDACTED = re.compile(r"(?i)^(?:[x*#?]{3,}(?:[-_.][\w-]*)?|[\w-]*[-_.][x*#]{3,}|<[^<>]*>|\[?redacted\]?|hostname|myhost)$")


def looks_redacted(name: str) -> bool:
    """Whether ``name`` is a placeholder a user pasted in place of a host name: several hosts
    redacted to one placeholder are not one host, so it names none."""
    return bool(_REDACTED.match(name))

