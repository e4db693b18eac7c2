"""The short path of a communicator line through the facts gives what the general one gives."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diag.input.framing import Frame
from diag.scan.facts import FACT_SIGNATURES, Facts

COMM_RANK = next(sig for sig in FACT_SIGNATURES if sig.name == "comm_rank")


@given(
    lines=st.lists(
        st.tuples(
            st.sampled_from(["node-0", "node-1", "node-2"]),
            st.integers(1, 4),
            st.integers(0, 40),
            st.sampled_from([8, 16, 64]),
            st.sampled_from([("nccl", "INFO"), ("nccl", "WARN"), ("slurm", None), (None, None), ("ucx", "INFO")]),
        ),
        max_size=30,
    )
)
def test_a_rank_line_observed_without_a_frame_sets_the_same_facts(lines):
    """Ranks moving between processes and hosts, several emitters and levels: every fact (ranks of
    processes, hosts of ranks, a host's ranks, its first line, nranks, NCCL INFO seen) is the same."""
    general, short = Facts(), Facts()
    for n, (host, pid, rank, nranks, (emitter, level)) in enumerate(lines):
        groups = {"rank": str(rank), "nranks": str(nranks), "dev": "0"}
        text = f"{host}:{pid}:{pid} [0] NCCL {level} comm 0x1 rank {rank} nranks {nranks} cudaDev 0"
        frame = Frame(text, text, host, pid, None, None, None, level, None, emitter)
        general.observe_frame(frame, (0, n))
        general.observe(COMM_RANK, groups, frame, (0, n))
        short.observe_rank_line(host, pid, emitter, level, groups, (0, n))
    assert short == general
