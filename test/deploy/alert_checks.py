"""Checks of the PrometheusRule alerts rendered from deploy/kubernetes (issue 34).

Used by check_manifests.py (invariants "alerts" and "alert-metrics"). Each function takes a
`fail(invariant, where, message)` callback.

An alert is only as good as the series it reads: every metric an expression selects must be a
family the plugin exports (deploy/grafana/metric-families.txt, which the same checker holds equal
to the string literals of src/metrics/*.cc), or the alert silently never fires. Each alert also
names its runbook: a section of docs/alerts.md headed by the alert's name.
"""
import os
import re

import dashboard_checks

RUNBOOK_DOC = "docs/alerts.md"


def alert_rules(objs):
    """(PrometheusRule, group name, rule) for every alerting rule of the rendered objects."""
    for o in objs:
        if o.get("kind") != "PrometheusRule":
            continue
        for group in (o.get("spec") or {}).get("groups") or []:
            for rule in group.get("rules") or []:
                if isinstance(rule, dict) and "alert" in rule:
                    yield o, group.get("name"), rule


def runbook_sections(repo):
    """The `## Name` headings of docs/alerts.md beside deploy/, lower-cased; None without docs/."""
    path = os.path.join(repo, RUNBOOK_DOC)
    if not os.path.isdir(os.path.dirname(path)):
        return None
    if not os.path.exists(path):
        return set()
    with open(path) as f:
        return {m.group(1).strip().lower() for m in re.finditer(r"^##\s+(\S+)\s*$", f.read(), re.M)}


def check_alerts(objs, where, families, repo, fail):
    """The alerts of one rendering: present where a ServiceMonitor is, complete, and reading only
    the plugin's metric families. `families`: {name: type} of metric-families.txt."""
    rules = list(alert_rules(objs))
    sections = runbook_sections(repo)
    if any(o.get("kind") == "ServiceMonitor" for o in objs) and not rules:
        fail("alerts", where, "a ServiceMonitor scrapes the plugin but no PrometheusRule alerts "
                              "on what it exports")
    seen = set()
    for o, group, rule in rules:
        name = rule.get("alert")
        at = f"PrometheusRule/{o['metadata'].get('name')} group {group} alert {name}"
        if not isinstance(name, str) or not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", name):
            fail("alerts", where, f"{at}: not an alert name")
            continue
        if name in seen:
            fail("alerts", where, f"{at}: defined twice")
        seen.add(name)
        expr = rule.get("expr")
        if not isinstance(expr, str) or not expr.strip():
            fail("alerts", where, f"{at}: no expr")
            continue
        if not (rule.get("labels") or {}).get("severity"):
            fail("alerts", where, f"{at}: no severity label")
        annotations = rule.get("annotations") or {}
        if not annotations.get("summary"):
            fail("alerts", where, f"{at}: no summary annotation")
        want = f"{RUNBOOK_DOC}#{name.lower()}"
        if annotations.get("runbook") != want:
            fail("alerts", where, f"{at}: runbook annotation is {annotations.get('runbook')!r}, "
                                  f"want {want!r}")
        elif sections is not None and name.lower() not in sections:
            fail("alerts", where, f"{at}: {RUNBOOK_DOC} has no section '## {name}'")
        dashboard_checks.check_metric_names([(at, expr)], families, where, fail,
                                            inv="alert-metrics")
