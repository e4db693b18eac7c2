"""--format html: a self-contained page, checked as text and in a real browser (Debian's chromium).

The browser tests render every corpus report headless to PNG and assert the page is not blank, has
the expected title, and makes no network request (chromium's own net log). Without chromium they
are skipped with the reason, except in CI (CI=true), where a missing browser is a failure.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import struct
import subprocess
import tempfile
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from diag.api import diagnose_bytes
from diag.formats.html import render_html, title_of

from ..reports import CASES, corpus_report

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
NO_NET_FLAGS = ["--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run"]


def browser() -> str:
    if CHROMIUM is None:
        if IN_CI:
            pytest.fail("chromium is not installed, and CI=true: .ci/run must apt-get install chromium")
        pytest.skip("chromium is not installed (apt-get install chromium); the browser checks need it")
    return CHROMIUM


def chromium(*args: str, timeout: int = 60) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        cmd = [browser(), "--headless", "--no-sandbox", "--disable-gpu", *NO_NET_FLAGS, f"--user-data-dir={profile}"]
        return subprocess.run([*cmd, *args], capture_output=True, timeout=timeout)


def png_pixels(path: Path, max_rows: int = 300) -> tuple[int, int, list[bytes], int]:
    """Decode the top ``max_rows`` of an 8-bit RGB/RGBA PNG (what chromium writes) with zlib and struct
    only (pure Python is slow, and the top of the page is where a blank render shows)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, width = 8, b"", 0
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        pos += 12 + length
        if kind == b"IHDR":
            width, height, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype in (2, 6)
        elif kind == b"IDAT":
            idat += body
    bpp = 3 if ctype == 2 else 4
    raw, stride, rows, prev, i = zlib.decompress(idat), width * bpp, [], bytearray(width * bpp), 0
    for _ in range(min(height, max_rows)):
        filt, line = raw[i], bytearray(raw[i + 1 : i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if filt == 1:
                line[x] = (line[x] + a) & 255
            elif filt == 2:
                line[x] = (line[x] + b) & 255
            elif filt == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif filt == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line))
        prev = line
    return width, height, rows, bpp


def luminance_variance(path: Path) -> float:
    _, _, rows, bpp = png_pixels(path)
    values = [sum(row[x : x + 3]) / 3 for row in rows[::4] for x in range(0, len(row), bpp * 4)]
    mean = sum(values) / len(values)
    return sum((v - mean) ** 2 for v in values) / len(values)


def page_requests(netlog: Path) -> list[str]:
    """URLs the page itself asked for (not chromium's own housekeeping): requests isolated to file://."""
    log = json.loads(netlog.read_text())
    start = {v: k for k, v in log["constants"]["logEventTypes"].items()}
    urls = []
    for ev in log["events"]:
        p = ev.get("params", {})
        own = start.get(ev["type"]) == "URL_REQUEST_START_JOB" and "file://" in p.get("network_isolation_key", "")
        if own and not p["url"].startswith(("file:", "data:", "about:")):
            urls.append(p["url"])
    return urls


# --- the page as text ---------------------------------------------------------------------------
HOSTILE = (
    b"slinky-0:1:1 [0] NCCL INFO NET/IB : No device found.\n"
    b"[rank0]: ValueError: bad <script>alert('x')</script> <img src=http://198.51.100.7/p.png> & \"q\"\n"
    b"srun: error: slinky-0: task 0: Exited with exit code 1\n"
)


def test_log_text_is_escaped_not_markup():
    page = render_html(diagnose_bytes(HOSTILE))
    assert "<script" not in page.lower() and "<img" not in page.lower()
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in page


@pytest.mark.parametrize("case", CASES)
def test_page_is_self_contained(case):
    page = render_html(corpus_report(case))
    assert "Content-Security-Policy" in page and "default-src 'none'" in page
    assert not re.search(r"<(?:script|link|iframe|object|embed|img)\b", page, re.I)
    assert not re.search(r"@import|url\(", page, re.I)
    # The only URLs are links a reader may click (rule references) and the SVG namespace.
    for attr, url in re.findall(r'\b(src|href|xmlns)="(https?://[^"]*)"', page):
        assert attr == "href" or url == "http://www.w3.org/2000/svg", (attr, url)


def test_the_odd_node_stands_out():
    page = render_html(corpus_report("syn-ib-not-mounted-one-node"))
    rows = dict(re.findall(r'<tr class="(\w+)"><td>(slinky-\d)', page)[i][::-1] for i in range(4))
    assert rows == {"slinky-0": "ok", "slinky-1": "ok", "slinky-2": "culprit", "slinky-3": "ok"}
    assert "uses Socket while most nodes use IB" in page
    assert '<svg class="tl"' in page and page.count("<circle") >= 2


def test_evidence_lines_have_anchors_the_timeline_links_to():
    page = render_html(corpus_report("syn-ib-not-mounted-one-node"))
    anchors = set(re.findall(r'<li id="(ev-\d+)">', page))
    links = set(re.findall(r'<a href="#(ev-\d+)">', page))
    assert anchors and links and links <= anchors


# --- the page in a real browser -------------------------------------------------------------------
def _render_case(case: str, tmp: Path) -> tuple[str, float, str, list[str]]:
    report = corpus_report(case)
    page = tmp / f"{case}.html"
    page.write_text(render_html(report), encoding="utf-8")
    png, netlog = tmp / f"{case}.png", tmp / f"{case}.net.json"
    # One launch: screenshot at a phone-like width, the DOM on stdout, every request in the net log.
    run = chromium(f"--screenshot={png}", "--dump-dom", "--window-size=600,900", f"--log-net-log={netlog}",
                   page.as_uri())  # fmt: skip
    assert png.is_file(), run.stderr.decode()[-2000:]
    dom = run.stdout.decode()
    return title_of(report), luminance_variance(png), dom, page_requests(netlog)


def test_every_corpus_report_renders_in_chromium(tmp_path):
    browser()
    with ThreadPoolExecutor(max_workers=min(8, 2 * (os.cpu_count() or 1))) as pool:
        results = dict(zip(CASES, pool.map(lambda c: _render_case(c, tmp_path), CASES)))
    for case, (title, variance, dom, requests) in results.items():
        assert variance > 100, f"{case}: screenshot looks blank (variance {variance:.1f})"
        m = re.search(r"<title>(.*?)</title>", dom, re.S)
        assert m and m[1].replace("&amp;", "&") == title, case
        assert "<h1>" in dom and "Findings" in dom
        assert requests == [], f"{case}: the page made requests: {requests}"


def test_the_network_check_would_catch_a_request(tmp_path):
    """The detector above is not vacuous: a page that loads an image is caught."""
    browser()
    page = tmp_path / "leaky.html"
    page.write_text('<!doctype html><title>x</title><img src="http://198.51.100.7/p.png">', encoding="utf-8")
    netlog = tmp_path / "leaky.json"
    chromium("--dump-dom", f"--log-net-log={netlog}", page.as_uri())
    assert page_requests(netlog) == ["http://198.51.100.7/p.png"]


def test_script_in_a_log_line_shows_as_text_in_the_browser(tmp_path):
    browser()
    page = tmp_path / "hostile.html"
    page.write_text(render_html(diagnose_bytes(HOSTILE)), encoding="utf-8")
    dom = chromium("--dump-dom", page.as_uri()).stdout.decode()
    assert "&lt;script&gt;alert('x')&lt;/script&gt;" in dom
    assert "<script" not in dom.lower()


def test_commands_in_a_fix_are_code_and_stay_escaped():
    from diag.formats.html import _inline_code

    assert _inline_code("run `ls /sys/class/infiniband` first") == "run <code>ls /sys/class/infiniband</code> first"
    assert "<script>" not in _inline_code("`<script>alert(1)</script>`")
