"""Glued records in pasted excerpts come apart; line numbers and large inputs are untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diag.api import diagnose_bytes
from diag.input.paste import PASTE_BYTES, unglue

GLUED = (
    b"> > [0] NCCL INFO NCCL_IB_HCA set to mlx5_9:1 [0] NCCL INFO NET/IB : No device found. "
    b"[0] NCCL INFO NET/Socket : Using [0]eth0:10.47.14.218<0> [0] NCCL INFO Using network Socket\n"
    b"RuntimeError: NCCL error: unhandled system error\n"
)


def test_glued_nccl_records_are_read_one_by_one(rules):
    report = diagnose_bytes(GLUED, rules)
    assert report.findings[0].id == "nccl-ib-hca-wrong"
    assert {e.line for f in report.findings for e in f.evidence} <= {1, 2}, "file:line still points at the paste"


def test_a_record_header_is_never_cut_from_its_host():
    line = b"slinky-1:205567:205567 [7] NCCL INFO Bootstrap : Using ib0:10.10.0.12<0>\n"
    assert unglue(line) == line


def test_a_torch_warning_glued_to_a_progress_bar_is_split():
    line = b"Tokenizing:  92%|#########2| 328986/359152 [29:58<12:05][rank1]:[W516 14:34:56.853 socket.cpp:489] x\n"
    assert b"\r[rank1]:[W516" in unglue(line)


@given(st.lists(st.sampled_from([b"[0] NCCL INFO a.", b"n1:2:3 [1] NCCL WARN b", b"x y", b" ", b"[rank3]:[W516 1 "]),
                max_size=12))  # fmt: skip
def test_ungluing_keeps_line_numbers_and_is_idempotent(parts):
    data = b" ".join(parts) + b"\n" + b"\n".join(parts)
    once = unglue(data)
    assert once.count(b"\n") == data.count(b"\n")
    assert unglue(once) == once


def test_a_large_input_is_read_as_it_is(tmp_path, rules):
    big = tmp_path / "big.log"
    big.write_bytes(b"step 1 loss 2.0\n" * (PASTE_BYTES // 16 + 1) + GLUED)
    from diag.api import diagnose

    report = diagnose([str(big)], rules=rules)
    assert "nccl-ib-hca-wrong" not in [f.id for f in report.findings]
