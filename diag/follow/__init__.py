"""``slurmdiag follow``: watch a running job's files, alert early, then diagnose the finished job.

Each poll reads only what the files gained (diag.follow.tail), feeds the new lines to the scanner
(diag.follow.live) and, when something matched, re-evaluates the rules on what was read so far;
root causes that show early (fabric, launch, container families, or a rule's ``follow: true``)
alert once per cause and host. Following ends when the job has left the queue or the files have
not grown for ``idle_s``; the result is then a plain diagnosis of the finished files, so it is
exactly what ``slurmdiag PATH...`` says about them.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from diag.api import diagnose_paths
from diag.catalog.model import RuleSet
from diag.follow.alerts import Alert, AlertPolicy
from diag.follow.live import LiveScan
from diag.follow.stall import DEFAULT_PROGRESS, StallWatch
from diag.follow.tail import FileTail
from diag.input.sources import InputProblem, discover
from diag.report import Report

FACTS_EVAL_S = 5.0  # new facts alone (a node count) re-evaluate at most this often: evaluation costs ~30 ms
MAX_READ_PER_POLL = 64 << 20  # per file: a poll after a long pause stays bounded; the rest comes next poll


@dataclass
class FollowOptions:
    interval_s: float = 2.0
    idle_s: float = 300.0  # files unchanged this long: the job is taken as ended
    min_severity: str = "error"
    max_alerts_per_minute: int = 6
    engine: str = "auto"
    job: str | None = None
    # Whether the job still runs (None: no job to ask; the idle window alone ends following).
    job_running: Callable[[], bool] | None = None
    job_poll_s: float = 30.0  # squeue/scontrol are asked this often, not every poll
    # More files of the job (per-rank logs that appear while it runs), looked for every job_poll_s:
    # a directory listing on a parallel file system is not free.
    find_files: Callable[[], list[str]] | None = None
    after_end_s: float = 10.0  # quiet window after the job ended: its last bytes reach the file system
    # No progress line (training step, loss, tqdm bar) for this long while the job runs: one
    # warning per silent source (diag.follow.stall). None: off.
    stall_s: float | None = None
    progress: tuple[str, ...] = DEFAULT_PROGRESS
    # The job's node count from Slurm (--jobid, --self): what matters only between nodes is then
    # judged for a multi-node job from the first line, not as an excerpt that does not say.
    nodes: int = 0
    # Asked every poll (cheap, unlike job_running): true once the job's script is gone (--self).
    ended: Callable[[], bool] | None = None
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


@dataclass
class FollowResult:
    reports: list[Report]
    problems: list[InputProblem]
    alerts: list[Alert] = field(default_factory=list)
    ended_by: str = ""  # "idle", "job" or "signal"


class Follower:
    def __init__(self, paths: Sequence[str], rules: RuleSet, opts: FollowOptions,
                 on_alert: Callable[[Alert], None] = lambda alert: None):  # fmt: skip
        self.paths = list(paths)
        self.rules = rules
        self.opts = opts
        self.on_alert = on_alert
        self.live = LiveScan(rules, opts.engine, nodes=opts.nodes)
        self.tails: dict[str, FileTail] = {}
        self.policy = AlertPolicy(rules, opts.min_severity, opts.max_alerts_per_minute, clock=opts.clock)
        self.alerts: list[Alert] = []
        self.started = self.evaluated = opts.clock()
        self.found: list[str] = []  # files opts.find_files named
        self.stall = StallWatch(opts.stall_s, opts.progress) if opts.stall_s else None
        self.stop = False  # set by a signal handler: stop following and diagnose what is there

    def _files(self) -> list[str]:
        # Re-globbed every poll: per-rank files and the .err may appear after the .out. A .gz is a
        # finished file (nothing appends to a gzip stream): the final diagnosis reads it.
        found = [s.path for s in discover(self.paths).sources if not s.is_stdin and not s.is_gzip]
        return found + [p for p in self.found if p not in found]

    def look_for_files(self) -> None:
        if self.opts.find_files is not None:
            self.found = list(dict.fromkeys([*self.found, *self.opts.find_files()]))

    def poll(self) -> bool:
        """One round over every file; whether any grew. Sends the alerts it makes possible."""
        grew = False
        for path in self._files():
            tail = self.tails.get(path)
            if tail is None:
                tail = self.tails[path] = FileTail(path)
            got = tail.poll(MAX_READ_PER_POLL)
            grew = grew or got.grew or got.reset
            if got.reset:
                self._restart()  # this file too: its new content is read from the start next poll
                continue
            self.live.feed(path, tail.stats, got.block)
            if self.stall is not None and got.block:
                self.stall.feed(path, got.block, self.opts.clock())
        now = self.opts.clock()
        if self.live.dirty or (self.live.facts_dirty and now - self.evaluated >= FACTS_EVAL_S):
            self.evaluated = now
            for alert in self.policy.select(self.live.findings(), self.started):
                self.alerts.append(alert)
                self.on_alert(alert)
        return grew

    def _restart(self) -> None:
        """A file was truncated or replaced: rescan every file from its start (rare; bounded by
        the files' size); alerts already sent stay sent."""
        self.live.reset()
        if self.stall is not None:
            self.stall.reset()
        for tail in self.tails.values():
            tail.restart()

    def check_stall(self) -> None:
        """Warn about sources whose progress lines stopped (only while the job runs)."""
        if self.stall is None:
            return
        now = self.opts.clock()
        for finding in self.stall.check(now):
            alert = Alert(finding, [], now - self.started)
            self.alerts.append(alert)
            self.on_alert(alert)

    def run(self) -> FollowResult:
        opts = self.opts
        self.started = last_growth = last_job_poll = opts.clock()
        ended_at: float | None = None
        ended_by = "idle"
        while True:
            if self.poll():
                last_growth = opts.clock()
            now = opts.clock()
            if ended_at is None and (self.stop or (opts.ended is not None and opts.ended())):
                ended_at, ended_by = now, "signal" if self.stop else "job"
            if ended_at is None:
                self.check_stall()
            if opts.job_running is not None and ended_at is None and now - last_job_poll >= opts.job_poll_s:
                last_job_poll = now
                self.look_for_files()
                if not opts.job_running():
                    ended_at, ended_by = now, "job"
            if ended_at is not None and (self.stop or (now - ended_at >= opts.after_end_s
                                                       and now - last_growth >= opts.interval_s)):
                break
            if now - last_growth >= opts.idle_s:
                ended_by = "idle" if ended_at is None else ended_by
                break
            opts.sleep(opts.interval_s)
        reports, problems = diagnose_paths(self.paths, self.rules, job=opts.job, engine=opts.engine)
        return FollowResult(reports, problems, self.alerts, ended_by)
