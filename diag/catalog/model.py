"""The rule catalogue as data: what a rule, a signature and a condition are.

Everything below the diagnosis reads these records (the scanner compiles signatures, the facts
declare their own); none of it knows any analyzer code.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

LEVELS = ("INFO", "WARN", "TRACE", "ERROR", "WARNING", "FATAL")
_PLACEHOLDER = re.compile(r"(?<!\$)\{([a-z_]+)\}")


def fill(template: str, values: dict[str, str]) -> str:
    """A rule's text with its ``{placeholders}`` filled; an unknown one shows as ``<name>``."""
    return _PLACEHOLDER.sub(lambda m: values.get(m[1], f"<{m[1]}>"), template)


_GROUP = re.compile(r" ?\([^()]*\)")
_PREPOSITION_SLOT = re.compile(r"(?:\s+(?:on|for|in|at|to|of|from))?\s*(?<!\$)\{([a-z_]+)\}")


def fill_action(template: str, values: dict[str, str]) -> str:
    """A rule's one-line ``action`` with its placeholders filled. A placeholder with no value is
    dropped with the parenthesis that holds it (or the preposition before it), never shown as
    ``<name>``: an alert's action must read as a whole sentence."""

    def known(name: str) -> bool:
        return bool(values.get(name))

    def group(m: re.Match) -> str:
        names = _PLACEHOLDER.findall(m[0])
        return m[0] if all(known(n) for n in names) else ""

    text = _GROUP.sub(group, template)
    text = _PREPOSITION_SLOT.sub(lambda m: m[0] if known(m[1]) else "", text)
    text = fill(text, values)
    return re.sub(r"\s+([,.;:])", r"\1", re.sub(r"\s{2,}", " ", text)).strip()


def action_hosts(hosts: list[str], limit: int = 8) -> str:
    """Hosts as an action names them: a list a command takes (``--exclude=n1,n2``); none when
    there are none or too many to type (the action then drops the clause that held them)."""
    return ",".join(hosts) if 0 < len(hosts) <= limit else ""


class RuleError(Exception):
    """A rule file that does not follow the schema."""

    def __init__(self, path: str, rule_id: str | None, field_name: str | None, message: str):
        self.path, self.rule_id, self.field_name = path, rule_id, field_name
        where = path
        if rule_id:
            where += f": rule '{rule_id}'"
        if field_name:
            where += f": field '{field_name}'"
        super().__init__(f"{where}: {message}")


@dataclass(frozen=True)
class Signature:
    name: str
    pattern: str
    literal: str
    compiled: object | None = None  # compiled on first use: most signatures never see a candidate
    levels: tuple[str, ...] = ()
    fact: bool = False  # evidence for facts/conditions only; never shown as the finding's own evidence

    def match(self, payload: str, level: str | None):
        if self.levels and level not in self.levels:
            return None
        return self.searcher()(payload)

    def searcher(self):
        """The compiled pattern's ``search``, compiled on first use (the scanner keeps it per member set)."""
        compiled = self.compiled
        if compiled is None:
            compiled = compile_signature(self.pattern)
            object.__setattr__(self, "compiled", compiled)  # a cache, not a change of meaning
        return compiled.search


def compile_signature(pattern: str):
    """The stdlib ``re`` where it accepts the pattern (2.4x faster on a candidate line than the
    ``regex`` package), else ``regex`` (a user rule may use its extra syntax, e.g. ``\\p{L}``)."""
    try:
        return re.compile(pattern)
    except re.error:
        import regex  # the regex package costs a noticeable part of start-up: only when a line needs it

        return regex.compile(pattern)


@dataclass(frozen=True)
class Condition:
    any: tuple[str, ...] = ()  # signature names that make the finding; empty = every non-fact signature
    min_count: int = 1
    multi_node: bool | None = None  # True: only when the job spans >1 node
    single_node_severity: str | None = None  # severity on a one-node job; "none" drops the finding
    analyzer: str | None = None
    phase: int = 1  # rules of a later phase see the findings of earlier phases


@dataclass(frozen=True)
class Lint:
    """How ``slurmdiag lint`` prevents the cause before the job runs: the check (a function named in
    diag.lint's table) and what to do, in the rule's own words."""

    check: str
    text: str


@dataclass(frozen=True)
class Rule:
    id: str
    title: str
    severity: str
    role: str
    confidence: float
    description: str
    signatures: tuple[Signature, ...]
    condition: Condition
    explains: tuple[str, ...]
    remediation: str
    settings: tuple[str, ...]
    references: tuple[str, ...]
    examples_match: tuple[str, ...]
    examples_no_match: tuple[str, ...]
    path: str
    action: str | None = None  # one short imperative line for alerts; None: the remediation's first sentence
    lint: Lint | None = None  # the preflight twin of the rule (slurmdiag lint)
    follow: bool | None = None  # may alert while the job runs (slurmdiag follow); None: by family and role
    # "experimental": a draft (e.g. written by `fleet templates --drafts`) that a person has not
    # finished; it runs like any rule once its folder is passed with --rules, and says what it is.
    status: str = "stable"
    # Words that point at this cause on an error line no signature knows (a message form nobody here
    # has seen): a weak fallback, see diag.diagnosis.cues. Case-insensitive regular expressions.
    cues: tuple[str, ...] = ()
    examples_cue: tuple[str, ...] = ()  # lines that only the cues catch: each, alone, is diagnosed as this cause

    def signature(self, name: str) -> Signature:
        for sig in self.signatures:
            if sig.name == name:
                return sig
        raise KeyError(name)


@dataclass
class RuleSet:
    rules: list[Rule] = field(default_factory=list)

    def by_id(self) -> dict[str, Rule]:
        return {r.id: r for r in self.rules}

    def ids(self) -> list[str]:
        return [r.id for r in self.rules]
