"""A bad rule file is one clear error naming the file, the rule id and the field."""

from __future__ import annotations

import pytest
import yaml

from diag.api import load_rules
from diag.catalog.load import parse_rule
from diag.catalog.model import RuleError
from diag.diagnosis.analyzers import check

GOOD = {
    "id": "x-demo",
    "title": "demo",
    "severity": "error",
    "role": "root",
    "description": "d",
    "remediation": "r",
    "signatures": [{"name": "s", "regex": "demo failure (?P<what>\\w+)"}],
    "examples": {"match": ["demo failure x"], "no_match": ["ok"]},
}


def _with(**changes):
    data = yaml.safe_load(yaml.safe_dump(GOOD))
    for key, value in changes.items():
        if value is None:
            data.pop(key)
        else:
            data[key] = value
    return data


@pytest.mark.parametrize(
    ("changes", "field", "words"),
    [
        ({"severity": "fatal"}, "severity", "one of"),
        ({"role": "cause"}, "role", "one of"),
        ({"title": None}, "title", "missing"),
        ({"colour": "red"}, "colour", "unknown field"),
        ({"id": "made-up-id"}, "id", "x-"),
        ({"signatures": [{"name": "s", "regex": "(?<=a)b+c+d+e"}]}, "signatures[0].regex", "lookaround"),
        ({"signatures": [{"name": "s", "regex": "a\\d+b"}]}, "signatures[0].regex", "literal"),
        ({"signatures": [{"name": "s", "regex": "x[", "literal": "xxxx"}]}, "signatures[0].regex", "compile"),
        ({"signatures": [{"name": "s", "regex": "demo failure", "level": ["LOUD"]}]}, "signatures[0].level", "LOUD"),
        ({"condition": {"analyzer": "nope"}}, "condition.analyzer", "unknown analyzer"),
        ({"condition": {"any": ["missing"]}}, "condition.any", "missing"),
        ({"explains": ["not-an-id"]}, "explains", "not a cause id"),
        ({"examples": {"no_match": ["x"]}}, "examples", "match"),
        ({"cues": ["shm"]}, "cues", "mapping"),
        ({"cues": {"words": ["/dev/shm"]}}, "cues.examples", "required"),
        ({"cues": {"words": ["/dev/shm"], "examples": ["x"], "weight": 2}}, "cues.weight", "unknown field"),
        ({"cues": {"words": ["abc["], "examples": ["x"]}}, "cues.words[0]", "compile"),
        ({"cues": {"words": ["ab"], "examples": ["x"]}}, "cues.words[0]", "3+"),
    ],
)
def test_schema_errors_name_the_field(changes, field, words):
    with pytest.raises(RuleError) as info:
        # The schema is the catalogue's; whether a named analyzer exists is the diagnosis' check.
        check([parse_rule(_with(**changes), "rules/x-demo.yaml")])
    message = str(info.value)
    assert message.startswith("rules/x-demo.yaml")
    assert f"field '{field}'" in message
    assert words in message


def test_good_rule_parses_and_derives_its_literal():
    rule = parse_rule(GOOD, "rules/x-demo.yaml")
    assert rule.signatures[0].literal == "demo failure "


def test_invalid_yaml_names_the_line(tmp_path):
    (tmp_path / "x-broken.yaml").write_text("id: x-broken\ntitle: [unclosed\n")
    with pytest.raises(RuleError, match=r"x-broken.yaml: invalid YAML at line \d"):
        load_rules([str(tmp_path)])


def test_missing_rule_directory(tmp_path):
    with pytest.raises(RuleError, match="does not exist"):
        load_rules([str(tmp_path / "nope")])


def test_builtin_rules_cover_the_core_causes():
    ids = set(load_rules().ids())
    for cid in ("nccl-tcp-fallback", "ib-devices-not-mounted", "ib-verbs-library-missing", "nccl-ib-hca-wrong",
                "nccl-ib-disabled", "nccl-socket-ifname", "pmix-plugin-missing", "pmix-not-used",
                "pmix-runtime-error", "node-local-path", "unexplained-failure"):  # fmt: skip
        assert cid in ids


def test_rule_cache_never_serves_a_stale_rule(tmp_path, monkeypatch):
    monkeypatch.setenv("SLURMDIAG_CACHE", str(tmp_path / "cache"))
    rules_dir = tmp_path / "rules"
    rules_dir.mkdir()
    rule = rules_dir / "x-demo.yaml"
    rule.write_text(yaml.safe_dump(GOOD))
    first = load_rules([str(rules_dir)]).by_id()["x-demo"]
    assert list((tmp_path / "cache").glob("rules-*.pickle")), "the parsed rules were not cached"
    again = load_rules([str(rules_dir)]).by_id()["x-demo"]
    assert again.title == first.title == "demo"
    rule.write_text(yaml.safe_dump(_with(title="changed")))
    assert load_rules([str(rules_dir)]).by_id()["x-demo"].title == "changed"
    rule.write_text(yaml.safe_dump(_with(severity="fatal")))
    with pytest.raises(RuleError, match="severity"):
        load_rules([str(rules_dir)])


def test_unwritable_cache_is_not_an_error(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("SLURMDIAG_CACHE", str(blocker / "sub"))  # cannot be created
    assert load_rules().ids()
