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
