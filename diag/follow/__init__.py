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
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic


@dataclass
class FollowResult:
    reports: list[Report]
    problems: list[InputProblem]
    alerts: list[Alert] = field(default_factory=list)
    ended_by: str = ""  # "idle" or "job"


class Follower:
    def __init__(self, paths: Sequence[str], rules: RuleSet, opts: FollowOptions,
                 on_alert: Callable[[Alert], None] = lambda alert: None):  # fmt: skip
        self.paths = list(paths)
        self.rules = rules
        self.opts = opts
        self.on_alert = on_alert
        self.live = LiveScan(rules, opts.engine)
        self.tails: dict[str, FileTail] = {}
        self.policy = AlertPolicy(rules, opts.min_severity, opts.max_alerts_per_minute, clock=opts.clock)
        self.alerts: list[Alert] = []
        self.started = self.evaluated = opts.clock()
        self.found: list[str] = []  # files opts.find_files named

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
        for tail in self.tails.values():
            tail.restart()

    def run(self) -> FollowResult:
        opts = self.opts
        self.started = last_growth = last_job_poll = opts.clock()
        ended_at: float | None = None
        ended_by = "idle"
        while True:
            if self.poll():
                last_growth = opts.clock()
            now = opts.clock()
            if opts.job_running is not None and ended_at is None and now - last_job_poll >= opts.job_poll_s:
                last_job_poll = now
                self.look_for_files()
                if not opts.job_running():
                    ended_at, ended_by = now, "job"
            if ended_at is not None and now - ended_at >= opts.after_end_s and now - last_growth >= opts.interval_s:
                break
            if now - last_growth >= opts.idle_s:
                ended_by = "idle" if ended_at is None else ended_by
                break
            opts.sleep(opts.interval_s)
        reports, problems = diagnose_paths(self.paths, self.rules, job=opts.job, engine=opts.engine)
        return FollowResult(reports, problems, self.alerts, ended_by)
