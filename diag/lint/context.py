"""What every lint check gets (the script, the site profile, the node count) and what it returns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from diag.lint.profile import SiteProfile
from diag.lint.script import Command, Script, Value, first_int


@dataclass
class Hit:
    """One thing a check found. ``certain``: the script (with the profile) shows it is wrong; else it
    may be wrong (a warning, lower confidence) and ``assumed`` says what was taken for granted."""

    detail: str
    lines: list[int]
    certain: bool = True
    assumed: list[str] = field(default_factory=list)
    advice: bool = False  # good practice, not a failure: reported as info


@dataclass
class LintContext:
    script: Script
    profile: SiteProfile | None = None

    @property
    def nodes(self) -> int | None:
        """Nodes the job asks for: ``--nodes`` (command line or #SBATCH), else the largest ``srun
        -N`` or torchrun ``--nnodes`` written literally; 1 when nothing asks for more (sbatch's
        default); None when the count is a variable."""
        directive = self.script.option("nodes")
        if directive is not None:
            return first_int(directive)
        counts = [1]
        for cmd in self.launches():
            value = cmd.options.get("nodes") or cmd.options.get("nnodes")
            if value is not None:
                n = first_int(value)
                if n is None:
                    return None
                counts.append(n)
        return max(counts)

    @property
    def multi_node(self) -> bool | None:
        nodes = self.nodes
        return None if nodes is None else nodes > 1

    def nodes_assumption(self) -> list[str]:
        return [] if self.multi_node else ["the job spans several nodes (the script does not fix its node count)"]

    def launches(self) -> Iterator[Command]:
        """Every launcher command, those started by srun included."""
        for cmd in self.script.commands:
            while cmd is not None:
                yield cmd
                cmd = cmd.inner

    def assignments(self, name: str) -> Iterator[Value]:
        """Every value the script gives variable ``name``: exports, assignments, ``VAR=x srun ...``."""
        yield from self.script.env.get(name, ())
        for cmd in self.script.commands:
            if name in cmd.env:
                yield cmd.env[name]

    def text(self, line: int) -> str:
        lines = self.script.lines
        return lines[line - 1] if 0 < line <= len(lines) else ""
