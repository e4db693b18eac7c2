"""Three small inline-SVG charts for the fleet page, drawn by hand: no JavaScript, no library, no font
or image to fetch. Colours of text, axes and grid come from CSS classes (``page.py`` sets them for
light and dark mode); only the data colours are literal. Every label and tooltip is escaped here, so
a node or cause name from the logs never becomes markup.
"""

from __future__ import annotations

import html
import math
import re
from dataclasses import dataclass

from diag.formats.safe import safe_text

WIDTH = 960


def e(text: object) -> str:
    return html.escape(safe_text(str(text)), quote=True)


def short(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def nice_max(value: float, ticks: int = 4) -> tuple[float, float]:
    """An axis top at or above ``value`` and its tick step, both round (1, 2, 2.5 or 5 times 10^k)."""
    if value <= 0:
        return 1.0, 0.25
    raw = value / ticks
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    return step * math.ceil(value / step - 1e-9), step


def _label_step(labels: list[str], plot_w: float) -> int:
    """Label every n-th bucket so that x labels (12 px text, ~7 px a character) never overlap."""
    room = 7 * max((len(label) for label in labels), default=0) + 14
    return max(1, math.ceil(len(labels) * room / plot_w))


def _ticks(top: float, step: float) -> list[float]:
    count = int(round(top / step))
    return [i * step for i in range(count + 1)]


def _svg(height: float, label: str, body: list[str], width: int = WIDTH) -> str:
    return (
        f'<svg class="chart" viewBox="0 0 {width} {height:.0f}" role="img" aria-label="{e(label)}" '
        f'xmlns="http://www.w3.org/2000/svg">' + "".join(body) + "</svg>"
    )


def _pattern_id(key: str) -> str:
    return "hatch-" + re.sub(r"[^A-Za-z0-9_-]", "_", key)


@dataclass
class Segment:
    key: str  # the series (cause) it belongs to
    value: int
    color: str
    label: str  # tooltip text


@dataclass
class Bar:
    label: str  # the x-axis label, e.g. "Dec 03"
    tooltip: str
    segments: list[Segment]
    faded: bool = False  # a partial bucket


def stacked_bars(bars: list[Bar], label: str, unit: str, hatch: dict[str, str] | None = None) -> str:
    """One ``<g class="bar">`` per bucket, its segments stacked bottom-up in the order given.
    ``hatch`` maps a series key to a colour drawn striped instead of flat (the unexplained)."""
    left, right, top, bottom = 48, 12, 30, 34
    height = 240
    plot_w, plot_h = WIDTH - left - right, height - top - bottom
    peak = max((sum(s.value for s in b.segments) for b in bars), default=0)
    y_max, step = nice_max(max(peak, 1))
    body = []
    for key, color in (hatch or {}).items():
        body.append(
            f'<defs><pattern id="{_pattern_id(key)}" width="6" height="6" patternUnits="userSpaceOnUse" '
            f'patternTransform="rotate(45)"><rect width="6" height="6" fill="{color}" fill-opacity="0.35"/>'
            f'<rect width="3" height="6" fill="{color}"/></pattern></defs>'
        )
    for tick in _ticks(y_max, step):
        y = top + plot_h - tick / y_max * plot_h
        body.append(f'<line class="grid" x1="{left}" x2="{WIDTH - right}" y1="{y:.1f}" y2="{y:.1f}"/>')
        body.append(f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end">{tick:g}</text>')
    body.append(f'<text x="{left - 40}" y="{top - 14}">{e(unit)}</text>')
    slot = plot_w / max(len(bars), 1)
    bar_w = max(min(slot * 0.72, 60), 2)
    every = _label_step([b.label for b in bars], plot_w)
    for i, bar in enumerate(bars):
        x = left + slot * i + (slot - bar_w) / 2
        faded = ' opacity="0.45"' if bar.faded else ""
        parts = [f'<g class="bar"{faded}><title>{e(bar.tooltip)}</title>']
        y = top + plot_h
        for seg in bar.segments:
            if seg.value <= 0:
                continue
            h = seg.value / y_max * plot_h
            y -= h
            fill = f"url(#{_pattern_id(seg.key)})" if hatch and seg.key in hatch else seg.color
            parts.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar_w:.1f}" height="{h:.1f}" fill="{fill}" '
                f'data-series="{e(seg.key)}"><title>{e(seg.label)}</title></rect>'
            )
        parts.append("</g>")
        body.append("".join(parts))
        if i % every == 0:
            cx = left + slot * i + slot / 2
            body.append(f'<text x="{cx:.1f}" y="{height - bottom + 16}" text-anchor="middle">{e(bar.label)}</text>')
    body.append(f'<line class="axis" x1="{left}" x2="{WIDTH - right}" y1="{top + plot_h}" y2="{top + plot_h}"/>')
    return _svg(height, label, body)


@dataclass
class Interval:
    name: str
    rate: float
    low: float
    high: float
    note: str  # the support, right of the bar: "36/51 jobs · 10 users"
    tooltip: str
    flagged: bool  # a reported bad node (red) or a node shown for comparison (grey)


def intervals(rows: list[Interval], baseline: float, label: str) -> str:
    """Each node's blame rate (dot) and its interval (line) against the fleet baseline (dashed)."""
    left, right, top, row_h = 190, 190, 30, 26
    height = top + row_h * len(rows) + 34
    plot_w = WIDTH - left - right
    x_max, step = nice_max(max([r.high for r in rows] + [baseline, 0.05]))
    x_max, step = min(x_max, 1.0), min(step, 0.25)

    def x(rate: float) -> float:
        return left + rate / x_max * plot_w

    body = []
    for tick in _ticks(x_max, step):
        body.append(f'<line class="grid" x1="{x(tick):.1f}" x2="{x(tick):.1f}" y1="{top - 8}" y2="{height - 30}"/>')
        body.append(f'<text x="{x(tick):.1f}" y="{height - 14}" text-anchor="middle">{tick:.0%}</text>')
    for i, row in enumerate(rows):
        y = top + row_h * i + row_h / 2
        cls = "node bad" if row.flagged else "node"
        band = (
            f'<rect class="band" x="0" y="{y - row_h / 2:.1f}" width="{WIDTH}" height="{row_h}"/>'
            if row.flagged
            else ""
        )
        body.append(
            f'<g class="{cls}"><title>{e(row.tooltip)}</title>{band}'
            f'<text class="name" x="{left - 10}" y="{y + 4:.1f}" text-anchor="end">{e(short(row.name, 26))}</text>'
            f'<line class="ci" x1="{x(row.low):.1f}" x2="{x(row.high):.1f}" y1="{y:.1f}" y2="{y:.1f}"/>'
            f'<line class="ci" x1="{x(row.low):.1f}" x2="{x(row.low):.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}"/>'
            f'<line class="ci" x1="{x(row.high):.1f}" x2="{x(row.high):.1f}" y1="{y - 5:.1f}" y2="{y + 5:.1f}"/>'
            f'<circle class="dot" cx="{x(row.rate):.1f}" cy="{y:.1f}" r="5"/>'
            f'<text x="{WIDTH - right + 10}" y="{y + 4:.1f}">{e(row.note)}</text></g>'
        )
    bx = x(baseline)
    body.append(f'<line class="baseline" x1="{bx:.1f}" x2="{bx:.1f}" y1="{top - 12}" y2="{height - 30}"/>')
    body.append(f'<text class="baseline-label" x="{bx + 4:.1f}" y="{top - 14}">fleet baseline {baseline:.1%}</text>')
    return _svg(height, label, body)


@dataclass
class Point:
    label: str
    value: float | None  # None: nothing to show for this bucket (no failed job)
    tooltip: str
    faded: bool = False


def share_line(points: list[Point], overall: float, label: str, width: int = WIDTH) -> str:
    """A share (0..100%) over the buckets: a line through the buckets that have one, the window's
    overall share dashed behind it. ``width``: a narrower drawing for a half-width column keeps
    its text as large as the other charts'."""
    left, right, top, bottom = 48, 12, 14, 38
    height = 240
    plot_w, plot_h = width - left - right, height - top - bottom
    slot = plot_w / max(len(points), 1)

    def y(value: float) -> float:
        return top + plot_h - value * plot_h

    body = []
    for tick in (0, 0.25, 0.5, 0.75, 1.0):
        body.append(f'<line class="grid" x1="{left}" x2="{width - right}" y1="{y(tick):.1f}" y2="{y(tick):.1f}"/>')
        body.append(f'<text x="{left - 6}" y="{y(tick) + 4:.1f}" text-anchor="end">{tick:.0%}</text>')
    body.append(
        f'<line class="baseline" x1="{left}" x2="{width - right}" y1="{y(overall):.1f}" y2="{y(overall):.1f}"/>'
    )
    every = _label_step([p.label for p in points], plot_w)
    run: list[str] = []
    runs: list[list[str]] = []
    for i, point in enumerate(points):
        cx = left + slot * i + slot / 2
        if i % every == 0:
            body.append(f'<text x="{cx:.1f}" y="{height - bottom + 16}" text-anchor="middle">{e(point.label)}</text>')
        if point.value is None:
            if run:
                runs.append(run)
            run = []
            continue
        run.append(f"{cx:.1f},{y(point.value):.1f}")
    if run:
        runs.append(run)
    body += [f'<polyline class="trend" points="{" ".join(r)}"/>' for r in runs]
    for i, point in enumerate(points):
        if point.value is None:
            continue
        cx = left + slot * i + slot / 2
        faded = ' opacity="0.45"' if point.faded else ""
        body.append(
            f'<circle class="trend-dot" cx="{cx:.1f}" cy="{y(point.value):.1f}" r="4"{faded}>'
            f"<title>{e(point.tooltip)}</title></circle>"
        )
    body.append(f'<line class="axis" x1="{left}" x2="{width - right}" y1="{y(0):.1f}" y2="{y(0):.1f}"/>')
    return _svg(height, label, body, width)
