"""Rules are data: one YAML file per cause, validated against a declared schema when loaded.

A bad rule file is reported as one line naming the file, the rule id and the field; it never
raises a traceback at the user. See README "Writing a rule" for the schema.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable
from pathlib import Path

from diag.catalog.causes import CAUSE_IDS, CUSTOM_ID_PREFIX, ROLES, SEVERITIES
from diag.catalog.literals import best_literal, bound_digit_runs
from diag.catalog.model import LEVELS, Condition, Lint, Rule, RuleError, RuleSet, Signature

RULES_ENV = "SLURMDIAG_RULES"

_TOP_FIELDS = {
    "id": True, "title": True, "severity": True, "role": True, "confidence": False, "description": True,
    "signatures": True, "condition": False, "explains": False, "remediation": True, "settings": False,
    "references": False, "examples": True, "action": False, "lint": False, "follow": False, "status": False,
    "cues": False,
}  # fmt: skip
STATUSES = ("stable", "experimental")
ACTION_MAX = 200  # an alert line: one imperative sentence naming the setting, never cut
_SIG_FIELDS = {"name", "regex", "literal", "level", "fact"}
_COND_FIELDS = {"any", "min_count", "multi_node", "single_node_severity", "analyzer", "phase"}
_FORBIDDEN_SYNTAX = re.compile(r"\(\?[=!<]|\\[1-9]|\(\?P=")


def builtin_rules_dir() -> Path:
    """The rules shipped in the wheel (``diag/builtin_rules``), or ``rules/`` of a source checkout."""
    package = Path(__file__).resolve().parent.parent
    installed = package / "builtin_rules"
    if installed.is_dir():
        return installed
    checkout = package.parent / "rules"
    if checkout.is_dir():
        return checkout
    from importlib import resources  # slow to import; only for unusual installs

    return Path(str(resources.files("diag") / "builtin_rules"))


def _str_list(value, path: str, rid: str | None, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise RuleError(path, rid, name, "must be a list of strings")
    return tuple(value)


def _parse_signature(raw, path: str, rid: str, index: int) -> Signature:
    where = f"signatures[{index}]"
    if not isinstance(raw, dict):
        raise RuleError(path, rid, where, "must be a mapping with 'name' and 'regex'")
    unknown = set(raw) - _SIG_FIELDS
    if unknown:
        raise RuleError(path, rid, f"{where}.{sorted(unknown)[0]}", "unknown field")
    name = raw.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", name):
        raise RuleError(path, rid, f"{where}.name", "required: lower_snake_case name")
    pattern = raw.get("regex")
    if not isinstance(pattern, str) or not pattern:
        raise RuleError(path, rid, f"{where}.regex", "required: a regular expression string")
    if _FORBIDDEN_SYNTAX.search(pattern):
        raise RuleError(path, rid, f"{where}.regex", "lookaround and backreferences are not allowed")
    if "\\n" in pattern or "(?s" in pattern or "(?m" in pattern:
        raise RuleError(path, rid, f"{where}.regex", "a signature matches within one line")
    try:
        # Signatures stay in the subset re, RE2 and Hyperscan share, so re's (cached, fast) compile
        # validates them; the regex package compiles each one when a candidate line first needs it.
        re.compile(pattern)
    except re.error as exc:
        raise RuleError(path, rid, f"{where}.regex", f"does not compile: {exc}") from None
    literal = raw.get("literal")
    if literal is None:
        literal = best_literal(pattern)
        if literal is None:
            raise RuleError(
                path, rid, f"{where}.regex", "has no literal of 4+ characters every match contains; add 'literal'"
            )
    elif not isinstance(literal, str) or len(literal) < 3:
        raise RuleError(path, rid, f"{where}.literal", "must be a string of 3+ characters")
    levels = _str_list(raw.get("level"), path, rid, f"{where}.level")
    bad = [lv for lv in levels if lv not in LEVELS]
    if bad:
        raise RuleError(path, rid, f"{where}.level", f"unknown level {bad[0]!r}; one of {', '.join(LEVELS)}")
    fact = raw.get("fact", False)
    if not isinstance(fact, bool):
        raise RuleError(path, rid, f"{where}.fact", "must be true or false")
    return Signature(name, bound_digit_runs(pattern), literal, None, levels, fact)


def _parse_cues(raw, path: str, rid: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """``cues: {words: [...], examples: [...]}``: the words, and lines only they catch."""
    if raw is None:
        return (), ()
    if not isinstance(raw, dict):
        raise RuleError(path, rid, "cues", "a mapping with 'words' and 'examples'")
    unknown = set(raw) - {"words", "examples"}
    if unknown:
        raise RuleError(path, rid, f"cues.{sorted(unknown)[0]}", "unknown field")
    words = _str_list(raw.get("words"), path, rid, "cues.words")
    examples = _str_list(raw.get("examples"), path, rid, "cues.examples")
    if not words:
        raise RuleError(path, rid, "cues.words", "required: regular expressions for the cause's words")
    if not examples:
        raise RuleError(path, rid, "cues.examples", "required: error lines only the words catch")
    for i, cue in enumerate(words):
        if _FORBIDDEN_SYNTAX.search(cue):
            raise RuleError(path, rid, f"cues.words[{i}]", "lookaround and backreferences are not allowed")
        if len(cue) < 3:
            raise RuleError(path, rid, f"cues.words[{i}]", "too short to point at a cause: 3+ characters")
        try:
            re.compile(cue, re.IGNORECASE)
        except re.error as exc:
            raise RuleError(path, rid, f"cues.words[{i}]", f"does not compile: {exc}") from None
    return words, examples


def _parse_condition(raw, path: str, rid: str, names: set[str]) -> Condition:
    if raw is None:
        return Condition()
    if not isinstance(raw, dict):
        raise RuleError(path, rid, "condition", "must be a mapping")
    unknown = set(raw) - _COND_FIELDS
    if unknown:
        raise RuleError(path, rid, f"condition.{sorted(unknown)[0]}", "unknown field")
    any_ = _str_list(raw.get("any"), path, rid, "condition.any")
    for name in any_:
        if name not in names:
            raise RuleError(path, rid, "condition.any", f"names no signature of this rule: {name!r}")
    min_count = raw.get("min_count", 1)
    if not isinstance(min_count, int) or min_count < 1:
        raise RuleError(path, rid, "condition.min_count", "must be an integer >= 1")
    multi_node = raw.get("multi_node")
    if multi_node is not None and not isinstance(multi_node, bool):
        raise RuleError(path, rid, "condition.multi_node", "must be true or false")
    sns = raw.get("single_node_severity")
    if sns is not None and sns not in (*SEVERITIES, "none"):
        raise RuleError(path, rid, "condition.single_node_severity", f"one of {', '.join(SEVERITIES)}, none")
    analyzer = raw.get("analyzer")
    if analyzer is not None and (not isinstance(analyzer, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", analyzer)):
        # Whether the name is known is the diagnosis' business (diag.diagnosis.analyzers.check).
        raise RuleError(path, rid, "condition.analyzer", "must be a lower_snake_case analyzer name")
    phase = raw.get("phase", 1)
    if not isinstance(phase, int) or phase < 1:
        raise RuleError(path, rid, "condition.phase", "must be an integer >= 1")
    return Condition(any_, min_count, multi_node, sns, analyzer, phase)


def _parse_lint(raw, path: str, rid: str) -> Lint | None:
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise RuleError(path, rid, "lint", "must be a mapping with 'check' and 'text'")
    unknown = set(raw) - {"check", "text"}
    if unknown:
        raise RuleError(path, rid, f"lint.{sorted(unknown)[0]}", "unknown field")
    check = raw.get("check")
    if not isinstance(check, str) or not re.fullmatch(r"[a-z][a-z0-9_]*", check):
        # Whether the check exists is diag.lint's business (diag.lint.checks.check_names).
        raise RuleError(path, rid, "lint.check", "required: a lower_snake_case check name")
    text = raw.get("text")
    if not isinstance(text, str) or not text.strip():
        raise RuleError(path, rid, "lint.text", "required: how to prevent the cause, a non-empty string")
    return Lint(check, " ".join(text.split()))


def parse_rule(data, path: str) -> Rule:
    if not isinstance(data, dict):
        raise RuleError(path, None, None, "a rule file holds one YAML mapping")
    rid = data.get("id")
    if not isinstance(rid, str) or not rid:
        raise RuleError(path, None, "id", "required: the cause id")
    if rid not in CAUSE_IDS and not rid.startswith(CUSTOM_ID_PREFIX):
        raise RuleError(
            path, rid, "id", f"not a cause id of the catalogue; custom rules use the {CUSTOM_ID_PREFIX!r} prefix"
        )
    for name, required in _TOP_FIELDS.items():
        if required and name not in data:
            raise RuleError(path, rid, name, "required field is missing")
    unknown = set(data) - set(_TOP_FIELDS)
    if unknown:
        raise RuleError(path, rid, sorted(unknown)[0], "unknown field")
    for name in ("title", "description", "remediation"):
        if not isinstance(data[name], str) or not data[name].strip():
            raise RuleError(path, rid, name, "must be a non-empty string")
    action = data.get("action")
    if action is not None:
        if not isinstance(action, str) or not action.strip():
            raise RuleError(path, rid, "action", "must be a non-empty string")
        action = " ".join(action.split())
        if len(action) > ACTION_MAX:
            raise RuleError(path, rid, "action", f"one short line: at most {ACTION_MAX} characters, got {len(action)}")
    if data["severity"] not in SEVERITIES:
        raise RuleError(path, rid, "severity", f"one of {', '.join(SEVERITIES)}")
    if data["role"] not in ROLES:
        raise RuleError(path, rid, "role", f"one of {', '.join(ROLES)}")
    confidence = data.get("confidence", 0.8)
    if not isinstance(confidence, (int, float)) or not 0 <= confidence <= 1:
        raise RuleError(path, rid, "confidence", "a number from 0 to 1")
    raw_sigs = data["signatures"]
    if not isinstance(raw_sigs, list) or not raw_sigs:
        raise RuleError(path, rid, "signatures", "a non-empty list")
    signatures = tuple(_parse_signature(s, path, rid, i) for i, s in enumerate(raw_sigs))
    names = [s.name for s in signatures]
    if len(set(names)) != len(names):
        raise RuleError(path, rid, "signatures", "signature names must be unique")
    condition = _parse_condition(data.get("condition"), path, rid, set(names))
    explains = _str_list(data.get("explains"), path, rid, "explains")
    for target in explains:
        if target not in CAUSE_IDS and not target.startswith(CUSTOM_ID_PREFIX):
            raise RuleError(path, rid, "explains", f"not a cause id: {target!r}")
    follow = data.get("follow")
    if follow is not None and not isinstance(follow, bool):
        raise RuleError(path, rid, "follow", "must be true or false")
    status = data.get("status", "stable")
    if status not in STATUSES:
        raise RuleError(path, rid, "status", f"one of {', '.join(STATUSES)}")
    examples = data["examples"]
    if not isinstance(examples, dict) or not examples.get("match"):
        raise RuleError(path, rid, "examples", "needs 'match' (lines that must match) and 'no_match'")
    unknown = set(examples) - {"match", "no_match"}
    if unknown:
        raise RuleError(path, rid, f"examples.{sorted(unknown)[0]}", "unknown field")
    cues, examples_cue = _parse_cues(data.get("cues"), path, rid)
    return Rule(
        id=rid,
        title=data["title"].strip(),
        severity=data["severity"],
        role=data["role"],
        confidence=float(confidence),
        description=data["description"].strip(),
        signatures=signatures,
        condition=condition,
        explains=explains,
        remediation=" ".join(data["remediation"].split()),
        settings=_str_list(data.get("settings"), path, rid, "settings"),
        references=_str_list(data.get("references"), path, rid, "references"),
        examples_match=_str_list(examples.get("match"), path, rid, "examples.match"),
        examples_no_match=_str_list(examples.get("no_match"), path, rid, "examples.no_match"),
        path=path,
        action=action,
        lint=_parse_lint(data.get("lint"), path, rid),
        follow=follow,
        status=status,
        cues=cues,
        examples_cue=examples_cue,
    )


def load_rule_file(path: Path) -> Rule:
    shown = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise RuleError(shown, None, None, f"cannot read: {exc}") from None
    import yaml  # only when the rule cache misses

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}" if mark else ""
        raise RuleError(shown, None, None, f"invalid YAML{where}") from None
    return parse_rule(data, shown)


def rule_dirs(extra: Iterable[str] = ()) -> list[Path]:
    dirs = [builtin_rules_dir()]
    env = os.environ.get(RULES_ENV, "")
    dirs.extend(Path(p) for p in env.split(os.pathsep) if p)
    dirs.extend(Path(p) for p in extra)
    return dirs


def load_rules(extra_dirs: Iterable[str] = (), disabled: Iterable[str] = ()) -> RuleSet:
    """Built-in rules, then ``$SLURMDIAG_RULES`` dirs, then ``extra_dirs``; a later rule with the
    same id replaces the earlier one (a site can override a built-in)."""
    paths: list[Path] = []
    for directory in rule_dirs(extra_dirs):
        if not directory.is_dir():
            raise RuleError(str(directory), None, None, "rule directory does not exist")
        paths.extend(sorted(directory.glob("*.yaml")) + sorted(directory.glob("*.yml")))
    by_id: dict[str, Rule] = {}
    for rule in _parsed_rules(paths):
        by_id[rule.id] = rule
    off = set(disabled)
    unknown = off - set(by_id)
    if unknown:
        raise RuleError("--disable", sorted(unknown)[0], None, "no rule has this id")
    return RuleSet([r for r in by_id.values() if r.id not in off])


def _parsed_rules(paths: list[Path]) -> list[Rule]:
    """Parse and validate the rule files, or take them from the cache when no byte of the files
    (or of the catalogue's code) changed: validation compiles every regex."""
    from diag import __version__, cache

    digest = hashlib.sha256(f"{__version__}\0".encode())
    here = Path(__file__).resolve().parent
    for code in ("load.py", "model.py", "causes.py", "literals.py"):
        digest.update((here / code).read_bytes())
    for path in paths:
        try:
            digest.update(f"\0{path}\0".encode() + path.read_bytes())
        except OSError:
            digest.update(b"\0unreadable")
    name = f"rules-{digest.hexdigest()[:32]}.pickle"
    rules = cache.load_object(name)
    if isinstance(rules, list) and all(isinstance(r, Rule) for r in rules):
        return rules
    rules = [load_rule_file(path) for path in paths]
    cache.store_object(name, rules)
    return rules
