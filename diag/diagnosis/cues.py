"""The words of a cause: a weak answer for error lines whose message form no rule knows.

Real pastes hold message forms nobody here has seen: another version's wording, another
framework re-raising the error in its own words. When no root cause was found, an error line that
names what a cause is about (``/dev/shm``, ``/dev/infiniband``, ``NCCL_IB_HCA``, ``pmix``) still
says more than "no known cause": the cause whose cues (``cues:`` in its rule) such lines name is
reported at low confidence, and the finding says that it rests on words, not on a known message.

Only lines that look like errors are read (unexplained-failure's exception, Slurm error and NCCL
WARN lines, and the sampled error lines of a paste), never an INFO line: a working run prints
``/dev/shm`` and ``NCCL_IB_HCA`` in its INFO lines all the time. Without a failure in the logs the
finding is a warning at most, so a run that went on is never reported as failed because of a word.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache

from diag.catalog.causes import severity_rank
from diag.catalog.model import Rule
from diag.diagnosis.analyzers.hints import outside_catalogue_hint
from diag.diagnosis.analyzers.job.unexplained import ignored_exception_lines
from diag.diagnosis.context import Context, pick_evidence, shorten
from diag.evidence import Evidence
from diag.input.framing import frame_fields
from diag.report import Finding
from diag.scan.sample import CONTENT_SIGNATURES as SAMPLED_CONTENT

UNEXPLAINED = "unexplained-failure"
# unexplained-failure's signatures whose lines say *what* failed (the exit and banner lines do not).
CONTENT_SIGNATURES = (*sorted(SAMPLED_CONTENT), "nccl_warn")
# A line its program printed as information (NCCL INFO: a retry, a probe that failed) is no error.
INFO_LEVELS = frozenset({"INFO", "DEBUG", "TRACE"})
FAILURE_WORDS = re.compile(
    r"error|errno|fail|fatal|panic|abort|exception|denied|refused|timed out|cannot|can't|unable|invalid"
    r"|not found|no such|unreachable|corrupt|killed|illegal|segmentation fault"
)
CUE_CONFIDENCE = 0.45  # before the assumption's discount: about 0.34, below any rule's own message
MAX_FINDINGS = 2  # the best-named cause, and a second one when other lines name another
CUE_ASSUMED = (
    "the words of these error lines point at this cause; their message form is not one slurmdiag knows"
)


@lru_cache(maxsize=256)
def _compiled(cues: tuple[str, ...]) -> tuple[re.Pattern, ...]:
    return tuple(re.compile(c, re.IGNORECASE) for c in cues)


@dataclass
class _Named:
    rule: Rule
    lines: list[Evidence] = field(default_factory=list)
    words: dict[str, None] = field(default_factory=dict)
    weight: int = 0


# A command line's option ("-Werror=format-security", "--on-error=abort"): an echoed compiler or launcher
# command names the word as a setting, and says nothing failed.
_OPTION_TOKEN = re.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:=\S*)?")


def error_lines(ctx: Context) -> list[Evidence]:
    """The error lines no rule explains, in file order: what failed, as the logs say it."""
    # A line some rule's signature matched is known, even if that rule found nothing of it.
    known = {
        (ev.path, ev.line) for (rid, _), st in ctx.scan.stats.items() if rid != UNEXPLAINED for ev, _ in st.samples
    }
    found: dict[tuple, Evidence] = {}
    rule = ctx.rules.get(UNEXPLAINED)
    if rule is not None:
        known |= ignored_exception_lines(rule, ctx)  # printed and ignored: the program went on
        # Error-level notices of runs that go on (slurmstepd's, sbatch's ignored values, Ray's disk monitor) name no cause.
        notices = ["stepd_notice", "sbatch_notice", "srun_notice", "ray_disk_notice"]
        known |= {(ev.path, ev.line) for ev, _ in ctx.samples(rule, notices)}
        for ev, _ in ctx.samples(rule, CONTENT_SIGNATURES):
            found.setdefault((ev.path, ev.line), ev)
    for ev in ctx.scan.error_sample.evidence():
        # The sample is broad on purpose (a "timeout" key of a printed config is in it): only a
        # line that says something failed is read for words.
        if FAILURE_WORDS.search(_OPTION_TOKEN.sub(" ", ev_payload(ev)).lower()):
            found.setdefault((ev.path, ev.line), ev)
    lines = [
        ev for key, ev in found.items() if key not in known and frame_fields(ev.text)[7] not in INFO_LEVELS
    ]
    return sorted(lines, key=Evidence.file_order)


def best_cue(payload: str, rules: list[Rule]) -> list[tuple[Rule, str]]:
    """The rules whose cues name the most specific (longest) words of ``payload``; several on a tie."""
    best: list[tuple[Rule, str]] = []
    longest = 0
    for rule in rules:
        for pattern in _compiled(rule.cues):
            m = next(
                (
                    m
                    for m in pattern.finditer(payload)
                    if not _inside_path(payload, m, pattern) and not _an_option(payload, m) and not _built_under(payload, m, pattern)
                ),
                None,
            )
            if m is None or len(m[0]) < longest:
                continue
            if len(m[0]) > longest:
                best, longest = [], len(m[0])
            if all(r is not rule for r, _ in best):
                best.append((rule, m[0]))
    return best


_OPTION_REST = re.compile(r"[\w-]*=")


def _an_option(payload: str, m: re.Match) -> bool:
    """Whether a word matched only as an option given a value on a command line (``failed to run
    torchrun --nnodes=2 --rdzv_endpoint=...``): a command echoed on an error line names its settings,
    not what went wrong (srun's ``can't honor --ntasks-per-node set to 2`` is about the option)."""
    return payload[max(0, m.start() - 2) : m.start()] == "--" and bool(_OPTION_REST.match(payload, m.end()))


# A source file's location as a logger or an assertion prints it ("E /tmp/pip-install-x/horovod/common/operations.cc:548]"):
# where the program was built, not a path the job uses.
_SOURCE_LOCATION = re.compile(r'[^\s\[\]()"\']*\.(?:c|cc|cpp|cxx|cu|cuh|h|hpp|py|pyx|rs|go):\d+')


def _built_under(payload: str, m: re.Match, pattern: re.Pattern) -> bool:
    """Whether a cue that is a path (``/tmp/``) matched only inside a source file's location
    (``/tmp/pip-install-x/.../operations.cc:548``): the directory it was built in. A cue word there still
    counts (``orted/pmix/pmix_server.c at line 254`` names the component that failed)."""
    if "/" not in pattern.pattern:
        return False
    start = m.start()
    while start > 0 and not payload[start - 1].isspace() and payload[start - 1] not in "[]()\"'":
        start -= 1
    located = _SOURCE_LOCATION.match(payload, start)
    return bool(located) and located.end() >= m.end()


def _inside_path(payload: str, m: re.Match, pattern: re.Pattern) -> bool:
    """Whether a word matched only as a directory of a file path (``/var/spool/slurmd/job1/...`` names
    no slurmd problem, ``.../distributed/c10d/...`` no rendezvous); cues that are paths themselves
    (``/dev/shm``) are meant to match there."""
    if "/" in pattern.pattern:
        return False
    before = payload[m.start() - 1] if m.start() else ""
    after = payload[m.end()] if m.end() < len(payload) else ""
    return before == "/" and after == "/"


def cue_findings(ctx: Context, weigh: Callable[[Finding], None] | None = None) -> list[Finding]:
    """Findings named by the words of error lines, when nothing but unexplained-failure (or advice) was found.
    ``weigh``: what the diagnosis does to every finding of a short excerpt (applied before the
    finding is placed above unexplained-failure)."""
    # Only where the logs named nothing else: a symptom found (a timeout naming its culprit, a TCP
    # fallback) already says what is known, and a guess from words must not take it over.
    if any(f.role != "advice" and f.id != UNEXPLAINED for f in ctx.findings.values()):
        return []
    # Only a root cause is worth naming from words: a symptom or advice said this way adds nothing.
    # A cause whose own message forms are in the logs and whose analyzer weighed them and found nothing
    # (a missing path the job deleted itself, a file of the process's own temporary directory): its
    # words on other lines add nothing to what its analyzer already ruled out.
    rules = [
        r for r in ctx.rules.values()
        if r.cues and r.role == "root" and r.id != UNEXPLAINED and not _weighed_and_dismissed(ctx, r)
    ]  # fmt: skip
    if not rules:
        return []
    named: dict[str, _Named] = {}
    for ev in error_lines(ctx):
        payload = ev_payload(ev)
        if outside_catalogue_hint([payload]):
            continue  # its cause is known, and is none of the catalogue's: its words name nothing
        for rule, word in best_cue(payload, rules):
            entry = named.setdefault(rule.id, _Named(rule))
            entry.lines.append(ev)
            entry.words.setdefault(word.strip(), None)
            entry.weight += len(word)
    ranked = sorted(named.values(), key=lambda n: (-len(n.lines), -n.weight, n.rule.id))[:MAX_FINDINGS]
    failed = ctx.findings.get(UNEXPLAINED)
    failed_severity = failed is not None and severity_rank(failed.severity) >= severity_rank("error")
    out = []
    for entry in ranked:
        finding = _finding(ctx, entry, failed_severity)
        if weigh is not None:
            weigh(finding)
        # A cause the words name is a better answer than "no known cause", which stays listed below it.
        if failed is not None and finding.confidence <= failed.confidence:
            finding.confidence = min(0.5, failed.confidence + 0.01)
        out.append(finding)
    return out


def _weighed_and_dismissed(ctx: Context, rule: Rule) -> bool:
    """Whether ``rule``'s signatures (not its facts) matched error lines here while it found nothing."""
    if rule.id in ctx.findings:
        return False
    return any(st.count for _, st in ctx.stats(rule))


def _finding(ctx: Context, entry: _Named, failed_severity: bool) -> Finding:
    rule = entry.rule
    # A failure the logs show is what these words may explain: the rule's severity, as far as an
    # error. Without one, a run that may have gone on gets a warning at most.
    if failed_severity:
        severity = rule.severity if severity_rank(rule.severity) <= severity_rank("error") else "error"
    else:
        severity = "warning" if severity_rank(rule.severity) >= severity_rank("warning") else rule.severity
    evidence = pick_evidence(entry.lines)
    first = ev_payload(evidence[0]) if evidence else ""
    n = len(entry.lines)
    words = ", ".join(f"'{w}'" for w in list(entry.words)[:4])
    detail = (
        f"No message slurmdiag knows for this cause was found, but {n} error line{'s' if n != 1 else ''} "
        f"name{'s' if n == 1 else ''} what it is about ({words}): {shorten(first)}"
    )
    hosts = sorted({h for ev in entry.lines if (h := ctx.host_for(ev))})
    ranks = sorted({ev.rank for ev in entry.lines if ev.rank is not None})
    finding = ctx.make_finding(
        rule, [], detail=detail, evidence=evidence, hosts=hosts, ranks=ranks, severity=severity,
        confidence=CUE_CONFIDENCE, assumed=[CUE_ASSUMED],
    )  # fmt: skip
    finding.count = n
    return finding


def ev_payload(ev: Evidence) -> str:
    text, cut = frame_fields(ev.text)[:2]
    return text[cut:].strip()
