from __future__ import annotations

import os
from pathlib import Path

import pytest

from diag.api import load_rules

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "corpus"
SHARED = ROOT.parent / "shared"


@pytest.fixture(scope="session")
def rules():
    return load_rules()


def corpus_cases() -> list[Path]:
    if not CORPUS.is_dir():
        return []
    return sorted(p for p in CORPUS.iterdir() if (p / "expected.yaml").is_file())


def case_logs(case: Path) -> list[str]:
    return sorted(
        str(p) for p in case.rglob("*") if p.is_file() and p.name != "expected.yaml" and not p.name.startswith(".")
    )


os.environ.setdefault("COLUMNS", "120")
