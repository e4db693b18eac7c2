"""Launch: PMIx wiring and run-time errors, rendezvous, the master port, world size against the allocation."""

from __future__ import annotations

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.common import first_or, fixed_sentence, group_store_waits, sentences
from diag.diagnosis.context import Context, hosts_text, natural_key, pick_evidence
from diag.evidence import Evidence
from diag.hostlist import expand
from diag.report import Finding
from diag.scan.facts import UNNAMED_HOST

# Printed by every rank of an MPI started without a PMI server, but also by one process run on its own.
_SINGLETON_WARNINGS = {"intel_no_pmi", "mpich_no_pmi", "mpich_dead_pmi_fd"}


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
        return [ctx.make_finding(rule, detail=detail, hosts=[h.host for h in singles], confidence=0.6)]
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


def _ends_its_log(ctx: Context, evidence: list) -> bool:
    """Whether one of these lines is the last of its file that says something (a paste's closing
    fence, a blank line or a bare prompt after it do not count)."""
    lines = ctx.last_lines()
    return any(ev.line >= lines.get(ev.path, 0) for ev in evidence)


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
    went_on = any(int(size) > 1 for size in ctx.captures(rule, "size", ["ranks_report"]))
    if frameworks and only_box and went_on and not ctx.job_failed():
        # PMIx goes on with another component of the framework (psec: native): the ranks ran.
        detail = (
            f"PMIx could not open a component of its {frameworks[0]} framework and went on with another; "
            "the ranks then reported a world of several processes and nothing failed, so it is only noise "
            "(PMIX_MCA_{0}=^<component> silences it)"
        ).replace("{0}", frameworks[0])
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


# --------------------------------------------------------------------------------------- launch
LOCAL_ADDRS = ("localhost", "127.0.0.1", "::1", "127.0.1.1")


def _earlier_roots(ctx: Context, first: tuple[int, int], exclude: str) -> list[Finding]:
    """Error-level roots found before ``first``: what a later failure is probably a consequence of."""
    return [
        f
        for f in ctx.findings.values()
        if f.id != exclude
        and f.role == "root"
        and severity_rank(f.severity) >= severity_rank("error")
        and f.first_order() < first
    ]


NO_SUCH_FAMILY = ("-9", "-5")


# What the other ranks say when rank 0 (the store's host) is gone or never set its keys.
PEER_STORE_ERRORS = (
    frozenset(
        {"store_get", "store_wait", "store_connection", "connect_refused", "client_timeout", "connect_any", "connect_timed_out"}
    )
    | frozenset({"store_closed", "store_socket", "rdzv_closed", "agent_store_lost", "stop_waiting"})
    # Ray's nodes and TensorFlow's / JAX's gRPC peers say the same of a head or peer that died of something else.
    | frozenset({"ray_gcs_connect", "ray_cluster_id", "ray_gcs_reconnect", "grpc_unreachable"})
)


# The store (or the rendezvous) went away under processes that had met: its host exited or crashed.
STORE_LOST = frozenset({"store_closed", "store_socket", "rdzv_closed", "agent_store_lost", "stop_waiting"})


# Connection attempts c10d repeats until the store answers: a failure only if it never did.
RETRIED_CONNECTS = frozenset({"connect_refused", "cannot_init", "store_retry"})

# Ray's GCS client and gRPC core (TensorFlow 1.x) retrying a head or peer that is not up yet: a worker
# started before its head logs these and joins once it is.
RETRIED_PEER_CONNECTS = frozenset({"ray_gcs_connect", "ray_cluster_id", "grpc_connect_failed"})

# Ray's forms of not reaching the head's GCS, each with the address it was given.
RAY_GCS = ["ray_gcs_unable", "ray_gcs_connect", "ray_gcs_reconnect"]


# Names whose first address is the IPv6 loopback: c10d tries ::1 before 127.0.0.1.
LOOPBACK_NAMES = frozenset({"localhost", "::1", "ip6-localhost", "ip6-loopback"})


def _ipv6_attempt(g: dict) -> bool:
    """Whether a client connect that c10d logged (as a warning) is its IPv6 try before IPv4: EAFNOSUPPORT
    (errno 97) on a host without IPv6, or EADDRNOTAVAIL (errno 99) reaching localhost where the loopback has
    no ::1 (PyTorch 1.11-2.2 print "failed to connect to [localhost]:29500 (errno: 99 - Cannot assign
    requested address)" in runs that then train). It goes on with the next address either way."""
    errno, addr = g.get("errno"), (g.get("addr") or "").lower()
    return errno == "97" or (errno == "99" and addr in LOOPBACK_NAMES)


def _rendezvous_passed(rule: Rule, ctx: Context) -> bool:
    """Whether the logs show the processes met after all: the store's barrier passed, a client
    connected, or NCCL built a communicator (its unique id travels through the store)."""
    met = ctx.stats(rule, ["barrier_done", "client_connected", "ray_joined", "ray_connected"])
    return bool(met) or ctx.count("nccl-net-plugin", ["init_complete"]) > 0


# Rank 0's own store timeout, in one line or wrapped over two.
STORE_TIMEOUT_SIGNATURES = frozenset({"clients_joined", "clients_wait", "clients_count"})


def clients_joined(ctx: Context) -> tuple[str, int, int] | None:
    """(seconds waited, processes joined, world size) from rank 0's store timeout, on one line or wrapped."""
    rule = ctx.rules.get("rendezvous-failure")
    if rule is None:
        return None
    for _ev, g in ctx.samples(rule, ["clients_joined"])[:1]:
        return g["secs"], int(g["joined"]), int(g["world"])
    waits = ctx.samples(rule, ["clients_wait"])
    counts = ctx.samples(rule, ["clients_count"])
    if waits and counts:
        return waits[0][1]["secs"], int(counts[0][1]["joined"]), int(counts[0][1]["world"])
    return None


def only_rank0_came(ctx: Context) -> tuple[str, int, int] | None:
    """Rank 0's store timed out with 1 of N processes joined and no other process was heard trying to
    reach it: the others were never started (a launch-layout fault) rather than sent elsewhere."""
    store = clients_joined(ctx)
    rule = ctx.rules.get("rendezvous-failure")
    if store is None or rule is None or not store[1] == 1 < store[2]:
        return None
    return None if ctx.stats(rule, sorted(PEER_STORE_ERRORS)) else store


def rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if "gai" in chosen and all(
        "IPv6 network addresses" in ev.text and g.get("gai") in NO_SUCH_FAMILY for ev, g in ctx.samples(rule, ["gai"])
    ):
        # The name resolves, only not to an IPv6 address (EAI_ADDRFAMILY, EAI_NODATA): PyTorch warns
        # and goes on with IPv4. A name that does not resolve at all (-2, -3) is the failure.
        chosen.discard("gai")
    if "addr_not_avail" in chosen and all("client socket" in ev.text for ev, _ in ctx.samples(rule, ["addr_not_avail"])):
        # errno 99 on a client's connect is not the store failing to bind MASTER_ADDR: the connect
        # signatures below judge those lines.
        chosen.discard("addr_not_avail")
    for name in ("cannot_init", "connect_refused"):
        # An IPv6 attempt before IPv4: socket.cpp records it as a warning and tries the next address.
        if name in chosen and all(_ipv6_attempt(g) for _, g in ctx.samples(rule, [name])):
            chosen.discard(name)
    if _rendezvous_passed(rule, ctx):
        chosen.discard("store_barrier_wait")  # it waited, then every process came
    if not chosen:
        return _store_socket_error(rule, ctx) or _stopped_in_rendezvous(rule, ctx) or _cut_in_rendezvous(rule, ctx)
    if chosen <= RETRIED_CONNECTS | RETRIED_PEER_CONNECTS and not ctx.job_failed() and _rendezvous_passed(rule, ctx):
        return []  # the workers started before rank 0's store (Ray's head) and retried until it was up
    if chosen <= STORE_LOST | {"rdzv_connection"} and ctx.stats(rule, ["agent_succeeded"]):
        return []  # this node's workers succeeded; the endpoint's agent, and its store, left first at the end
    if chosen <= {"store_socket", "store_closed"} and not ctx.job_failed():
        return []  # TCPStore's client warns so at teardown too, when rank 0's store exits before the others
    socket_sigs = ["client_timeout", "connect_any", "connect_refused", "gai", "store_socket", *RAY_GCS]
    addrs = ctx.captures(rule, "addr", socket_sigs)
    ports = ctx.captures(rule, "port", socket_sigs)
    target = f"{', '.join(addrs[:3])}:{', '.join(ports[:3])}" if addrs else "MASTER_ADDR:MASTER_PORT"
    parts = []
    if "gai" in chosen:
        hosts = sorted({h for ev, _ in ctx.samples(rule, ["gai"]) if (h := ctx.host_for(ev))})
        where = f" on {hosts_text(hosts)}" if hosts else ""
        reason = first_or(ctx.captures(rule, "reason", ["gai"]))
        parts.append(f"{', '.join(ctx.captures(rule, 'addr', ['gai'])[:3])} cannot be resolved{where} ({reason})")
    for _ev, g in ctx.samples(rule, ["host_not_found"])[:1]:
        parts.append(
            f"the store's host (MASTER_ADDR) could not be resolved ({g['reason']}): a wrong name, or a name that "
            "does not resolve yet when the ranks start (a pod or node still coming up)"
        )
    if chosen & {"addr_not_avail", "addr_not_avail_uv"}:
        parts.append(
            "the store could not listen on MASTER_ADDR: that address is not one of this host's (rank 0 runs on "
            "another node than MASTER_ADDR names, or it is a login/head node address)"
        )
    for _ev, g in [(e, g) for e, g in ctx.samples(rule, ["cannot_init"]) if "cannot_init" in chosen][:1]:
        parts.append(f"no socket to {g['addr']}:{g['port']} could be opened ({g['reason']})")
    if "connect_refused" in chosen:
        parts.append(f"nothing listened at {target} (connection refused): the store on rank 0 was not up")
    if chosen & {"client_timeout", "connect_any", "connect_timed_out"}:
        timeout = first_or(ctx.captures(rule, "timeout", ["client_timeout"]))
        parts.append(f"no connection to {target}" + (f" within {timeout}" if timeout else ""))
    if store := clients_joined(ctx):
        secs, joined, world = store
        if joined == 1 < world:
            # Nobody but rank 0 came: the others were never started, or all went elsewhere.
            parts.append(
                f"rank 0's store waited {secs} s for a world of {world} and no other process joined: the other "
                "ranks were never started (the program run once instead of under srun or torchrun on every node, "
                "fewer tasks or nodes than the world it computed) or were all given another MASTER_ADDR/PORT"
            )
        else:
            parts.append(
                f"rank 0's store waited {secs} s and only {joined} of {world} processes joined: "
                f"{world - joined} never started, crashed first, or used another MASTER_ADDR/PORT or --nnodes"
            )
    barrier = [n for n in ("store_barrier", "store_barrier_wait") if n in chosen][:1]
    for _ev, g in ctx.samples(rule, barrier)[:1]:
        world, joined = int(g["world"]), int(g["joined"])
        if joined > world:
            parts.append(
                f"{joined} processes joined a store barrier meant for {world}: another job uses the same "
                "MASTER_ADDR:MASTER_PORT, or the processes disagree on the world size"
            )
        else:
            waited = "was still waiting" if barrier == ["store_barrier_wait"] else f"waited {g['timeout']}"
            parts.append(
                f"init_process_group {waited} and only {joined} of {world} processes reached rank 0's "
                "store: the others never started, crashed first, or were given another MASTER_ADDR/PORT"
            )
    retries = ctx.samples(rule, ["store_retry"])
    if retries:
        ev, g = retries[0]
        parts.append(
            f"the store client kept retrying {g['addr']}:{g['port']} while nothing listened there: the master "
            "endpoint is an address of no running store (a stale or wrong IP for the master host, PADDLE_MASTER / "
            "MASTER_ADDR / --master set wrong), or the store on the master never started"
        )
    if "env_missing" in chosen:
        var = ", ".join(ctx.captures(rule, "var", ["env_missing"]))
        parts.append(f"{var} not set: the script uses env:// but was not started by torchrun (or the job script)")
    if chosen & {"jax_barrier", "jax_registration"}:
        parts.append(_jax_registration_part(rule, ctx))
    parts.extend(_ray_gcs_parts(rule, ctx, chosen))
    for _ev, g in ctx.samples(rule, ["grpc_unreachable", "grpc_connect_failed"])[:1]:
        said = f" ({g['target']}: {g['reason']})" if g.get("target") else f" ({g['reason']})" if g.get("reason") else ""
        parts.append(
            f"a gRPC peer (a TensorFlow cluster task, JAX's coordinator) could not be connected at any address{said}: "
            "its server was not up (yet), or the address in the cluster spec / coordinator_address is not one this "
            "node can reach (a name resolving elsewhere, another interface, a firewall)"
        )
    for _ev, g in ctx.samples(rule, ["ray_node_address"])[:1]:
        parts.append(
            f"the driver pinned its placement group's first bundle to the Ray node at {g['node_addr']}, and no Ray "
            "node has that address: the driver detected another address of its host than the one its Ray node "
            "registered with (several interfaces, a container's address); set VLLM_HOST_IP (and ray start "
            "--node-ip-address) to the address `ray status` / `ray list nodes` shows for that node"
        )
    for _ev, g in ctx.samples(rule, ["ssh_svc_unresolved"])[:1]:
        parts.append(
            f"the launcher could not resolve its worker's service name {g['svc']} ({g['reason']}): the pods' DNS "
            "does not know the headless service (launcher and worker pods need dnsPolicy: ClusterFirst, the "
            "service must exist and select the workers), or the worker pod was not ready yet"
        )
    if chosen & {"rdzv_timeout", "store_connection"}:
        parts.append("torchrun's rendezvous failed: fewer nodes than --nnodes joined, or they used different endpoints")
    if "store_get" in chosen:
        err = first_or(ctx.captures(rule, "error", ["store_get"]))
        part = f"ranks could not fetch the NCCL unique id from rank 0 through the store ({err})"
        if "timeout" in err.lower():
            # The store answered; rank 0 had not put the id there yet when the wait ran out.
            part += (
                ": rank 0 had not published it in time, still busy (data preprocessing or model loading on rank 0 "
                "alone) or dead; preprocess before init_process_group or raise its timeout"
            )
        parts.append(part)
    if chosen & {"nccl_comm_id", "nccl_comm_id_pair"}:
        value = first_or(ctx.facts.env_values("NCCL_COMM_ID"))
        parts.append(
            f"NCCL_COMM_ID{f'={value}' if value else ''} is not an address NCCL's bootstrap can use: it must be "
            "<host or IPv4>:<port> (or [<IPv6>]:<port>) of rank 0's node, the same on every rank"
        )
    if "stop_waiting" in chosen:
        parts.append("a wait on the store got no stop-waiting reply: the connection to the store broke under it")
    if chosen & {"store_closed", "store_socket"} and "store_get" not in chosen:
        at = f" at {target}" if "store_socket" in chosen else ""
        parts.append(
            f"the store{at} closed the connection (failed to recv, got 0 bytes): the process serving it (rank 0, or "
            "torchrun's agent on the rendezvous endpoint's node) exited or crashed, and its own log holds the first failure"
        )
    for _ev, g in ctx.samples(rule, ["agent_store_lost"])[:1]:
        what = "keep-alive heartbeat" if "heartbeat" in g["what"] else "shutdown"
        parts.append(
            f"torchrun's agent {g['node']} lost the rendezvous store ({what}: {g['err']}): the agent hosting it, on the "
            "rendezvous endpoint's node, exited (its workers failed, or it finished first)"
        )
    if "rdzv_closed" in chosen:
        parts.append(
            "another node's torchrun agent closed the rendezvous (its workers failed past --max-restarts, or it "
            "stopped): the cause is in that node's log"
        )
    for _ev, g in ctx.samples(rule, ["jax_connect"])[:1]:
        parts.append(
            f"a JAX process could not connect to the coordinator ({g['status'][:80]}): jax.distributed.initialize's "
            "coordinator_address is not reachable from this node, or process 0 never started the service"
        )
    for _ev, g in ctx.samples(rule, ["horovod_unreachable"])[:1]:
        parts.append(
            f"horovodrun could not reach its {g['service']} on any of {g['addrs'][:80]}: no interface with the same "
            "name routes between the hosts (name one with --network-interface)"
        )
    for _ev, g in ctx.samples(rule, ["store_wait"])[:1]:
        parts.append(
            f"a key in the store ({g['keys'][:60]}) was not set within {int(g['ms']) // 1000} s: the process "
            "that sets it (rank 0) never got there, crashed first, or used another store"
        )
    local = [a for a in addrs if a.strip("[]") in LOCAL_ADDRS]
    if local and ctx.facts.multi_node():
        parts.append(f"MASTER_ADDR is {local[0]}, which every node resolves to itself in a multi-node job")
    detail = "Rendezvous failed: " + "; ".join(parts) + "."
    first = min((ev.order for ev, _ in ctx.samples(rule, list(chosen))), default=(1 << 30, 0))
    values = {"addr": target}
    if chosen <= PEER_STORE_ERRORS and any(_earlier_roots(ctx, (1 << 62, 0), rule.id)):
        # Rank 0 died of something else: the others then cannot reach its store. Whether the store
        # error's line comes first in the file depends on how the processes' output interleaved.
        return []
    earlier = _earlier_roots(ctx, first, rule.id)
    if earlier:
        detail += f" It followed {', '.join(sorted(f.id for f in earlier))}, which may be the cause."
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values)]
    if chosen <= {"store_get", "store_wait"} and group_store_waits(ctx):
        # The store answered these reads: the processes had met in a process group, and the wait ran out on
        # a rank that had not reached the same point (nccl-timeout says so). Only processes given different
        # stores would make it a rendezvous fault, so it stays the second answer.
        detail += " The store answered, though: the processes had met, and a rank was late rather than unreachable."
        assumed = ["some ranks were given another MASTER_ADDR/MASTER_PORT than the rank that sets the key"]
        return [
            ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.35, values=values, assumed=assumed)
        ]
    if chosen <= RETRIED_PEER_CONNECTS and not ctx.job_failed() and "" not in ctx.captures(rule, "addr", RAY_GCS):
        # Ray's worker nodes and gRPC retry a head or peer that is still starting; the failure is where the run
        # stops there (ray start exiting, a task's error), or where it never gets further. An address with no
        # host is no head that is still starting: that never connects.
        assumed = ["the run stopped there: Ray and gRPC retry a head or peer that is still starting"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"grpc_unreachable"}:
        # gRPC says the same of a peer that went away mid-run; only the start makes it a rendezvous fault.
        assumed = ["the peers had not met yet: gRPC says the same of a peer that went away mid-run"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen == {"ray_no_instance"}:
        # The same words end a single-node run that simply forgot `ray start`: no peer is shown failing to meet.
        assumed = ["this driver was meant to join a Ray cluster the job starts across its nodes"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen <= {"ray_gcs_reconnect"}:
        # A GCS that answered before and stopped: its head may have gone away for a reason of its own.
        assumed = ["this node had reached the head before: the head (its GCS) may have gone away for a reason not shown"]
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values, assumed=assumed)]
    if chosen <= {"connect_refused", "cannot_init"} and not ctx.job_failed():
        # c10d logs each refused connect as a warning and retries until rank 0's store listens; it gives
        # up with an error of its own ("failed to connect to any network address", a timeout).
        assumed = ["the run stopped there: c10d retries a refused connect until rank 0's store is up"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"gai"} and not ctx.job_failed():
        # c10d's warning ([W socket.cpp]) repeats while a peer's name does not resolve yet, as pods or
        # nodes come up one after the other; it is the failure only where the run then stops.
        assumed = ["the run stopped there: c10d repeats this warning while peers still start, and goes on once they resolve"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if (
        chosen == {"ray_node_address"}
        and not ctx.job_failed()
        and not any("fulfill" in ev.text for ev, _ in ctx.samples(rule, ["ray_node_address"]))
    ):
        # `ray status` listing the pinned bundle as a pending demand: Ray still waits, and the autoscaler has
        # not yet said that no node can take it.
        assumed = ["the placement group never formed: `ray status` lists it as pending while Ray still waits"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen == {"store_barrier_wait"} and not ctx.job_failed():
        assumed = ["the run hung in init_process_group: the log ends while rank 0's store still waits"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.55, values=values, assumed=assumed)]
    if chosen == {"store_retry"} and not ctx.job_failed():
        # Retries are the client waiting: the run may yet connect (the store's host was slow to start).
        assumed = ["the run hung retrying: the log ends while the client still tries"]
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.5, values=values, assumed=assumed)]
    if chosen <= STORE_LOST and _timed_out_before(ctx, first):
        # The ranks' watchdogs gave up on a collective first, then aborted their processes, the store's
        # among them: the store going away is the timeout's consequence.
        detail += " It followed a collective timeout (nccl-timeout): the processes aborted on their watchdog, the store's among them."
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.4, values=values)]
    if chosen <= STORE_LOST:
        # Only the consequence is in these files: the store's host went away, its reason is elsewhere.
        assumed = ["the process that served the store (rank 0 or the endpoint's torchrun agent) failed first, in a log not here"]
        severity = None if ctx.job_failed() else "warning"
        return [ctx.make_finding(rule, detail=detail, severity=severity, confidence=0.5, values=values, assumed=assumed)]
    if chosen <= {"store_barrier", "store_barrier_wait"} and store_overfull(ctx):
        # More processes joined than the world: world-size-mismatch names the cause; this stays the second answer.
        return [ctx.make_finding(rule, detail=detail, confidence=0.6, values=values)]
    if chosen <= STORE_TIMEOUT_SIGNATURES and only_rank0_came(ctx):
        # world-size-mismatch names the likelier cause (nobody else was started); this stays the second answer.
        return [ctx.make_finding(rule, detail=detail, confidence=0.7, values=values)]
    return [ctx.make_finding(rule, detail=detail, values=values)]


def _timed_out_before(ctx: Context, first: tuple[int, int]) -> bool:
    """Whether a collective's watchdog timeout was printed before ``first``."""
    timeout = ctx.rules.get("nccl-timeout")
    if timeout is None:
        return False
    said = ctx.samples(timeout, ["watchdog", "work_timeout", "blocking_wait", "async_exception"])
    return bool(said) and said[0][0].order < first


def _jax_registration_part(rule: Rule, ctx: Context) -> str:
    """What JAX's coordination service says of tasks that never registered, with its count where it gives one."""
    reached = ctx.samples(rule, ["jax_reached"])
    count = ""
    for _ev, g in reached[:1]:
        count = f" ({g['joined']} of {g['world']} tasks reached it)"
    return (
        f"JAX's coordination service (jax.distributed.initialize) timed out waiting for every task to register{count}: "
        "some processes crashed before connecting, were never started (fewer tasks than num_processes), started too "
        "late for the initialization timeout, or could not reach the coordinator address; the lines after it name them"
    )


def _ray_gcs_parts(rule: Rule, ctx: Context, chosen: set[str]) -> list[str]:
    """Ray's nodes or driver not reaching the head's GCS, and what the address they were given says."""
    parts = []
    for _ev, g in ctx.samples(rule, [n for n in RAY_GCS if n in chosen])[:1]:
        where = f"{g['addr']}:{g['port']}"
        if not g["addr"]:
            parts.append(
                f"a Ray node was pointed at the head address '{where}', which has no host: the variable meant to "
                "hold the head's address (MASTER_ADDR, the head's IP) was empty where `ray start --address` ran"
            )
        elif "ray_gcs_reconnect" in chosen and len(chosen & set(RAY_GCS)) == 1:
            parts.append(
                f"the head's GCS at {where} stopped answering this node: the head node went away (crashed, preempted) "
                "or is reachable only badly from here (a slow or lossy link)"
            )
        else:
            parts.append(
                f"a Ray node or driver could not reach the head's GCS at {where}: the head was not running (yet) at "
                "that address, --address / RAY_ADDRESS names a host or port this node cannot reach (a firewall, "
                "another interface), or the head runs another Ray version"
            )
    if "ray_no_instance" in chosen:
        parts.append(
            "the driver found no Ray cluster to join on its node (ray.init(address='auto') or RAY_ADDRESS): `ray start` "
            "(--head, or a worker with --address=<head>:6379) did not run on that node before the driver, or it had "
            "exited; a stale /tmp/ray/ray_current_cluster can also name a cluster that is gone"
        )
    if "ray_gcs_down" in chosen and not parts:
        parts.append("Ray could not connect to its GCS: the GCS server did not come up (its gcs_server.out on the head says why)")
    return parts


# The bare errno text PyTorch 1.x's TCPStore client raised, and what it says about the store.
_STORE_ERRNO = {
    "Connection refused": "nothing listened there (rank 0's store was not up yet or had exited, or another port)",
    "Connection reset by peer": "the store's end dropped the connection (its process exited or crashed)",
}
_STORE_ERRNO_DEFAULT = "nothing answered (an address other nodes cannot route to, a firewall, or rank 0 never started)"


def _store_socket_error(rule: Rule, ctx: Context) -> list[Finding]:
    """PyTorch 1.x's TCPStore constructor raising the socket's errno text bare ("RuntimeError: Connection timed
    out", "No route to host") right under its traceback frame: the client never reached MASTER_ADDR:MASTER_PORT."""
    frames = [ev for ev, _ in ctx.samples(rule, ["store_ctor", "rendezvous_frame"])]
    raised = [
        (ev, g)
        for ev, g in ctx.samples(rule, ["store_errno"])
        if any(f.path == ev.path and 0 < ev.line - f.line <= 2 for f in frames)
    ]
    if not raised or _earlier_roots(ctx, (1 << 62, 0), rule.id):
        return []  # a bare errno elsewhere is not the store's; after another root cause it is a consequence
    ev, g = raised[0]
    why = _STORE_ERRNO.get(g["reason"], _STORE_ERRNO_DEFAULT)
    detail = (
        f"Rendezvous failed: the TCPStore client could not connect to MASTER_ADDR:MASTER_PORT ({g['reason']}): {why}."
    )
    return [ctx.make_finding(rule, ["store_errno"], detail=detail, evidence=[ev], confidence=0.8)]


def _stopped_in_rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    """A process stopped (Ctrl-C, the time limit) while its traceback shows it still inside
    init_process_group's rendezvous: the processes waited there and never all met."""
    frames = ctx.samples(rule, ["rendezvous_frame"])
    if not frames or not (ctx.samples(rule, ["interrupted"]) or ctx.count("job-time-limit")):
        return []
    detail = (
        "The processes were stopped while still waiting in init_process_group's rendezvous, so they never all "
        "met at one store: every process must get the same MASTER_ADDR and MASTER_PORT (chosen once before they "
        "start, not a free port each process picks for itself) and WORLD_SIZE processes must be started"
    )
    assumed = ["the run hung in the rendezvous: it was stopped there, it did not fail with an error"]
    return [
        ctx.make_finding(
            rule, ["rendezvous_frame", "interrupted"], detail=detail + ".", evidence=pick_evidence(ev for ev, _ in frames),
            confidence=0.45, assumed=assumed,
        )
    ]  # fmt: skip


def _cut_in_rendezvous(rule: Rule, ctx: Context) -> list[Finding]:
    """An excerpt that ends inside a traceback whose innermost frames are the rendezvous' store calls:
    the exception line itself was left out, but where the process failed is known."""
    last = ctx.last_lines()
    frames = [ev for ev, _ in ctx.samples(rule, ["rendezvous_frame"]) if ev.line >= last.get(ev.path, 0) - 2]
    if not frames or any(severity_rank(f.severity) >= severity_rank("error") for f in ctx.findings.values()):
        return []
    detail = (
        "The excerpt ends in a traceback inside the rendezvous (its store calls), without the exception: the "
        "processes could not reach or use the rendezvous store (MASTER_ADDR/MASTER_PORT or --rdzv-endpoint "
        "not reachable from every node, a port the network does not let through)"
    )
    assumed = ["the exception the traceback ends in was left out of the excerpt; it failed where its last frames are"]
    return [
        ctx.make_finding(
            rule, ["rendezvous_frame"], detail=detail + ".", evidence=frames[-1:], confidence=0.35, assumed=assumed,
            severity="warning",
        )
    ]  # fmt: skip


def port_in_use(rule: Rule, ctx: Context) -> list[Finding]:
    if not ctx.stats(rule):
        return []
    ports = ctx.captures(rule, "port") or [
        a.rsplit(":", 1)[-1] for a in ctx.captures(rule, "addr") if ":" in a and a.rsplit(":", 1)[-1].isdigit()
    ]
    by_host: dict[str, set] = {}
    for ev, _ in ctx.samples(rule, [s.name for s in rule.signatures]):
        host = ctx.host_for(ev) or "?"
        by_host.setdefault(host, set()).add((ev.task, ev.pid, ev.local_rank, ev.rank))
    crowded = {h: len(v) for h, v in by_host.items() if len(v) > 1}
    port = ", ".join(dict.fromkeys(ports)) or "MASTER_PORT"
    detail = f"Port {port} was already in use"
    chosen = {n for n, _ in ctx.stats(rule)}
    if chosen <= {"port_range", "horovod_port"}:
        span = first_or([f"{g['lo']}..{g['hi']}" for _, g in ctx.samples(rule, ["port_range"])], "")
        port = span or "any port"
        detail = f"No free port {'in ' + span if span else 'to listen on'} was left"
    elif chosen == {"nccl_bind"}:
        comm_id = first_or(ctx.facts.env_values("NCCL_COMM_ID"))
        port = comm_id.rsplit(":", 1)[-1] if comm_id else "NCCL_COMM_ID's port"
        detail = f"NCCL could not bind its bootstrap port ({comm_id or 'NCCL_COMM_ID'}): it was already in use"
    hosts = [h for h in by_host if h != "?"]
    if hosts:
        detail += f" on {hosts_text(hosts)}"
    if chosen <= {"port_range", "horovod_port"}:
        detail += ": the range the launcher may use is full (other jobs or leftover processes on that node), or set too narrow"
    elif chosen == {"nccl_bind"}:
        # init.cc: with NCCL_COMM_ID set, rank 0 of every communicator starts a bootstrap root on that address.
        detail += (
            ": with NCCL_COMM_ID set, rank 0 of every communicator listens on that one address, so a second "
            "communicator created while the first still bootstraps (or another job on the node) cannot; unset "
            "NCCL_COMM_ID and let the framework pass NCCL its unique id"
        )
    elif crowded:
        where = ", ".join(f"{n} on {h}" if h != "?" else f"{n}" for h, n in crowded.items())
        detail += (
            f": {where} launchers tried to serve the store on one node, so more than one torchrun ran per node "
            "(srun started it once per GPU instead of once per node)"
        )
    else:
        detail += ": another process on that node (a second launcher or job, or a leftover run) holds it"
    return [ctx.make_finding(rule, detail=detail + ".", values={"port": port}, hosts=hosts)]


def _not_divisible(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["not_divisible"])[:1]:
        by = g["by"].rstrip(".")
        if g.get("what", "").startswith("data"):
            return f"the data-parallel size the started processes give ({g['a']}) does not divide by {by}"
        if not g.get("a"):
            # Megatron 23.04's message has no world size of its own (its first number is the world size).
            return f"the number of processes started is not divisible by the parallel layout ({by})"
        return f"{g['a']} processes were started, which the parallel layout ({by}) does not divide"
    return None


def _lightning_slurm(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["lightning_slurm"])[:1]:
        if g.get("opt"):
            return f"Lightning's {g['what']}={g['a']} does not match Slurm's --{g['opt']}={g['b']}"
        per = "tasks per node" if g["what"] == "devices" else "nodes"
        return f"Lightning's {g['what']}={g['a']} does not match the {per} Slurm gave the job"
    return None


def _mpi_slots(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["mpi_slots"])[:1]:
        want = f" {g['want']}" if g.get("want") else ""
        return f"mpirun asked for{want} more processes than the allocation has slots (tasks)"
    return None


def _step_create(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["step_create"])[:1]:
        if g["reason"].startswith(("Task count", "Invalid node name")):
            # A count or node name the step cannot use at all, not one beyond the allocation.
            return f"srun could not lay out the step in job {g['job']} ({g['reason']})"
        return f"an srun step asked for more than job {g['job']} holds ({g['reason']})"
    return None


def _sampler_rank(rule: Rule, ctx: Context, chosen: set[str]) -> str | None:
    for _ev, g in ctx.samples(rule, ["sampler_rank"])[:1]:
        world = int(g["max"]) + 1
        return f"a DistributedSampler got rank {g['rank']} in a world of {world}: RANK and WORLD_SIZE disagree"
    return None


# What does not match, in this order (diag.diagnosis.analyzers.common.sentences).
LAYOUT_SENTENCES: tuple = (
    (["rank_count", "info_mismatch"], "ranks passed different world sizes to NCCL ({a} vs {b})"),
    (
        ["checked_in"],
        "two processes claimed rank {rank} of {nranks}: every task got the same RANK, or torchrun "
        "was started once per GPU with the same --node-rank",
    ),
    ([], _step_create),
    (["only_allocated"], "an srun step asked for {want} nodes in a {have}-node allocation"),
    (
        ["nnodes_reset"],
        "srun ran {tasks} tasks on {have} nodes instead of the {want} asked for, "
        "so anything computed from the asked-for node count is wrong",
    ),
    (["ntasks_per_node"], "srun ignored --ntasks-per-node={per_node} ({tasks} tasks requested)"),
    (
        ["launchers_disagree"],
        "the {launcher} launcher started {a} processes but torch.distributed sees a world of {b}: "
        "the two launchers disagree on the layout (processes per node, hosts)",
    ),
    (
        ["launchers_disagree_rank"],
        "the MPI launcher gave a process rank {a} but torch.distributed rank {b}: the two launchers disagree on "
        "the layout",
    ),
    (["deepspeed_hostfile"], "DeepSpeed's launcher refused its hostfile: {msg}"),
    (["deepspeed_slot", "deepspeed_node_rank"], "DeepSpeed's launcher could not place the processes: {msg}"),
    (["deepspeed_mpich"], "DeepSpeed's {mpi} launcher needs the same number of GPUs on every node"),
    (
        ["device_mesh"],
        "the device mesh needs the same GPU count on every node, but {a} ranks are not a whole number of nodes "
        "of {b} GPUs",
    ),
    (["batch_dp"], "the global batch ({gbs}) does not divide by the micro batch ({mbs}) times a data-parallel size of {dp}"),
    (["bare_divisible"], "a parallel group size does not divide: {a} is not divisible by {b}"),
    (["accelerate_parallelism"], "the parallelism config needs {a} processes but {b} were started"),
    (["tf_slurm_resolver"], "TensorFlow's Slurm cluster resolver found the step smaller than asked: {msg}"),
    (
        [
            "slurm_layout", "slurm_alloc_failure", "slurm_unable", "sbatch_refused", "slurm_bad_count",
            "slurm_no_nodes", "slurm_ntasks_per_gpu"
        ],
        "Slurm refused the layout asked for: {msg}",
    ),
    (
        [
            "ompi_ppr", "ompi_filled", "ompi_hosts_outside", "ompi_per_node", "ompi_binding", "ompi_no_nodes",
            "ompi_seq", "ompi_seq_file", "ompi_np_omitted", "ompi_unmapped", "ompi_slurm_no_hosts"
        ],
        "Open MPI could not map the processes onto the allocation: {msg}",
    ),
    (["layout_needs"], "the parallel layout in the config needs {a} processes, but {b} were started"),
    ([], _not_divisible),
    (
        ["dp_rank_beyond"],
        "a process got data-parallel rank {rank} of {dp}: its rank and the world size the layout was computed from "
        "disagree",
    ),
    (["parallel_dims"], "the parallel dimensions {dims} do not multiply to the {world} processes started"),
    (["mesh_bigger"], "the device mesh asks for {ranks} ranks, more than the {world} processes started"),
    (
        [
            "grid_oversized", "lightning_model_parallel", "pipeline_world", "pipe_stages", "inference_shards",
            "mics_shards", "mimo_stub_ranks", "expert_degree", "trtllm_world"
        ],
        "the parallel layout the program was given does not fit the processes started: {msg}",
    ),
    (
        ["lightning_product"],
        "Lightning's devices={a} x num_nodes={b} does not match the {world} processes torchrun started",
    ),
    (
        ["lightning_ntasks"],
        "Lightning needs --ntasks-per-node (one task per device), not --ntasks={ntasks}",
    ),
    (
        ["zero_dp_resume"],
        "the ZeRO checkpoint was written by {a} data-parallel ranks and is loaded by {b}: resume with the "
        "checkpoint's layout or convert the checkpoint",
    ),
    (["elastic_world"], "DeepSpeed's elastic config allows world sizes {valid}, not the {world} processes started"),
    (
        ["local_rank_devices"],
        "LOCAL_RANK is not RANK modulo the GPUs the node shows: the tasks per node and the GPUs each task sees "
        "disagree",
    ),
    (
        ["local_rank_conflict"],
        "LOCAL_RANK is {a} but {var} is {b}: two launchers (mpirun and torchrun or deepspeed) each set the ranks",
    ),
    (
        ["launcher_env_rank", "launcher_local_rank"],
        "DeepSpeed found the rank variables missing or contradictory ({msg}): start it under one launcher that "
        "sets them",
    ),
    (["all_to_all_group"], "DeepSpeed's all-to-all groups need whole nodes of the node's GPU count ({msg})"),
    (["nodes_min_max", "deepspeed_limits", "torchrun_nproc"], "the launcher refused its node or GPU counts: {msg}"),
    (
        ["accelerate_processes", "accelerate_num_processes"],
        "accelerate launch was not given a usable process count: {msg}",
    ),
    (
        ["horovod_hosts", "horovod_short_slots", "horovod_impi_slots", "horovod_min_hosts"],
        "horovodrun's hosts and slots do not fit the processes asked for: {msg}",
    ),
    (["horovod_min_slots"], "horovodrun never found slots for the {want} processes it needs at least"),
    (
        ["jax_undefined", "tf_slurm_step"],
        "the process was not started as a task of the job's step, so it has no process count or id ({msg})",
    ),
    (
        ["jax_cluster"],
        "JAX found no {method} step to take its process count from ({why}): start it with srun inside the allocation",
    ),
    (
        ["srun_unused"],
        "Lightning runs on Slurm but the script was not started with srun: one process runs and waits for the others",
    ),
    (
        ["ray_worker_start"],
        "Ray Train waited {secs} s for {workers} workers to be placed: the cluster may not have the resources the "
        "ScalingConfig asks for",
    ),
    (["batch_world"], "the DeepSpeed batch sizes were set for another number of processes ({a} != {b})"),
    ([], _lightning_slurm),
    (
        ["lightning_gpus"],
        "Lightning was asked for GPUs [{want}] that the task cannot see (srun --gpus-per-task=1 or CUDA_VISIBLE_DEVICES "
        "gives each task its own GPU: ask for devices=1 per task, or give one task per node all of them)",
    ),
    ([], _mpi_slots),
    (
        ["ray_bundle_index"],
        "a Ray task or actor was placed on bundle {index} of a placement group that has no such bundle (Ray lists "
        "its indexes as 0-{top}): the "
        "layout places more workers (engines x tensor parallel size, GPUs per node x nodes) than the placement "
        "group reserved",
    ),
    (
        ["ray_gpus_short"],
        "the Ray cluster the job joined offers {have} GPUs where it asks for {want}: a node did not join the "
        "cluster, or ray.init started a local instance (ray.init(address='auto') joins the running one)",
    ),
    (
        ["ray_placement_retries"],
        "Ray never offered the GPUs the layout asks for ({tries} placement retries): the job's node and GPU counts "
        "exceed the cluster's (a dedicated Ray head node has no GPUs: count one node less)",
    ),
    (
        ["vllm_node_gpus"],
        "vLLM's world size (tensor x pipeline parallel, {world}) is more than the {have} GPUs this node shows: its "
        "default multiprocessing executor runs on one node, so a layout over several nodes needs the Ray executor "
        "(--distributed-executor-backend ray) or --nnodes/--node-rank on each node",
    ),
    (
        ["vllm_ray_gpus"],
        "the Ray {where} vLLM joined has fewer GPUs than tensor x pipeline parallel: a node did not join the "
        "cluster, or vLLM started a local Ray instance instead of joining it (RAY_ADDRESS, ray.init(address='auto'))",
    ),
    (
        ["vllm_placement_timeout"],
        "Ray never offered vLLM the GPUs its layout asks for ({secs} s waiting for the placement group): the "
        "cluster's nodes or GPUs are fewer than tensor x pipeline parallel",
    ),
    (
        ["deepspeed_no_gpus"],
        "DeepSpeed's launcher found no GPUs on the node it runs on: the step was given none (--gres=gpu:<n> or "
        "--gpus-per-node), CUDA_VISIBLE_DEVICES hides them, or it runs on a host without GPUs",
    ),
    (
        ["local_rank_gpus", "invalid_device_id"],
        "a LOCAL_RANK is beyond the GPUs the process can see: more processes per node than GPUs, or each task sees "
        "only its own GPU (--gpus-per-task) while the program picks the GPU by its local rank",
    ),
    (
        ["device_index_assert"],
        "a process asked for GPU {device} where it sees {have}: more processes per node than GPUs, or each task sees "
        "only its own GPU while the program picks the GPU by its local rank",
    ),
    (
        ["jax_mesh_devices"],
        "the JAX mesh {shape} was written for another device count than the {have} devices the processes see: a "
        "process did not join (jax.distributed.initialize) or sees fewer GPUs than it should",
    ),
    (
        ["k8s_insufficient"],
        "Kubernetes can place no pod of the job: {n} node(s) lack the {resource} it asks for, so the job asks for "
        "more (or larger) workers than the cluster has free",
    ),
    (
        ["ray_infeasible", "cluster_insufficient"],
        "the cluster has no node (or not enough of them) with the resources the workers ask for: fewer or smaller "
        "workers, or more nodes",
    ),
    (["env_nodes_conflict"], "{var} says {a} nodes where the allocation has {b}: a script exported its own value"),
    (["horovod_slots"], "horovodrun asked for {want} processes where its hosts list {have} slots"),
    (
        ["mii_replicas"],
        "DeepSpeed-MII could place only {have} of the {want} model replicas asked for: replicas x tensor_parallel "
        "(tensor_parallel is per replica) needs more GPUs than the hostfile's slots",
    ),
    (["jax_process_id"], "JAX was given process {rank} of {nranks}: RANK and WORLD_SIZE disagree"),
    (
        ["tests_gpus_short"],
        "nccl-tests asked for {want} GPUs per process where the task sees {have}: -g/-t times the processes per "
        "node must not exceed the node's GPUs (one process per GPU: -g 1)",
    ),
    (["nvshmem_rank_count"], "NVSHMEM's processes were given different world sizes ({a} and {b})"),
    (["nccl_invalid_rank"], "a process asked NCCL for rank {rank} in a world of {nranks}: RANK and WORLD_SIZE disagree"),
    ([], _sampler_rank),
    ([], fixed_sentence("device_ordinal", "a LOCAL_RANK is beyond the GPUs the task can see (invalid device ordinal)")),
)


# A Ray resource request pinned to one node's address, as vLLM's placement group asks for its driver's node.
PINNED_TO_NODE = "'node:"


def world_size(rule: Rule, ctx: Context) -> list[Finding]:
    chosen = {n for n, _ in ctx.stats(rule)}
    if "ray_infeasible" in chosen and all(PINNED_TO_NODE in ev.text for ev, _ in ctx.samples(rule, ["ray_infeasible"])):
        # Every request Ray could not place is pinned to a node's address (vLLM's "node:<driver IP>" bundle):
        # no node has that address, whatever its GPUs; rendezvous-failure names the address.
        chosen.discard("ray_infeasible")
    if not chosen:
        return (
            _ranks_claimed_twice(rule, ctx)
            or _separate_worlds(rule, ctx)
            or _separate_test_worlds(rule, ctx)
            or _ranks_beyond_world(rule, ctx)
            or _members_never_joined(rule, ctx)
            or _only_rank0_came(rule, ctx)
            or _store_overfull(rule, ctx)
            or _launchers_alone(rule, ctx)
            or _device_list_index(rule, ctx)
        )
    if chosen == {"device_ordinal"} and ctx.count(rule.id, ["nvml_peer_hidden"]):
        # NCCL could not see a local peer's GPU: each task sees only its own (per-task GPU binding), where
        # every task's GPU is device 0 and any other ordinal is invalid. No count disagrees; the honest
        # unexplained finding names the binding.
        return []
    parts = sentences(rule, ctx, chosen, LAYOUT_SENTENCES)
    detail = "Launch layout does not match: " + "; ".join(parts) + "."
    if chosen <= {"nnodes_reset", "ntasks_per_node", "srun_unused", "ray_worker_start"}:
        # srun adjusted the layout and the step ran, Lightning warned that srun was not used, Ray Train's
        # start timed out (resources while autoscaling, or the network): worth knowing, not a failure by itself.
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.6)]
    if chosen == {"vllm_ray_gpus"} and not ctx.job_failed():
        # Newer vLLM logs it as a warning and waits for the placement group: the cluster may still grow.
        return [ctx.make_finding(rule, detail=detail, severity="warning", confidence=0.6)]
    unexplained = ctx.rules.get("unexplained-failure")
    if chosen == {"bare_divisible"} and unexplained and ctx.count(unexplained.id, ["shape_divide"]):
        # Megatron's/ColossalAI's divide() asserts "<a> is not divisible by <b>" for any two sizes; the traceback
        # shows it dividing a model shape (hidden size by heads): the model's configuration, a guess for the layout.
        detail += " The traceback shows it dividing a model shape (hidden size, heads), not a parallel layout"
        return [ctx.make_finding(rule, detail=detail + ".", severity="warning", confidence=0.3)]
    return [ctx.make_finding(rule, detail=detail)]


# How far below a traceback's source line its exception may be (the frames under it, "^^^^" markers).
_INDEX_ERROR_REACH = 4


def _device_list_index(rule: Rule, ctx: Context) -> list[Finding]:
    """An IndexError just under a traceback line that picks the process's device by its local rank
    (Lightning's ``self.parallel_devices[self.local_rank]``): the node runs more processes than the
    devices the program was given for it (devices per node below the tasks Slurm placed there, nodes
    with uneven GPU counts). An IndexError elsewhere says nothing of the layout."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return []
    picks = [ev for ev, _ in ctx.samples(rule, ["local_rank_index"])]
    errors = [
        ev
        for ev, g in ctx.samples(unexplained, ["exception"])
        if g.get("exception", "").rsplit(".", 1)[-1] == "IndexError"
    ]
    hits = [
        err
        for err in errors
        if any(p.path == err.path and 0 < err.line - p.line <= _INDEX_ERROR_REACH for p in picks)
    ]
    if not hits:
        return []
    pick = next(p for p in picks if any(p.path == e.path and 0 < e.line - p.line <= _INDEX_ERROR_REACH for e in hits))
    detail = (
        "Launch layout does not match: a process's local rank is past the end of the device list it picks its GPU "
        f"from ({pick.text.strip()[:80]} raised IndexError): more processes were started on its node than the "
        "devices the program was given for that node (the devices per node set in the program below the tasks "
        "Slurm placed there, or nodes with different GPU counts while the program assumes one count for all)."
    )
    assumed = ["the device list is the program's devices per node, and the local rank the task's place on its node"]
    return [
        ctx.make_finding(
            rule, [], detail=detail, evidence=pick_evidence([pick, *hits]), confidence=0.55, assumed=assumed
        )
    ]


def _separate_worlds(rule: Rule, ctx: Context) -> list[Finding]:
    """Every node holds ranks 0..k-1 of a k-rank communicator and no communicator is larger: each
    node ran a job of its own (nccl-tests built without MPI=1 under mpirun, a launcher that gave
    every node the same world), not one job spanning the nodes."""
    facts = ctx.facts
    k = facts.max_nranks
    hosts = [h for h in facts.hosts.values() if h.ranks and h.host != UNNAMED_HOST]
    if k < 2 or len(hosts) < 2 or any(h.ranks != set(range(k)) for h in hosts):
        return []
    detail = (
        f"{len(hosts)} nodes ({hosts_text([h.host for h in hosts])}) each ran ranks 0-{k - 1} of their own {k}-rank "
        "communicator and no communicator spans the nodes: each node ran a separate job (nccl-tests must be "
        "built with MPI=1 to run across nodes under mpirun; every launcher must get the whole world)"
    )
    severity = "error" if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=[h.host for h in hosts], severity=severity, confidence=0.5
        )
    ]


def _separate_test_worlds(rule: Rule, ctx: Context) -> list[Finding]:
    """nccl-tests printing its rank 0 on several hosts: as above, seen in nccl-tests' own device list
    (no NCCL INFO needed): each process ran a world of its own, so its figures are single-node ones."""
    first = ctx.facts.tests_rank0
    if len(first) < 2:
        return []
    hosts = sorted(first, key=natural_key)
    detail = (
        f"nccl-tests listed its rank 0 on {len(hosts)} hosts ({hosts_text(hosts)}): every process ran as a job of "
        "its own, not as ranks of one job, so no traffic crossed the nodes and the bandwidth figures are single-node "
        "ones. nccl-tests joins its processes only through MPI: rebuild it with `make MPI=1 MPI_HOME=<mpi>` "
        "(`make clean` first) and launch it with mpirun or `srun --mpi=pmix`"
    )
    evidence = [
        ctx.evidence_at(order, text, host)
        for host, (order, text) in sorted(first.items(), key=lambda item: item[1][0])[:4]
    ]
    severity = "error" if ctx.job_failed() else "warning"  # as _separate_worlds weighs it
    return [
        ctx.make_finding(
            rule, [], detail=detail + ".", hosts=hosts, evidence=evidence, severity=severity, confidence=0.6
        )
    ]


def _task_numbers(text: str) -> set[int]:
    """srun's task list ("2-7", "8-13,15") as numbers."""
    out: set[int] = set()
    for part in text.split(","):
        low, _, high = part.partition("-")
        if not (low.isdigit() and len(low) < 10 and (not high or (high.isdigit() and len(high) < 10))):
            continue  # not a task list srun writes (a log line of another program, digits past int()'s limit)
        if int(high or low) - int(low) < 100_000:
            out.update(range(int(low), int(high or low) + 1))
    return out


def _ranks_beyond_world(rule: Rule, ctx: Context) -> list[Finding]:
    """NCCL's "invalid argument" at init, and srun saying every task from some k > 0 up failed while tasks
    0..k-1 did not: the program was given a world of k processes (a --world-size or WORLD_SIZE of its own)
    while srun started more; NCCL rejects a rank that is not below the world size."""
    unexplained = ctx.rules.get("unexplained-failure")
    if unexplained is None:
        return []
    failed: set[int] = set()
    for _, g in ctx.samples(unexplained, ["task_exit"]):
        if g.get("how", "").startswith("Exited with exit code"):
            failed |= _task_numbers(g.get("task", ""))
    if not failed or min(failed) < 1 or failed != set(range(min(failed), max(failed) + 1)):
        return []
    errors = [ev for ev, _ in ctx.samples(unexplained, ["exception", "nccl_error"])]
    invalid = [ev for ev in errors if "NCCL" in ev.text and "invalid argument" in ev.text]
    if not invalid:
        return []
    k, top = min(failed), max(failed)
    detail = (
        f"tasks {k}-{top} failed at NCCL's set-up with \"invalid argument\" while tasks 0-{k - 1} did not: the program "
        f"was given a world of {k} processes (its own --world-size or WORLD_SIZE) while srun started {top + 1}, and "
        "NCCL rejects a rank that is not below the world size; derive the world size from SLURM_NTASKS, or start "
        "as many tasks as the world it is told"
    )
    assumed = [f"srun started {top + 1} tasks (the highest failing task is {top})"]
    return [
        ctx.make_finding(
            rule, [], detail="Launch layout does not match: " + detail + ".", evidence=pick_evidence(invalid),
            confidence=0.55, assumed=assumed,
        )  # fmt: skip
    ]


def _only_rank0_came(rule: Rule, ctx: Context) -> list[Finding]:
    """Rank 0's store timing out with 1 of N processes joined, and no other process heard from: the
    others were never started (the script run once instead of under srun or torchrun on every node,
    a layout that computes a larger world than was launched). Other ranks that were started and
    went elsewhere would fail to reach the store, and say so; then it is the rendezvous."""
    store = only_rank0_came(ctx)
    if store is None:
        return []
    secs, _, world = store
    rendezvous_rule = ctx.rules["rendezvous-failure"]
    timeout = ctx.stats(rendezvous_rule, sorted(STORE_TIMEOUT_SIGNATURES))
    detail = (
        f"Launch layout does not match: the job computed a world of {world} processes but only rank 0 reached "
        f"its store in {secs} s and no other process was heard from, so the other {world - 1} were never started "
        "(start the script with srun on every node, or torchrun with --nnodes/--nproc-per-node that match the "
        "allocation; a framework's strategy or devices setting can ask for more processes than were launched)"
    )
    finding = ctx.make_finding(rule, [], detail=detail + ".", evidence=pick_evidence(ev for _, st in timeout for ev, _ in st.samples))
    finding.count = sum(st.count for _, st in timeout)
    return [finding]


def store_overfull(ctx: Context) -> tuple[Evidence, int, int] | None:
    """(line, processes joined, world size) where PyTorch's store-based barrier counted more processes than
    the world it was given: its count only stops at exactly the world size, so extra processes make it wait
    until it times out. More joined than the world is always extra launches (torchrun under srun with one
    task per GPU, two launchers per node), never a late or lost rank."""
    rule = ctx.rules.get("rendezvous-failure")
    if rule is None:
        return None
    for ev, g in ctx.samples(rule, ["store_barrier", "store_barrier_wait"]):
        if int(g["joined"]) > int(g["world"]):
            return ev, int(g["joined"]), int(g["world"])
    return None


def _store_overfull(rule: Rule, ctx: Context) -> list[Finding]:
    overfull = store_overfull(ctx)
    if overfull is None:
        return []
    ev, joined, world = overfull
    detail = (
        f"Launch layout does not match: {joined} processes joined the store-based barrier of a {world}-process "
        "world, so the barrier never completes: more processes were started than the world size they were given "
        "(torchrun started under srun once per GPU instead of once per node, or two launchers on a node; "
        "--ntasks-per-node=1 for torchrun, or WORLD_SIZE=$SLURM_NTASKS when srun starts every process)"
    )
    return [ctx.make_finding(rule, [], detail=detail + ".", evidence=[ev])]


def _launchers_alone(rule: Rule, ctx: Context) -> list[Finding]:
    """torchrun's agent reporting a rendezvous of one node (group_world_size=1), or DeepSpeed's launcher
    started for one node (nnodes=1), in a job that spans several nodes: that launcher ran a world of its
    own, and the nodes never formed one job. Several such reports from different hosts show it; one
    report in a log that shows several nodes is a weaker sign (the launcher may have been meant to run
    alone), so it says what it assumed."""
    alone = ctx.samples(rule, ["elastic_alone", "ds_launch_alone"])
    if not alone:
        return []
    hosts = sorted({h for ev, _ in alone if (h := ctx.host_for(ev))}, key=natural_key)
    several = len(hosts) >= 2
    if not several and ctx.facts.nodes_known() is not True:
        return []
    launcher = "torchrun's agent" if any(n == "elastic_alone" for n, _ in ctx.stats(rule, ["elastic_alone"])) else "DeepSpeed's launcher"
    where = f"on {hosts_text(hosts)}" if several else "in this multi-node job"
    detail = (
        f"Launch layout does not match: {launcher} {where} formed a world of one node: each node's launcher ran "
        "its own job instead of one job across the nodes (torchrun --nnodes=$SLURM_NNODES with one shared "
        "--rdzv-endpoint on the first node, not localhost or --standalone; deepspeed with a hostfile of every node)"
    )
    assumed = [] if several else ["the other nodes' launchers did the same: only one launcher's report is in the logs"]
    severity = None if ctx.job_failed() else "warning"
    return [
        ctx.make_finding(
            rule,
            ["elastic_alone", "ds_launch_alone"],
            detail=detail + ".",
            evidence=pick_evidence(ev for ev, _ in alone),
            hosts=hosts or None,
            severity=severity,
            confidence=0.7 if several else 0.5,
            assumed=assumed,
        )
    ]


def _members_never_joined(rule: Rule, ctx: Context) -> list[Finding]:
    """Lightning announcing fewer members than its world, and the log ending there: the run waits
    for members that were never started. Lightning's SLURM guide names the causes: a job started
    without srun, or #SBATCH --nodes / --ntasks-per-node that disagree with num_nodes / devices."""
    st = dict(ctx.stats(rule, ["lightning_member"])).get("lightning_member")
    if st is None or ctx.job_failed():
        return []
    ranks = st.captures.get("rank", {})
    worlds = [int(w) for w in st.captures.get("world", {})]
    if not worlds or len(ranks) >= max(worlds) or not _ends_its_log(ctx, [ev for ev, _ in st.samples]):
        return []
    detail = (
        f"Lightning announced {len(ranks)} of {max(worlds)} members and the log ends there: the other processes "
        "were never started, so initialisation waits for them (start the script with srun, and make #SBATCH "
        "--nodes / --ntasks-per-node match Trainer(num_nodes=..., devices=...))"
    )
    assumed = ["the run hung at this line: the log shows nothing after it"]
    return [
        ctx.make_finding(
            rule, ["lightning_member"], detail=detail + ".", severity="warning", confidence=0.45, assumed=assumed
        )
    ]


def _ranks_claimed_twice(rule: Rule, ctx: Context) -> list[Finding]:
    """Lightning's per-process announcement (``GLOBAL_RANK: r, MEMBER: m/n``) with the same ranks
    announced more than once and fewer distinct ranks than the world: two launchers each started
    ranks 0.. of the layout (num_nodes / --nodes / --ntasks-per-node disagree)."""
    stats = dict(ctx.stats(rule, ["lightning_member"]))
    st = stats.get("lightning_member")
    if st is None:
        return []
    ranks = st.captures.get("rank", {})
    worlds = [int(w) for w in st.captures.get("world", {})]
    if not ranks or not worlds or st.count <= len(ranks) or len(ranks) >= max(worlds):
        return []
    detail = (
        f"Launch layout does not match: {len(ranks)} of {max(worlds)} ranks were each announced "
        f"{st.count // len(ranks)} times: several nodes started as the same node of the layout, so the "
        "other ranks never joined (Lightning's num_nodes and devices must match Slurm's --nodes and --ntasks-per-node)."
    )
    return [ctx.make_finding(rule, ["lightning_member"], detail=detail, confidence=0.7)]


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
