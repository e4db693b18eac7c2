"""Every rule example keeps its diagnosis when a launcher or a log shipper puts its prefix before it.

Real logs reach us through kubectl, docker compose, journald, mpirun, SkyPilot, Determined or a
Python logger, each of which writes its own prefix before the line the program printed. A rule
is written against the program's words, so framing must peel each of these forms: a wrapped
example must hit the same signatures, and be given the same findings, as the bare line.
Each form is written here as its source prints it (the source is named beside it). Ranks are not
0: a rank the prefix names is the line's, and rank 0 rightly changes some findings (a path missing
on rank 0 alone may be a wrong path).
"""

from __future__ import annotations

import pytest

from diag.api import diagnose_bytes
from diag.catalog.model import RuleSet
from diag.input.framing import frame
from diag.input.sources import MemorySource
from diag.scan.scanner import Scanner

PREFIXES = {
    # kubectl logs --timestamps / docker logs -t: RFC 3339 with nanoseconds.
    "kubectl-timestamps": "2024-05-01T12:00:00.123456789Z ",
    # kubectl logs --prefix (staging/src/k8s.io/kubectl/pkg/cmd/logs: "[pod/%s/%s] "), with and without --timestamps.
    "kubectl-prefix": "[pod/train-worker-0/pytorch] ",
    "kubectl-prefix-timestamps": "[pod/train-worker-0/pytorch] 2024-05-01T12:00:00.123456789Z ",
    "kubectl-node-prefix": "[node/gpu-node-3] ",
    # docker compose logs (cmd/formatter/logs.go: "%-<width>s |" then " " and the line).
    "compose-v1": "trainer_1     | ",
    "compose-v2": "trainer-1  | ",
    "compose-v2-timestamps": "trainer-1  | 2024-05-01T12:00:00.123456789Z ",
    # journalctl -o short, short-precise, short-iso; syslog.
    "journald-short": "May 01 12:00:00 gpu-node-3 python3[1234]: ",
    "journald-short-precise": "May 01 12:00:00.123456 gpu-node-3 python3[1234]: ",
    "journald-short-iso": "2024-05-01T12:00:00+0000 gpu-node-3 python3[1234]: ",
    # Open MPI --tag-output as SageMaker's launcher and horovodrun print it; mpirun --timestamp-output.
    "sagemaker-mpi": "[1,mpirank:3,algo-1]<stderr>:",
    "horovodrun": "[1]<stderr>:",
    "mpirun-timestamp-output": "Thu Jun 18 14:28:35 2020[1,2]<stderr>:",
    "horovodrun-timestamp": "Tue Apr 21 18:22:53 2020[1]<stdout>:",
    # SkyPilot's per-node prefix (sky/backends: "(head, rank=0, pid=N)", "(worker1, rank=1, pid=N, ip=X)").
    "skypilot-head": "(head, rank=0, pid=1234) ",
    "skypilot-worker": "(worker1, rank=1, pid=5678, ip=10.0.0.2) ",
    "skypilot-setup": "(setup pid=1234, ip=10.0.0.2) ",
    # Determined: the launcher's "[rank=N] || " and the trial log's "[time] <container> [rank=N] || ".
    "determined-rank": "[rank=3] || ",
    "determined-trial": "[2024-03-15T16:29:06.552162Z] 5c902731 [rank=3] || ",
    "determined-trial-norank": "[2024-03-15T16:29:06.552162Z] 5c902731 || ",
    # transformers' explicit format: "[%(levelname)s|%(filename)s:%(lineno)s] %(asctime)s >> %(message)s".
    "transformers": "[INFO|trainer.py:123] 2024-01-01 12:00:00,123 >> ",
    # DeepSpeed's logger: "[%(asctime)s] [%(levelname)s] [%(filename)s:%(lineno)d:%(funcName)s] %(message)s".
    "deepspeed": "[2024-01-01 12:00:00,000] [INFO] [launch.py:123:main] ",
    # Python logging: the HOWTO's "%(asctime)s - %(name)s - %(levelname)s - %(message)s" and BASIC_FORMAT.
    "python-logging": "2024-01-01 12:00:00,123 - train - ERROR - ",
    "python-basic": "ERROR:root:",
    "python-basic-dotted": "WARNING:torch.distributed.run:",
    # loguru's default format: "{time:YYYY-MM-DD HH:mm:ss.SSS} | {level: <8} | {name}:{function}:{line} - ".
    "loguru": "2024-01-01 12:00:00.000 | ERROR    | train:main:12 - ",
    # GitHub Actions' log download: a timestamp with 7 fraction digits.
    "github-actions": "2024-01-01T00:00:00.0000000Z ",
}


def _examples(rules: RuleSet) -> list[str]:
    return sorted({x for r in rules.rules for x in (*r.examples_match, *r.examples_no_match)})


def _hits(scanner: Scanner, line: str) -> set[tuple[str, str]]:
    scan = scanner.scan([MemorySource("example.log", (line + "\n").encode())])
    return {key for key, st in scan.stats.items() if st.count}


def _ids(rules: RuleSet, line: str) -> list[str]:
    return [f.id for f in diagnose_bytes(line.encode(), rules).findings]


@pytest.fixture(scope="module")
def bare(rules):
    scanner = Scanner(rules)
    return scanner, {line: (_hits(scanner, line), _ids(rules, line)) for line in _examples(rules)}


@pytest.mark.parametrize("name", list(PREFIXES))
def test_a_wrapped_example_is_diagnosed_as_the_bare_line(rules, bare, name):
    scanner, expected = bare
    prefix = PREFIXES[name]
    wrong = []
    for line, (hits, ids) in expected.items():
        wrapped = prefix + line
        got_hits, got_ids = _hits(scanner, wrapped), _ids(rules, wrapped)
        if got_hits != hits or got_ids != ids:
            wrong.append(f"{wrapped!r}: signatures {sorted(got_hits ^ hits)} differ; findings {got_ids} != {ids}")
    assert not wrong, f"{len(wrong)} of {len(expected)} lines:\n" + "\n".join(wrong[:15])


@pytest.mark.parametrize("name", list(PREFIXES))
def test_the_prefix_alone_is_peeled(name):
    assert frame(PREFIXES[name] + "RuntimeError: boom").payload == "RuntimeError: boom"
