from __future__ import annotations

from diag.hostlist import expand


def test_slurm_hostlists_expand():
    assert expand("slinky-[1-3]") == ["slinky-1", "slinky-2", "slinky-3"]
    assert expand("n[01-02,7],gpu5") == ["n01", "n02", "n7", "gpu5"]
    assert expand("plain") == ["plain"]


def test_malformed_lists_are_kept_verbatim_and_bounded():
    assert expand("a[x]") == ["a[x]"]
    assert len(expand("n[0-99999999]")) == 4096
