"""The analyzers' toolbox (diag/diagnosis/context.py): which evidence lines a finding shows, and how it lists hosts."""

from __future__ import annotations

from diag.diagnosis.context import MAX_EVIDENCE_SHOWN, hosts_text, pick_evidence
from diag.evidence import Evidence
from tests.diagnosis.logs import diagnose, found


def line(n: int, host: str | None = None, rank: int | None = None) -> Evidence:
    return Evidence(path="job.err", line=n, text=f"line {n}", order=(0, n), host=host, rank=rank)


def test_pick_evidence_shows_the_first_line_of_every_host_even_when_one_host_floods():
    # 50 lines from the first node, then one each from two others: a plain "first 8" would hide them.
    flood = [line(n, host="slinky-0") for n in range(1, 51)]
    late = [line(60, host="slinky-7"), line(70, host="slinky-12")]
    chosen = pick_evidence(flood + late)
    assert len(chosen) == MAX_EVIDENCE_SHOWN
    assert {e.host for e in chosen} == {"slinky-0", "slinky-7", "slinky-12"}
    assert [e.line for e in chosen] == sorted(e.line for e in chosen)  # still in file order
    assert chosen[0].line == 1  # each host's first line, not an arbitrary one


def test_pick_evidence_tells_ranks_of_one_host_apart_and_drops_duplicates():
    same = line(5, host="vm", rank=0)
    chosen = pick_evidence([same, same, line(6, host="vm", rank=0), line(90, host="vm", rank=1)])
    assert [e.line for e in chosen] == [5, 6, 90]


def test_hosts_text_sorts_naturally_and_counts_the_rest():
    hosts = [f"slinky-{n}" for n in (10, 2, 1, 33, 3, 20, 4, 100)]
    assert hosts_text(hosts) == "slinky-1, slinky-2, slinky-3, slinky-4, slinky-10, slinky-20 (+2 more)"
    assert hosts_text(["n10", "n9"]) == "n9, n10"


def test_a_finding_over_many_nodes_lists_them_in_natural_order(rules):
    # The same shape through the pipeline: Finding.hosts is what the formats print.
    lines = [
        f"slinky-{n}:13:13 [0] transport/net_ib.cc:201 NCCL WARN NET/IB : Unable to open device mlx5_0"
        for n in (10, 2, 1)
    ]
    assert found(diagnose(rules, lines), "ib-devices-not-mounted").hosts == ["slinky-1", "slinky-2", "slinky-10"]


def test_evidence_of_records_glued_on_one_line_comes_in_one_order_whatever_the_hash_seed():
    # Two records pasted onto one physical line share its line number; a set must not decide their order.
    from diag.diagnosis.context import pick_evidence
    from diag.evidence import Evidence

    a = Evidence("x.log", 3, "NCCL_IB_HCA set to mlx5_0:1", (0, 3))
    b = Evidence("x.log", 3, "NET/IB : No device found.", (0, 3))
    assert pick_evidence([a, b]) == pick_evidence([b, a]) == [a, b]
