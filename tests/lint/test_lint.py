"""slurmdiag lint: a script's pitfalls as findings with the diagnosis' cause ids, file:line evidence,
the same formats and exit codes; a site profile turns "may be wrong" into "is wrong"."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from diag.catalog.load import load_rules
from diag.cli import cli
from diag.lint import lint_text
from diag.lint.checks import CHECKS, check_names
from diag.lint.profile import ProfileError, load_profile
from diag.lint.script import parse_script, time_minutes

FIXTURES = Path(__file__).parent / "fixtures"
GOOD = FIXTURES / "good-pyxis-torchrun.sbatch"
BAD = FIXTURES / "bad-multinode.sbatch"
SITE = FIXTURES / "site.yaml"
RULES = load_rules()


def lint(body: str, *overrides: str, profile: Path | None = None) -> dict[str, dict]:
    text = "#!/bin/bash\n" + textwrap.dedent(body).lstrip("\n")
    report = lint_text("job.sbatch", text, RULES, overrides, load_profile(str(profile)) if profile else None)
    return {f["id"]: f for f in report.to_json()["findings"]}


def run(*args: str):
    return CliRunner().invoke(cli, list(args), catch_exceptions=False)


def test_every_check_is_used_by_one_rule_and_every_rule_check_exists():
    used = [r.lint.check for r in RULES.rules if r.lint]
    assert sorted(used) == sorted(CHECKS)
    assert check_names(RULES.rules) == []


def test_correct_multinode_pyxis_torchrun_script_is_silent():
    for profile in ([], ["--profile", str(SITE)]):
        result = run("lint", *profile, str(GOOD), "--format", "json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.output)["findings"] == []


def test_bad_script_names_each_cause_at_its_line_and_exits_1():
    result = run("lint", str(BAD), "--format", "json")
    assert result.exit_code == 1
    found = {f["id"]: f for f in json.loads(result.output)["findings"]}
    lines = BAD.read_text().splitlines()
    expect = {
        "nccl-socket-ifname": "NCCL_SOCKET_IFNAME=docker0",
        "nccl-ib-disabled": "NCCL_IB_DISABLE=1",
        "rendezvous-failure": "MASTER_ADDR=localhost",
        "port-in-use": "MASTER_PORT=29500",
        "ib-devices-not-mounted": "--container-image",
        "pmix-not-used": "osu_allreduce_mpi",
        "job-time-limit": "-t 2-00:00:00",
        "node-local-path": "CKPT=/dev/shm/ckpt",
        "world-size-mismatch": "srun",
    }
    assert set(found) == set(expect)
    for cid, text in expect.items():
        ev = found[cid]["evidence"][0]
        assert ev["path"].endswith("bad-multinode.sbatch")
        assert text in lines[ev["line"] - 1], (cid, ev)
    assert found["port-in-use"]["role"] == "advice" and found["port-in-use"]["severity"] == "info"
    assert found["job-time-limit"]["severity"] == "info"
    assert found["rendezvous-failure"]["severity"] == "error"


def test_profile_turns_may_be_wrong_into_is_wrong():
    without = {f["id"]: f for f in json.loads(run("lint", str(BAD), "--format", "json").output)["findings"]}
    result = run("lint", "--profile", str(SITE), str(BAD), "--format", "json")
    with_site = {f["id"]: f for f in json.loads(result.output)["findings"]}
    for cid in ("ib-devices-not-mounted", "nccl-ib-disabled", "pmix-not-used"):
        assert without[cid]["severity"] == "warning" and without[cid]["assumed"]
        assert with_site[cid]["severity"] == "error" and not with_site[cid]["assumed"]
        assert with_site[cid]["confidence"] > without[cid]["confidence"]


def test_profile_only_checks_hca_nic_plugin_and_local_mount():
    body = """
        #SBATCH --nodes=2
        export NCCL_IB_HCA=mlx5_7,mlx5_0
        export NCCL_SOCKET_IFNAME=eth
        srun --mpi=pmix_v3 ./hello_mpi
        srun python train.py --save /raid/ckpt
    """
    assert not {"nccl-ib-hca-wrong", "nccl-socket-ifname", "pmix-plugin-missing"} & set(lint(body))
    assert lint(body)["node-local-path"]["severity"] == "warning"  # /raid: usually local, not sure
    found = lint(body, profile=SITE)
    assert "names mlx5_7, not among" in found["nccl-ib-hca-wrong"]["detail"]  # mlx5_0 exists
    assert found["nccl-socket-ifname"]["severity"] == "error"
    assert "pmix_v3" in found["pmix-plugin-missing"]["detail"]
    assert found["node-local-path"]["severity"] == "error"
    # NCCL's prefix match: mlx5 names every mlx5_N; '^' excludes and is never wrong
    assert "nccl-ib-hca-wrong" not in lint("#SBATCH -N 2\nexport NCCL_IB_HCA=mlx5\n", profile=SITE)
    assert "nccl-ib-hca-wrong" not in lint("#SBATCH -N 2\nexport NCCL_IB_HCA=^mlx5_9\n", profile=SITE)
    assert "nccl-ib-hca-wrong" in lint("#SBATCH -N 2\nexport NCCL_IB_HCA==mlx5\n", profile=SITE)


def test_single_node_job_is_not_held_to_multi_node_rules():
    body = """
        #SBATCH --nodes=1
        export NCCL_SOCKET_IFNAME=lo
        export MASTER_ADDR=127.0.0.1
        srun --container-image=img torchrun --nproc-per-node=4 t.py --output_dir /tmp/out
    """
    assert not {"nccl-socket-ifname", "rendezvous-failure", "ib-devices-not-mounted", "node-local-path"} & set(
        lint(body)
    )
    # ... but the command line wins over #SBATCH, as in sbatch
    multi = lint(body, "--nodes=2")
    assert {"nccl-socket-ifname", "rendezvous-failure", "ib-devices-not-mounted", "node-local-path"} <= set(multi)


def test_unknown_values_stay_unknown():
    body = """
        #SBATCH --nodes=$NODES
        export NCCL_SOCKET_IFNAME=$IFACE
        export MASTER_ADDR=$(hostname)
        export MASTER_PORT=$PORT
        srun --container-image=img --container-mounts=$MOUNTS torchrun --nnodes=$N t.py --save $OUT
    """
    assert lint(body) == {}
    # a node count the script does not fix: the localhost address is a warning, with the assumption said
    found = lint("#SBATCH --nodes=$NODES\nexport MASTER_ADDR=localhost\n")
    assert found["rendezvous-failure"]["severity"] == "warning"
    assert any("node" in a for a in found["rendezvous-failure"]["assumed"])


def test_literal_variables_are_followed_and_continuations_joined():
    body = """
        #SBATCH -N 2
        OUT=/dev/shm/run
        srun \\
          torchrun --nnodes 2 --nproc-per-node 8 \\
            train.py --output-dir=$OUT/x
    """
    found = lint(body)
    assert "/dev/shm/run/x" in found["node-local-path"]["detail"]
    assert found["node-local-path"]["evidence"][0]["line"] == 6  # the continuation line that names it


def test_torchrun_layout_checks():
    assert "world-size-mismatch" in lint(
        "#SBATCH -N 2\ntorchrun --nnodes=2 --nproc-per-node=8 t.py\n"
    )  # not under srun
    assert "world-size-mismatch" in lint("#SBATCH -N 2 --ntasks-per-node=8\nsrun torchrun --nnodes=2 t.py\n")
    assert "world-size-mismatch" in lint(
        "#SBATCH -N 2 --gpus-per-node=4\nsrun torchrun --nnodes=2 --nproc_per_node=8 t.py\n"
    )
    assert (
        lint(
            "#SBATCH -N 2 --gpus-per-node=8\nsrun -N 2 python -m torch.distributed.run --nnodes=2 --nproc-per-node=8 t.py\n"
        )
        == {}
    )
    assert lint("#SBATCH -N 2\nsrun torchrun --nnodes=1:4 t.py\n") == {}  # elastic range


def test_mpi_wiring():
    assert "pmix-not-used" in lint("#SBATCH -N 2\nsrun python -m mpi4py app.py\n")
    assert "pmix-not-used" not in lint("#SBATCH -N 2\nsrun --mpi=pmix_v4 ./xhpl\n")
    assert "pmix-not-used" not in lint("#SBATCH -N 2\nexport SLURM_MPI_TYPE=pmix\nsrun ./xhpl\n")
    assert "pmix-not-used" not in lint("#SBATCH -N 2\nsrun python train.py\n")
    assert lint("#SBATCH -N 2\nsrun --mpi=none ./osu_bw\n")["pmix-not-used"]["severity"] == "error"


def test_time_limit_advice_needs_a_long_job_without_a_hook():
    assert "job-time-limit" in lint("#SBATCH --time=5:00:00\nsrun x\n")
    assert "job-time-limit" not in lint("#SBATCH --time=3:59:00\nsrun x\n")
    assert "job-time-limit" not in lint("#SBATCH --time=1-00:00:00\ntrap 'save' SIGUSR1\nsrun x\n")
    assert "job-time-limit" not in lint("#SBATCH --time=1-00:00:00\n#SBATCH --signal=B:USR1@300\n")
    assert time_minutes("1-02:30") == 1590 and time_minutes("90") == 90 and time_minutes("UNLIMITED") == float("inf")


def test_directives_after_the_first_command_are_ignored_like_sbatch():
    script = parse_script("s", "#!/bin/bash\n#SBATCH -N 2\necho hi\n#SBATCH -N 8\n")
    assert script.directives["nodes"].value == "2"


def test_explain_shows_detection_and_prevention():
    result = run("explain", "ib-devices-not-mounted")
    assert "Prevent (slurmdiag lint, check container_ib_mounts)" in result.output
    assert "Signatures:" in result.output


def test_errors_exit_2():
    assert run("lint", "/nonexistent/job.sbatch").exit_code == 2
    assert run("lint", "--profile", "/nonexistent.yaml", str(GOOD)).exit_code == 2


def test_bad_profile_is_one_line(tmp_path):
    bad = tmp_path / "site.yaml"
    bad.write_text("hcas: mlx5_0\n")
    with pytest.raises(ProfileError, match="hcas must be a list"):
        load_profile(str(bad))


def test_every_format_renders_a_lint_report():
    from diag.formats import FORMATS

    for fmt in FORMATS:
        result = run("lint", str(BAD), "--format", fmt)
        assert result.exit_code == 1, (fmt, result.output)
        assert result.output.strip()


def test_rule_lint_and_follow_fields_are_validated():
    from diag.catalog.load import parse_rule
    from diag.catalog.model import RuleError

    base = {
        "id": "x-demo", "title": "t", "severity": "error", "role": "root", "description": "d",
        "signatures": [{"name": "s", "regex": "some literal"}], "remediation": "r",
        "examples": {"match": ["some literal"]},
    }  # fmt: skip
    rule = parse_rule({**base, "lint": {"check": "no_such_check", "text": "do it"}, "follow": True}, "r.yaml")
    assert rule.follow is True and rule.lint.text == "do it"
    assert "no lint check named 'no_such_check'" in check_names([rule])[0]
    with pytest.raises(RuleError, match="lint.text"):
        parse_rule({**base, "lint": {"check": "ib_hca"}}, "r.yaml")
    with pytest.raises(RuleError, match="follow"):
        parse_rule({**base, "follow": "yes"}, "r.yaml")


def test_several_scripts_one_report_each(tmp_path):
    result = run("lint", str(GOOD), str(BAD), "--format", "json")
    assert result.exit_code == 1
    reports = json.loads(result.output)
    assert [len(r["findings"]) > 0 for r in reports] == [False, True]
    assert run("lint", str(GOOD), str(GOOD)).exit_code == 0


@settings(max_examples=300, deadline=None)
@given(
    st.text(
        alphabet=st.sampled_from(list("#SBATCH -N2=$(){}\"'\\\n;&|srun torchrun exportNCCL_/tmp:lo,^")), max_size=300
    )
)
def test_any_text_is_read_without_crashing(text):
    report = lint_text("x.sbatch", text, RULES)
    for finding in report.findings:
        assert all(0 <= e.line <= text.count("\n") + 1 for e in finding.evidence)


def test_program_of_a_script_that_loads_mpi_may_be_mpi():
    body = "#SBATCH -N 4\nmodule load openmpi/4.1.5\nsrun --ntasks-per-node=8 ./lulesh-cuda -s 120\nsrun hostname\n"
    found = lint(body, profile=SITE)["pmix-not-used"]
    assert found["severity"] == "warning" and "lulesh-cuda" in found["detail"] and found["assumed"]
    assert "pmix-not-used" not in lint("#SBATCH -N 4\nsrun ./lulesh-cuda\n")  # no sign of MPI at all


def test_lab_checkpoint_in_tmp_script():
    """The Slurm lab's ckpt-tmp job (tests/integration): /tmp/ckpt-$SLURM_JOB_ID.pt written on one node."""
    body = '#SBATCH --output=%x-%j.out\nCKPT=/tmp/ckpt-$SLURM_JOB_ID.pt\nsrun --nodes=1 bash -c "save $CKPT"\n'
    found = lint(body, "--nodes=2", "--ntasks-per-node=1")
    assert found["node-local-path"]["severity"] == "error" and "/tmp/ckpt-" in found["node-local-path"]["detail"]
    assert lint(body) == {}  # one node: /tmp is fine


def test_container_image_cut_at_hash_in_a_directive():
    found = lint("#SBATCH -N 2\n#SBATCH --container-image=nvcr.io#nvidia/pytorch:24.05-py3\nsrun python t.py\n")
    cut = found["container-import-failure"]
    assert cut["severity"] == "error" and cut["evidence"][0]["line"] == 3
    assert "--container-image=nvcr.io'" in cut["detail"]
    # on the srun line the shell keeps it; a comment after a space is a comment
    assert lint("#SBATCH -N 1\nsrun --container-image=nvcr.io#nvidia/pytorch:24.05-py3 python t.py\n") == {}
    assert lint("#SBATCH -N 1 # one node\n") == {}


def test_nccl_debug_volume_advice():
    assert lint("#SBATCH -N 16\nexport NCCL_DEBUG=INFO\n")["nccl-debug-verbose"]["severity"] == "info"
    assert "nccl-debug-verbose" in lint("#SBATCH -N 2\nexport NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=ALL\n")
    assert "nccl-debug-verbose" in lint("export NCCL_DEBUG=TRACE\n")
    assert lint("#SBATCH -N 2\nexport NCCL_DEBUG=INFO\n") == {}


def test_here_document_bodies_are_data():
    body = """
        #SBATCH -N 2
        cat > env.sh <<'EOF'
        export MASTER_ADDR=localhost
        EOF
        python - <<EOF
        srun ./osu_bw
        EOF
        export NCCL_IB_DISABLE=1
    """
    assert set(lint(body)) == {"nccl-ib-disabled"}  # only what the script itself runs
    assert "rendezvous-failure" in lint("#SBATCH -N 2\ngrep x <<<word\nexport MASTER_ADDR=localhost\n")  # a here-string


def test_torchrun_rendezvous_endpoint_is_read(tmp_path):
    found = lint("#SBATCH -N 2\nsrun torchrun --nnodes=2 --rdzv-endpoint=localhost:29400 t.py\n")
    assert found["rendezvous-failure"]["severity"] == "error"
    assert "29400" in found["port-in-use"]["detail"]
    ok = lint('#SBATCH -N 2\nsrun torchrun --nnodes=2 --rdzv-endpoint="$HEAD:$((29500 + SLURM_JOB_ID % 1000))" t.py\n')
    assert ok == {}


def test_profile_without_hcas_means_sockets_are_the_fabric(tmp_path):
    site = tmp_path / "eth.yaml"
    site.write_text("hcas: []\nnics: [eth0]\n")
    body = "#SBATCH -N 2\nexport NCCL_IB_DISABLE=1\nexport NCCL_SOCKET_IFNAME=eth0\n"
    assert lint(body, profile=site) == {}
    assert "nccl-ib-disabled" in lint(body)  # without the profile: may be wrong


def test_one_node_container_step_needs_no_hca():
    body = "#SBATCH -N 2\nsrun -N 1 --container-image=img python prep.py\nsrun --container-image=img python t.py\n"
    found = lint(body)["ib-devices-not-mounted"]
    assert [e["line"] for e in found["evidence"]] == [4]  # the step on both nodes, not the one-node step
