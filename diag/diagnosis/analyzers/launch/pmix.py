"""PMIx wiring and run-time errors: pmix-not-used, pmix-runtime-error.

Reads the MPI's and PMIx's own words (singleton warnings, the client's transport errors, PMIx's unpack
errors, Slurm's PMIx plugin and its fences, Open MPI's boxes, Cray PMI, ssh logins that mpirun's daemons
needed) to tell ranks started without PMI wiring from a PMIx server that failed at run time; job/ reads
three of these (runtime_unpack, daemon_never_called_back, ssh_login_failed) for a job's own ending.
"""

from __future__ import annotations

from diag.catalog.model import Rule
from diag.diagnosis.analyzers.launch.common import _ends_its_log
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.evidence import Evidence
from diag.hostlist import expand
from diag.report import Finding

# Printed by every rank of an MPI started without a PMI server, but also by one process run on its own.
_SINGLETON_WARNINGS = {"intel_no_pmi", "mpich_no_pmi", "mpich_dead_pmi_fd"}


# Lines a file goes on for after a line for the process that printed it to have run on past it.
RAN_ON_LINES = 40


def _ran_on_after(ctx: Context, evidence: list) -> bool:
    """Whether the file of the last of these lines goes on for RAN_ON_LINES lines after it."""
    if not evidence:
        return False
    last = max(evidence, key=lambda ev: ev.order)
    return ctx.last_lines().get(last.path, 0) - last.line >= RAN_ON_LINES


# A program's greeting saying it is rank 0 of a world of 1, in the words of common MPI examples.
ALONE = ["alone_of_one", "alone_out_of", "alone_comm_size", "alone_deepspeed", "alone_imb"]


def pmix_not_used(rule: Rule, ctx: Context) -> list[Finding]:
    found = ctx.stats(rule)
    if found and _client_reached_for_a_server(ctx):
        return []  # the MPI library's "Unreachable" after its PMIx client failed to reach a server it was given
    if found and {n for n, _ in found} <= _SINGLETON_WARNINGS:
        if sum(st.count for _, st in found) < 2 and not ctx.job_failed():
            # One process alone may be a singleton on purpose, and output after the line shows it
            # went on. As the last thing a log says, it is usually all the user has of ranks that
            # never found each other.
            if not _ends_its_log(ctx, [ev for _, st in found for ev, _ in st.samples]):
                return []
            assumed = ["the job has several ranks: one process alone may run as a singleton on purpose"]
            return [ctx.make_finding(rule, severity="warning", confidence=0.45, assumed=assumed)]
        return [ctx.make_finding(rule, confidence=0.7)]
    if found and {n for n, _ in found} <= set(_NO_SERVER_DETAILS):
        # MPI's own words for a process that found no PMI server at all, each saying which (pmix_not_used's
        # default quotes the line; these name what the line means).
        detail = _NO_SERVER_DETAILS[next(n for n in _NO_SERVER_DETAILS if ctx.stats(rule, [n]))]
        return [ctx.make_finding(rule, detail=detail + ".", confidence=0.7)]
    if found and {n for n, _ in found} == {"pmi2_job_getid"}:
        detail = (
            "the MPI's PMI-2 client could not get its job id from the launcher (PMI2_Job_GetId failed in "
            "MPI_Init): its PMI library does not speak to srun's PMI server; start it with srun --mpi=pmi2 "
            "(or pmix) and, for Intel MPI, I_MPI_PMI_LIBRARY set to Slurm's libpmi2.so"
        )
        return [ctx.make_finding(rule, detail=detail + ".", confidence=0.7)]
    if found:
        return [ctx.make_finding(rule)]
    facts = ctx.facts
    singles = [h for h in facts.hosts.values() if h.ranks == {0}]
    if len(singles) > 1 and facts.max_nranks == 1:
        detail = (
            f"every process is rank 0 of a world of 1 on {hosts_text([h.host for h in singles])}: "
            "the ranks were started without PMI/PMIx wiring or without RANK/WORLD_SIZE"
        )
        # Each of several nodes showing its own world of one is what the logs say outright, not a guess.
        return [ctx.make_finding(rule, detail=detail, hosts=[h.host for h in singles], confidence=0.8)]
    greetings = ctx.stats(rule, ALONE)
    if greetings and greetings[0][1].count > 1 and facts.max_nranks <= 1:
        count = greetings[0][1].count
        detail = (
            f"{count} processes each say they are rank 0 of 1: they started as singletons, "
            "without PMI/PMIx wiring between them"
        )
        return [ctx.make_finding(rule, ALONE, detail=detail, confidence=0.6)]
    return []


_NO_SERVER_DETAILS = {
    "mpich_pmix_unreach": (
        "MPICH's PMIx client found no PMIx server (PMIx_Init returned -25, PMIX_ERR_UNREACH): the launcher gave "
        "the process none; start it with srun --mpi=pmix (srun --mpi=list shows the types), or use an MPICH built "
        "for PMI-2 with srun --mpi=pmi2"
    ),
    "nvshmem_pmix_unreach": (
        "NVSHMEM's PMIx bootstrap found no PMIx server (PMIx_Init returned -25, PMIX_ERR_UNREACH): the launcher gave "
        "the process none; start it with srun --mpi=pmix, or pick the bootstrap the launcher serves "
        "(NVSHMEM_BOOTSTRAP_PMI=PMI-2 under srun --mpi=pmi2)"
    ),
    "pmi2_version": (
        "Slurm's pmi2 plugin heard a PMI version it does not serve from the task ({what}): the MPI's PMI library is "
        "not the PMI-2 that srun --mpi=pmi2 speaks to (Intel MPI: I_MPI_PMI_LIBRARY set to Slurm's libpmi2.so; "
        "MPICH or MVAPICH2 built with Slurm's PMI-2), or launch it with srun --mpi=pmix"
    ),
    "deepspeed_no_mpi_env": (
        "DeepSpeed's OpenMPI runner found no OMPI_COMM_WORLD_* variables: the script was not started by mpirun; "
        "start it under mpirun, or with srun --mpi=pmix and DeepSpeed's own rank discovery"
    ),
    "mpich_singinit": (
        "MPICH's PMI client ran as a singleton (no PMI server: not started by srun --mpi=pmi2 / pmix or by "
        "mpiexec) and then needed the process manager; start it with srun --mpi=pmi2 (or pmix) or mpiexec"
    ),
    "pmi1_duplicate": (
        "srun's PMI-1 server heard twice from task {task} at its barrier: several processes claim that task's "
        "PMI rank (an mpirun or a program that forks MPI processes inside one srun task); start one MPI process "
        "per srun task, or use mpirun alone in the allocation"
    ),
}


def _client_reached_for_a_server(ctx: Context) -> bool:
    """PMIx's client logged an error in its transport to the server (ptl_tcp / ptl_usock): it had a server
    address to connect to, so the launcher did start a PMIx server; what failed is reaching it
    (pmix-runtime-error), not a launch without PMI."""
    runtime = ctx.rules.get("pmix-runtime-error")
    if runtime is None:
        return False
    if any(
        g["file"].rsplit("/", 1)[-1].startswith("ptl_") and not _stale_usock(g)
        for _ev, g in ctx.samples(runtime, ["pmix_error"])
    ):
        return True
    if ctx.stats(runtime, ["cred_rejected", "uid_mismatch", "authent_fail"]):
        return True  # a server that checked (and refused) the client's credential
    if _init_status(runtime, ctx):
        return True  # Open MPI 5's PMIx_Init box with a status other than "no server": it had one
    # PMIx_Init itself failing for want of resources (its data store) also had a server to ask.
    return any(
        g["file"].endswith("pmix_client.c") and "RESOURCE" in g["status"]
        for _ev, g in ctx.samples(runtime, ["pmix_error"])
    )


def _stale_usock(groups: dict[str, str]) -> bool:
    """PMIx 2-3's usock transport finding no rendezvous socket where PMIX_SERVER_URI points (ptl_usock.c:
    "if the rendezvous file doesn't exist, that's an error", NOT-FOUND): the process inherited the address of
    a server that is gone (a second MPI program run in the same srun task or mpirun slot after the first
    ended), so it has no live server: a launch without PMI, not a server that failed it."""
    return groups["file"].rsplit("/", 1)[-1] == "ptl_usock.c" and groups["status"].replace("_", "-").endswith("NOT-FOUND")


def _only_stale_usock(rule: Rule, ctx: Context) -> bool:
    names = {n for n, st in ctx.stats(rule) if not rule.signature(n).fact}
    return names == {"pmix_error"} and all(_stale_usock(g) for _ev, g in ctx.samples(rule, ["pmix_error"]))


# Where PMIx unpacks what a process needs before it can run at all: the server's answer to PMIx_Init's
# connection (client/pmix_client.c) and the job's data it stores (common/pmix_jobdata.c, 2.x's dstore pmix_esh.c).
_SETUP_UNPACK_FILES = ("pmix_client.c", "pmix_jobdata.c", "pmix_esh.c")


def runtime_unpack(unexplained: Rule, ctx: Context) -> list[Evidence]:
    """The lines of PMIx failing to unpack a message while the process set up, when its first PMIx error is such
    an unpack, Slurm printed nothing and the logs show none of Slurm's PMIx plugin: the server was the MPI's own
    runtime (mpirun / prterun, or the daemon a singleton starts), built with the same PMIx as the client, so the
    two cannot differ in version and the runtime of that release misread its own message (outside the catalogue).
    Under srun, the same status is a client against Slurm's plugin of another PMIx version: not matched here."""
    runtime = ctx.rules.get("pmix-runtime-error")
    unpacks = ctx.samples(unexplained, ["pmix_unpack"])
    if runtime is None or not unpacks or ctx.facts.slurm_messages:
        return []
    if {n for n, _ in ctx.stats(runtime) if not runtime.signature(n).fact} != {"pmix_error"}:
        return []
    first = min((ev for ev, _ in ctx.samples(runtime, ["pmix_error"])), key=lambda ev: (ev.path, ev.line))
    if not any(ev.path == first.path and ev.line == first.line for ev, _ in unpacks):
        return []  # an unpack after another PMIx error (a file it could not open) is that error's consequence
    at_setup = [ev for ev, g in unpacks if g["file"].rsplit("/", 1)[-1] in _SETUP_UNPACK_FILES]
    return pick_evidence(at_setup, limit=6) if at_setup else []


_INIT_STEP_DETAILS = {
    "psec": "its security plugin (psec: munge) could not be opened where the task runs (munge or its library missing "
    "from a container image); PMIX_MCA_psec=native avoids munge",
    "gds": "no data-store module (gds) could be selected; PMIX_MCA_gds=hash selects the hash store",
}


def _pmix_init_box(rule: Rule, ctx: Context) -> list[Finding]:
    """PMIx's own init box ("It looks like pmix_init failed for some reason; your parallel process is likely to
    abort"): the client could not start, so the process ends there, whether or not the excerpt shows it end."""
    if not ctx.stats(rule, ["pmix_init_box", "pmix_init_step"]):
        return []
    steps = [g for _, g in ctx.samples(rule, ["pmix_init_step"])]
    step = steps[0]["step"] if steps else None
    frameworks = [g["framework"] for g in steps] + ctx.captures(rule, "framework", ["component_missing"])
    why = next((_INIT_STEP_DETAILS[f] for f in frameworks if f in _INIT_STEP_DETAILS), None)
    detail = "PMIx's client could not initialise" + (f" ({step} failed)" if step else "")
    detail += (
        f": {why}"
        if why
        else ": the PMIx library the task loads lacks a component it needs or does not match the launcher's PMIx"
    )
    names = ["pmix_init_box", "pmix_init_step", "component_missing", "pmix_error"]
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.7)]


def _data_store_failed(rule: Rule, ctx: Context) -> list[Finding]:
    """PMIx's shared-memory data store (gds/shmem2, gds/ds12-ds21) failed to map its segment or to
    make its directory: the hash store (PMIX_MCA_gds=hash) needs neither."""
    names = [n for n, _ in ctx.stats(rule, ["gds_attach", "dstore_session"])]
    if not names:
        return []
    if "dstore_session" in names:
        g = ctx.samples(rule, ["dstore_session"])[0][1]
        what = f"could not create its directory {g['path']} ({g['reason']})"
    else:
        what = "was mapped at another address than the PMIx server's and cannot be used"
    detail = (
        f"PMIx's shared-memory data store {what}: set PMIX_MCA_gds=hash to use the hash store instead, or give "
        "the tasks a session directory they can write (mpi.conf PMIxCliTmpDirBase, or SLURM_PMIX_TMPDIR)"
    )
    return [ctx.make_finding(rule, names, detail=detail + ".", confidence=0.7)]


def _init_status(rule: Rule, ctx: Context) -> str | None:
    """The status Open MPI 5's "PMIx_Init failed for the following reason:" box names, when it is not
    PMIX_ERR_UNREACH: Open MPI starts singletons on that one (no server), so any other status failed
    with a server the launcher did give."""
    if not ctx.count("pmix-not-used", ["pmix_init_failed"]):
        return None
    statuses = [s for s in ctx.captures(rule, "status", ["init_status"]) if s != "PMIX_ERR_UNREACH"]
    return statuses[0] if statuses else None


_INIT_STATUS_DETAILS = {
    "PMIX_ERR_INIT": (
        "PMIx_Init failed setting up the client itself (PMIX_ERR_INIT): it could not load the security or "
        "data-store module the server's environment names (PMIX_SECURITY_MODE, PMIX_GDS_MODULE: munge or a dstore "
        "missing from a container image), or PMIX_MCA_ptl=usock was set; PMIX_MCA_psec=native and "
        "PMIX_MCA_gds=hash avoid both"
    ),
    "PMIX_ERR_NOT_SUPPORTED": (
        "the PMIx client and the step's PMIx server did not agree (PMIX_ERR_NOT_SUPPORTED): their PMIx versions or "
        "security modes differ, typically the MPI's PMIx (a container's) against the one Slurm's mpi/pmix_vN plugin "
        "was built with; use the srun --mpi=pmix_vN of the MPI's PMIx major version (srun --mpi=list), or "
        "PMIX_MCA_psec=native"
    ),
}


def _setup_failed(rule: Rule, ctx: Context) -> list[Finding]:
    """PMIx itself failing to set up a client or server connection, each form naming what to change."""
    status = _init_status(rule, ctx)
    if status:
        detail = _INIT_STATUS_DETAILS.get(
            status,
            f"PMIx_Init failed with the step's PMIx server ({status}): the launcher did start one (a launch "
            "without PMIx would have started singletons); the MPI's PMIx and the one Slurm's mpi/pmix plugin was "
            "built with may differ in version or security mode",
        )
        return [ctx.make_finding(rule, ["init_status"], detail=detail + ".", confidence=0.7)]
    forms = {
        "pmixp_ucx": (
            "Slurm's PMIx plugin could not use UCX for its direct connections between the nodes' stepds ({ucx}): "
            "set PMIxDirectConnUCX=false in mpi.conf (or SLURM_PMIX_DIRECT_CONN_UCX=false for the job) to use TCP, "
            "or fix UCX on the nodes (libucp present, PMIxTlsUCX / PMIxNetDevicesUCX naming usable transports)",
            None,
        ),
        "usock_directive": (
            "PMIx 4+ refuses the usock transport that PMIX_MCA_ptl=usock asks for: an older launcher's or a "
            "container hook's setting left in the task's environment (PMIX_PTL_MODULE passed on); unset "
            "PMIX_MCA_ptl",
            "error",
        ),
        "server_rendezvous": (
            "the PMIx server could not set up its rendezvous socket: a stale socket file of an earlier job, or a "
            "TMPDIR whose path is too long for a Unix socket; clear the stale pmix files or give it a short "
            "directory (TMPDIR, SLURM_PMIX_TMPDIR / mpi.conf PMIxCliTmpDirBase)",
            "error",
        ),
        "msg_size": (
            "PMIx received a message header announcing more than it accepts: client and server frame messages "
            "differently (two PMIx versions, the MPI's against Slurm's mpi/pmix plugin's) or the stream broke",
            None,
        ),
        "pml_peer_empty": (
            "Open MPI read an empty transport choice for peer {peer} on {peer_host} from the PMIx modex: the data "
            "the ranks published never arrived (PMIx 5.0.2's shared-memory store is known to do this); set "
            "PMIX_MCA_gds=hash, or use another PMIx release",
            "error",
        ),
        "rendezvous_file": (
            "PMIx could not write its rendezvous file {path}: the directory is not writable by the job's user or "
            "does not exist on this node (TMPDIR, SLURM_PMIX_TMPDIR)",
            None,
        ),
    }
    for name, (detail, severity) in forms.items():
        if ctx.stats(rule, [name]):
            if severity is None and not ctx.job_failed():
                assumed = ["the job failed of it: the logs show this PMIx error but no failure line"]
                return [
                    ctx.make_finding(
                        rule, [name], detail=detail + ".", severity="warning", confidence=0.5, assumed=assumed
                    )
                ]
            return [ctx.make_finding(rule, [name], detail=detail + ".", confidence=0.7)]
    return []


_OMPI_FENCE = ["ompi_fence", "ompi_pmix_fence", "ompi_pmix_barrier"]
_OMPI_BOXES = _OMPI_FENCE + ["orte_pmix_init", "ompi_rte_init", "ompi_rte_box"]


def _ompi_rte_box(rule: Rule, ctx: Context, said: str) -> list[Finding]:
    """Open MPI 5's "MPI runtime init" box: past PMIx_Init, the job data it reads from the PMIx server (its
    local rank, the job size, its local peers) was not there, unless the box names a step of its own."""
    if ctx.stats(rule, ["ompi_rte_session", "ompi_rte_opal"]):
        return []  # a session directory it could not make on this node, or OPAL's own start: not PMIx
    detail = (
        f"Open MPI's run-time init could not get the job's data from its PMIx server{said}: the server answered "
        "PMIx_Init but does not provide what this Open MPI reads (its local rank, the job size), a PMIx server of "
        "another version or launcher than the MPI was built for (srun --mpi=pmix_vN of another PMIx, an external "
        "PMIx older than the MPI's); launch with the srun --mpi=pmix_vN that matches the MPI's PMIx, or with mpirun"
    )
    # The box says the process is "likely to abort": without the failure in the excerpt, a warning.
    assumed = ["the job failed of it: the box says the process is likely to abort, the excerpt shows no failure"]
    return _error_if_job_failed(rule, ctx, ["ompi_rte_box"], detail + ".", (0.6, 0.55), assumed)


def _ompi_box(rule: Rule, ctx: Context) -> list[Finding]:
    """Open MPI's orte_init / MPI_INIT boxes naming a PMIx step that failed, with nothing of Slurm's side to
    name a node: its PMIx fence (the modex every rank joins, through the step's PMIx server and the stepds'
    network), or its PMIx client's set-up."""
    others = [s.name for s in rule.signatures if s.name not in _OMPI_BOXES and not s.fact]
    if not ctx.stats(rule, _OMPI_BOXES) or ctx.stats(rule, others):
        return []
    returned = ctx.captures(rule, "returned", ["ompi_returned"])
    said = f' (returned "{returned[0]}")' if returned else ""
    if ctx.stats(rule, _OMPI_FENCE):
        call = ctx.captures(rule, "call", _OMPI_FENCE)[0]
        detail = (
            f"MPI_Init's PMIx fence {call} failed{said}: the exchange of every rank's connection data through the "
            "step's PMIx server did not complete; a node's slurmstepd did not answer in time (its node, or the "
            "network between the nodes' stepds); slurmstepd's own log names the nodes (raise PMIxTimeout in mpi.conf "
            "/ SLURM_PMIX_TIMEOUT for large steps)"
        )
        return [ctx.make_finding(rule, _OMPI_FENCE, detail=detail + ".", confidence=0.7)]
    if ctx.stats(rule, ["orte_pmix_init"]):
        detail = (
            f"Open MPI's PMIx client could not start{said}: the process had PMIx settings it could not use, most "
            "often a PMIx server of another version than the MPI's (srun --mpi=pmix_vN against the job's Open MPI) "
            "or a launcher Open MPI does not recognise; launch with the srun --mpi=pmix_vN that matches the MPI's "
            "PMIx, or with mpirun"
        )
        return [ctx.make_finding(rule, ["orte_pmix_init"], detail=detail + ".", confidence=0.6)]
    if ctx.stats(rule, ["ompi_rte_box"]):
        return _ompi_rte_box(rule, ctx, said)
    if ctx.stats(rule, ["orte_init_box"]):
        return []  # orte_init's box named another step than PMIx's (a session directory, a framework)
    # The MPI_INIT box alone: its run-time layer (ess/pmi, the PMIx client in a direct launch) failed, the
    # box does not say at which step.
    detail = (
        f"Open MPI's run-time layer failed in MPI_Init{said}: in a direct launch that is its PMIx client (the "
        "orte_init box or PMIx's own lines before it say which step); check srun --mpi=pmix matches the MPI's PMIx"
    )
    severity = None if ctx.job_failed() else "warning"
    return [ctx.make_finding(rule, ["ompi_rte_init"], detail=detail + ".", severity=severity, confidence=0.45)]


# Slurm's PMIx plugin logs these at error level, then goes on: the ring fence asked for in mpi.conf needs
# direct connections, so it falls back to the tree-based one (pmixp_info.c).
_PLUGIN_NOTICES = ("Ring collective algorithm cannot be used",)


def _only_plugin_notices(rule: Rule, ctx: Context) -> bool:
    if {n for n, _ in ctx.stats(rule)} != {"pmixp_error"}:
        return False
    return all(g["message"].startswith(_PLUGIN_NOTICES) for _ev, g in ctx.samples(rule, ["pmixp_error"]))


def daemon_never_called_back(ctx: Context) -> bool:
    """ORTE's / PRRTE's box for a daemon that "unexpectedly failed after launch and before communicating back to
    mpirun" (unexplained-failure's ompi_daemon_early): the daemon never came up, so it was not lost mid-run."""
    return bool(ctx.count("unexplained-failure", ["ompi_daemon_early"]))


# The MPI's own ending of its processes (unexplained-failure's): MPI_ABORT, a rank killed by a signal or
# exiting non-zero under mpirun, a crash.
_RANKS_ENDED = [
    *["mpi_abort", "ompi_signal", "ompi_nonzero", "ompi_aborted", "ompi_improper", "process_signal"],
    *["segfault_line", "crash_core", "terminate", "mpich_bad_termination"],
]


def _server_lost_ended_ranks(rule: Rule, ctx: Context) -> bool:
    """PMIx's server (mpirun's, prterun's or a stepd's) saying only that a client is UNREACHABLE
    (server/pmix_server.c) after the MPI itself ended ranks (MPI_ABORT, a rank killed or crashed): it is
    answering processes that are already gone, a consequence of their end, not a PMIx fault."""
    names = {n for n, _ in ctx.stats(rule) if not rule.signature(n).fact}
    if names != {"pmix_error"}:
        return False
    samples = ctx.samples(rule, ["pmix_error"])
    server_unreach = all(
        g["status"].replace("_", "-").startswith("UNREACH") and g["file"].rsplit("/", 1)[-1].startswith("pmix_server")
        for _ev, g in samples
    )
    unexplained = ctx.rules.get("unexplained-failure")
    return server_unreach and unexplained is not None and bool(ctx.count(unexplained.id, _RANKS_ENDED))


def _not_slurms_pmix(ctx: Context) -> bool:
    """The PMI that failed is not Slurm's PMIx: Open MPI's Flux component (pmix_flux.c), or PMIx unpacking its
    own runtime's message at set-up (runtime_unpack)."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return False
    return bool(ctx.count(unexplained.id, ["ompi_flux_pmi"]) or runtime_unpack(unexplained, ctx))


def pmix_runtime(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule) and not _init_status(rule, ctx):
        return []
    if _only_plugin_notices(rule, ctx):
        return []
    if _only_stale_usock(rule, ctx) and ctx.count("pmix-not-used"):
        return []  # the server its environment names is gone, and the MPI says it found none: pmix-not-used
    if _not_slurms_pmix(ctx):
        return []  # the MPI's own runtime or another launcher failed it: unexplained-failure names which
    if _server_lost_ended_ranks(rule, ctx):
        return []  # the server could not reach ranks the MPI had already ended: unexplained-failure says how
    # The PMI clients' failing calls, and Slurm's pmi2 plugin, after the launch was shown to lack the right PMI.
    mpich = {"mpich_pmi_failed", "mpich_pmi_connect", "mpich_pmi2_failed", "pmi2_error", "nvshmem_pmi"}
    names = {n for n, _ in ctx.stats(rule)}
    if names and names <= mpich and ctx.count("pmix-not-used"):
        return []  # MPICH's PMI calls failing after it said the launcher speaks another PMI: that mismatch is the cause
    frameworks = ctx.captures(rule, "framework", ["component_missing"])
    only_box = not ctx.stats(rule, [s.name for s in rule.signatures if s.name != "component_missing"])
    # PMIx goes on with another component of the framework (psec: native): the ranks ran, or the program
    # printed on long after the box (a training run that later hit its time limit).
    went_on = None
    if frameworks and only_box:
        if _ran_on_after(ctx, [ev for ev, _ in ctx.samples(rule, ["component_missing"])]):
            went_on = "the program printed on long after it, so whatever ended the job came later"
        elif any(int(size) > 1 for size in ctx.captures(rule, "size", ["ranks_report"])) and not ctx.job_failed():
            went_on = "the ranks then reported a world of several processes and nothing failed, so it is only noise"
    if went_on:
        detail = (
            f"PMIx could not open a component of its {frameworks[0]} framework and went on with another; {went_on} "
            f"(PMIX_MCA_{frameworks[0]}=^<component> silences it)"
        )
        return [ctx.make_finding(rule, ["component_missing"], detail=detail + ".", severity="info", confidence=0.4)]
    if frameworks and only_box:
        # PMIx stops at the first plugin it cannot open: the help box is the whole story.
        what = (
            "its security plugin (psec, e.g. munge)"
            if "psec" in frameworks
            else f"a plugin of its {frameworks[0]} framework"
        )
        detail = (
            f"PMIx could not open {what} on this node: the component or the library it needs is not "
            "installed where the task runs (often a container image)"
        )
        if "psec" in frameworks:
            detail += "; PMIX_MCA_psec=native avoids munge"
        # The box alone: PMIx may have gone on with another component (the ranks then run), so
        # without a failure in the logs it is worth a warning that says what it could not see.
        assumed = ["the job failed of it: the logs show the help box but no failure and no ranks running"]
        return _error_if_job_failed(rule, ctx, ["component_missing"], detail + ".", (0.65, 0.65), assumed)
    daemons = [n for n, _ in ctx.stats(rule, ["daemon_lost", "daemon_start_failed", "hydra_connect"])]
    others = ctx.stats(rule, [s.name for s in rule.signatures if s.name not in daemons and not s.fact])
    if daemons == ["daemon_lost"] and not others and daemon_never_called_back(ctx):
        # The daemon it lost is one that never called back after launch: mpirun's start of its daemons failed
        # (their network back to mpirun, the daemon itself), before any PMIx wire-up of the ranks.
        return []
    if daemons and set(daemons) <= {"daemon_start_failed", "daemon_lost"} and not others and ssh_login_failed(ctx):
        # mpirun starts its daemons over ssh: one that could not log in (a password prompt, a refused key or
        # host key) or not resolve the host's name is why they did not start (and why mpirun then cannot
        # route to them), and the honest unexplained finding (or rendezvous-failure, for a pod's service
        # name) names it; PMIx is not involved.
        return []
    if daemons and not others:
        # mpirun ends the whole job when it loses a daemon: fatal even when the excerpt shows nothing else.
        detail = (
            "Open MPI's launcher lost (or could not start) the daemon of a node: the TCP connection to it broke "
            "(firewall, wrong interface, the node went down) or the daemon died"
        )
        if "hydra_connect" in daemons:
            g = ctx.samples(rule, ["hydra_connect"])[0][1]
            server = g.get("host") or g.get("server") or "mpiexec's host"
            why = f" ({g['why']})" if g.get("why") else ""
            detail = (
                f"Hydra's PMI proxy could not reach mpiexec's PMI server on {server}{why}: a firewall between the "
                "nodes, or a host name that resolves to an address the other nodes cannot reach (-iface / "
                "I_MPI_HYDRA_IFACE picks the network)"
            )
        return [ctx.make_finding(rule, daemons, detail=detail + ".", confidence=0.7)]
    refused = [n for n, _ in ctx.stats(rule, ["cred_rejected", "uid_mismatch", "authent_fail"])]
    if refused:
        # The client reached its server, which would not take its credential: munge (psec) not
        # reachable from the task, or a task running under another uid than the one registered.
        detail = (
            "the PMIx server refused the client's credential"
            + (" (the client runs under another user ID than the one registered)" if "uid_mismatch" in refused else "")
            + (" (one host uses munge and the other not: their security domains differ)" if "authent_fail" in refused else "")
            + ": psec could not vouch for the task (munge's socket not mounted into the container, munge keys "
            "that differ between nodes, or a task started as another user); PMIX_MCA_psec=native avoids munge"
        )
        return [ctx.make_finding(rule, refused, detail=detail + ".", confidence=0.75)]
    setup = _setup_failed(rule, ctx) or _ompi_box(rule, ctx)
    if setup:
        return setup
    if {n for n, _ in ctx.stats(rule) if not rule.signature(n).fact} == {"ompi_rte_box"}:
        return []  # Open MPI 5's run-time init box naming a step of its own (a session directory): not PMIx
    if {n for n, _ in ctx.stats(rule)} == {"ompi_rte_init"}:
        return []  # MPI_INIT's box after an orte_init box that named another step than PMIx's
    cray = _cray_pmi(rule, ctx)
    if cray:
        return cray
    locks = [f for f in ctx.captures(rule, "file", ["pmix_error"]) if f.rsplit("/", 1)[-1].startswith("gds_ds")]
    store = _data_store_failed(rule, ctx)
    if store:
        return store
    if ctx.stats(rule, ["pmix_version_loaded", "pmix_two_installs"]) and not ctx.stats(rule, ["pmix_symbol"]):
        detail = (
            "Open MPI's PMIx component found another libpmix than the one it was built for"
            if ctx.stats(rule, ["pmix_version_loaded"])
            else "Open MPI was pointed at two PMIx installations (its own copy and another, by environment variables)"
        ) + (
            ": two MPI or PMIx installations are on the library path (LD_LIBRARY_PATH, a container's MPI beside the "
            "host's); use one stack, or rebuild Open MPI --with-pmix pointing at the PMIx the launcher uses"
        )
        return [ctx.make_finding(rule, ["pmix_version_loaded", "pmix_two_installs"], detail=detail + ".", confidence=0.7)]
    if ctx.stats(rule, ["pmix_symbol"]):
        ev, g = ctx.samples(rule, ["pmix_symbol"])[0]
        detail = (
            f"Open MPI's PMIx component {g['component']} was loaded against another libpmix than the one it was "
            f"built with (undefined symbol {g['symbol']}): two MPI or PMIx installations are on the library path "
            "(LD_LIBRARY_PATH, a container's MPI beside the host's); use one stack and its own libpmix"
        )
        # mca_base_component_repository_open goes on without a component it marks "(ignored)"; the
        # ranks may then run with another one.
        severity = "warning" if "(ignored)" in ev.text and not ctx.job_failed() else None
        return [ctx.make_finding(rule, ["pmix_symbol"], detail=detail + ".", severity=severity, confidence=0.7)]
    if locks:
        # NCCL's troubleshooting guide (PMIx data store selection): a known bug of PMIx's shared-memory
        # data store in older Open MPI/PMIx stacks, avoided by the hash store.
        detail = (
            f"PMIx's shared-memory data store failed ({locks[0]}): a known bug of the gds/ds12-ds21 component in "
            "older PMIx/Open MPI stacks; set PMIX_MCA_gds=hash to use the hash store instead"
        )
        severity = None if ctx.job_failed() else "warning"
        return [ctx.make_finding(rule, ["pmix_error"], detail=detail + ".", severity=severity, confidence=0.7)]
    if init_failed := _pmix_init_box(rule, ctx):
        return init_failed  # after the readings that say why a client failed more precisely than its box
    if ctx.job_failed():
        hosts = _awaited_hosts(rule, ctx)
        return [ctx.make_finding(rule, hosts=hosts or None, values={"host": ", ".join(hosts) or "the nodes named"})]
    # The PMIx library's own "PMIX ERROR: <status> in file <f> at line <n>" lines are printed by runs
    # that finish too (dstore lookups, unpacking); Slurm's plugin failing a send or a collective is not.
    errors = [
        ev for name, st in ctx.stats(rule) if name != "pmix_error" and not rule.signature(name).fact for ev, _ in st.samples
    ]
    if _ends_its_log(ctx, errors):
        # Nothing after the errors: the excerpt stops where the wire-up did (a step that hung or was
        # killed), not a run that went on past them.
        assumed = ["the job failed of them: the logs end at these errors and show no failure line"]
        return [ctx.make_finding(rule, severity="warning", confidence=0.5, assumed=assumed)]
    return [
        ctx.make_finding(
            rule,
            severity="info",
            confidence=0.4,
            detail="PMIx reported errors but the job shows no failure: harmless noise.",
        )
    ]


# ssh failing to reach or log in to another node (unexplained-failure's signatures): no daemon of mpirun's can
# start there.
_SSH_LOGIN_FAILED = ["ssh_password", "ssh_password_retry", "ssh_denied", "ssh_hostkey", "ssh_unresolved", "ssh_closed"]


def ssh_login_failed(ctx: Context) -> bool:
    """A launcher's ssh to another node failed before its session started (a refused key or host key, a
    password prompt, a name it could not resolve, sshd dropping the connection): mpirun's daemon there never
    started, so what mpirun then reports of that node's daemon is the start that failed."""
    unexplained = ctx.rules.get("unexplained-failure")
    return unexplained is not None and bool(ctx.count(unexplained.id, _SSH_LOGIN_FAILED))


_CRAY_PMI = ["cray_pmi", "cray_pmi_init", "cray_pmi_error", "cray_pmi_barrier"]


def _cray_pmi(rule: Rule, ctx: Context) -> list[Finding]:
    """Cray PMI failing in a rank's start-up: its control port taken, or the control network unreachable."""
    if not ctx.stats(rule, _CRAY_PMI):
        return []
    pes = sorted(ctx.captures(rule, "pe", _CRAY_PMI), key=int)
    who = f"PE {', '.join(pes[:8])}{' ...' if len(pes) > 8 else ''}" if pes else "a rank that had no PE number yet"
    if ctx.captures(rule, "in_use", ["cray_pmi"]):
        detail = (
            f"Cray PMI of {who} could not bind its control port (Address already in use): another job step on the "
            "same node holds it, so PMI_Init and MPI_Init fail. Concurrent srun steps sharing nodes do this, and so "
            "does a nested launcher (Flux, a second srun) that inherited the outer step's PMI_* environment: run "
            "such steps one after another or on separate nodes, and unset the PMI_* variables before a nested "
            "launcher (admins: a port range in slurm.conf, MpiParams=ports=<from>-<to>, gives each srun "
            "--mpi=cray_shasta step a port of its own)"
        )
    elif ctx.captures(rule, "attempts", ["cray_pmi"]):
        detail = (
            f"Cray PMI of {who} could not connect to the step's PMI control network: a node's high-speed network "
            "was not ready or not reachable; resubmit excluding the node (--exclude), and report it if it repeats"
        )
    elif ctx.stats(rule, ["cray_pmi_barrier"]):
        g = ctx.samples(rule, ["cray_pmi_barrier"])[0][1]
        detail = (
            f"Cray PMI of {who} timed out in its node-local bootstrap barrier: {g['synced']} of the node's "
            f"{g['pes']} processes arrived; the others were slow to start or died before MPI_Init (the node's "
            "memory, its file system, or a rank that crashed first)"
        )
    elif where := ctx.captures(rule, "where", ["cray_pmi_error"]):
        detail = (
            f"Cray PMI of {who} reported an error in {where[0]} while starting, so MPI_Init failed: a known "
            "start-up failure of the system's PMI layer (some sites document exporting PMI_SHARED_SECRET=\"\" as "
            "the workaround); report it to the site if it repeats"
        )
    else:
        detail = f"Cray PMI failed to start on {who}, so MPI_Init failed"
    return [ctx.make_finding(rule, _CRAY_PMI, detail=detail + ".", confidence=0.75)]


def _awaited_hosts(rule: Rule, ctx: Context) -> list[str]:
    """The nodes PMIx waited for: common to every "wait contrib" list (a ring dump lists the
    laggard and everything after it), plus those named by timeouts and failed connections."""
    waits = [set(expand(v)) for v in ctx.captures(rule, "host", ["wait_contrib"])]
    hosts = set.intersection(*waits) if waits else set()
    hosts |= set(ctx.captures(rule, "host", ["dmdx_timeout", "cannot_connect", "unexpected_contrib"]))
    return sorted(hosts, key=natural_key)


def _error_if_job_failed(
    rule: Rule, ctx: Context, names: list[str], detail: str, confidence: tuple[float, float], assumed: list[str]
) -> list[Finding]:
    """The finding at the rule's severity when the logs show the job failed; otherwise a warning that says what
    it assumed (``confidence``: with the failure seen, without it)."""
    if ctx.job_failed():
        return [ctx.make_finding(rule, names, detail=detail, confidence=confidence[0])]
    return [
        ctx.make_finding(rule, names, detail=detail, severity="warning", confidence=confidence[1], assumed=assumed)
    ]
