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


def rules_json(rules: RuleSet) -> str:
    """Every rule's public fields as a JSON list (ordered by id), for scripts and dashboards."""
    import json

    out = [
        {
            "id": r.id, "title": r.title, "severity": r.severity, "role": r.role, "confidence": r.confidence,
            "description": r.description, "action": r.action, "remediation": r.remediation,
            "settings": list(r.settings), "references": list(r.references), "explains": list(r.explains),
            "cues": list(r.cues), "path": r.path,
        }
        for r in sorted(rules.rules, key=lambda r: r.id)
    ]  # fmt: skip
    return json.dumps(out, indent=2, ensure_ascii=False) + "\n"


def explain_rule(rule: Rule) -> str:
    out = [f"{rule.id}: {rule.title}", f"severity {rule.severity}, role {rule.role}, confidence {rule.confidence}", ""]
    if rule.status != "stable":
        out[1] += f", status {rule.status}"
    out += [rule.description, ""]
    if rule.action:
        out += ["Action:", f"  {rule.action}", ""]
    out += ["Fix:", f"  {rule.remediation}", ""]
    if rule.settings:
        out += ["Settings:"] + [f"  {s}" for s in rule.settings] + [""]
    if rule.explains:
        out += [f"Explains: {', '.join(rule.explains)}", ""]
    from diag.catalog.causes import alerts_while_running

    if rule.lint:
        out += [f"Prevent (slurmdiag lint, check {rule.lint.check}):", f"  {rule.lint.text}", ""]
    running = alerts_while_running(rule.id, rule.role, rule.follow)
    out += ["Follow: " + ("alerts while the job runs" if running else "reported when the job has ended"), ""]
    out += ["Signatures:"]
    for sig in rule.signatures:
        kind = " (context only)" if sig.fact else ""
        out.append(f"  {sig.name}{kind}: {sig.pattern}")
    out += ["", "Matches, for example:"] + [f"  {line}" for line in rule.examples_match]
    if rule.examples_no_match:
        out += ["", "Does not match:"] + [f"  {line}" for line in rule.examples_no_match]
    if rule.cues:
        out += ["", "Cues (words on an error line no signature knows; a weak, low-confidence answer):"]
        out += [f"  {word}" for word in rule.cues]
        out += ["", "Named by its cues, for example:"] + [f"  {line}" for line in rule.examples_cue]
    if rule.references:
        out += ["", "References:"] + [f"  {r}" for r in rule.references]
    return "\n".join(out) + "\n"
