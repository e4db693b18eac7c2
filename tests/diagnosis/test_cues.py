"""The words of a cause name it, weakly, when its message form is one no rule knows."""

from __future__ import annotations

import pytest

from diag.api import load_rules
from diag.diagnosis.cues import CUE_ASSUMED
from diag.harness import check_examples
from tests.diagnosis.logs import diagnose, found, ids


def _by_cue(report):
    return [f for f in report.findings if CUE_ASSUMED in f.assumed]


def test_an_unknown_exception_naming_dev_shm_is_reported_as_shm_too_small(rules):
    report = diagnose(rules, ["[rank3]: RuntimeError: could not grow the segment under /dev/shm/psm2-1 to 4194304 bytes"])
    top = report.findings[0]
    assert top.id == "shm-too-small"
    assert top.severity == "error"  # the exception shows the job failed
    assert top.confidence < 0.5  # words, not a known message
    assert CUE_ASSUMED in top.assumed
    assert "/dev/shm" in top.detail
    assert top.evidence[0].rank == 3
    assert "unexplained-failure" in ids(report)  # "no known message" stays listed below it


def test_without_a_failure_in_the_logs_a_cue_is_only_a_warning(rules):
    report = diagnose(rules, ["gpu-4: shared memory segment for the cache failed to grow; retrying with a smaller one"])
    assert [(f.id, f.severity) for f in _by_cue(report)] == [("shm-too-small", "warning")]


def test_info_lines_never_name_a_cause_by_their_words(rules):
    # A working run prints these words in its INFO lines all the time.
    report = diagnose(
        rules,
        [
            "gpu-4:1:1 [0] NCCL INFO NCCL_IB_HCA set to mlx5_0:1 (error checking disabled)",
            "gpu-4:1:1 [0] NCCL INFO Channel 00 : 0[0] -> 1[1] via SHM/direct/direct, /dev/shm failures 0",
        ],
    )
    assert not _by_cue(report)


def test_a_cause_found_by_its_own_messages_is_not_second_guessed_by_words(rules):
    report = diagnose(
        rules,
        [
            "gpu-4:77:90 [2] NCCL WARN Error: failed to extend /dev/shm/nccl-Yx8sQd to 9637892 bytes",
            "[rank2]: RuntimeError: NCCL_SOCKET_IFNAME was ignored while the pmix server restarted",
        ],
    )
    assert report.findings[0].id == "shm-too-small"
    assert not _by_cue(report)


def test_the_most_specific_words_win(rules):
    # "mpi/pmix_v4" names the launcher's MPI plugin, not a PMIx run-time failure, though it holds "pmix".
    report = diagnose(rules, ["slurmstepd: error: step 12.0 cannot start: mpi/pmix_v4 was not built on this node"])
    assert report.findings[0].id == "pmix-plugin-missing"


def test_a_line_a_rule_knows_is_not_read_for_words(rules):
    # NCCL's modify_qp error names the GID index, but it is a known message; its rule decides.
    line = (
        "gpu-4:77:90 [7] NCCL WARN Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_7:1, "
        "curr state RTR, next state RTS, local GID index 3, local GID ::ffff:10.1.7.4, remote GID ::ffff:10.2.7.4"
    )
    assert not _by_cue(diagnose(rules, [line]))


def test_words_in_a_path_of_the_framework_source_name_nothing(rules):
    report = diagnose(
        rules,
        [
            "[rank7]: torch.distributed.DistBackendError: NCCL error in: "
            "/opt/pytorch/pytorch/torch/csrc/distributed/c10d/NCCLUtils.cpp:77, unhandled cuda error"
        ],
    )
    assert found(report, "unexplained-failure").severity == "error"
    assert not _by_cue(report)


def test_a_cue_word_that_is_only_a_directory_of_a_path_names_nothing(rules):
    # The batch script lives under slurmd's spool directory: the crash says nothing about slurmd.
    line = "/var/spool/slurmd/job123/slurm_script: line 12: 48812 Segmentation fault      (core dumped) ./train"
    report = diagnose(rules, [line])
    assert ids(report) == {"unexplained-failure"}
    # The same word outside a path still counts.
    assert "node-failure" in ids(diagnose(rules, ["srun: error: fatal: slurmd on gpu-3 stopped answering"]))


def test_an_echoed_compiler_command_whose_options_say_error_is_no_error_line(rules):
    # A setup step compiling a probe under /tmp: "-Werror=format-security" is a setting, not a failure.
    gcc = (
        "x86_64-linux-gnu-gcc -Wno-unused-result -DNDEBUG -g -O2 -Wall -Wformat -Werror=format-security -fPIC "
        "-c /tmp/tmphss84kbl/test.c -o /tmp/tmphss84kbl/test.o"
    )
    assert not diagnose(rules, [gcc, "iteration 10/100 | loss 2.31"]).findings
    # The same words in a compiler's own error still count.
    error = "/tmp/tmphss84kbl/test.c:3:10: error: cannot write /tmp/tmphss84kbl/test.o: No space left on device"
    assert diagnose(rules, [gcc, error]).findings


def test_a_cue_path_inside_a_source_files_location_names_nothing(rules):
    # Horovod built from a pip temporary directory logs its source locations under /tmp: no file the job uses.
    line = (
        "[0]<stderr>:[2021-02-08 09:24:59.555830: E /tmp/pip-install-7tlcippf/horovod_015e/horovod/common/operations.cc:548] "
        "Horovod background loop uncaught exception: Read error [10.0.1.246]:63386: Connection reset by peer"
    )
    assert "node-local-path" not in ids(diagnose(rules, [line]))
    # A /tmp path the message is about still names node-local storage.
    assert "node-local-path" in ids(diagnose(rules, ["ERROR: could not read the shard index under /tmp/run7/idx_3"]))


@pytest.mark.parametrize("rule_id", sorted(r.id for r in load_rules().rules if r.cues))
def test_every_cue_example_is_named_by_the_cues_alone(rules, rule_id):
    assert not [f.message() for f in check_examples(rules, [rule_id])]


def test_cue_examples_are_checked_by_test_rules(rules):
    rule = next(r for r in rules.rules if r.cues)
    broken = type(rules)([r if r is not rule else _with_cue_example(r, "RuntimeError: all is well") for r in rules.rules])
    messages = [f.message() for f in check_examples(broken, [rule.id])]
    assert messages and "cue example" in messages[0]


def _with_cue_example(rule, line):
    from dataclasses import replace

    return replace(rule, examples_cue=(line,))


def test_a_printed_setting_is_not_an_error_line_though_it_says_timeout(rules):
    # torchrun prints its launch configuration; "timeout" there is a key, not a failure.
    report = diagnose(rules, ["  rdzv_configs     : {'rank': 1, 'timeout': 900}", "  rdzv_endpoint    : 10.13.27.125:7010"])
    assert not _by_cue(report)


def test_a_symptom_the_logs_name_is_not_taken_over_by_words(rules):
    # The watchdog names the rank that fell behind; its crash line mentions shared memory, but a
    # guess from words must not become the root that explains the timeout.
    lines = [
        "[rank0]:[E1202 11:14:33.199178343 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation "
        "timeout: WorkNCCL(SeqNum=12, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600012 "
        "milliseconds before timing out.",
        "[rank1]: RuntimeError: could not grow the segment under /dev/shm/psm2-1 to 4194304 bytes",
    ]
    report = diagnose(rules, lines)
    assert "nccl-timeout" in ids(report)
    assert not _by_cue(report)


def test_another_program_s_bootstrap_is_not_nccl_s(rules):
    """Flux brokers, MPI launchers and NCCL all "bootstrap": only NCCL's names NCCL's socket interface."""
    lines = ["flux-pmi: flux_open: Invalid argument", "broker: pmi_init: operation failed", "broker: bootstrap failed",
             "srun: error: upgrade4: task 0: Exited with exit code 1"]  # fmt: skip
    report = diagnose(rules, lines)
    assert "nccl-socket-ifname" not in ids(report)
    assert report.findings[0].id == "pmix-not-used"


def test_memory_units_and_group_ids_name_no_fabric_cause(rules):
    # Cue words match ignoring case; GiB is no gIB plugin and gid=1000 no RoCE GID.
    for line in (
        "RuntimeError: worker needs 8.000000 GiB more than this node has",
        "PermissionError: [Errno 13] Permission denied: '/data/x' (uid=1000, gid=1000)",
    ):
        assert ids(diagnose(rules, [line])) == {"unexplained-failure"}, line


def test_a_cgroup_error_about_something_else_than_memory_names_no_oom(rules):
    other = ["WARN[0005] Failed to add pause process to systemd sandbox cgroup: dbus: couldn't determine address"]
    assert "job-oom" not in ids(diagnose(rules, other))
    memory = ["error: the cgroup memory limit of the step was reached, task 3 stopped"]
    assert "job-oom" in ids(diagnose(rules, memory))


def test_words_do_not_bring_back_a_cause_its_analyzer_dismissed(rules):
    # node-local-path weighed the real FileNotFoundError (the job removed that checkpoint itself); a prose
    # line naming FileNotFoundError must not name it again from its words.
    from tests.diagnosis.logs import diagnose, top

    lines = [
        "[default0]:[17:14:34] DEBUG Removing past checkpoint for step 15 (/shared/outputs/ckpt/step_15)",
        "[default1]:FileNotFoundError: [Errno 2] No such file or directory: '/shared/outputs/ckpt/step_15/trainer'",
        "  * All ranks crash with FileNotFoundError - directory already deleted by rank 0",
    ]
    top(diagnose(rules, lines), "unexplained-failure")


def test_a_command_echoed_on_an_error_line_does_not_name_a_cause_by_its_options(rules):
    line = ("Error: failed to run torchrun --nproc_per_node=4 --nnodes=2 --node_rank=1 --rdzv_backend=c10d "
            "--rdzv_endpoint=ip:29501 --rdzv_id=colossalai-default-job train.py on gpu-1648")  # fmt: skip
    assert not _by_cue(diagnose(rules, [line]))
    # The same words as the subject of the error still point at the cause.
    assert _by_cue(diagnose(rules, ["ValueError: nproc_per_node (8) is larger than the number of GPUs (4)"]))


def test_rays_disk_monitor_notice_names_no_cause_by_its_words(rules):
    line = ("(raylet) [2025-02-25 19:42:26,206 E 2097714 2097744] file_system_monitor.cc:116: /tmp/ray/session_2025-02-25 "
            "is over 95% full, available space: 88.4285 GB; capacity: 3466.18 GB. Object creation will fail if spilling "
            "is required.")  # fmt: skip
    failed = ["ImportError: flash_attn_2_cuda.cpython-39-x86_64-linux-gnu.so: undefined symbol: _ZNK3c10"]
    report = diagnose(rules, [line] + failed)
    assert not _by_cue(report) and "node-local-path" not in ids(report)
