"""busbw-low: nccl-tests bandwidth below what the fabric should carry, and wrong results."""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import plural
from diag.diagnosis.context import Context, hosts_text, pick_evidence
from diag.report import Finding

# Large-message all_reduce busbw of one node's NVLink domain, by GPU name (conservative figures).
NVLINK_BUSBW = (
    ("B200", 650.0),
    ("GB200", 650.0),
    ("H200", 360.0),
    ("H100", 360.0),
    ("H800", 170.0),
    ("A100", 220.0),
    ("A800", 150.0),
    ("V100", 130.0),
)


def busbw_low(rule: Rule, ctx: Context) -> list[Finding]:
    facts = ctx.facts
    rows = list(facts.busbw_rows) + _old_rows(rule, ctx)
    oob = ctx.stats(rule, ["oob_failed"])
    below = ctx.captures(rule, "avg", ["avg_failed"])
    checked = ctx.samples(rule, ["nhc_busbw"])
    if not rows and not oob and not below and not checked:
        return []
    wrong_rows = [r for r in rows if r.wrong]
    problems = []
    severity = None
    if wrong_rows or oob:
        n = sum(r.wrong or 0 for r in wrong_rows) or int(
            max(ctx.captures(rule, "wrong", ["oob_failed"]) or ["0"], key=int)
        )
        problems.append(
            f"nccl-tests counted {plural(n, 'wrong result')} (#wrong): data corruption, an error of its own"
        )
        severity = "error"
    measured = expected = None
    largest = None
    assumed: list[str] = []
    if rows:
        largest = max(rows, key=lambda r: (r.size, r.order))
        # Several tests in one log: judge each by its own largest size, report the worst.
        measured = largest.busbw
        expected, source = _expected_busbw(ctx, largest.size, rule)
        threshold = 0.8 if source == "--expect-busbw" else 0.6
        if expected and measured < threshold * expected:
            low = (
                f"busbw at the largest size ({_size_text(largest.size)}) is {measured:g} GB/s, "
                f"{measured / expected:.0%} of the {expected:g} GB/s expected ({source})"
            )
            suspects = _busbw_suspects(ctx)
            problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
            if source == RDMA_FLOOR_SOURCE and not suspects and not any(h.hcas for h in facts.hosts.values()):
                # Only the guess of the fabric calls it slow: nothing in the log says what the nodes have.
                assumed.append("the nodes have an RDMA fabric of 100 Gb/s or more (nothing here says which fabric)")
            if not ctx.stats(rule, ["avg_busbw", "table_end"]):
                # An excerpt may stop before the largest size: only the table's end proves it was the last.
                assumed.append(
                    "the largest message size shown is the run's largest: the end of the results table "
                    '("Avg bus bandwidth") is not in the logs'
                )
    if below and not any("busbw at the largest size" in p for p in problems):
        # The user gave nccl-tests its own floor (NCCL_TESTS_MIN_BW) and the run fell short of it.
        low = f"nccl-tests' own bandwidth check failed: average busbw {below[0]} GB/s is under 90% of NCCL_TESTS_MIN_BW"
        suspects = _busbw_suspects(ctx)
        problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
        severity = "error"
    if checked and not problems:
        # A node health check ran all_reduce_perf itself and compared it with its own expectation.
        g = checked[0][1]
        hosts = sorted({h for ev, _ in checked if (h := ctx.host_for(ev))})
        low = (
            f"a node health check measured {g['measured']} GB/s all-reduce busbw against the {g['expected']} GB/s it "
            "expects" + (f" on {hosts_text(hosts)}" if hosts else "")
        )
        suspects = _busbw_suspects(ctx)
        problems.append(low + (f"; the log shows why: {' and '.join(suspects)}" if suspects else ""))
        measured, expected = float(g["measured"]), float(g["expected"])
        severity = "error"
    if not problems:
        return []
    if assumed and severity is None:
        severity = "warning"
    values = {
        "measured": f"{measured:g}" if measured is not None else "?",
        "expected": f"{expected:g}" if expected else "?",
        "size": _size_text(largest.size) if largest else "the largest size",
    }
    evidence = []
    for r in ([largest] if largest else []) + wrong_rows[:3]:
        evidence.append(ctx.evidence_at(r.order, r.text))
    evidence += [ev for ev, _ in ctx.samples(rule, ["oob_failed", "avg_failed", "nhc_busbw"])][:2]
    finding = ctx.make_finding(
        rule,
        ["oob_failed", "avg_failed", "nhc_busbw"],
        detail="; ".join(problems) + ".",
        evidence=pick_evidence(evidence),
        values=values,
        severity=severity,
        assumed=assumed,
    )
    finding.count = max(finding.count, len(wrong_rows) + (1 if largest else 0))
    if (wrong_rows or oob) and len(problems) == 1:
        # Bandwidth was not the problem: busbw-low (a slow fabric) would name the wrong cause, and no cause id
        # is data corruption, so it is the honest unexplained failure, with what to do about wrong values.
        unexplained = ctx.rules.get("unexplained-failure")
        if unexplained is None:
            finding.remediation = _CORRUPTION_FIX
            return [finding]
        detail = problems[0].replace(", an error of its own", "") + (
            f", while the bandwidth was not what failed ({values['measured']} GB/s at {values['size']})"
            if measured is not None
            else ""
        )
        corrupted = ctx.make_finding(
            unexplained, [], detail=detail + ".", evidence=finding.evidence, severity="error", confidence=0.6
        )
        corrupted.remediation = _CORRUPTION_FIX
        return [corrupted]
    return [finding]


_CORRUPTION_FIX = (
    "nccl-tests found wrong values: data was corrupted on a GPU or in transit (bandwidth is not what failed). Rerun "
    "all_reduce_perf -c 1 on halves of the nodes to find the one that corrupts; check its `dmesg` for Xid and "
    "`nvidia-smi nvlink -e` / `ibstat` error counters. On HPE Slingshot through the aws-ofi-nccl plugin, a NCCL "
    "build or container without the site module's FI_CXI_* and NCCL_* settings corrupts data: set them as the "
    "module does."
)


def _old_rows(rule: Rule, ctx: Context) -> list:
    """nccl-tests 2.0-2.12's result rows (no root column; a deviation, not a count, where later ones
    count wrong values). A table longer than the samples kept is judged only if its largest size is
    among them."""
    from diag.scan.facts import BusbwRow

    rows = []
    for ev, g in ctx.samples(rule, ["row_old"]):
        busbw = max(float(g["busbw1"]), float(g.get("busbw2") or 0))
        rows.append(BusbwRow(ev.order, ev.text[:300], int(g["size"]), busbw, None))
    sizes = ctx.captures(rule, "size", ["row_old"])
    if rows and sizes and max(int(x) for x in sizes) > max(r.size for r in rows):
        return []
    return rows


def _tests_hosts_gpus(ctx: Context, rule: Rule | None) -> tuple[set[str], set[str]]:
    """The hosts and GPUs nccl-tests listed ("# Using devices"), in its 2.13+ and 2.0-2.12 forms."""
    hosts, gpus = set(ctx.facts.tests_hosts), set(ctx.facts.tests_gpus)
    if rule is not None:
        for _, g in ctx.samples(rule, ["device_old"]):
            hosts.add(g["host"])
            gpus.add(g["gpu"])
    return hosts, gpus


def _port_speeds(ctx: Context, rule: Rule | None) -> list[tuple[int, float]]:
    """(ports, GB/s per port) of each host from NCCL 2.28+'s per-port "provider=... speed=<Mb/s>" lines."""
    if rule is None:
        return []
    per_host: dict[str, dict[str, float]] = {}
    for ev, g in ctx.samples(rule, ["ib_speed"]):
        host = ctx.host_for(ev) or ""
        per_host.setdefault(host, {})[f"{g['hca']}:{g['port']}"] = int(g["speed"]) / 8000
    return [(len(ports), min(ports.values())) for ports in per_host.values() if ports]


def _busbw_suspects(ctx: Context) -> list[str]:
    """What the NCCL INFO lines of the same log show that caps bandwidth (so the finding says why)."""
    hosts = ctx.facts.hosts.values()
    out = []
    tcp = [h.host for h in hosts if h.uses_socket()]
    if tcp and ctx.facts.multi_node():
        out.append(f"inter-node traffic over TCP sockets on {hosts_text(tcp)}")
    no_gdr = [h.host for h in hosts if h.plain_ib_channels and not h.gdr_channels]
    if no_gdr:
        out.append(f"no GPUDirect RDMA on {hosts_text(no_gdr)} (gdr-disabled)")
    return out


def _size_text(size: int) -> str:
    for unit, div in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if size >= div and size % div == 0:
            return f"{size // div} {unit}"
    return f"{size} B"


RDMA_FLOOR_BUSBW = 12.5  # GB/s: one 100 Gb/s port per node
RDMA_FLOOR_SOURCE = "inferred: the slowest RDMA fabric of a data-centre GPU cluster, 100 Gb/s per node"
FLOOR_MIN_SIZE = 64 << 20  # smaller messages need not reach line rate


def _expected_busbw(ctx: Context, largest_size: int = 0, rule: Rule | None = None) -> tuple[float | None, str]:
    given = getattr(ctx, "expect_busbw", None)
    if given:
        return float(given), "--expect-busbw"
    facts = ctx.facts
    tests_hosts, tests_gpus = _tests_hosts_gpus(ctx, rule)
    hosts = tests_hosts or {h for h in facts.hosts}
    ib = [h for h in facts.hosts.values() if h.hcas]
    if len(hosts) > 1 or facts.multi_node():
        if facts.hosts and any(h.uses_socket() for h in facts.hosts.values()):
            return None, ""  # TCP between nodes: tcp-fallback says why; no line rate to compare with
        rates = [(len(h.hcas), h.nic_rate_gbs) for h in ib if h.nic_rate_gbs] or _port_speeds(ctx, rule)
        if rates:
            n, rate = min(rates)
            # ~90% of line rate per rail for large all_reduce (45 GB/s per 400 Gb/s NDR rail)
            return round(n * rate * 0.9, 1), f"inferred: {n} HCAs x {rate:g} GB/s per node"
        if largest_size >= FLOOR_MIN_SIZE and any(name in gpu for gpu in tests_gpus for name, _ in NVLINK_BUSBW):
            # Nothing says what the fabric is, but data-centre GPUs across nodes sit on an RDMA fabric of
            # 100 Gb/s per node at the very least: far below that is no RDMA fabric at work (sockets, a
            # disabled plugin or hook), whatever the fabric.
            return RDMA_FLOOR_BUSBW, RDMA_FLOOR_SOURCE
        return None, ""
    for name, bw in NVLINK_BUSBW:
        if any(name in gpu for gpu in tests_gpus):
            return bw, f"inferred: NVLink on one node of {name} GPUs"
    return None, ""
