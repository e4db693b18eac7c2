from __future__ import annotations

from diag.hostlist import expand


def test_slurm_hostlists_expand():
    assert expand("slinky-[1-3]") == ["slinky-1", "slinky-2", "slinky-3"]
    assert expand("n[01-02,7],gpu5") == ["n01", "n02", "n7", "gpu5"]
    assert expand("plain") == ["plain"]


def test_malformed_lists_are_kept_verbatim_and_bounded():
    assert expand("a[x]") == ["a[x]"]
    assert len(expand("n[0-99999999]")) == 4096


def test_placeholders_users_paste_for_host_names_name_no_host():
    from diag.hostlist import looks_redacted

    for placeholder in ("xxxxx", "XXX", "***", "xxxx-node", "node-xxx", "<hostname>", "[REDACTED]", "hostname"):
        assert looks_redacted(placeholder), placeholder
    for host in ("gpu-a12", "node001", "dgx-h100-07", "x1000c0s0b0n0", "xe8640-3", "slinky-0", "box"):
        assert not looks_redacted(host), host
