"""Documentation generated from the rules themselves: the README table and `explain` pages."""

from __future__ import annotations

from diag.catalog.model import Rule, RuleSet

ROLE_ORDER = {"root": 0, "symptom": 1, "advice": 2}


def rules_table(rules: RuleSet, fmt: str = "text") -> str:
    ordered = sorted(rules.rules, key=lambda r: r.id)
    if fmt == "markdown":
        out = ["| id | role | severity | meaning | points to |", "|---|---|---|---|---|"]
        for r in ordered:
            settings = ", ".join(f"`{s}`" for s in r.settings[:3]) or "—"
            out.append(f"| `{r.id}` | {r.role} | {r.severity} | {r.title} | {settings} |")
        return "\n".join(out) + "\n"
    width = max(len(r.id) for r in ordered)
    return "".join(f"{r.id:<{width}}  {r.severity:<8}  {r.role:<7}  {r.title}\n" for r in ordered)


def explain_rule(rule: Rule) -> str:
    out = [f"{rule.id}: {rule.title}", f"severity {rule.severity}, role {rule.role}, confidence {rule.confidence}", ""]
    out += [rule.description, ""]
    out += ["Fix:", f"  {rule.remediation}", ""]
    if rule.settings:
        out += ["Settings:"] + [f"  {s}" for s in rule.settings] + [""]
    if rule.explains:
        out += [f"Explains: {', '.join(rule.explains)}", ""]
    out += ["Signatures:"]
    for sig in rule.signatures:
        kind = " (context only)" if sig.fact else ""
        out.append(f"  {sig.name}{kind}: {sig.pattern}")
    out += ["", "Matches, for example:"] + [f"  {line}" for line in rule.examples_match]
    if rule.examples_no_match:
        out += ["", "Does not match:"] + [f"  {line}" for line in rule.examples_no_match]
    if rule.references:
        out += ["", "References:"] + [f"  {r}" for r in rule.references]
    return "\n".join(out) + "\n"
