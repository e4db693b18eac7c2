"""``fleet report --format html``: the page an admin looks at. A synthetic fleet of two weeks (planted bad
nodes, a cause taking off in the last days) is scanned, compacted and reported over its last 7 days;
the page is parsed as HTML and, where chromium is installed, rendered and printed by a real browser."""

from __future__ import annotations

import datetime as dt
import json
import re
from html.parser import HTMLParser

import pytest
from click.testing import CliRunner

from diag.cli import cli
from diag.fleet.record import dumps
from diag.fleet.summary import Bucket, FleetSummary, bucket_size

from ..formats.test_html import browser, chromium, luminance_variance
from .screenshot import END, build_fleet

pytest.importorskip("duckdb")
UNTIL = END.strftime("%Y-%m-%dT%H:%M:%SZ")
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "area", "base", "wbr", "source"}
SVG_LEAVES = {"rect", "line", "circle", "polyline", "path"}


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


class Page(HTMLParser):
    """Checks that every element is closed in order, and keeps what the tests look for."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.bars = 0
        self.svgs = 0
        self.series_fill: dict[str, set[str]] = {}
        self.texts: list[str] = []
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "svg":
            self.svgs += 1
        if tag == "g" and a.get("class") == "bar":
            self.bars += 1
        if tag == "rect" and "data-series" in a:
            self.series_fill.setdefault(a["data-series"], set()).add(a["fill"])
        if tag not in VOID and tag not in SVG_LEAVES:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        if tag not in VOID and tag not in SVG_LEAVES:
            self.errors.append(f"<{tag}/> self-closed")

    def handle_endtag(self, tag):
        if tag in SVG_LEAVES:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()

    def handle_data(self, data):
        if data.strip():
            self.texts.append(data.strip())


@pytest.fixture(scope="module")
def trend(tmp_path_factory):
    """800 jobs over 10 days, ending at UTC midnight: the report's 7 days are 7 whole day buckets."""
    archive, out = build_fleet(tmp_path_factory.mktemp("trend"), jobs=800, days=10)
    page = _run("fleet", "report", str(out), "--since", "7d", "--until", UNTIL, "--format", "html")
    report = json.loads(_run("fleet", "report", str(out), "--since", "7d", "--until", UNTIL, "--format", "json"))
    return archive, out, page, report


def test_page_is_well_formed_with_a_bar_per_day_and_a_colour_per_cause(trend):
    _archive, _out, page, report = trend
    parsed = Page(page)
    assert parsed.errors == [] and parsed.stack == []
    buckets = report["timeline"]["buckets"]
    assert report["timeline"]["bucket_seconds"] == 86400 and len(buckets) == 7
    assert parsed.bars == 7
    # Every cause of a failed job in the window has its own colour (fewer causes than the palette here).
    causes = {c for b in buckets for c in b["causes"]}
    assert 3 <= len(causes) <= 9
    drawn = {k: v for k, v in parsed.series_fill.items() if k not in ("other causes", "unexplained")}
    assert set(drawn) == causes
    assert all(len(fills) == 1 for fills in drawn.values())
    assert len({next(iter(f)) for f in drawn.values()}) == len(causes)
    # The bars add up to the header: each failed job counted once, in the bucket it ended in.
    assert sum(b["failed_jobs"] for b in buckets) == report["failed_jobs"]
    assert sum(b["unexplained_jobs"] for b in buckets) == report["unexplained_jobs"]
    assert f"<b>{report['failed_jobs']:,}</b>" in page


def test_the_rising_cause_rises_and_the_table_says_so(trend):
    _archive, _out, page, report = trend
    per_day = [b["causes"].get("shared-storage-missing", 0) for b in report["timeline"]["buckets"]]
    assert sum(per_day[4:]) > 2 * sum(per_day[:3]), per_day
    row = re.search(r"<code>shared-storage-missing</code></td>.*?</tr>", page)
    assert row and 'class="up"' in row[0] and "▲" in row[0]


def test_planted_bad_nodes_are_in_the_chart_and_the_drain_table_and_healthy_ones_are_not(trend):
    archive, _out, page, report = trend
    bad = set(archive.bad)
    assert {n["node"] for n in report["bad_nodes"]} == bad
    chart = page.split('<h2 id="bad-nodes">')[1]
    for node in bad:
        assert re.search(rf'<g class="node bad">.*?<text class="name"[^>]*>{node}</text>', chart)
        assert f"scontrol update nodename={node} state=drain reason=" in chart
    drains = re.findall(r'<pre class="copy">(.*?)</pre>', page)
    assert len(drains) == len(bad) and all("state=drain" in d for d in drains)
    # The broken-script trap (one user's jobs) may be drawn for comparison, never as bad or drained.
    trap = archive.script_bug_node
    assert f"nodename={trap}" not in page
    assert not re.search(rf'<g class="node bad">(?:(?!</g>).)*>{trap}<', chart)
    assert "fleet baseline" in chart


def test_output_file_is_written_whole_and_nothing_on_stdout(trend, tmp_path):
    _archive, out, page, _report = trend
    target = tmp_path / "fleet.html"
    printed = _run("fleet", "report", str(out), "--since", "7d", "--until", UNTIL, "--format", "html",
                   "--output", str(target))  # fmt: skip
    assert printed == "" and target.read_text() == page
    assert [p.name for p in tmp_path.iterdir()] == ["fleet.html"]  # no temporary file left behind


def _record(job: str, when: str, node: str, cause: str | None, user: str) -> dict:
    findings = []
    if cause:
        findings.append({"id": cause, "role": "root", "severity": "error", "confidence": 0.9, "explained_by": None,
                         "hosts": [node], "ranks": [0], "evidence": "x.out:1"})  # fmt: skip
    return {"schema": "slurmdiag.fleet/1", "cluster": "c<b>1", "job_id": job, "rules_sha256": "r1", "user": user,
            "end_time": when, "scanned_at": "2026-12-03T00:00:00Z", "nodes": [node, "ok-1"],
            "nccl_versions": [], "findings": findings, "top": cause, "state": "FAILED" if cause else "COMPLETED"}  # fmt: skip


HOSTILE_NODE = "<script>alert(1)</script>"
HOSTILE_CAUSE = 'x"><script>alert(2)</script>'


def test_names_from_logs_are_escaped_everywhere(tmp_path):
    """A node and a cause named like markup: shown as text in the chart, the tables and the drain line."""
    (tmp_path / "shards").mkdir()
    lines = []
    for i in range(40):
        day = f"2026-11-{20 + i % 7:02d}T10:{i:02d}:00Z"
        cause = HOSTILE_CAUSE if i % 4 else None
        lines.append(dumps(_record(f"h{i}", day, HOSTILE_NODE, cause, f"u{i % 5}")))
        lines.append(dumps(_record(f"g{i}", day, f"good-{i % 10}", None, f"u{i % 5}")))
    (tmp_path / "shards" / "s.jsonl").write_text("".join(lines))
    _run("fleet", "compact", str(tmp_path))
    page = _run("fleet", "report", str(tmp_path), "--until", "2026-11-27T00:00:00Z", "--format", "html")
    report = json.loads(_run("fleet", "report", str(tmp_path), "--until", "2026-11-27T00:00:00Z", "--format", "json"))
    assert [n["node"] for n in report["bad_nodes"]] == [HOSTILE_NODE]  # it is in the chart and the drain table
    assert "<script" not in page.lower() and "c<b>1" not in page and "c&lt;b&gt;1" in page
    assert page.count("&lt;script&gt;alert(1)&lt;/script&gt;") >= 3  # chart label, table, drain line
    assert "x&quot;&gt;&lt;script&gt;alert(2)&lt;/script&gt;" in page
    parsed = Page(page)
    assert parsed.errors == []
    assert HOSTILE_NODE in parsed.texts and "Fleet report: c<b>1" in parsed.texts


def test_an_empty_window_gives_a_clear_page(tmp_path):
    (tmp_path / "shards").mkdir()
    (tmp_path / "shards" / "s.jsonl").write_text(dumps(_record("1", "2026-11-20T10:00:00Z", "n1", None, "u")))
    _run("fleet", "compact", str(tmp_path))
    page = _run("fleet", "report", str(tmp_path), "--until", "2026-01-08T00:00:00Z", "--format", "html")
    assert "No job ended between 2026-01-01T00:00:00Z and 2026-01-08T00:00:00Z" in page
    assert "No failed job in this window" in page and "No bad node" in page
    parsed = Page(page)
    assert parsed.errors == [] and parsed.bars == 0
    # Jobs but none failed: still no division by zero, and no chart of nothing.
    page = _run("fleet", "report", str(tmp_path), "--until", "2026-11-21T00:00:00Z", "--format", "html")
    assert "<b>1</b>" in page and "No failed job in this window" in page


@pytest.mark.parametrize(
    ("since", "seconds"),
    [("30m", 60), ("12h", 3600), ("24h", 10800), ("7d", 86400), ("4w", 86400), ("30d", 86400), ("90d", 604800)],
)
def test_buckets_are_readable_sizes_and_7_to_31_of_them(since, seconds):
    from diag.fleet.summary import _buckets, parse_duration

    span = parse_duration(since)
    assert bucket_size(span) == seconds
    end = dt.datetime(2026, 12, 3, 12, 24, 30, tzinfo=dt.timezone.utc)
    buckets = _buckets(end - span, end, seconds)
    assert 7 <= len(buckets) <= 31
    assert buckets[0].partial and buckets[-1].partial  # a window from 12:24:30 cuts its first and last bucket
    if seconds == 604800:  # weeks start on Mondays
        assert all(dt.datetime.fromisoformat(b.start[:-1]).weekday() == 0 for b in buckets)


def test_many_causes_fold_into_one_grey_other():
    from diag.fleet.page import OTHER_COLOR, PALETTE, cause_colors

    bucket = Bucket("2026-12-01T00:00:00Z", "2026-12-02T00:00:00Z")
    bucket.causes.update({f"cause-{i:02d}": 20 - i for i in range(12)})
    colors = cause_colors(FleetSummary("7d", "", "", buckets=[bucket]))
    assert [colors[f"cause-{i:02d}"] for i in range(len(PALETTE))] == list(PALETTE)
    assert {colors[f"cause-{i:02d}"] for i in range(len(PALETTE), 12)} == {OTHER_COLOR}


# --- in a real browser ------------------------------------------------------------------------------------
def _console(stderr: bytes) -> list[str]:
    """The page's console messages (a CSP violation, a script error) from chromium's log."""
    return [line for line in stderr.decode(errors="replace").splitlines() if ":CONSOLE" in line]


def test_the_page_renders_and_prints_in_chromium_without_console_messages(trend, tmp_path):
    browser()
    _archive, _out, page, _report = trend
    path = tmp_path / "fleet.html"
    path.write_text(page, encoding="utf-8")
    png, pdf = tmp_path / "fleet.png", tmp_path / "fleet.pdf"
    shot = chromium("--enable-logging=stderr", "--v=0", f"--screenshot={png}", "--window-size=1200,1600",
                    path.as_uri())  # fmt: skip
    printed = chromium("--enable-logging=stderr", "--v=0", f"--print-to-pdf={pdf}", path.as_uri())
    assert png.is_file() and luminance_variance(png) > 100
    assert pdf.is_file() and pdf.read_bytes()[:5] == b"%PDF-" and pdf.stat().st_size > 10_000
    assert _console(shot.stderr) == [] and _console(printed.stderr) == []


def test_the_console_check_would_catch_a_blocked_script(tmp_path):
    browser()
    path = tmp_path / "bad.html"
    path.write_text(
        '<!doctype html><meta http-equiv="Content-Security-Policy" content="default-src \'none\'">'
        "<title>x</title><script>document.title='y'</script>",
        encoding="utf-8",
    )
    run = chromium("--enable-logging=stderr", "--v=0", "--dump-dom", path.as_uri())
    assert any("Content Security Policy" in line for line in _console(run.stderr))
