"""Checks of the Grafana dashboards in deploy/grafana/ and of the metric families they may use.

Used by check_manifests.py (invariants "dashboard", "dashboard-metrics",
"metric-families-match-source" and "dashboard-alerts"). Each function takes a
`fail(invariant, where, message)` callback.

Every alert has a panel that shows what it watches: a panel naming the alert in its description
whose expressions select every metric family the alert's expression selects, so the person paged
finds the graph behind the page.

The families a dashboard may query are listed in deploy/grafana/metric-families.txt
(`<name> <type>` per line). When the plugin's metrics code exists (src/metrics/*.cc), that list
must name exactly the families that appear there as string literals ("oxide_csi_..." or
"process_..."), so the dashboard follows the code.
"""
import glob
import json
import os
import re

FAMILY_TYPES = {"counter", "gauge", "histogram", "summary"}
HISTOGRAM_SUFFIXES = ("_bucket", "_sum", "_count")
SUMMARY_SUFFIXES = ("_sum", "_count")
# PromQL words that are not metric names (operators, modifiers; functions and aggregations are
# recognised by the parenthesis that follows them)
PROMQL_KEYWORDS = {"and", "or", "unless", "bool", "offset", "by", "without", "on", "ignoring",
                   "group_left", "group_right", "inf", "nan", "start", "end"}
SOURCE_FAMILY = re.compile(r'"((?:oxide_csi|process)_[A-Za-z0-9_]+)"')
DATASOURCE_UIDS = ("${datasource}", "$datasource")


def read_families(path):
    """({family: type}, [problems]) from a metric-families.txt."""
    families, problems = {}, []
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            parts = line.split()
            if len(parts) != 2 or parts[1] not in FAMILY_TYPES or \
                    not re.match(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$", parts[0]):
                problems.append(f"line {n}: {line!r} is not '<family> <counter|gauge|histogram|"
                                f"summary>'")
            elif parts[0] in families:
                problems.append(f"line {n}: {parts[0]} is listed twice")
            else:
                families[parts[0]] = parts[1]
    return families, problems


def source_families(metrics_dir):
    """The family names that are string literals in metrics_dir/*.cc: series names of a
    histogram (name_bucket, _sum, _count) fold into their family when it is named too."""
    names = set()
    for path in sorted(glob.glob(os.path.join(metrics_dir, "*.cc"))):
        with open(path, errors="replace") as f:
            names |= set(SOURCE_FAMILY.findall(f.read()))
    folded = set()
    for n in names:
        base = next((n[:-len(sfx)] for sfx in HISTOGRAM_SUFFIXES
                     if n.endswith(sfx) and n[:-len(sfx)] in names), None)
        folded.add(base or n)
    return folded


def promql_metric_names(expr):
    """The metric names a PromQL expression selects (Grafana variables removed first)."""
    s = re.sub(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`', '""', expr)
    s = re.sub(r"\$\{[^}]*\}|\$\w+", " ", s)               # ${var}, $var, $__rate_interval
    s = re.sub(r"\{[^{}]*\}", " ", s)                        # label matchers
    s = re.sub(r"\[[^\]]*\]", " ", s)                        # range and subquery durations
    s = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", s)
    names = []
    for m in re.finditer(r"(?<![\w.])([A-Za-z_:][A-Za-z0-9_:]*)", s):
        word = m.group(1)
        if re.match(r"\s*\(", s[m.end():]) or word.lower() in PROMQL_KEYWORDS:
            continue
        names.append(word)
    return names


def variable_query_exprs(var):
    """PromQL inside a Grafana query variable (label_values(selector, label) etc.)."""
    q = var.get("query")
    if isinstance(q, dict):
        q = q.get("query")
    if not isinstance(q, str) or not q.strip():
        return []
    m = re.match(r"^\s*label_values\s*\((.*),\s*[A-Za-z_][A-Za-z0-9_]*\s*\)\s*$", q, re.S)
    if m:
        return [m.group(1)]
    if re.match(r"^\s*(label_values|label_names|metrics)\s*\(", q):
        return []     # label_values(label), label_names(), metrics(regex): no selector
    m = re.match(r"^\s*query_result\s*\((.*)\)\s*$", q, re.S)
    return [m.group(1) if m else q]


def all_panels(panels):
    for p in panels or []:
        yield p
        yield from all_panels(p.get("panels"))


def uses_datasource_variable(ds):
    return isinstance(ds, dict) and ds.get("uid") in DATASOURCE_UIDS or ds in DATASOURCE_UIDS


def check_dashboard(path, rel, fail):
    """The dashboard's structure; returns [(where, expr)] for the metric check, or None."""
    inv = "dashboard"
    try:
        with open(path) as f:
            d = json.load(f)
    except (ValueError, OSError) as e:
        fail(inv, rel, f"does not parse as JSON: {e}")
        return None
    if not isinstance(d, dict) or not d.get("title") or not d.get("uid"):
        fail(inv, rel, "not a dashboard object with a title and a uid")
        return None
    if not isinstance(d.get("schemaVersion"), int) or d["schemaVersion"] < 36:
        fail(inv, rel, f"schemaVersion {d.get('schemaVersion')!r}; want 36 or newer (Grafana 9+)")
    variables = (d.get("templating") or {}).get("list") or []
    dsvar = [v for v in variables if v.get("name") == "datasource"]
    if not dsvar or dsvar[0].get("type") != "datasource" or dsvar[0].get("query") != "prometheus":
        fail(inv, rel, "no templating variable `datasource` of type datasource for prometheus: "
                       "the dashboard would be bound to one Grafana's data source uid")
    exprs = []
    for v in variables:
        if v.get("type") == "query":
            if not uses_datasource_variable(v.get("datasource")):
                fail(inv, rel, f"variable {v.get('name')} does not query ${{datasource}}")
            exprs += [(f"variable {v.get('name')}", e) for e in variable_query_exprs(v)]
    ids = set()
    for p in all_panels(d.get("panels")):
        title = p.get("title")
        where = f"panel {p.get('id')} {title!r}"
        if p.get("id") in ids:
            fail(inv, rel, f"{where}: id {p.get('id')} is used twice")
        ids.add(p.get("id"))
        if not isinstance(title, str) or not title.strip():
            fail(inv, rel, f"panel {p.get('id')} ({p.get('type')}) has no title")
        if p.get("type") == "row":
            continue
        targets = p.get("targets") or []
        if not targets:
            fail(inv, rel, f"{where} has no target")
        if not uses_datasource_variable(p.get("datasource")):
            fail(inv, rel, f"{where}: datasource {p.get('datasource')!r}, want uid ${{datasource}}")
        for t in targets:
            expr = t.get("expr")
            if not isinstance(expr, str) or not expr.strip():
                fail(inv, rel, f"{where} target {t.get('refId')}: no expression")
                continue
            if "datasource" in t and not uses_datasource_variable(t["datasource"]):
                fail(inv, rel, f"{where} target {t.get('refId')}: datasource {t['datasource']!r}, "
                               f"want uid ${{datasource}}")
            exprs.append((f"{where} target {t.get('refId')}", expr))
    if not ids:
        fail(inv, rel, "no panels")
    return exprs


def check_metric_names(exprs, families, rel, fail, inv="dashboard-metrics"):
    """Every selected metric is a family, or a histogram's (summary's) series of one (also used
    for alert expressions, under their own invariant)."""
    for where, expr in exprs:
        for name in promql_metric_names(expr):
            kind = families.get(name)
            if kind in ("histogram", "summary"):
                fail(inv, rel, f"{where}: {name} is a {kind}; select its _bucket, _sum or _count "
                               f"series")
                continue
            if kind is not None:
                continue
            base, sfx = next(((name[:-len(s)], s) for s in HISTOGRAM_SUFFIXES
                              if name.endswith(s)), (None, None))
            bkind = families.get(base)
            if bkind == "histogram" or (bkind == "summary" and sfx in SUMMARY_SUFFIXES):
                continue
            if bkind is not None:
                fail(inv, rel, f"{where}: {name}: {base} is a {bkind}, it has no {sfx} series")
            else:
                fail(inv, rel, f"{where}: {name} is not a metric family of the plugin "
                               f"(deploy/grafana/metric-families.txt)")


def family_of(name, families):
    """The family a selected series belongs to (a histogram's _bucket/_sum/_count fold), or None
    (also for a histogram or summary selected by its bare name: "dashboard-metrics" and
    "alert-metrics" report that)."""
    if name in families:
        return name if families[name] not in ("histogram", "summary") else None
    for sfx in HISTOGRAM_SUFFIXES:
        if name.endswith(sfx) and name[:-len(sfx)] in families:
            return name[:-len(sfx)]
    return None


def dashboard_panels(deploy):
    """[(where, description, [expr])] of every non-row panel of every dashboard that parses."""
    out = []
    for path in sorted(glob.glob(os.path.join(deploy, "grafana", "*.json"))):
        rel = os.path.relpath(path, os.path.dirname(deploy))
        try:
            with open(path) as f:
                d = json.load(f)
        except (ValueError, OSError):
            continue  # the "dashboard" invariant says why
        if not isinstance(d, dict):
            continue
        for p in all_panels(d.get("panels")):
            if p.get("type") == "row":
                continue
            exprs = [t.get("expr") for t in p.get("targets") or []
                     if isinstance(t.get("expr"), str)]
            desc = p.get("description") if isinstance(p.get("description"), str) else ""
            out.append((f"{rel} panel {p.get('id')} {p.get('title')!r}", desc, exprs))
    return out


def check_alert_panels(alerts, panels, families, where, fail, inv="dashboard-alerts"):
    """Each (alert name, expr) of `alerts` has a panel of `panels` (dashboard_panels) naming it in
    its description whose expressions select every family the alert's expression selects."""
    if not panels:
        return  # no dashboard, or none parses: the "dashboard" invariant says so
    for name, expr in alerts:
        wanted = {family_of(n, families) for n in promql_metric_names(expr)} - {None}
        for fam in sorted(wanted):
            if not any(fam in {family_of(n, families) for e in exprs for n in promql_metric_names(e)}
                       for _, _, exprs in panels):
                fail(inv, where, f"alert {name}: its metric family {fam} appears in no dashboard "
                                 f"panel")
        shown = [(w, exprs) for w, desc, exprs in panels
                 if re.search(r"(?<![A-Za-z0-9_])" + re.escape(name) + r"(?![A-Za-z0-9_])", desc)]
        if not shown:
            fail(inv, where, f"alert {name}: no dashboard panel names it in its description "
                             f"(the panel that shows what the alert watches)")
            continue
        queried = {family_of(n, families) for _, exprs in shown for e in exprs
                   for n in promql_metric_names(e)}
        for fam in sorted(wanted - queried):
            fail(inv, where, f"alert {name}: {', '.join(w for w, _ in shown)} names it but does "
                             f"not query {fam}, which the alert reads")


def check_grafana(deploy, src_dir, fail, done):
    grafana = os.path.join(deploy, "grafana")
    families_path = os.path.join(grafana, "metric-families.txt")
    rel_fam = os.path.relpath(families_path, os.path.dirname(deploy))
    if not os.path.exists(families_path):
        fail("dashboard-metrics", rel_fam, "missing: the list of families dashboards may use")
        families = {}
    else:
        families, problems = read_families(families_path)
        for pr in problems:
            fail("dashboard-metrics", rel_fam, pr)
    dashboards = sorted(glob.glob(os.path.join(grafana, "*.json")))
    if not dashboards:
        fail("dashboard", "deploy/grafana", "no dashboard (*.json)")
    for path in dashboards:
        rel = os.path.relpath(path, os.path.dirname(deploy))
        exprs = check_dashboard(path, rel, fail)
        if exprs is not None:
            check_metric_names(exprs, families, rel, fail)
    done("dashboard", "deploy/grafana")
    done("dashboard-metrics", "deploy/grafana")

    # the list follows the code once the code exists
    metrics_dir = os.path.join(src_dir, "metrics")
    if os.path.isdir(metrics_dir):
        inv = "metric-families-match-source"
        in_source = source_families(metrics_dir)
        if not in_source:
            fail(inv, rel_fam, f"no \"oxide_csi_...\" string literal in {metrics_dir}/*.cc")
        for n in sorted(set(families) - in_source):
            fail(inv, rel_fam, f"{n} is listed but is no string literal in {metrics_dir}/*.cc")
        for n in sorted(in_source - set(families)):
            fail(inv, rel_fam, f"{n} is in {metrics_dir}/*.cc but not listed")
        done(inv, "src/metrics")
        return True
    return False
