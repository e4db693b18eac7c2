"""Line feeds are counted the same with and without NumPy."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from diag.input import lines


@settings(max_examples=100, deadline=None)
@given(data=st.binary(max_size=2000), cuts=st.lists(st.integers(0, 2000), max_size=20))
def test_counts_before_each_start_and_in_all(data, cuts):
    starts = sorted(min(c, len(data)) for c in cuts)
    expected = ([data.count(b"\n", 0, s) for s in starts], data.count(b"\n"))
    assert lines.count_newlines(data, starts) == expected
    original = lines._NUMPY_MIN_BLOCK
    try:
        lines._NUMPY_MIN_BLOCK = 0  # the NumPy path, where installed
        assert lines.count_newlines(data, starts) == expected
    finally:
        lines._NUMPY_MIN_BLOCK = original


def test_the_silent_tail_of_a_paste_is_its_blank_fence_and_prompt_lines():
    from diag.input.lines import trailing_silent_lines

    assert trailing_silent_lines(b"MPI startup(): PMI server not found.\n```\n\n[user@login01 ~]$ \n") == (3, False)
    assert trailing_silent_lines(b"a\n3: \n> ```") == (2, False), "an srun label or a quote before it says nothing either"
    assert trailing_silent_lines(b"\n  \n") == (2, True)
    assert trailing_silent_lines(b"") == (0, True)
    assert trailing_silent_lines(b"a\n$ srun hostname\n") == (0, False), "a prompt with a command says something"


@given(st.lists(st.sampled_from([b"", b"  ", b"```", b"> ", b"...", b"[u@h ~]$ ", b"x", b"step 1", b"3: "]), max_size=40),
       st.booleans())  # fmt: skip
def test_the_silent_tail_counts_what_a_line_by_line_reading_counts(rows, terminated):
    from diag.input.lines import _says_nothing, trailing_silent_lines

    block = b"\n".join(rows) + (b"\n" if terminated and rows else b"")
    lines = block.split(b"\n")[:-1] if block.endswith(b"\n") else (block.split(b"\n") if block else [])
    silent = 0
    for line in reversed(lines):
        if not _says_nothing(line):
            break
        silent += 1
    assert trailing_silent_lines(block) == (silent, silent == len(lines))


def test_a_block_of_a_million_newlines_is_all_silent_tail():
    from diag.input.lines import trailing_silent_lines

    assert trailing_silent_lines(b"\n" * 1_000_000) == (1_000_000, True)
