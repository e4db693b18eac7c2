"""Walk a regular expression's source token by token, knowing whether each is inside a ``[...]``
class: the pattern rewrites (bytes framing, bounded digit runs) need exactly that and no more."""

from __future__ import annotations

from collections.abc import Iterator


def tokens(pattern: str) -> Iterator[tuple[str, bool]]:
    """(token, inside a class) for each escape (two characters) or single character of ``pattern``."""
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            yield pattern[i : i + 2], in_class
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class and pattern[i - 1] not in "[^":
            in_class = False
        yield ch, in_class
        i += 1
