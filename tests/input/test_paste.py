"""Glued records in pasted excerpts come apart; line numbers and large inputs are untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from diag.api import diagnose_bytes
from diag.damage import terminal_rows
from diag.input.paste import (
    PASTE_BYTES,
    dedent,
    drop_orphan_colors,
    drop_ray_repeats,
    plain_quotes,
    rejoin_banner,
    rejoin_missing_path,
    rejoin_wrapped,
    repair,
    unglue,
    unquote,
)

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


# A torchrun failure copied from a 64-column terminal: every record longer than the window is cut
# into rows of exactly 80 characters.
_UNWRAPPED = (
    b"[rank3]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275,"
    b" invalid usage, NCCL version 2.20.5\n"
    b"[rank3]: ncclInvalidUsage: This usually reflects invalid usage of NCCL library.\n"
    b"[rank3]: Last error:\n"
    b"[rank3]: Duplicate GPU detected : rank 3 and rank 2 both on CUDA device 41000\n"
)


def test_records_a_terminal_cut_at_its_width_are_read_whole(rules):
    wrapped = terminal_rows(_UNWRAPPED, 64)
    assert max(len(r) for r in wrapped.split(b"\n")) == 64
    whole = diagnose_bytes(_UNWRAPPED, rules)
    report = diagnose_bytes(wrapped, rules)
    assert [f.id for f in report.findings][:1] == [f.id for f in whole.findings][:1] == ["nccl-duplicate-gpu"]
    rows = wrapped.split(b"\n")
    for ev in report.findings[0].evidence:
        assert rows[ev.line - 1].startswith(ev.text[:40].encode()), "file:line points at the row the user has"


def test_rejoining_gives_back_each_record_on_its_first_row():
    wrapped = terminal_rows(_UNWRAPPED * 3, 72)
    rejoined = rejoin_wrapped(wrapped)
    assert rejoined.count(b"\n") == wrapped.count(b"\n")
    assert [row for row in rejoined.split(b"\n") if row] == [row for row in (_UNWRAPPED * 3).split(b"\n") if row]


def test_a_log_with_lines_of_equal_length_is_not_rejoined():
    log = b"".join(b"n%d:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read aa\n" % i for i in range(3))
    log += b"n1:1:1 [0] NCCL INFO Connected all rings\n" + b"RuntimeError: boom\n"
    assert rejoin_wrapped(log) == log


def test_the_same_line_printed_by_two_processes_is_not_read_as_one_cut_record():
    line = b"/opt/venv/bin/python3: can't open file '/home/u/proj/generate_with_pipeline.py': [Errno 2] No such file or directory"
    log = line + b"\n" + line + b"\n" + b"E0513 12:59:46.391000 395757 api.py:874] failed (exitcode: 2) local_rank: 0\n"
    assert rejoin_wrapped(log) == log


def test_markdown_around_each_line_is_taken_off(rules):
    plain = b"srun: error: gpu-a12: task 3: Out Of Memory\nslurmstepd: error: Detected 1 oom_kill event in StepId=77.0.\n"
    marked = b"".join(b"- `" + line + b"`\n" for line in plain.splitlines())
    marked += b"> 1. ``slurmstepd: error: Detected 1 oom_kill event in StepId=78.0.``\r\n"
    assert unglue(marked).splitlines()[:2] == plain.splitlines()
    assert unglue(marked).split(b"\n")[2] == b"slurmstepd: error: Detected 1 oom_kill event in StepId=78.0.\r"
    assert diagnose_bytes(marked, rules).findings[0].id == diagnose_bytes(plain, rules).findings[0].id == "job-oom"


@given(st.lists(st.binary(max_size=120), max_size=30), st.integers(min_value=60, max_value=130))
def test_rejoining_never_loses_a_byte_or_a_line_number(rows, width):
    data = terminal_rows(b"\n".join(rows), width)
    out = rejoin_wrapped(data)
    assert out.count(b"\n") == data.count(b"\n")
    assert out.replace(b"\n", b"") == data.replace(b"\n", b"")


def test_one_record_cut_once_at_a_standard_width_is_read_whole(rules):
    line = b"slurmstepd: error: *** JOB 1449736 ON phoenix-07 CANCELLED AT 2023-12-03T12:47:09 DUE TO TIME LIMIT ***"
    cut = b"```\n" + terminal_rows(line, 80) + b"\n```\n"
    assert cut.count(b"\n") == 4, "one row of 80 and its rest"
    report = diagnose_bytes(cut, rules)
    assert report.findings[0].id == "job-time-limit"
    assert report.findings[0].evidence[0].line == 2


def test_a_single_row_of_an_unusual_width_is_left_alone():
    log = b"x" * 97 + b"\nrest of something\n"
    assert rejoin_wrapped(log) == log


def test_the_rest_of_a_cut_that_looks_like_an_srun_label_is_rejoined_where_no_row_is_labelled():
    rows = [
        b"submitit WARNING (2022-07-12 04:18:45,881) - Caught signal SIGHUP on learnfair02",
        b"93: this job is preempted.",
        b"submitit INFO (2022-07-12 04:18:45,912) - Requeued job 60601445 (3 remaining tim",
        b"eouts)",
    ]
    out = rejoin_wrapped(b"\n".join(rows)).split(b"\n")
    assert out[0].endswith(b"learnfair0293: this job is preempted.") and out[1] == b""
    labelled = [b"0: " + rows[0][3:], b"1: srun label of its own", *rows[:2]]
    assert rejoin_wrapped(b"\n".join(labelled)).split(b"\n")[3] == rows[1], "labels elsewhere: a label"


def test_indentation_every_row_shares_is_taken_off_and_its_own_kept():
    log = b"    Traceback (most recent call last):\n\n      File \"x.py\", line 1\n\t\n    OSError: boom\r\n"
    assert dedent(log) == b"Traceback (most recent call last):\n\n  File \"x.py\", line 1\n\t\nOSError: boom\r\n"
    assert dedent(b"  a\nb\n") == b"  a\nb\n", "a row without it: nothing is shared"
    assert dedent(b"\t a\n\t\tb\n") == b" a\n\tb\n"


def test_an_indented_paste_is_read_as_the_log_it_quotes(rules):
    plain = b"srun: error: gpu-a12: task 3: Out Of Memory\nslurmstepd: error: Detected 1 oom_kill event in StepId=77.0.\n"
    indented = b"".join(b"    " + line + b"\n" for line in plain.splitlines())
    assert diagnose_bytes(indented, rules).findings[0].id == diagnose_bytes(plain, rules).findings[0].id == "job-oom"


def test_typographic_quotes_read_as_ascii_with_the_same_line_numbers():
    text = "FileNotFoundError: [Errno 2] No such file or directory: \u2018/tmp/ckpt/latest\u2019\n\u201cok\u201d\n"
    out = plain_quotes(text.encode())
    assert out == b"FileNotFoundError: [Errno 2] No such file or directory: '/tmp/ckpt/latest'\n\"ok\"\n"
    assert repair(text.encode()).count(b"\n") == 2


@given(st.lists(st.binary(max_size=80), max_size=20), st.sampled_from([b" ", b"    ", b"\t", b"  \t"]))
def test_repairing_keeps_every_line_number(rows, indent):
    data = b"\n".join(indent + row for row in rows)
    assert repair(data).count(b"\n") == data.count(b"\n")


def test_ray_s_repeat_count_is_not_part_of_the_record(rules):
    line = b"(RayTrainWorker pid=954, ip=10.67.132.202) w-p5:954:3133 [6] NCCL INFO Using network Socket [repeated 15x across cluster]\n"
    assert drop_ray_repeats(line) == line.replace(b" [repeated 15x across cluster]", b"")
    assert drop_ray_repeats(b"the text [repeated 2x across cluster] goes on\n").count(b"repeated") == 1, "only at a line's end"


def test_a_slurm_banner_wrapped_before_its_reason_is_read_whole(rules):
    paste = (
        b"This job is running on:\ngra533\nslurmstepd: error: *** JOB 38193 ON gra533 CANCELLED AT 2017-07-02T16:35:48\n"
        b"DUE TO TIME LIMIT ***\n"
    )
    fixed = rejoin_banner(paste)
    assert fixed.count(b"\n") == paste.count(b"\n")  # every file:line still points at the user's row
    assert b"CANCELLED AT 2017-07-02T16:35:48 DUE TO TIME LIMIT ***\n\n" in fixed
    finding = diagnose_bytes([paste], rules).findings[0]
    assert finding.id == "job-time-limit" and finding.evidence[0].line == 3
    # A banner that is whole, or a "DUE TO" row after something else, is left alone.
    whole = b"slurmstepd: error: *** JOB 1 ON n0 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***\nDUE TO ***\n"
    assert rejoin_banner(whole) == whole


def test_a_missing_path_wrapped_onto_its_own_row_is_read_with_its_error(rules):
    paste = (
        b"nodes.cn-n001 [stderr] [rank11]: FileNotFoundError: No such file or directory: \n"
        b'"/tmp/workspace/cache/huggingface/hub/models--sd-2/unet/diffusion_pytorch_model.safetensors"\n'
    )
    fixed = rejoin_missing_path(paste)
    assert fixed.count(b"\n") == paste.count(b"\n")  # the path's row stays, empty
    assert fixed.splitlines()[0].endswith(b'directory: "/tmp/workspace/cache/huggingface/hub/models--sd-2/unet/'
                                          b'diffusion_pytorch_model.safetensors"')
    finding = diagnose_bytes([paste], rules).findings[0]
    assert finding.id == "node-local-path" and finding.evidence[0].line == 1
    # A row after the error that is more than a path (the next record) is its own.
    other = b"FileNotFoundError: No such file or directory: \n/tmp/x was removed by the epilog\n"
    assert rejoin_missing_path(other) == other


def test_full_width_signs_of_a_cjk_input_method_read_as_ascii(rules):
    paste = "OPAL ERROR\uff1a Not initialized in  file pmix3x_client.c at line 113\nAn error occurred in MPI_Init_thread\n"
    assert plain_quotes(paste.encode()).startswith(b"OPAL ERROR: Not initialized")
    assert plain_quotes("\uff08rank\uff11\uff09".encode()) == b"(rank1)"
    assert plain_quotes("\u4f60\u597d".encode()) == "\u4f60\u597d".encode(), "other CJK text is left alone"
    assert diagnose_bytes([paste.encode()], rules).findings[0].id == "pmix-not-used"


def test_a_paste_quoted_in_a_reply_is_read_as_the_log_it_quotes(rules):
    plain = b"srun: error: gpu-a12: task 3: Out Of Memory\nslurmstepd: error: Detected 1 oom_kill event in StepId=77.0.\n"
    quoted = b"".join(b"> " + line + b"\n" for line in plain.splitlines())
    assert unquote(quoted) == plain and unquote(b">> a\n>\n> b") == b"a\n\nb"
    assert diagnose_bytes(quoted, rules).findings[0].id == "job-oom"
    # A '>' on some rows only (a shell's continuation prompt, a program's arrow) is the log's own.
    assert unquote(b"$ for i in 1 2\n> do echo $i; done\n") == b"$ for i in 1 2\n> do echo $i; done\n"


def test_a_task_cgroup_binding_error_of_a_step_that_ran_is_no_failure(rules):
    log = [
        "> slurmstepd-eureka: error: task/cgroup: hwloc_get_obj_below_by_type() failing, task/affinity plugin may be "
        "required to address bug fixed in HWLOC version 1.11.5",
        "> slurmstepd-eureka: error: task/cgroup: task[0] unable to set taskset '0x0'",
    ]
    assert not [f for f in diagnose_bytes(("\n".join(log) + "\n").encode(), rules).findings if f.severity == "error"]


_SACCT = (
    b"JobID           JobName  Partition    Account  AllocCPUS      State ExitCode\n"
    b"------------ ---------- ---------- ---------- ---------- ---------- --------\n"
    b"4137752           train        gpu     proj01         64  PREEMPTED      0:0\n"
    b"4137752.bat+      batch                proj01         32  CANCELLED     0:15\n"
    b"4137752.0        python                proj01         64  CANCELLED     0:15\n"
)


def test_a_pasted_sacct_table_keeps_its_rows(rules):
    # Every row of a fixed-width table is as wide as the widest: that is the program's padding, not a cut.
    assert rejoin_wrapped(_SACCT) == _SACCT
    report = diagnose_bytes(_SACCT, rules)
    assert [f.id for f in report.findings][:1] == ["preempted"]
    assert report.findings[0].evidence[0].line == 3


def test_a_record_cut_after_a_table_is_still_rejoined():
    record = b"host1:1:1 [0] NCCL INFO NET/IB : No device found. Falling back to the socket transport now"
    wrapped = _SACCT + b"\n" + record[:76] + b"\n" + record[76:] + b"\n"
    rows = rejoin_wrapped(wrapped).split(b"\n")
    assert record in rows and rows[:5] == _SACCT.split(b"\n")[:5]


def test_a_slurm_error_quoted_inline_in_a_sentence_is_read_as_its_record(rules):
    prose = (
        "When the stage ran, the controller timed out: `srun: error: Unable to confirm allocation for job 7: "
        "Socket timed out on send/recv operation` followed by `Expired or invalid job 7`.\n"
    )
    report = diagnose_bytes(prose.encode(), rules)
    assert [f.id for f in report.findings][:1] == ["unexplained-failure"]
    assert report.findings[0].evidence[0].line == 1
    # A command in inline code is no record: only an error or fatal record is split off.
    assert unglue(b"I ran `srun --mpi=pmix -n 2 ./a.out` twice") == b"I ran `srun --mpi=pmix -n 2 ./a.out` twice"


def test_colour_codes_that_lost_their_escape_byte_are_dropped_where_a_reset_shows_them(rules):
    line = (
        "Analysis failed, execution log error: [31mFATAL:  [0m container creation failed: mount error: can't mount "
        "image /proc/self/fd/8: failed to mount squashfs filesystem: invalid argument\n"
    )
    report = diagnose_bytes(line.encode(), rules)
    assert [f.id for f in report.findings][:1] == ["container-runtime-error"]
    # Without the reset code nothing is read as a colour: "[2m 3s]" is a duration, "[mpiexec@n1]" Hydra's prefix.
    kept = b"took [2m 3s] here\n[mpiexec@n1] HYDU_create_process (utils/launch/launch.c:75): execvp error\n"
    assert drop_orphan_colors(kept) == kept
    # Sequences that kept their ESC byte are framing's to strip, whole.
    whole = b"node-8:1:1 [0] NCCL INFO \x1b[31mUsing network Socket\x1b[0m\n"
    assert drop_orphan_colors(whole) == whole


def test_help_box_borders_are_not_rows_a_terminal_cut():
    # Open MPI's help boxes are framed by 74 dashes: the widest rows of the paste, yet no record was cut there.
    border = b"-" * 74
    rows = [
        border,
        b"The SLURM process starter for OpenMPI was unable to locate a",
        b'usable "srun" command in its path. Please check your path',
        b"and try again.",
        border,
        border,
        b"An internal error has occurred in ORTE:",
        b"",
        b"[[56714,0],0] FORCE-TERMINATE AT (null):1 - error plm_slurm_module.c(471)",
        border,
    ]
    data = b"\n".join(rows) + b"\n"
    assert rejoin_wrapped(data) == data
