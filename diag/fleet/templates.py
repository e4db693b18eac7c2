"""``slurmdiag fleet templates DIR``: error lines no rule knows, mined into templates across the fleet.

1. Read the window's records from the store: the masked error lines of *unexplained* jobs (failed,
   no root cause but unexplained-failure) and of *healthy* ones (diag.fleet.record.sample_kind).
2. Learn templates from the unexplained jobs' distinct lines, in sorted order: the templates, and so
   every count, do not depend on the order the store returns rows in.
3. Subtract every template a healthy job's line fits: what healthy jobs print is not a cause.
4. Rank by distinct jobs, then nodes, then users; keep those seen in ``min_jobs`` jobs or more.

A line's node is the host its frame named (an NCCL prefix); a line that names none counts the nodes
of its job. :func:`write_drafts` turns the top templates into draft rules for a person to finish.
"""

from __future__ import annotations

import datetime as dt
import glob
import hashlib
import json
import os
import re
from collections import defaultdict
from dataclasses import dataclass, field

from diag.fleet.mining import WILDCARD, Miner, make_miner
from diag.fleet.record import sample_kind
from diag.fleet.store import FleetError, duckdb_module, sql_str, store_glob
from diag.fleet.summary import parse_duration
from diag.formats.safe import safe_text
from diag.input.mask import PLACEHOLDER_RE

MAX_EXAMPLES = 3


@dataclass
class Line:
    """One masked line of one job, as the store holds it."""

    text: str
    job: str  # cluster/job id
    user: str
    nodes: tuple[str, ...]  # the line's host, else its job's nodes
    count: int = 1


@dataclass
class Template:
    template: str
    jobs: set[str] = field(default_factory=set)
    nodes: set[str] = field(default_factory=set)
    users: set[str] = field(default_factory=set)
    lines: int = 0
    examples: list[str] = field(default_factory=list)  # distinct masked lines, sorted

    def key(self) -> tuple:
        return (-len(self.jobs), -len(self.nodes), -len(self.users), -self.lines, self.template)

    def to_json(self) -> dict:
        return {
            "template": self.template,
            "jobs": len(self.jobs),
            "nodes": len(self.nodes),
            "users": len(self.users),
            "lines": self.lines,
            "example": self.examples[0] if self.examples else None,
            "example_jobs": sorted(self.jobs)[:MAX_EXAMPLES],
            "top_nodes": sorted(self.nodes)[:8],
        }


@dataclass
class Mined:
    templates: list[Template]  # ranked, after subtraction and the min-jobs cut
    unexplained_jobs: int = 0
    healthy_jobs: int = 0
    lines: int = 0  # distinct (job, line) pairs mined
    subtracted: int = 0  # templates a healthy job's line fits
    below_min_jobs: int = 0
    miner: str = "drain"
    since: str | None = None
    min_jobs: int = 2

    def to_json(self) -> dict:
        return {
            "schema": "slurmdiag.fleet-templates/1",
            "since": self.since,
            "miner": self.miner,
            "unexplained_jobs": self.unexplained_jobs,
            "healthy_jobs": self.healthy_jobs,
            "lines": self.lines,
            "subtracted_as_healthy": self.subtracted,
            "min_jobs": self.min_jobs,
            "below_min_jobs": self.below_min_jobs,
            "templates": [t.to_json() for t in self.templates],
        }


def mine(unexplained: list[Line], healthy: list[Line], *, miner: Miner | None = None, min_jobs: int = 2) -> Mined:
    """Templates of the unexplained lines that no healthy line fits, ranked."""
    miner = miner or make_miner()
    cluster_of: dict[str, int] = {}
    for text in sorted({line.text for line in unexplained}):
        cluster_of[text] = miner.add(text)
    # Final templates only after every line is learned: a cluster's template only ever generalises,
    # so it fits every line that joined it.
    by_cluster: dict[int, Template] = {}
    examples: dict[int, set[str]] = defaultdict(set)
    for line in unexplained:
        cid = cluster_of[line.text]
        t = by_cluster.get(cid)
        if t is None:
            t = by_cluster[cid] = Template(miner.template(cid))
        t.jobs.add(line.job)
        t.nodes.update(line.nodes)
        t.users.add(line.user)
        t.lines += line.count
        examples[cid].add(line.text)
    seen_healthy = {cid for cid in (miner.match(text) for text in sorted({h.text for h in healthy})) if cid is not None}
    result = Mined([], miner=miner.name, lines=len(unexplained), min_jobs=min_jobs)
    result.unexplained_jobs = len({line.job for line in unexplained})
    result.healthy_jobs = len({line.job for line in healthy})
    for cid, t in by_cluster.items():
        if cid in seen_healthy:
            result.subtracted += 1
        elif len(t.jobs) < min_jobs:
            result.below_min_jobs += 1
        else:
            t.examples = sorted(examples[cid])
            result.templates.append(t)
    result.templates.sort(key=Template.key)
    return result


def load_lines(fleet_dir: str, since: str = "7d", until: dt.datetime | None = None) -> tuple[list[Line], list[Line]]:
    """(unexplained, healthy) lines of the jobs that ended in the window, from the store."""
    duckdb = duckdb_module()
    if not glob.glob(store_glob(fleet_dir)):
        raise FleetError(f"{fleet_dir}: no store yet (run `slurmdiag fleet compact {fleet_dir}` first)")
    end = until or dt.datetime.now(dt.timezone.utc)
    start = end - parse_duration(since)
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    con = duckdb.connect()
    try:
        rows = con.execute(
            f"""
            SELECT cluster, job_id, coalesce(user, '?'), nodes, state,
                   [struct_pack(id := f.id, role := f.role, severity := f.severity, explained_by := f.explained_by)
                    for f in findings] AS fs,
                   error_sample
            FROM read_parquet({sql_str(store_glob(fleet_dir))}, union_by_name = true)
            WHERE coalesce(end_time, scanned_at) >= ? AND coalesce(end_time, scanned_at) < ?
              AND error_sample IS NOT NULL AND len(error_sample) > 0
            QUALIFY row_number() OVER (PARTITION BY cluster, job_id ORDER BY scanned_at DESC) = 1
            """,
            [start.astimezone(dt.timezone.utc).strftime(stamp), end.astimezone(dt.timezone.utc).strftime(stamp)],
        ).fetchall()
    except duckdb.BinderException as exc:  # a store no compact has given the column yet
        if "error_sample" not in str(exc):
            raise
        rows = []
    finally:
        con.close()
    unexplained: list[Line] = []
    healthy: list[Line] = []
    for cluster, job_id, user, nodes, state, findings, sample in rows:
        kind = sample_kind(state, findings)
        if kind is None:
            continue
        target = unexplained if kind == "unexplained" else healthy
        job = f"{cluster}/{job_id}"
        for entry in sample:
            host = entry["host"]
            where = (host,) if host else tuple(nodes or ())
            target.append(Line(entry["text"], job, user, where, int(entry["count"] or 1)))
    return unexplained, healthy


# --- output ---------------------------------------------------------------------------------------


def render(result: Mined, fmt: str = "text", top: int = 20) -> str:
    if fmt == "json":
        data = result.to_json()
        data["templates"] = data["templates"][:top]
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    out = [
        f"Error templates no rule knows ({result.miner}, window {result.since}): "
        f"{result.unexplained_jobs} unexplained jobs, {result.healthy_jobs} healthy jobs as the baseline",
        f"{len(result.templates)} template(s) seen in {result.min_jobs}+ jobs ({result.below_min_jobs} in fewer left out); "
        f"{result.subtracted} left out as also seen in healthy jobs",
    ]
    if not result.templates:
        return (
            "\n".join(out + ["", "Nothing new: every unexplained line is rare or also printed by healthy jobs."]) + "\n"
        )
    out.append("")
    out.append(f"{'#':>3} {'jobs':>5} {'nodes':>5} {'users':>5}  template")
    for i, t in enumerate(result.templates[:top], 1):
        out.append(f"{i:>3} {len(t.jobs):>5} {len(t.nodes):>5} {len(t.users):>5}  {safe_text(t.template)}")
        if t.examples:
            out.append(f"{'':>22}e.g. {safe_text(t.examples[0])}")
        out.append(f"{'':>22}jobs {', '.join(safe_text(j) for j in sorted(t.jobs)[:MAX_EXAMPLES])}")
    return "\n".join(out) + "\n"


# --- draft rules ----------------------------------------------------------------------------------

DRAFT_PREFIX = "x-draft-"
_SPLIT = re.compile(r"(<\*>|" + PLACEHOLDER_RE.pattern + r")")
_NEUTRAL = "step 100 finished normally in 1.5 s"


def template_regex(template: str) -> tuple[str, str | None]:
    """(regex, its longest literal) for a template: a whole-token wildcard or placeholder is one
    token of anything, one inside a token any run of non-blanks; tokens are joined by blanks. The
    regex is anchored at the payload's start when the template starts with a literal."""
    parts: list[str] = []
    literals: list[str] = []
    for token in template.split():
        if token == WILDCARD or PLACEHOLDER_RE.fullmatch(token):
            parts.append(r"\S+")
            continue
        pieces = []
        for piece in _SPLIT.split(token):
            if not piece:
                continue
            if piece == WILDCARD or PLACEHOLDER_RE.fullmatch(piece):
                pieces.append(r"\S*")
            else:
                pieces.append(re.escape(piece))
                literals.append(piece)
        parts.append("".join(pieces))
    anchored = bool(template.split()) and parts[0] == re.escape(template.split()[0])
    regex = ("^" if anchored else "") + r"\s+".join(parts)
    # Literals only ever within one token: the longest one every match contains.
    best = max(literals, key=len, default=None)
    return regex, best


def draft_rule(t: Template, negatives: list[str]) -> dict | None:
    """A draft rule for ``t`` (None when the template has no literal to anchor a signature)."""
    regex, literal = template_regex(t.template)
    if literal is None or len(literal) < 4:
        return None
    compiled = re.compile(regex)
    positives = [e for e in t.examples if compiled.search(e)][:MAX_EXAMPLES]
    if not positives:
        return None
    negative = next((n for n in negatives + [_NEUTRAL] if not compiled.search(n)), None)
    digest = hashlib.sha256(t.template.encode()).hexdigest()[:10]
    return {
        "id": f"{DRAFT_PREFIX}{digest}",
        "status": "experimental",
        "title": f"DRAFT (name the cause): {t.template[:120]}",
        "severity": "error",
        "role": "root",
        "confidence": 0.3,
        "description": (
            f"Drafted by `slurmdiag fleet templates` from {len(t.jobs)} unexplained failed jobs on "
            f"{len(t.nodes)} nodes of {len(t.users)} users; healthy jobs never printed it. Template: "
            f"{t.template}\nTO DO before use: give the rule a cause id (or an x- name of your site), say what "
            "the line means, replace the masked examples by real lines, and narrow the regex."
        ),
        "signatures": [{"name": "template", "regex": regex, "literal": literal}],
        "remediation": "TO DO: the setting or action that fixes this cause, for a person to write.",
        "examples": {"match": positives, "no_match": [negative] if negative else []},
    }


DRAFT_HEADER = (
    "# DRAFT rule written by `slurmdiag fleet templates --drafts`. It is not used unless you pass this\n"
    "# folder with --rules (or $SLURMDIAG_RULES). Before that: rename the id, write the title, description\n"
    "# and remediation, check the regex, and `slurmdiag test-rules --rules DIR` its examples.\n"
)


def write_drafts(result: Mined, out_dir: str, top: int = 10) -> list[str]:
    """One draft YAML per top template under ``out_dir``; the paths written."""
    import yaml

    os.makedirs(out_dir, exist_ok=True)
    chosen = result.templates[:top]
    written = []
    for t in chosen:
        negatives = [e for other in result.templates if other is not t for e in other.examples[:1]]
        rule = draft_rule(t, negatives)
        if rule is None:
            continue
        path = os.path.join(out_dir, f"{rule['id']}.yaml")
        body = yaml.safe_dump(rule, sort_keys=False, allow_unicode=True, width=100)
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(DRAFT_HEADER + body)
        written.append(path)
    return written
