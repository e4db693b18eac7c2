"""Prefixes a launcher, a container runtime, a log shipper or a Python logger writes before a line.

These wrap the whole line the program printed (NCCL's header, a torchrun tee, a traceback), so
:func:`peel` reads one of them off the front and framing then reads what is inside as before.
Each form is matched as its source prints it, never a looser shape: a prefix that took a word
the rules need (a host an NCCL header names, ``ERROR: ...`` of a program) would lose findings.
A logger's level is not taken for the line's: programs log their failures at INFO as often as
at ERROR, and the rules and cues read the line's own words and level (NCCL ``WARN``, glog ``E``).
"""

from __future__ import annotations

import re

# kubectl logs --prefix: "[pod/<pod>/<container>] " or "[node/<node>] " (kubectl/pkg/cmd/logs). A
# pod's name is its host name, which NCCL's header names too.
_KUBECTL = re.compile(r"\[(?:pod/(?P<pod>[\w.-]+)/[\w.-]*|node/(?P<node>[\w.-]+))\] ")
# Determined: "[rank=0] || " from its launcher, after "<container id> " in a trial's log
# ("[time] 5c902731 [rank=0] || ", or "5c902731 || " for what no rank printed).
_DETERMINED = re.compile(r"(?:[0-9a-f]{8} (?:\[rank=(?P<cr>\d{1,9})\] )?|\[rank=(?P<rank>\d{1,9})\] )\|\| ")
# DeepSpeed's logger after its "[date time,ms] ": "[INFO] [launch.py:123:main] ".
_DEEPSPEED = re.compile(r"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\] \[[\w./-]+:\d+(?::[\w<>]+)?\] ")
# transformers' explicit format: "[INFO|trainer.py:123] 2024-01-01 12:00:00,123 >> ".
_TRANSFORMERS = re.compile(
    r"\[(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)\|[\w./-]+:\d+\] (?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d+)?) >> "
)
# docker compose logs: the container or service name padded, then " | " (cmd/formatter/logs.go).
# Compose names every container "<service>[-_]<index>", so the index is required: "loss | 2.0" stays.
_COMPOSE = re.compile(r"[A-Za-z0-9][\w.-]*[-_]\d{1,4} +\| ")
# journald/syslog after an ISO timestamp (journalctl -o short-iso, rsyslog): "host prog[pid]: ", "host kernel: ".
_HOST_PROG = re.compile(r"(?P<host>[\w.-]+) (?:[\w./-]+\[\d{1,18}\]|kernel): ")
# Python logging: the HOWTO's "%(asctime)s - %(name)s - %(levelname)s - " once the time is read,
# and basicConfig's BASIC_FORMAT "%(levelname)s:%(name)s:" ("ERROR:root:", "WARNING:torch.x.y:").
_PY_DASHES = re.compile(r"(?:- )?(?:[\w.<>-]+ - )?(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) - ")
_PY_BASIC = re.compile(r"(?:DEBUG|INFO|WARNING|ERROR|CRITICAL):[\w.<>-]+:")
# loguru's default, once the time is read: "| ERROR    | module:function:12 - ".
_LOGURU = re.compile(r"\| (?:TRACE|DEBUG|INFO|SUCCESS|WARNING|ERROR|CRITICAL) *\| [\w.<>-]+:[\w.<>-]+:\d+ - ")
# ctime(3) as Open MPI's and horovodrun's --timestamp-output print it, glued to the rank tag:
# "Thu Jun 18 14:28:35 2020[1,2]<stderr>:".
_CTIME = re.compile(r"(?P<ts>[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4})(?: |(?=\[))")


def peel(payload: str, ctx: dict) -> int:
    """How many characters of ``payload`` one launcher or shipper prefix takes (0: none), with
    what it says put in ``ctx`` (``setdefault``: an outer prefix has said it first)."""
    first = payload[:1]
    if first == "[":
        m = _KUBECTL.match(payload)
        if m:
            ctx.setdefault("host", m["pod"] or m["node"])
            return m.end()
        m = _DETERMINED.match(payload)
        if m:
            ctx.setdefault("rank", int(m["rank"]))
            return m.end()
        m = _DEEPSPEED.match(payload)
        if m:
            return m.end()
        m = _TRANSFORMERS.match(payload)
        if m:
            ctx.setdefault("timestamp", m["ts"])
            return m.end()
        return 0
    if first == "|":
        m = _LOGURU.match(payload)
        return m.end() if m else 0
    # The rest start with a word: each is tried only when the line holds what it needs (a log of
    # millions of plain lines should pay one substring test, not five regexes, per line).
    if "| " in payload:
        m = _DETERMINED.match(payload) or _COMPOSE.match(payload)
        if m:
            if m.re is _DETERMINED and m["cr"]:
                ctx.setdefault("rank", int(m["cr"]))
            return m.end()
    if "timestamp" in ctx:
        m = _HOST_PROG.match(payload)
        if m:
            ctx.setdefault("host", m["host"])
            return m.end()
    if " - " in payload:
        m = _PY_DASHES.match(payload)
        if m:
            return m.end()
    if first.isupper():
        m = _PY_BASIC.match(payload)
        if m:
            return m.end()
        m = _CTIME.match(payload)
        if m:
            ctx.setdefault("timestamp", m["ts"])
            return m.end()
    return 0
