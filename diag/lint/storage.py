"""Checks of where a multi-node job keeps its files."""

from __future__ import annotations

import re
from collections.abc import Iterator

from diag.lint.context import Hit, LintContext
from diag.lint.profile import under
from diag.lint.script import Value

# Options of training scripts that name a checkpoint, output or cache location.
_PATH_OPTION = re.compile(
    r"^--?(?:save|save[-_]?dir|save[-_]?path|output[-_]?dir|out[-_]?dir|checkpoint(?:[-_]?(?:dir|path))?|"
    r"ckpt(?:[-_]?(?:dir|path))?|load|cache[-_]?dir|log[-_]?dir|logging[-_]?dir|data[-_]?(?:dir|path)|"
    r"default_root_dir|tensorboard[-_]dir)$"
)
_PATH_VARIABLE = re.compile(
    r"^(?:\w+_)?(?:(?:CKPT|CHECKPOINT)(?:_?(?:DIR|PATH|FILE))?|(?:OUTPUT|SAVE|OUT)_?(?:DIR|PATH))$"
)
_CACHE_VARIABLES = ("HF_HOME", "HF_DATASETS_CACHE", "TRANSFORMERS_CACHE", "TORCH_HOME", "TRITON_CACHE_DIR",
                    "TORCHINDUCTOR_CACHE_DIR", "XDG_CACHE_HOME")  # fmt: skip
# Node-local on every Linux node (or by Slurm's definition): certain.
_ALWAYS_LOCAL = re.compile(
    r"^(?:/tmp|/dev/shm|/var/tmp|\$\{?TMPDIR\}?|\$\{?SLURM_TMPDIR\}?|\$\{?SLURM_JOB_TMP\}?)(?:/|$)"
)
# Names sites give local scratch; usually node-local, but a site may mount a shared one there.
_USUALLY_LOCAL = re.compile(
    r"^(?:/local|/lscratch|/localscratch|/scratch/local|/raid|/mnt/local|/nvme|/mnt/nvme)\w*(?:/|$)"
)


def _paths(ctx: LintContext) -> Iterator[tuple[str, Value, bool]]:
    """(what it is, the value, is it a cache) for every location the script names."""
    for cmd in ctx.launches():
        words = cmd.program
        for i, word in enumerate(words):
            name, eq, rest = word.raw.partition("=")
            if not _PATH_OPTION.match(name):
                continue
            if eq:
                yield name, Value(rest, word.line, _strip(word.value, name)), "cache" in name
            elif i + 1 < len(words) and not words[i + 1].raw.startswith("-"):
                yield name, words[i + 1], "cache" in name
    for name, values in ctx.script.env.items():
        cache = name in _CACHE_VARIABLES
        if cache or _PATH_VARIABLE.match(name):
            for value in values:
                yield name, value, cache
    for option in ("output", "error"):
        value = ctx.script.option(option)
        if value is not None:
            yield f"#SBATCH --{option}", value, False


def _strip(expanded: str | None, name: str) -> str | None:
    return None if expanded is None else expanded.partition("=")[2]


def node_local_paths(ctx: LintContext) -> list[Hit]:
    """A checkpoint, output or cache directory on node-local storage in a multi-node job."""
    if ctx.multi_node is False:
        return []
    profile = ctx.profile
    hits = []
    seen: set[tuple[str, int]] = set()
    for what, value, cache in _paths(ctx):
        text = value.value if value.value is not None else value.raw
        if (what, value.line) in seen:
            continue
        local = None
        certain = bool(ctx.multi_node) and not cache
        assumed = []
        if profile and under(text, profile.shared_mounts) and not under(text, profile.node_local_mounts):
            continue
        if profile and (mount := under(text, profile.node_local_mounts)):
            local = f"{mount}, node-local in {profile.path}"
        elif _ALWAYS_LOCAL.match(text) or (value.raw != text and _ALWAYS_LOCAL.match(value.raw)):
            local = "a node-local directory"
        elif _USUALLY_LOCAL.match(text):
            local = "local scratch"
            certain = False
            assumed.append(f"{text.split('/')[1]} is node-local here (no site profile says)")
        if local is None:
            continue
        if cache:
            assumed.append("every node fills its own cache (fine when each rank downloads; wrong when one rank does)")
        seen.add((what, value.line))
        hits.append(Hit(f"{what} {text} is on {local}: the other nodes do not see what one node writes there",
                        [value.line], certain, assumed + ctx.nodes_assumption()))  # fmt: skip
    return hits
