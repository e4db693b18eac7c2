"""Rebuild docs/fleet-report.png: a realistic synthetic fleet (planted bad nodes, a cause taking off in
the last days) scanned, compacted and reported as HTML, then rendered by headless chromium.

    python -m tests.fleet.screenshot docs/fleet-report.png [--keep DIR]
"""

from __future__ import annotations

import argparse
import datetime as dt
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner

from diag.cli import cli

from .synthetic import Archive, build_archive

# Ends at a fixed UTC midnight so the day buckets are whole and the picture is reproducible.
END = dt.datetime(2026, 12, 3, tzinfo=dt.timezone.utc)


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def build_fleet(base: Path, jobs: int = 2400, days: float = 14.0) -> tuple[Archive, Path]:
    """Two windows of 7 days: the previous one for the deltas, the reported one for the charts."""
    archive = build_archive(base / "archive", jobs=jobs, end=END.timestamp(), spacing=days * 86400 / jobs,
                            rising=("syn-shared-storage-stale-nfs", "slinky-1"), rising_rate=0.3)  # fmt: skip
    out = base / "fleet"
    _run("fleet", "scan", str(archive.root), "--out", str(out), "--cluster", "c1")
    _run("fleet", "compact", str(out))
    return archive, out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("png")
    parser.add_argument("--keep", help="keep the fleet and the page in this folder")
    args = parser.parse_args()
    base = Path(args.keep or tempfile.mkdtemp(prefix="fleet-shot-"))
    started = time.time()
    _archive, out = build_fleet(base)
    page = base / "fleet.html"
    _run("fleet", "report", str(out), "--since", "7d", "--until", END.strftime("%Y-%m-%dT%H:%M:%SZ"),
         "--format", "html", "--output", str(page))  # fmt: skip
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "chromium is needed for the screenshot"
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        f"--user-data-dir={profile}", f"--screenshot={Path(args.png).resolve()}",
                        "--window-size=1200,1600", page.as_uri()], check=True, capture_output=True, timeout=120)  # fmt: skip
    print(f"{args.png} from {page} in {time.time() - started:.0f} s")
    if not args.keep:
        shutil.rmtree(base)


if __name__ == "__main__":
    main()
