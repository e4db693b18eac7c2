"""README's "Corpus and tests" section states how many cases and real forms there are; a reader
sizes the evidence by those numbers, so they must follow the files instead of the last edit."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _section(title: str) -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index(f"## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end]


def _stated(pattern: str, text: str) -> int:
    found = re.search(pattern, text)
    assert found, f"README no longer states {pattern!r}"
    return int(found.group(1).replace(",", ""))


def test_corpus_section_counts_follow_the_files():
    section = _section("Corpus and tests")
    bundled = [p for p in (ROOT / "corpus").iterdir() if (p / "expected.yaml").is_file()]
    wild = [p for p in (ROOT / "corpus" / "wild").iterdir() if p.is_dir()]
    forms = (ROOT / "tests" / "data" / "real_forms.jsonl").read_text().splitlines()
    assert _stated(r"([\d,]+) cases:", section) == len(bundled)
    assert _stated(r"`corpus/wild/` holds ([\d,]+)", section) == len(wild)
    assert _stated(r"holds ([\d,]+) real message forms", section) == len([f for f in forms if f.strip()])
