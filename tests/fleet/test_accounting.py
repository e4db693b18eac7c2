"""``fleet scan --since``'s one bulk sacct query per task, against real output of Slurm 22.05 with
slurmdbd (tests/fleet/data, captured on the lab by data/capture-sacct): ``sacct --json`` where it
answers, ``sacct -P`` where it does not, and both must tell the same jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from diag.fleet.accounting import FIELDS, sacct_window
from diag.slurm.query import FILL_FIELDS

DATA = Path(__file__).parent / "data"
JSON = (DATA / "lab-sacct.json").read_text()
PARSABLE = (DATA / "lab-sacct.txt").read_text()
WINDOW = ("2026-12-03T12:29:00", "2026-12-03T12:31:00")
# What 22.05 answers where --json cannot be served (both seen on the lab: the second with
# serializer_json.so moved aside, the first is how getopt rejects an option sacct lacks).
NO_JSON = ("sacct: unrecognized option '--json'", "sacct: fatal: Unable to find plugin: serializer/json")


def _project(text: str, fields: str) -> str:
    """The capture's columns ``fields`` (what ``sacct -P -n -o fields`` printed for the same jobs;
    none of them is free text, so the split is safe)."""
    header, *rows = text.splitlines()
    names = header.split("|")
    out = []
    for row in rows:
        parts = row.split("|")
        extra = len(parts) - len(names)  # the job name with a '|' in it
        at = names.index("JobName")
        parts = [*parts[:at], "|".join(parts[at : at + extra + 1]), *parts[at + extra + 1 :]]
        out.append("|".join(dict(zip(names, parts))[f] for f in fields.split(",")))
    return "\n".join(out) + "\n"


class Sacct:
    """A runner answering as the lab's sacct did; ``json_error``: as a sacct without JSON."""

    def __init__(self, json_error: str | None = None, fill: bool = True):
        self.json_error, self.fill, self.calls = json_error, fill, []

    def __call__(self, argv):
        self.calls.append(list(argv))
        if "--json" in argv:
            return (1, "", self.json_error) if self.json_error else (0, JSON, "")
        fields = argv[argv.index("-o") + 1]
        for name in ("StdOut", "StdErr"):  # 22.05 has neither and names the first it meets
            if name in fields.split(","):
                return 1, "", f'sacct: error: Invalid field requested: "{name}"'
        if fields == FILL_FIELDS:
            return (0, _project(PARSABLE, fields), "") if self.fill else (1, "", "sacct: error: slurmdbd down")
        assert fields == FIELDS
        return 0, PARSABLE, ""


def _view(jobs) -> dict[str, tuple]:
    return {
        j.job_id: (j.raw_id, j.name, j.user, j.base_state, j.exit_code, j.derived_exit_code, j.nodes,
                   j.start_time, j.end_time, j.raw.get("Partition"), j.array_job_id, j.array_task_id)
        for j in jobs
    }  # fmt: skip


def test_json_window_from_the_lab():
    sacct = Sacct()
    jobs = {j.job_id: j for j in sacct_window(*WINDOW, sacct)}
    assert sorted(jobs) == sorted(
        ["174", "175", "176", "177", "178_0", "178_1", "178_2", "179", "179+1", "181", "182", "184"]
    )
    assert all(j.source == "sacct --json" for j in jobs.values())
    assert sacct.calls[0] == ["sacct", "-a", "-X", "-S", WINDOW[0], "-E", WINDOW[1], "--json"]
    assert len(sacct.calls) == 2  # the JSON and one bulk query of the fields 22.05's JSON gets wrong
    failed = jobs["175"]
    assert failed.name == "train|lr=0.1" and failed.state == "FAILED"
    assert failed.exit_code == "3:0"  # the JSON says return_code 0; sacct -P's number wins
    assert jobs["176"].nodes == ["n0", "n1"] and jobs["176"].derived_exit_code == "0:9"  # srun step SIGKILLed
    assert jobs["177"].exit_code == "0:9"  # killed over its memory
    assert (jobs["178_0"].raw_id, jobs["178_0"].array_job_id, jobs["178_0"].array_task_id) == ("185", "178", "0")
    assert jobs["178_1"].exit_code == "1:0" and jobs["178_2"].raw_id == "178"
    assert (jobs["179"].nodes, jobs["179+1"].nodes, jobs["179+1"].raw_id) == (["n2"], ["n3"], "180")
    assert jobs["181"].user == "nobody"  # no association: the JSON's user is null
    assert (jobs["182"].base_state, jobs["184"].state) == ("CANCELLED", "TIMEOUT")
    assert (jobs["184"].start_time, jobs["184"].end_time) == ("2026-12-03T12:29:19", "2026-12-03T12:30:29")
    assert jobs["175"].raw == {"Account": "root", "Partition": "debug"}


@pytest.mark.parametrize("error", NO_JSON)
def test_without_json_sacct_p_tells_the_same_jobs(error, monkeypatch):
    monkeypatch.setenv("TZ", "UTC")  # the JSON's epoch seconds become sacct's local times
    import time

    time.tzset()
    try:
        from_json = _view(sacct_window(*WINDOW, Sacct()))
        sacct = Sacct(json_error=error)
        jobs = sacct_window(*WINDOW, sacct)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    assert all(j.source == "sacct -P" for j in jobs)
    assert _view(jobs) == from_json
    fields = [c[c.index("-o") + 1] for c in sacct.calls if "-o" in c]
    # 22.05 has no StdOut or StdErr: asked again without each
    assert fields == [FIELDS + ",StdOut,StdErr", FIELDS + ",StdErr", FIELDS]


def test_json_values_stay_where_the_second_query_fails():
    jobs = {j.job_id: j for j in sacct_window(*WINDOW, Sacct(fill=False))}
    assert jobs["177"].exit_code == "0:9"  # a signal: the JSON gets it right
    assert jobs["181"].user == ""  # what the JSON said: nothing rather than a guess
    assert jobs["175"].name == "train|lr=0.1"


def test_job_that_never_ran_has_no_nodes():
    from diag.fleet.archive import sacct_json_jobs

    (job,) = sacct_json_jobs((DATA / "lab-sacct-never-ran.json").read_text())
    assert (job.node_list, job.nodes, job.base_state, job.start_time) == ("", [], "CANCELLED", "")


def test_no_accounting_is_a_clear_error():
    from diag.slurm.query import SlurmError

    def runner(argv):  # what the lab's sacct said (both forms) with AccountingStorageType=accounting_storage/none
        return 1, "", "Slurm accounting storage is disabled\n"

    with pytest.raises(SlurmError, match="accounting storage is disabled"):
        sacct_window(*WINDOW, runner)


def test_job_past_min_job_age_gets_its_exit_code_too():
    """``slurmdiag job ID`` once scontrol has forgotten the job asks sacct --json, which 22.05 answers
    with exit 0 for a job that exited 3: the same second query corrects it."""
    import json

    from diag.slurm.query import query_job

    one = json.loads(JSON)
    one["jobs"] = [j for j in one["jobs"] if j["job_id"] == 175]
    calls = []

    def runner(argv):
        calls.append(list(argv))
        if argv[0] == "scontrol":
            return 1, "", "slurm_load_jobs error: Invalid job id specified"
        if "--json" in argv:
            return 0, json.dumps(one), ""
        rows = [r for r in _project(PARSABLE, FILL_FIELDS).splitlines() if r.startswith("175|")]
        return 0, "\n".join(rows) + "\n", ""

    (job,) = query_job("175", runner)
    assert (job.name, job.state, job.exit_code, job.user) == ("train|lr=0.1", "FAILED", "3:0", "root")
    assert calls[-1] == ["sacct", "-j", "175", "-X", "-P", "-n", "-o", FILL_FIELDS]


def test_sacct_form_can_be_chosen():
    """``--sacct parsable`` for big windows (22.05's JSON is ~20x the bytes of -P per job) never asks
    for JSON; ``--sacct json`` fails plainly rather than fall back."""
    from diag.slurm.query import SlurmError

    per_job_json = len(JSON) / 12
    per_job_parsable = len(PARSABLE.split("\n", 1)[1]) / 12
    assert per_job_json > 15 * per_job_parsable  # what the option's help claims, on the lab's capture
    sacct = Sacct()
    jobs = sacct_window(*WINDOW, sacct, form="parsable")
    assert len(jobs) == 12 and not any("--json" in c for c in sacct.calls)
    with pytest.raises(SlurmError, match="no JSON answer"):
        sacct_window(*WINDOW, Sacct(json_error=NO_JSON[1]), form="json")
