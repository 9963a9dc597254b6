#!/usr/bin/env python3
"""Checks the Kubernetes deployment in deploy/ (issue 7).

1. Every YAML file under deploy/ parses.
2. Every kustomization under deploy/kubernetes/ (the base and each overlay) renders with
   `kubectl kustomize`.
3. Invariants hold on every rendered set of objects. Each invariant has a name; a broken one
   prints `FAIL [name] (render): what is wrong`, and the script exits 1. Among them: liveness
   and readiness use the plugin's own /healthz, never CSI Probe; every PrometheusRule alert reads
   only metric families the plugin exports and names its runbook (alert_checks.py).
4. The Grafana dashboards in deploy/grafana/ are well formed and query only the metric families
   of deploy/grafana/metric-families.txt, which must match src/metrics/*.cc once that exists
   (dashboard_checks.py).

Usage: check_manifests.py [--deploy-dir DIR] [--project-version X.Y.Z | --cmakelists FILE]
                          [--kubectl PATH] [--source-dir SRC]
The project version is the one of project(... VERSION ...) in the top CMakeLists.txt; CTest
passes ${PROJECT_VERSION}. Without it, the script reads the CMakeLists.txt next to deploy/.
"""
import argparse
import base64
import os
import posixpath
import re
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:  # pragma: no cover - depends on the machine
    sys.stderr.write("check_manifests: PyYAML is missing (Debian: apt-get install python3-yaml; "
                     "scripts/install-deps.sh installs it)\n")
    sys.exit(2)
sys.dont_write_bytecode = True   # importing the helper module leaves no __pycache__ in the tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import alert_checks  # noqa: E402
import dashboard_checks  # noqa: E402

# libyaml's loader when present (Debian's python3-yaml has it): same results, much faster
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# name -> what it asserts (printed with --list, and named in every failure)
INVARIANTS = {
    "yaml-parses": "every YAML file under deploy/ parses",
    "renders": "kubectl kustomize renders the base and every overlay",
    "driver-name": "one driver name everywhere: CSIDriver, StorageClass provisioner, "
                   "VolumeSnapshotClass driver, plugin --driver-name, registrar registration path",
    "socket-path": "every sidecar uses the socket the plugin serves (--csi-address = --endpoint/"
                   "CSI_ENDPOINT), on the same volume mounted at the same place",
    "node-privileged-bidirectional": "node plugin is privileged and mounts the kubelet dir at the "
                                     "same path with Bidirectional propagation",
    "node-host-dirs": "node plugin mounts the host's /dev and /sys",
    "state-not-in-socket-dir": "the state database (--state-db) is not inside the socket "
                               "directory, neither in the pod nor on the host",
    "state-on-volume": "the state database is on a writable volume (a hostPath for the node "
                       "plugin, so that it survives pod restarts)",
    "images-pinned": "every image is pinned by a tag (not latest) or digest",
    "resource-requests": "every container, init containers too, requests cpu and memory",
    "memory-limits": "every container, init containers too, has a memory limit",
    "no-inline-secrets": "no secret value in the manifests: Secrets hold placeholders only, "
                         "OXIDE_TOKEN never has a literal value, no Oxide token anywhere",
    "controller-credentials": "the controller plugin gets OXIDE_HOST, OXIDE_PROJECT and the token "
                              "from the Secret (token as a mounted file or secretKeyRef)",
    "node-without-credentials": "the node pod gets no Oxide credentials and no auto-mounted API "
                                "token (automountServiceAccountToken: false)",
    "node-api-token": "only the node plugin container gets a Kubernetes API token: a projected "
                      "serviceAccountToken (default audience) with the cluster's ca.crt at "
                      "/var/run/secrets/kubernetes.io/serviceaccount; no sidecar mounts it",
    "node-name-downward": "the node plugin's NODE_NAME comes from the downward API (fieldRef "
                          "spec.nodeName) when its instance-id sources include kubernetes",
    "node-rbac-get-nodes": "the node ServiceAccount's bindings grant exactly `get` on `nodes` "
                           "(core group), plus `patch` on `nodes` and `get` on `csinodes` "
                           "(storage.k8s.io) while the startup taint removal is on "
                           "(--remove-startup-taint, default true): no list/watch, no other "
                           "resource or verb; and they are bound when the plugin needs them",
    "instance-metadata-optional": "no node pod needs /etc/oxide-csi (or the instance file's "
                                  "directory) on the host: its hostPath is DirectoryOrCreate or "
                                  "unchecked, never Directory/File",
    "metrics-port": "each plugin (controller and node) has --metrics-address on all addresses, a "
                    "containerPort named metrics with that port, pod annotations "
                    "prometheus.io/scrape \"true\", prometheus.io/port = that port, "
                    "prometheus.io/path /metrics; no other container of the pod uses the port",
    "metrics-service": "a ServiceMonitor selects a Service whose selector matches every plugin pod "
                       "and whose port of the ServiceMonitor's name targets the metrics port",
    "dashboard": "every Grafana dashboard under deploy/grafana parses, has a Prometheus "
                 "${datasource} variable that every panel and target uses, and every panel has a "
                 "title and at least one target with an expression",
    "dashboard-metrics": "every metric a dashboard expression uses (histogram suffixes stripped) "
                         "is a family of deploy/grafana/metric-families.txt",
    "metric-families-match-source": "when src/metrics/ exists, metric-families.txt names exactly "
                                    "the families that are string literals in src/metrics/*.cc",
    "image-version": "the plugin image tag equals the project version",
    "rbac-least-privilege": "RBAC has no '*', no secrets access, no escalate/bind/impersonate, "
                            "no binding to a built-in admin role",
    "rbac-consistent": "every workload's ServiceAccount exists; bindings point at existing roles "
                       "and ServiceAccounts",
    "priority-class": "controller pods are system-cluster-critical, node pods system-node-critical",
    "node-tolerations": "the node DaemonSet tolerates every taint (operator: Exists, no key), "
                        "so also the startup taint csi.oxide.computer/agent-not-ready:NoExecute "
                        "that it removes",
    "health-wiring": "each plugin (controller and node) has a livenessProbe and a readinessProbe, "
                     "both httpGet /healthz on its own metrics port (the port of its "
                     "--metrics-address); the liveness probe gives the plugin 30 s to 5 min of "
                     "failures (periodSeconds x failureThreshold) before a restart",
    "liveness-is-local": "no livenessProbe in a plugin pod reaches CSI Probe: none targets a port "
                         "a livenessprobe sidecar serves, none runs `oxide-csi-ctl ... probe`, "
                         "none is a grpc probe (liveness must not depend on the Oxide API)",
    "controller-sidecars": "controller: >=2 replicas, --mode=controller, provisioner (leader "
                           "election, extra metadata, timeout, Topology=true), attacher and "
                           "snapshotter with leader election",
    "node-sidecars": "node: --mode=node, node-driver-registrar present",
    "alerts": "every rendering with a ServiceMonitor has a PrometheusRule; each alert has an "
              "expr, a severity label, a summary and a runbook annotation "
              "docs/alerts.md#<alert name in lower case>, whose section exists (when docs/ is "
              "beside deploy/)",
    "alert-metrics": "every metric an alert expression selects (histogram suffixes stripped) is "
                     "a family of deploy/grafana/metric-families.txt, i.e. one the plugin exports",
    "dashboard-alerts": "every metric family an alert reads appears in some Grafana panel, and "
                        "each alert has a panel that names it in its description and queries "
                        "every family the alert reads",
    "node-instance-id": "the node plugin learns its Oxide instance id: --instance-id-source "
                        "(default env,file,kubernetes) names known sources, at least one of them "
                        "is set up (env: OXIDE_INSTANCE_ID; file: --instance-metadata-file on a "
                        "mounted volume; kubernetes: NODE_NAME), and a given "
                        "--instance-metadata-file is on a mounted volume",
    "csidriver-spec": "CSIDriver: attachRequired true, podInfoOnMount false, fsGroupPolicy File, "
                      "volumeLifecycleModes [Persistent]",
    "storageclass-spec": "StorageClass oxide-disk exists; the driver's classes (also those an "
                         "example defines) use WaitForFirstConsumer, no expansion, known "
                         "parameters only, and no blockSize but 4096 with diskType local, "
                         "and encrypted ones name the node-stage secret",
    "shutdown-grace": "the plugin's --shutdown-grace (or --shutdown-grace-seconds) is shorter "
                      "than the pod's terminationGracePeriodSeconds",
    "log-format-json": "the plugin logs JSON (--log-format=json)",
    "namespace-privileged": "the namespace of the privileged node pods allows them (Pod "
                            "Security enforce=privileged)",
    "examples-consistent": "deploy/kubernetes/examples only use classes the base defines or "
                           "that the example itself defines",
}

DEFAULT_DRIVER = "csi.oxide.computer"
DEFAULT_STATE_DB = "/var/lib/oxide-csi/state.db"
PLUGIN_IMAGE = "oxide-csi-plugin"          # last path component of the plugin image
PLACEHOLDER = re.compile(r"^<[^<>]+>$")
OXIDE_TOKEN_RE = re.compile(r"oxide-token-[A-Za-z0-9]")
SECRETISH_ENV = re.compile(r"(TOKEN|SECRET|PASSWORD|PASSWD|API_KEY|PRIVATE_KEY)$")
VALUE_FLAGS = {"csi-address", "endpoint", "state-db", "driver-name", "kubelet-registration-path",
               "health-port", "http-endpoint", "mode", "instance-metadata-file", "timeout",
               "log-level", "log-format", "shutdown-grace-seconds", "shutdown-grace", "feature-gates",
               "oxide-ca-file", "topology-zone", "probe-timeout", "v", "metrics-address",
               "instance-id-source"}
# The node plugin's instance-id sources (--instance-id-source) and the plugin's default order.
INSTANCE_ID_SOURCES = ("env", "file", "kubernetes")
DEFAULT_INSTANCE_ID_SOURCES = "env,file,kubernetes"
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
METRICS_PATH = "/metrics"
WORKLOAD_KINDS = {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job", "Pod"}


class Report:
    def __init__(self):
        self.failures = []   # (invariant, where, message)
        self.checked = []    # (invariant, where)

    def fail(self, inv, where, msg):
        assert inv in INVARIANTS, inv
        self.failures.append((inv, where, msg))
        print(f"FAIL [{inv}] ({where}): {msg}")

    def done(self, inv, where):
        self.checked.append((inv, where))

    def failed(self, inv, where):
        return any(f[0] == inv and f[1] == where for f in self.failures)


# ---------------------------------------------------------------- helpers on objects

def kind_name(o):
    return f"{o.get('kind')}/{(o.get('metadata') or {}).get('name')}"


def pod_spec(o):
    k = o.get("kind")
    if k == "Pod":
        return o.get("spec") or {}
    if k in WORKLOAD_KINDS:
        return ((o.get("spec") or {}).get("template") or {}).get("spec") or {}
    return None


def workloads(objs):
    for o in objs:
        spec = pod_spec(o)
        if spec is not None:
            yield o, spec


def all_containers(spec):
    for c in spec.get("initContainers") or []:
        yield "initContainer", c
    for c in spec.get("containers") or []:
        yield "container", c


def sidecars(spec):
    """Containers that run beside the plugin: regular containers and native sidecars (init
    containers with restartPolicy Always). Ordinary init containers finish before the plugin
    starts, so they are not expected to use its socket."""
    for c in spec.get("initContainers") or []:
        if c.get("restartPolicy") == "Always":
            yield c
    yield from spec.get("containers") or []


def image_repo(image):
    """registry/path/name[:tag][@digest] -> (repo, tag or None, digest or None)."""
    digest = None
    if "@" in image:
        image, digest = image.split("@", 1)
    last = image.rsplit("/", 1)[-1]
    if ":" in last:
        repo, tag = image.rsplit(":", 1)
        return repo, tag, digest
    return image, None, digest


def is_plugin(c):
    repo, _, _ = image_repo(c.get("image") or "")
    return repo.rsplit("/", 1)[-1] == PLUGIN_IMAGE


def image_base(c):
    return image_repo(c.get("image") or "")[0].rsplit("/", 1)[-1]


def env_map(c):
    return {e.get("name"): e for e in c.get("env") or []}


def tokens(c):
    """command + args, with $(VAR) expanded from the container's literal env values."""
    env = {k: v.get("value") for k, v in env_map(c).items() if "value" in v}

    def expand(s):
        return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)",
                      lambda m: str(env[m.group(1)]) if m.group(1) in env else m.group(0), str(s))
    return [expand(t) for t in (c.get("command") or []) + (c.get("args") or [])]


DURATION_UNITS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}


def plugin_shutdown_grace(f):
    """Seconds of the plugin's shutdown grace: --shutdown-grace=DURATION or its older name
    --shutdown-grace-seconds=N; the plugin takes whichever comes last, and flags() keeps only the
    last of each name, so with both given the longer one counts (the checks compare it with an
    upper bound); default 15. None when a value is not one the plugin accepts."""
    text = f.get("shutdown-grace")
    seconds = f.get("shutdown-grace-seconds")
    if text is None and seconds is None:
        return 15
    graces = []
    if seconds is not None:
        if not str(seconds).isdigit():
            return None
        graces.append(int(seconds))
    if text is not None:
        m = re.fullmatch(r"(\d+)(ms|s|m|h)?", str(text))
        if not m or (m.group(2) is None and m.group(1) != "0"):
            return None
        graces.append(int(m.group(1)) * DURATION_UNITS[m.group(2) or "s"])
    return max(graces)


def flags(c):
    """Parse Go-style flags: --name=value, --name value (for VALUE_FLAGS), --name. Last wins."""
    out = {}
    toks = tokens(c)
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("-"):
            name = t.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
            elif name in VALUE_FLAGS and i + 1 < len(toks) and not toks[i + 1].startswith("-"):
                value = toks[i + 1]
                i += 1
            else:
                value = True
            out[name] = value
        i += 1
    return out


def unix_path(addr):
    if not isinstance(addr, str):
        return None
    if addr.startswith("unix://"):
        addr = addr[len("unix://"):]
    elif "://" in addr:
        return None
    return posixpath.normpath(addr) if addr.startswith("/") else None


def within(path, d):
    d = d.rstrip("/") or "/"
    return path == d or path.startswith(d if d.endswith("/") else d + "/")


def resolve_mount(c, path):
    """The volumeMount that holds `path` in container c (longest mountPath prefix), or None."""
    best = None
    for m in c.get("volumeMounts") or []:
        mp = posixpath.normpath(m.get("mountPath") or "")
        if within(path, mp) and (best is None or len(mp) > len(posixpath.normpath(best["mountPath"]))):
            best = m
    return best


def volumes(spec):
    return {v.get("name"): v for v in spec.get("volumes") or []}


def host_location(spec, c, path):
    """Where `path` of container c lives outside it: 'host:/x/y', 'emptyDir:vol/x', or None."""
    m = resolve_mount(c, path)
    if m is None:
        return None, None
    v = volumes(spec).get(m.get("name")) or {}
    rel = posixpath.relpath(path, posixpath.normpath(m["mountPath"]))
    sub = m.get("subPath") or ""
    if "hostPath" in v:
        base = "host:" + posixpath.normpath(v["hostPath"].get("path") or "/")
    else:
        vkind = next((k for k in v if k != "name"), "unknown")
        base = f"{vkind}:{m.get('name')}"
    return posixpath.normpath(posixpath.join(base, sub, rel)), m


def plugin_endpoint(c):
    f = flags(c)
    env = env_map(c)
    by_flag = f.get("endpoint")
    by_env = (env.get("CSI_ENDPOINT") or {}).get("value")
    return by_flag, by_env


def port_number(c, port):
    if isinstance(port, int):
        return port
    for p in c.get("ports") or []:
        if p.get("name") == port:
            return p.get("containerPort")
    return None


def livenessprobe_port(c):
    f = flags(c)
    if isinstance(f.get("http-endpoint"), str):
        return int(f["http-endpoint"].rsplit(":", 1)[-1])
    return int(f.get("health-port", 9808))


def walk_strings(x):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from walk_strings(k)
            yield from walk_strings(v)
    elif isinstance(x, list):
        for v in x:
            yield from walk_strings(v)
    elif isinstance(x, str):
        yield x


def secret_values(o):
    """(key, decoded value) of a Secret's data and stringData."""
    for k, v in (o.get("stringData") or {}).items():
        yield k, str(v)
    for k, v in (o.get("data") or {}).items():
        try:
            yield k, base64.b64decode(str(v)).decode("utf-8", "replace")
        except Exception:  # noqa: BLE001 - undecodable data is itself a finding
            yield k, str(v)


# ---------------------------------------------------------------- the invariants

def check_render(objs, where, version, r):
    csidrivers = [o for o in objs if o.get("kind") == "CSIDriver"]
    wl = list(workloads(objs))
    # the plugin is the regular container running the plugin image (an init container with that
    # image, e.g. running oxide-csi-ctl, is not the plugin)
    plugin_pods = [(o, s, c) for o, s in wl for c in s.get("containers") or [] if is_plugin(c)]
    node_pods = [(o, s, c) for o, s, c in plugin_pods if o.get("kind") == "DaemonSet"]
    ctrl_pods = [(o, s, c) for o, s, c in plugin_pods if o.get("kind") != "DaemonSet"]

    # ---- driver-name
    inv = "driver-name"
    if len(csidrivers) != 1:
        r.fail(inv, where, f"expected exactly one CSIDriver, found {len(csidrivers)}")
        driver = DEFAULT_DRIVER
    else:
        driver = csidrivers[0]["metadata"]["name"]
    for o in objs:
        if o.get("kind") == "StorageClass" and o.get("provisioner") != driver:
            r.fail(inv, where, f"{kind_name(o)} provisioner is {o.get('provisioner')!r}, "
                               f"the CSIDriver is {driver!r}")
        if o.get("kind") == "VolumeSnapshotClass" and o.get("driver") != driver:
            r.fail(inv, where, f"{kind_name(o)} driver is {o.get('driver')!r}, "
                               f"the CSIDriver is {driver!r}")
    for o, s, c in plugin_pods:
        dn = flags(c).get("driver-name", DEFAULT_DRIVER)
        if dn != driver:
            r.fail(inv, where, f"{kind_name(o)} container {c['name']} serves driver {dn!r} "
                               f"(--driver-name{' default' if 'driver-name' not in flags(c) else ''}),"
                               f" the CSIDriver is {driver!r}")
    for o, s, _ in node_pods:
        for _, c in all_containers(s):
            reg = flags(c).get("kubelet-registration-path")
            if reg is None:
                continue
            parent = posixpath.basename(posixpath.dirname(posixpath.normpath(str(reg))))
            if parent != driver:
                r.fail(inv, where, f"{kind_name(o)} container {c['name']}: "
                                   f"--kubelet-registration-path={reg} is not in a directory named "
                                   f"after the driver {driver!r}")
    if not plugin_pods:
        r.fail(inv, where, f"no container runs the {PLUGIN_IMAGE} image")
    r.done(inv, where)

    # ---- socket-path
    inv = "socket-path"
    for o, s, p in plugin_pods:
        by_flag, by_env = plugin_endpoint(p)
        if by_flag is not None and by_env is not None and unix_path(by_flag) != unix_path(by_env):
            r.fail(inv, where, f"{kind_name(o)}: plugin --endpoint={by_flag} and "
                               f"CSI_ENDPOINT={by_env} disagree")
            continue
        endpoint = by_flag if by_flag is not None else by_env
        sock = unix_path(endpoint)
        if sock is None:
            r.fail(inv, where, f"{kind_name(o)}: plugin has no unix:// endpoint "
                               f"(--endpoint or CSI_ENDPOINT), got {endpoint!r}")
            continue
        pm = resolve_mount(p, sock)
        if pm is None:
            r.fail(inv, where, f"{kind_name(o)}: the plugin's socket {sock} is on no volume, so no "
                               f"sidecar can reach it")
            continue
        vol = volumes(s).get(pm["name"]) or {}
        if not ("emptyDir" in vol or "hostPath" in vol):
            r.fail(inv, where, f"{kind_name(o)}: the socket volume {pm['name']} is neither an "
                               f"emptyDir nor a hostPath")
        for c in sidecars(s):
            if c is p:
                continue
            addr = flags(c).get("csi-address")
            if addr is None:
                r.fail(inv, where, f"{kind_name(o)} container {c['name']} has no --csi-address "
                                   f"(the plugin serves {sock})")
                continue
            if unix_path(addr) != sock:
                r.fail(inv, where, f"{kind_name(o)} container {c['name']} uses --csi-address={addr},"
                                   f" the plugin serves {sock}")
                continue
            cm = resolve_mount(c, sock)
            if cm is None or cm.get("name") != pm.get("name") or \
                    posixpath.normpath(cm["mountPath"]) != posixpath.normpath(pm["mountPath"]) or \
                    (cm.get("subPath") or "") != (pm.get("subPath") or ""):
                got = "nothing" if cm is None else f"volume {cm.get('name')} at {cm.get('mountPath')}"
                r.fail(inv, where, f"{kind_name(o)} container {c['name']}: {sock} is on {got}, the "
                                   f"plugin has it on volume {pm['name']} at {pm['mountPath']}")
        if o.get("kind") == "DaemonSet":
            loc, _ = host_location(s, p, sock)
            for _, c in all_containers(s):
                reg = flags(c).get("kubelet-registration-path")
                if reg is not None and (loc is None or "host:" + posixpath.normpath(str(reg)) != loc):
                    r.fail(inv, where, f"{kind_name(o)} container {c['name']}: "
                                       f"--kubelet-registration-path={reg} is not where the plugin's "
                                       f"socket is on the host ({loc})")
    r.done(inv, where)

    # ---- node plugin: privileged, kubelet dir, host dirs
    for o, s, p in node_pods:
        sc = p.get("securityContext") or {}
        if sc.get("privileged") is not True:
            r.fail("node-privileged-bidirectional", where,
                   f"{kind_name(o)} plugin container is not privileged")
        kubelet_dirs = set()
        for _, c in all_containers(s):
            reg = flags(c).get("kubelet-registration-path")
            if isinstance(reg, str) and "/plugins/" in reg:
                kubelet_dirs.add(posixpath.normpath(reg.split("/plugins/", 1)[0]))
        if not kubelet_dirs:
            kubelet_dirs.add("/var/lib/kubelet")
        vols = volumes(s)
        for kd in kubelet_dirs:
            ok = False
            for m in p.get("volumeMounts") or []:
                hp = (vols.get(m.get("name")) or {}).get("hostPath")
                if hp and posixpath.normpath(hp.get("path") or "") == kd:
                    if posixpath.normpath(m.get("mountPath") or "") != kd:
                        r.fail("node-privileged-bidirectional", where,
                               f"{kind_name(o)}: kubelet dir {kd} is mounted at {m.get('mountPath')}"
                               f"; the kubelet passes host paths, so it must be mounted at {kd}")
                    elif m.get("mountPropagation") != "Bidirectional":
                        r.fail("node-privileged-bidirectional", where,
                               f"{kind_name(o)}: kubelet dir {kd} has mountPropagation "
                               f"{m.get('mountPropagation')!r}, not Bidirectional")
                    else:
                        ok = True
            if not ok and not r.failed("node-privileged-bidirectional", where):
                r.fail("node-privileged-bidirectional", where,
                       f"{kind_name(o)}: the plugin does not mount the kubelet dir {kd} (hostPath) "
                       f"with Bidirectional propagation")
        for hd in ("/dev", "/sys"):
            if not any((vols.get(m.get("name")) or {}).get("hostPath", {}).get("path", "").rstrip("/")
                       == hd and posixpath.normpath(m.get("mountPath") or "") == hd
                       for m in p.get("volumeMounts") or []):
                r.fail("node-host-dirs", where, f"{kind_name(o)}: the plugin does not mount the "
                                                f"host's {hd} at {hd}")
    for o, s in wl:
        for _, c in all_containers(s):
            for m in c.get("volumeMounts") or []:
                if m.get("mountPropagation") == "Bidirectional" and \
                        (c.get("securityContext") or {}).get("privileged") is not True:
                    r.fail("node-privileged-bidirectional", where,
                           f"{kind_name(o)} container {c['name']}: Bidirectional mount "
                           f"{m.get('mountPath')} in an unprivileged container")
    if not node_pods:
        r.fail("node-privileged-bidirectional", where, "no node plugin DaemonSet found")
    r.done("node-privileged-bidirectional", where)
    r.done("node-host-dirs", where)

    # ---- state database
    for o, s, p in plugin_pods:
        state = posixpath.normpath(str(flags(p).get("state-db", DEFAULT_STATE_DB)))
        by_flag, by_env = plugin_endpoint(p)
        sock = unix_path(by_flag if by_flag is not None else by_env)
        if sock:
            sockdir = posixpath.dirname(sock)
            if within(posixpath.dirname(state), sockdir):
                r.fail("state-not-in-socket-dir", where,
                       f"{kind_name(o)}: --state-db={state} is inside the socket directory {sockdir}")
            else:
                sloc, _ = host_location(s, p, posixpath.dirname(state))
                kloc, _ = host_location(s, p, sockdir)
                if sloc and kloc and within(sloc, kloc):
                    r.fail("state-not-in-socket-dir", where,
                           f"{kind_name(o)}: --state-db={state} lives in {sloc}, inside the socket "
                           f"directory's {kloc}")
        sloc, sm = host_location(s, p, state)
        if sm is None:
            r.fail("state-on-volume", where, f"{kind_name(o)}: --state-db={state} is on no volume "
                                             f"(lost on restart; the root filesystem is read-only)")
        elif sm.get("readOnly"):
            r.fail("state-on-volume", where, f"{kind_name(o)}: --state-db={state} is on read-only "
                                             f"mount {sm['mountPath']}")
        elif o.get("kind") == "DaemonSet" and not sloc.startswith("host:"):
            r.fail("state-on-volume", where, f"{kind_name(o)}: the node's --state-db={state} is on "
                                             f"{sloc}, not a hostPath: node state would not survive "
                                             f"a pod restart")
    r.done("state-not-in-socket-dir", where)
    r.done("state-on-volume", where)

    # ---- images, resources
    for o, s in wl:
        for ck, c in all_containers(s):
            img = c.get("image") or ""
            repo, tag, digest = image_repo(img)
            if not tag and not digest:
                r.fail("images-pinned", where, f"{kind_name(o)} {ck} {c.get('name')}: image {img!r} "
                                               f"has no tag")
            elif tag == "latest":
                r.fail("images-pinned", where, f"{kind_name(o)} {ck} {c.get('name')}: image {img!r} "
                                               f"uses the 'latest' tag")
            res = c.get("resources") or {}
            req = res.get("requests") or {}
            missing = [k for k in ("cpu", "memory") if k not in req]
            if missing:
                r.fail("resource-requests", where, f"{kind_name(o)} {ck} {c.get('name')} requests no "
                                                   f"{' and no '.join(missing)}")
            if "memory" not in (res.get("limits") or {}):
                r.fail("memory-limits", where, f"{kind_name(o)} {ck} {c.get('name')} has no memory "
                                               f"limit")
    for inv in ("images-pinned", "resource-requests", "memory-limits"):
        r.done(inv, where)

    # ---- secrets
    inv = "no-inline-secrets"
    for o in objs:
        if o.get("kind") == "Secret":
            for k, v in secret_values(o):
                if not PLACEHOLDER.match(v):
                    r.fail(inv, where, f"{kind_name(o)} key {k!r} holds a value, not a <placeholder>")
        for sv in walk_strings(o):
            if OXIDE_TOKEN_RE.search(sv):
                r.fail(inv, where, f"{kind_name(o)} contains an Oxide token (oxide-token-...)")
                break
    for o, s in wl:
        for ck, c in all_containers(s):
            for e in c.get("env") or []:
                n = e.get("name") or ""
                if "value" in e and (n == "OXIDE_TOKEN" or SECRETISH_ENV.search(n)):
                    r.fail(inv, where, f"{kind_name(o)} {ck} {c.get('name')}: env {n} has a literal "
                                       f"value; take it from a Secret")
    r.done(inv, where)

    inv = "controller-credentials"
    for o, s, p in ctrl_pods:
        env = env_map(p)
        for n in ("OXIDE_HOST", "OXIDE_PROJECT"):
            e = env.get(n)
            if e is None:
                r.fail(inv, where, f"{kind_name(o)}: the controller plugin has no {n}")
        tok = env.get("OXIDE_TOKEN")
        tokf = env.get("OXIDE_TOKEN_FILE")
        if tok is not None:
            if not ((tok.get("valueFrom") or {}).get("secretKeyRef")):
                r.fail(inv, where, f"{kind_name(o)}: OXIDE_TOKEN is not from a secretKeyRef")
        elif tokf is not None and isinstance(tokf.get("value"), str):
            loc, m = host_location(s, p, posixpath.normpath(tokf["value"]))
            if m is None or "secret" not in (volumes(s).get(m["name"]) or {}):
                r.fail(inv, where, f"{kind_name(o)}: OXIDE_TOKEN_FILE={tokf['value']} is not on a "
                                   f"mounted Secret volume")
        else:
            r.fail(inv, where, f"{kind_name(o)}: the controller plugin gets no Oxide token "
                               f"(OXIDE_TOKEN_FILE on a Secret volume, or OXIDE_TOKEN from a Secret)")
    r.done(inv, where)

    inv = "node-without-credentials"
    for o, s, p in node_pods:
        for ck, c in all_containers(s):
            for n in env_map(c):
                if n and n.startswith("OXIDE_TOKEN"):
                    r.fail(inv, where, f"{kind_name(o)} {ck} {c['name']} gets {n}")
            for e in c.get("env") or []:
                if (e.get("valueFrom") or {}).get("secretKeyRef"):
                    r.fail(inv, where, f"{kind_name(o)} {ck} {c['name']}: env {e.get('name')} "
                                       f"comes from a Secret")
            for ef in c.get("envFrom") or []:
                if "secretRef" in ef:
                    r.fail(inv, where, f"{kind_name(o)} {ck} {c['name']}: envFrom a Secret")
        for v in s.get("volumes") or []:
            if "secret" in v or any("secret" in src for src in
                                    (v.get("projected") or {}).get("sources") or []):
                r.fail(inv, where, f"{kind_name(o)}: volume {v.get('name')} is a Secret")
        if s.get("automountServiceAccountToken") is not False:
            r.fail(inv, where, f"{kind_name(o)}: automountServiceAccountToken is not false: every "
                               f"container would get an API token; only the plugin needs one, "
                               f"projected into it alone")
    r.done(inv, where)

    # ---- image version
    inv = "image-version"
    for o, s, p in plugin_pods:
        _, tag, _ = image_repo(p.get("image") or "")
        if tag != version:
            r.fail(inv, where, f"{kind_name(o)}: plugin image {p.get('image')!r} has tag {tag!r}, "
                               f"the project version is {version!r}")
    r.done(inv, where)

    # ---- RBAC
    inv = "rbac-least-privilege"
    roles = {}
    for o in objs:
        if o.get("kind") in ("Role", "ClusterRole"):
            key = (o["kind"], (o["metadata"].get("namespace") if o["kind"] == "Role" else None),
                   o["metadata"]["name"])
            roles[key] = o
            if o.get("aggregationRule"):
                r.fail(inv, where, f"{kind_name(o)} aggregates other roles")
            for i, rule in enumerate(o.get("rules") or []):
                for field in ("verbs", "resources", "apiGroups", "nonResourceURLs", "resourceNames"):
                    if "*" in (rule.get(field) or []):
                        r.fail(inv, where, f"{kind_name(o)} rule {i}: '*' in {field}")
                if "secrets" in (rule.get("resources") or []):
                    r.fail(inv, where, f"{kind_name(o)} rule {i}: access to secrets (the driver "
                                       f"takes no CSI secrets)")
                bad = {"escalate", "bind", "impersonate"} & set(rule.get("verbs") or [])
                if bad:
                    r.fail(inv, where, f"{kind_name(o)} rule {i}: verbs {sorted(bad)}")
    for o in objs:
        if o.get("kind") in ("RoleBinding", "ClusterRoleBinding"):
            ref = (o.get("roleRef") or {}).get("name")
            if ref in ("cluster-admin", "admin", "edit", "system:masters"):
                r.fail(inv, where, f"{kind_name(o)} binds the built-in role {ref}")
    r.done(inv, where)

    inv = "rbac-consistent"
    sas = {(o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objs
           if o.get("kind") == "ServiceAccount"}
    builtin = {"cluster-admin", "admin", "edit", "view"}
    for o, s in wl:
        ns = o["metadata"].get("namespace")
        sa = s.get("serviceAccountName") or "default"
        if (ns, sa) not in sas:
            r.fail(inv, where, f"{kind_name(o)}: ServiceAccount {ns}/{sa} is not defined")
    for o in objs:
        if o.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        ref = o.get("roleRef") or {}
        if ref.get("kind") == "Role":
            key = ("Role", o["metadata"].get("namespace"), ref.get("name"))
        else:
            key = ("ClusterRole", None, ref.get("name"))
        if key not in roles and ref.get("name") not in builtin:
            r.fail(inv, where, f"{kind_name(o)}: roleRef {ref.get('kind')}/{ref.get('name')} is not "
                               f"defined")
        for sub in o.get("subjects") or []:
            if sub.get("kind") == "ServiceAccount" and \
                    (sub.get("namespace"), sub.get("name")) not in sas:
                r.fail(inv, where, f"{kind_name(o)}: subject ServiceAccount "
                                   f"{sub.get('namespace')}/{sub.get('name')} is not defined")
    r.done(inv, where)

    # ---- scheduling
    for o, s, _ in plugin_pods:
        want = "system-node-critical" if o.get("kind") == "DaemonSet" else "system-cluster-critical"
        if s.get("priorityClassName") != want:
            r.fail("priority-class", where, f"{kind_name(o)}: priorityClassName is "
                                            f"{s.get('priorityClassName')!r}, want {want!r}")
    r.done("priority-class", where)
    for o, s, _ in node_pods:
        if not any(t.get("operator") == "Exists" and not t.get("key") and not t.get("effect")
                   for t in s.get("tolerations") or []):
            r.fail("node-tolerations", where, f"{kind_name(o)}: no toleration {{operator: Exists}} "
                                              f"without key/effect, so tainted nodes get no node "
                                              f"plugin")
        if not tolerates(s.get("tolerations") or [], STARTUP_TAINT, "NoExecute"):
            r.fail("node-tolerations", where, f"{kind_name(o)}: does not tolerate the startup "
                                              f"taint {STARTUP_TAINT}:NoExecute, so a new node "
                                              f"never gets the plugin that would remove it")
    r.done("node-tolerations", where)

    # ---- health wiring: the plugin's own /healthz, never CSI Probe (issue 34)
    inv = "health-wiring"
    for o, s, p in plugin_pods:
        addr = flags(p).get("metrics-address")
        hp = metrics_port(addr) if isinstance(addr, str) else None
        for pk in ("livenessProbe", "readinessProbe"):
            hg = (p.get(pk) or {}).get("httpGet")
            if not hg:
                r.fail(inv, where, f"{kind_name(o)}: the plugin has no {pk} with httpGet")
                continue
            port = port_number(p, hg.get("port"))
            if hp is None or hg.get("path") != "/healthz" or port != hp[1]:
                r.fail(inv, where, f"{kind_name(o)}: the plugin's {pk} gets {hg.get('path')} on "
                                   f"port {hg.get('port')} ({port}); the plugin serves /healthz on "
                                   f"its metrics port ({hp[1] if hp else 'no --metrics-address'})")
        lp = p.get("livenessProbe") or {}
        window = int(lp.get("periodSeconds", 10)) * int(lp.get("failureThreshold", 3))
        if lp and not 30 <= window <= 300:
            r.fail(inv, where, f"{kind_name(o)}: the plugin's livenessProbe restarts it after "
                               f"{window} s of failures (periodSeconds x failureThreshold); want "
                               f"30 s to 5 min (its /healthz allows the loop 10 s)")
    r.done(inv, where)

    inv = "liveness-is-local"
    for o, s, _ in plugin_pods:
        sidecar_ports = {livenessprobe_port(c) for _, c in all_containers(s)
                         if image_base(c) == "livenessprobe"}
        for _, c in all_containers(s):
            lp = c.get("livenessProbe")
            if not lp:
                continue
            what = f"{kind_name(o)}: container {c['name']}'s livenessProbe"
            hg = lp.get("httpGet") or lp.get("tcpSocket")
            if hg and port_number(c, hg.get("port")) in sidecar_ports:
                r.fail(inv, where, f"{what} targets port {hg.get('port')}, where the livenessprobe "
                                   f"sidecar answers with CSI Probe; use the plugin's /healthz")
            command = " ".join(str(x) for x in (lp.get("exec") or {}).get("command") or [])
            if "oxide-csi-ctl" in command and "probe" in command:
                r.fail(inv, where, f"{what} runs {command!r}, which asks CSI Probe")
            if "grpc" in lp:
                r.fail(inv, where, f"{what} is a grpc probe; the plugin serves no gRPC health "
                                   f"service on TCP, use its /healthz")
    r.done(inv, where)

    # ---- sidecar sets
    inv = "controller-sidecars"
    if not ctrl_pods:
        r.fail(inv, where, "no controller Deployment found")
    for o, s, p in ctrl_pods:
        if flags(p).get("mode") != "controller":
            r.fail(inv, where, f"{kind_name(o)}: plugin --mode is {flags(p).get('mode')!r}, not "
                               f"controller")
        if o.get("kind") == "Deployment" and (o.get("spec") or {}).get("replicas", 1) < 2:
            r.fail(inv, where, f"{kind_name(o)}: replicas < 2")
        side = {image_base(c): flags(c) for _, c in all_containers(s)}
        need = {"csi-provisioner": ["leader-election", "extra-create-metadata", "timeout"],
                "csi-attacher": ["leader-election"], "csi-snapshotter": ["leader-election"]}
        for img, fl in need.items():
            if img not in side:
                r.fail(inv, where, f"{kind_name(o)}: no {img} sidecar")
                continue
            for f in fl:
                if f not in side[img] or side[img][f] in ("false", False):
                    r.fail(inv, where, f"{kind_name(o)}: {img} lacks --{f}")
        if "csi-provisioner" in side and \
                "Topology=true" not in str(side["csi-provisioner"].get("feature-gates", "")):
            r.fail(inv, where, f"{kind_name(o)}: csi-provisioner lacks --feature-gates=Topology=true")
    r.done(inv, where)

    inv = "node-sidecars"
    for o, s, p in node_pods:
        if flags(p).get("mode") != "node":
            r.fail(inv, where, f"{kind_name(o)}: plugin --mode is {flags(p).get('mode')!r}, not node")
        bases = {image_base(c) for _, c in all_containers(s)}
        for img in ("csi-node-driver-registrar",):
            if img not in bases:
                r.fail(inv, where, f"{kind_name(o)}: no {img} sidecar")
    r.done(inv, where)

    inv = "node-instance-id"
    for o, s, p in node_pods:
        sources, bad = instance_id_sources(p)
        if bad:
            r.fail(inv, where, f"{kind_name(o)}: --instance-id-source names {bad}; the plugin knows "
                               f"{', '.join(INSTANCE_ID_SOURCES)}")
            continue
        env = env_map(p)
        mf = flags(p).get("instance-metadata-file")
        if isinstance(mf, str) and resolve_mount(p, posixpath.normpath(mf)) is None:
            r.fail(inv, where, f"{kind_name(o)}: --instance-metadata-file={mf} is on no mounted "
                               f"volume")
            continue
        usable = {"env": "OXIDE_INSTANCE_ID" in env, "file": isinstance(mf, str),
                  "kubernetes": "NODE_NAME" in env}
        if not any(usable[src] for src in sources):
            r.fail(inv, where, f"{kind_name(o)}: none of the instance-id sources "
                               f"{','.join(sources)} is set up (env: no OXIDE_INSTANCE_ID; file: no "
                               f"--instance-metadata-file; kubernetes: no NODE_NAME)")
    r.done(inv, where)

    check_node_identity(node_pods, objs, where, r)
    check_metrics(plugin_pods, objs, where, r)

    # ---- CSIDriver / StorageClass
    inv = "csidriver-spec"
    for o in csidrivers:
        sp = o.get("spec") or {}
        want = {"attachRequired": True, "podInfoOnMount": False, "fsGroupPolicy": "File",
                "volumeLifecycleModes": ["Persistent"]}
        for k, v in want.items():
            if sp.get(k) != v:
                r.fail(inv, where, f"{kind_name(o)}: spec.{k} is {sp.get(k)!r}, want {v!r}")
    r.done(inv, where)

    inv = "storageclass-spec"
    scs = [o for o in objs if o.get("kind") == "StorageClass"]
    if not any(o["metadata"]["name"] == "oxide-disk" for o in scs):
        r.fail(inv, where, "no StorageClass oxide-disk")
    for o in scs:
        if o.get("provisioner") != driver:
            continue
        for problem in storageclass_problems(o):
            r.fail(inv, where, problem)
    r.done(inv, where)

    # ---- plugin process settings
    for o, s, p in plugin_pods:
        f = flags(p)
        grace = plugin_shutdown_grace(f)
        tgp = int(s.get("terminationGracePeriodSeconds", 30))
        if grace is None or grace >= tgp:
            r.fail("shutdown-grace", where, f"{kind_name(o)}: the plugin's shutdown grace "
                                            f"({grace} s) is not shorter than "
                                            f"terminationGracePeriodSeconds={tgp}; "
                                            f"the kubelet kills the plugin mid-shutdown")
        if f.get("log-format") != "json":
            r.fail("log-format-json", where, f"{kind_name(o)}: --log-format is "
                                             f"{f.get('log-format', 'text (default)')!r}")
    r.done("shutdown-grace", where)
    r.done("log-format-json", where)

    inv = "namespace-privileged"
    namespaces = {o["metadata"]["name"]: o for o in objs if o.get("kind") == "Namespace"}
    for o, s, p in node_pods:
        ns = namespaces.get(o["metadata"].get("namespace"))
        if ns is None:
            continue  # the namespace is not part of this render; nothing to assert
        lv = ((ns.get("metadata") or {}).get("labels") or {}).get("pod-security.kubernetes.io/enforce")
        if lv != "privileged":
            r.fail(inv, where, f"{kind_name(ns)}: pod-security.kubernetes.io/enforce is {lv!r}; the "
                               f"privileged node plugin would be rejected")
    r.done(inv, where)


# ---------------------------------------------------------------- node identity, metrics

FILESYSTEM_OPTION_KEYS = ("fsBlockSize", "inodeSize", "bytesPerInode", "numberOfInodes",
                          "ext4BigAlloc", "ext4ClusterSize")


def storageclass_problems(o):
    """What is wrong with a StorageClass of the driver (empty when nothing)."""
    problems = []
    if o.get("volumeBindingMode") != "WaitForFirstConsumer":
        problems.append(f"{kind_name(o)}: volumeBindingMode is "
                        f"{o.get('volumeBindingMode')!r}, want WaitForFirstConsumer")
    if o.get("allowVolumeExpansion") is not False:
        problems.append(f"{kind_name(o)}: allowVolumeExpansion is "
                        f"{o.get('allowVolumeExpansion')!r}; the plugin cannot expand volumes")
    params = o.get("parameters") or {}
    for k, v in params.items():
        if k == "blockSize":
            if str(v) not in ("512", "2048", "4096"):
                problems.append(f"{kind_name(o)}: blockSize {v!r} is not 512, 2048 or 4096")
        elif k == "diskType":
            if v not in ("distributed", "local"):
                problems.append(f"{kind_name(o)}: diskType {v!r} is not distributed or local")
        elif k == "csi.storage.k8s.io/fstype":
            if v not in ("ext4", "xfs"):
                problems.append(f"{kind_name(o)}: fstype {v!r} is not ext4 or xfs")
        elif k == "encrypted":
            if v not in ("true", "false"):
                problems.append(f"{kind_name(o)}: encrypted {v!r} is not true or false")
        elif k in FILESYSTEM_OPTION_KEYS:
            pass  # ranges per fs type: the plugin's own check at CreateVolume
        elif not k.startswith("csi.storage.k8s.io/"):
            problems.append(f"{kind_name(o)}: unknown parameter {k!r}")
    if params.get("encrypted") == "true":
        for key in ("csi.storage.k8s.io/node-stage-secret-name",
                    "csi.storage.k8s.io/node-stage-secret-namespace"):
            if key not in params:
                problems.append(f"{kind_name(o)}: encrypted \"true\" without {key}: the node "
                                f"gets no passphrase")
    if params.get("diskType") == "local" and str(params.get("blockSize", "4096")) != "4096":
        problems.append(f"{kind_name(o)}: blockSize {params['blockSize']!r} with diskType local; "
                        f"Oxide gives local disks 4096-byte blocks")
    return problems


def instance_id_sources(c):
    """(the plugin's --instance-id-source list, unknown or repeated names in it)."""
    given = flags(c).get("instance-id-source", DEFAULT_INSTANCE_ID_SOURCES)
    names = [n.strip() for n in str(given).split(",")]
    bad = [n for i, n in enumerate(names) if n not in INSTANCE_ID_SOURCES or n in names[:i]]
    return names, bad


def token_volumes(spec):
    """Names of the pod's volumes that project a ServiceAccount token."""
    return {v.get("name") for v in spec.get("volumes") or []
            if any("serviceAccountToken" in src
                   for src in (v.get("projected") or {}).get("sources") or [])}


def bindings_of(objs, namespace, sa):
    for o in objs:
        if o.get("kind") not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        for sub in o.get("subjects") or []:
            if sub.get("kind") == "ServiceAccount" and sub.get("name") == sa and \
                    sub.get("namespace", o["metadata"].get("namespace")) == namespace:
                yield o
                break


STARTUP_TAINT = "csi.oxide.computer/agent-not-ready"
# What the node plugin's startup taint removal needs on top of `get` on nodes.
TAINT_REMOVAL_GRANTS = {("", "nodes", "patch"), ("storage.k8s.io", "csinodes", "get")}


def tolerates(tolerations, key, effect):
    """Whether a pod with `tolerations` tolerates a taint key=(empty value):effect."""
    for t in tolerations:
        op = t.get("operator") or "Equal"
        if t.get("effect") and t.get("effect") != effect:
            continue
        if op == "Exists" and (not t.get("key") or t.get("key") == key):
            return True
        if op == "Equal" and t.get("key") == key and not t.get("value"):
            return True
    return False


def removes_startup_taint(p, env):
    """Whether the node plugin container runs the startup taint removal (on by default)."""
    v = flags(p).get("remove-startup-taint")
    if v is None:
        e = env.get("OXIDE_CSI_REMOVE_STARTUP_TAINT") or {}
        v = e.get("value")
    return not (isinstance(v, str) and v.lower() in ("false", "0", "no", "off"))


def role_of(objs, binding):
    ref = binding.get("roleRef") or {}
    for o in objs:
        if o.get("kind") == ref.get("kind") and o["metadata"]["name"] == ref.get("name") and \
                (o["kind"] == "ClusterRole" or
                 o["metadata"].get("namespace") == binding["metadata"].get("namespace")):
            return o
    return None


def check_node_identity(node_pods, objs, where, r):
    for o, s, p in node_pods:
        sources, _ = instance_id_sources(p)
        uses_api = "kubernetes" in sources
        env = env_map(p)

        # ---- NODE_NAME
        inv = "node-name-downward"
        e = env.get("NODE_NAME")
        if uses_api:
            field = ((e or {}).get("valueFrom") or {}).get("fieldRef") or {}
            if e is None:
                r.fail(inv, where, f"{kind_name(o)}: the instance-id source kubernetes is used but "
                                   f"the node plugin has no NODE_NAME")
            elif field.get("fieldPath") != "spec.nodeName":
                got = f"value {e['value']!r}" if "value" in e else f"{e.get('valueFrom')}"
                r.fail(inv, where, f"{kind_name(o)}: NODE_NAME is {got}, not fieldRef "
                                   f"spec.nodeName: the plugin would read another node's object")

        # ---- the API token: the plugin's alone
        inv = "node-api-token"
        tvols = token_volumes(s)
        vols = volumes(s)
        for _, c in all_containers(s):
            if c is p:
                continue
            for m in c.get("volumeMounts") or []:
                if m.get("name") in tvols:
                    r.fail(inv, where, f"{kind_name(o)} container {c['name']} mounts the API token "
                                       f"volume {m['name']}; only the plugin needs it")
        if uses_api:
            m = resolve_mount(p, SERVICE_ACCOUNT_DIR + "/token")
            if m is None or m.get("name") not in tvols:
                r.fail(inv, where, f"{kind_name(o)}: the plugin has no projected ServiceAccount "
                                   f"token at {SERVICE_ACCOUNT_DIR} (the kubernetes instance-id "
                                   f"source needs it)")
            else:
                srcs = (vols[m["name"]].get("projected") or {}).get("sources") or []
                tok = next(src["serviceAccountToken"] for src in srcs if "serviceAccountToken" in src)
                rel = posixpath.relpath(SERVICE_ACCOUNT_DIR, posixpath.normpath(m["mountPath"]))
                rel = "" if rel == "." else rel + "/"
                paths = {rel + (it.get("path") or "") for src in srcs if "configMap" in src
                         for it in src["configMap"].get("items") or []
                         if src["configMap"].get("name") == "kube-root-ca.crt"}
                if tok.get("audience"):
                    r.fail(inv, where, f"{kind_name(o)}: the token's audience is "
                                       f"{tok['audience']!r}; the API server accepts only its own")
                if rel + (tok.get("path") or "") != "token":
                    r.fail(inv, where, f"{kind_name(o)}: the token is projected to "
                                       f"{tok.get('path')!r}, not {SERVICE_ACCOUNT_DIR}/token")
                if "ca.crt" not in paths:
                    r.fail(inv, where, f"{kind_name(o)}: no ca.crt from ConfigMap kube-root-ca.crt "
                                       f"next to the token: the plugin could not verify the API "
                                       f"server")

        # ---- RBAC: get nodes, nothing else
        inv = "node-rbac-get-nodes"
        ns = o["metadata"].get("namespace")
        sa = s.get("serviceAccountName") or "default"
        if not any(x.get("kind") == "ServiceAccount" and x["metadata"]["name"] == sa and
                   x["metadata"].get("namespace") == ns for x in objs):
            continue   # rbac-consistent names the missing ServiceAccount
        granted = set()
        bound = list(bindings_of(objs, ns, sa))
        for b in bound:
            role = role_of(objs, b)
            if role is None:
                continue  # rbac-consistent names a binding to a missing role
            for rule in role.get("rules") or []:
                if rule.get("nonResourceURLs"):
                    r.fail(inv, where, f"{kind_name(role)} (bound to {ns}/{sa}) grants "
                                       f"nonResourceURLs {rule['nonResourceURLs']}")
                for g in rule.get("apiGroups") or [""]:
                    for res in rule.get("resources") or []:
                        for v in rule.get("verbs") or []:
                            granted.add((g, res, v))
        taint = removes_startup_taint(p, env)
        allowed = {("", "nodes", "get")} | (TAINT_REMOVAL_GRANTS if taint else set())
        extra = sorted(granted - allowed)
        if extra:
            r.fail(inv, where, f"{kind_name(o)}: ServiceAccount {ns}/{sa} may also "
                               + ", ".join(f"{v} {res}" + (f" ({g})" if g else "")
                                           for g, res, v in extra)
                               + "; it needs only get on nodes"
                               + (", patch on nodes and get on csinodes (storage.k8s.io)"
                                  if taint else ""))
        if (uses_api or taint) and ("", "nodes", "get") not in granted:
            r.fail(inv, where, f"{kind_name(o)}: ServiceAccount {ns}/{sa} may not get nodes, so "
                               f"the kubernetes instance-id source and the startup taint removal "
                               f"would get HTTP 403")
        if taint:
            for g, res, v in sorted(TAINT_REMOVAL_GRANTS - granted):
                r.fail(inv, where, f"{kind_name(o)}: ServiceAccount {ns}/{sa} may not {v} {res}"
                                   + (f" ({g})" if g else "")
                                   + ", so the startup taint removal would get HTTP 403 "
                                     "(or set --remove-startup-taint=false)")

        # ---- /etc/oxide-csi optional
        inv = "instance-metadata-optional"
        mf = flags(p).get("instance-metadata-file")
        hostdirs = {"/etc/oxide-csi"}
        if isinstance(mf, str):
            loc, _ = host_location(s, p, posixpath.dirname(posixpath.normpath(mf)))
            if loc and loc.startswith("host:"):
                hostdirs.add(loc[len("host:"):])
        for v in s.get("volumes") or []:
            hp = v.get("hostPath")
            if not hp:
                continue
            path = posixpath.normpath(hp.get("path") or "/")
            if any(within(path, d) for d in hostdirs) and \
                    hp.get("type") not in (None, "", "DirectoryOrCreate", "FileOrCreate"):
                r.fail(inv, where, f"{kind_name(o)}: volume {v['name']} needs {path} on the host "
                                   f"(hostPath type {hp.get('type')}); a node without it would not "
                                   f"start. Use DirectoryOrCreate")
    for inv in ("node-name-downward", "node-api-token", "node-rbac-get-nodes",
                "instance-metadata-optional"):
        r.done(inv, where)


def metrics_port(address):
    """(host, port) of a HOST:PORT address, or None."""
    m = re.match(r"^(\[[^\]]*\]|[^:]*):([0-9]+)$", str(address))
    return (m.group(1), int(m.group(2))) if m else None


def check_metrics(plugin_pods, objs, where, r):
    inv = "metrics-port"
    ports = {}   # kind/name -> metrics port of the workload's plugin, where metrics-port holds
    for o, s, p in plugin_pods:
        before = len(r.failures)
        addr = flags(p).get("metrics-address")
        hp = metrics_port(addr) if isinstance(addr, str) else None
        if hp is None:
            r.fail(inv, where, f"{kind_name(o)}: the plugin has no --metrics-address=HOST:PORT "
                               f"(got {addr!r})")
            continue
        host, port = hp
        if host not in ("0.0.0.0", "", "[::]"):
            r.fail(inv, where, f"{kind_name(o)}: --metrics-address={addr} listens on {host} only; "
                               f"Prometheus scrapes the pod IP")
        declared = [pt for pt in p.get("ports") or [] if pt.get("containerPort") == port]
        if not any(pt.get("name") == "metrics" for pt in declared):
            r.fail(inv, where, f"{kind_name(o)}: the plugin declares no containerPort {port} named "
                               f"metrics (--metrics-address={addr})")
        named = port_number(p, "metrics")
        if named is not None and named != port:
            r.fail(inv, where, f"{kind_name(o)}: port metrics is {named}, --metrics-address "
                               f"serves {port}")
        meta = o.get("metadata") if o.get("kind") == "Pod" else \
            ((o.get("spec") or {}).get("template") or {}).get("metadata")
        ann = (meta or {}).get("annotations") or {}
        want = {"prometheus.io/scrape": "true", "prometheus.io/port": str(port),
                "prometheus.io/path": METRICS_PATH}
        for k, v in want.items():
            if ann.get(k) != v:
                r.fail(inv, where, f"{kind_name(o)}: pod annotation {k} is {ann.get(k)!r}, want "
                                   f"{v!r}")
        for _, c in all_containers(s):
            used = set()
            if c is not p:
                used |= {pt.get("containerPort") for pt in c.get("ports") or []}
            if image_base(c) == "livenessprobe":
                used.add(livenessprobe_port(c))
            he = flags(c).get("http-endpoint")
            if isinstance(he, str) and c is not p:
                used.add(int(he.rsplit(":", 1)[-1]))
            if port in used:
                r.fail(inv, where, f"{kind_name(o)}: container {c['name']} also uses port {port}, "
                                   f"the plugin's metrics port")
        if len(r.failures) == before:
            ports[kind_name(o)] = port
    r.done(inv, where)

    inv = "metrics-service"
    for sm in (o for o in objs if o.get("kind") == "ServiceMonitor"):
        sp = sm.get("spec") or {}
        sel = (sp.get("selector") or {}).get("matchLabels") or {}
        nss = ((sp.get("namespaceSelector") or {}).get("matchNames")
               or [sm["metadata"].get("namespace")])
        svcs = [o for o in objs if o.get("kind") == "Service" and
                o["metadata"].get("namespace") in nss and
                all(((o["metadata"].get("labels") or {}).get(k)) == v for k, v in sel.items())]
        if not svcs:
            r.fail(inv, where, f"{kind_name(sm)}: selects no Service (matchLabels {sel}, "
                               f"namespaces {nss})")
            continue
        for ep in sp.get("endpoints") or []:
            if (ep.get("path") or METRICS_PATH) != METRICS_PATH:
                r.fail(inv, where, f"{kind_name(sm)}: scrapes {ep.get('path')}, the plugin serves "
                                   f"{METRICS_PATH}")
            for svc in svcs:
                ssel = (svc.get("spec") or {}).get("selector") or {}
                sport = next((pt for pt in (svc.get("spec") or {}).get("ports") or []
                              if pt.get("name") == ep.get("port")), None)
                if sport is None:
                    r.fail(inv, where, f"{kind_name(svc)} has no port named {ep.get('port')!r} "
                                       f"(the ServiceMonitor's endpoint port)")
                    continue
                for o, s, p in plugin_pods:
                    meta = ((o.get("spec") or {}).get("template") or {}).get("metadata") or {}
                    labels = meta.get("labels") or {}
                    if not ssel or not all(labels.get(k) == v for k, v in ssel.items()):
                        r.fail(inv, where, f"{kind_name(svc)}: selector {ssel} does not match the "
                                           f"pods of {kind_name(o)}, whose metrics go unscraped")
                        continue
                    if kind_name(o) not in ports:
                        continue   # its metrics port is broken: metrics-port says how
                    target = port_number(p, sport.get("targetPort", sport.get("port")))
                    if target != ports.get(kind_name(o)):
                        r.fail(inv, where, f"{kind_name(svc)} port {sport.get('name')} targets "
                                           f"{sport.get('targetPort')} ({target}) in "
                                           f"{kind_name(o)}, whose metrics port is "
                                           f"{ports.get(kind_name(o))}")
    r.done(inv, where)


# ---------------------------------------------------------------- driver

def kustomize_too_old(kubectl):
    """A message when kubectl's built-in Kustomize predates what the manifests use (`labels`,
    inline `patches`, directories in `resources`), else None. kubectl 1.20 and older (Debian 12's
    kubernetes-client is 1.20) embed Kustomize v2.0.3 and do not report kustomizeVersion."""
    import json
    p = subprocess.run([kubectl, "version", "--client", "-o", "json"], capture_output=True, text=True)
    try:
        info = json.loads(p.stdout)
    except ValueError:
        return None  # unknown: let the render speak for itself
    kv = info.get("kustomizeVersion")
    m = re.match(r"v?(\d+)", kv or "")
    if m and int(m.group(1)) >= 4:
        return None
    cv = (info.get("clientVersion") or {}).get("gitVersion", "?")
    return (f"kubectl {cv} at {kubectl} embeds Kustomize {kv or 'v2.0.3'}, too old for these "
            f"kustomizations (labels, inline patches, directories in resources); use a current "
            f"kubectl (tested: 1.32 with Kustomize v5.5), e.g. via --kubectl or KUBECTL")


def project_version_from(cmakelists):
    with open(cmakelists) as f:
        m = re.search(r"project\s*\(\s*oxide-csi-plugin\b[^)]*\bVERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise SystemExit(f"check_manifests: no project(... VERSION ...) in {cmakelists}")
    return m.group(1)


def yaml_files(root):
    for d, dirs, files in os.walk(root):
        dirs.sort()
        for n in sorted(files):
            if n.endswith((".yaml", ".yml")):
                yield os.path.join(d, n)


def kustomization_dirs(kroot):
    for d, dirs, files in os.walk(kroot):
        dirs.sort()
        if {"kustomization.yaml", "kustomization.yml", "Kustomization"} & set(files):
            yield d


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--deploy-dir", default=os.path.join(repo, "deploy"))
    ap.add_argument("--project-version")
    ap.add_argument("--cmakelists", default=os.path.join(repo, "CMakeLists.txt"))
    ap.add_argument("--kubectl", default=os.environ.get("KUBECTL") or shutil.which("kubectl"))
    ap.add_argument("--source-dir", help="the plugin's src/ (default: src next to the deploy "
                                         "dir); its metrics/*.cc are the source of the metric "
                                         "families once they exist")
    ap.add_argument("--list", action="store_true", help="list the invariants and exit")
    a = ap.parse_args(argv)
    if a.list:
        for k, v in INVARIANTS.items():
            print(f"{k:32} {v}")
        return 0
    version = a.project_version or project_version_from(a.cmakelists)
    r = Report()
    deploy = os.path.abspath(a.deploy_dir)
    kroot = os.path.join(deploy, "kubernetes")

    # 1. YAML parses (every file, every document)
    parsed = {}
    for path in yaml_files(deploy):
        rel = os.path.relpath(path, deploy)
        try:
            with open(path) as f:
                parsed[rel] = [d for d in yaml.load_all(f, Loader=LOADER) if d is not None]
        except yaml.YAMLError as e:
            r.fail("yaml-parses", rel, str(e).replace("\n", " "))
    if not parsed and not r.failures:
        r.fail("yaml-parses", "deploy", f"no YAML files under {deploy}")
    r.done("yaml-parses", "deploy")

    # Secrets anywhere in deploy/ (e.g. the template, which no kustomization includes)
    for rel, docs in parsed.items():
        for d in docs:
            if isinstance(d, dict):
                if d.get("kind") == "Secret":
                    for k, v in secret_values(d):
                        if not PLACEHOLDER.match(v):
                            r.fail("no-inline-secrets", rel, f"{kind_name(d)} key {k!r} holds a "
                                                             f"value, not a <placeholder>")
                if any(OXIDE_TOKEN_RE.search(s) for s in walk_strings(d)):
                    r.fail("no-inline-secrets", rel, f"{kind_name(d)} contains an Oxide token")
    r.done("no-inline-secrets", "deploy")

    # 2. render, 3. invariants
    if not a.kubectl:
        r.fail("renders", "deploy/kubernetes", "kubectl not found (scripts/install-deps.sh "
                                               "installs Debian's kubernetes-client)")
    elif kustomize_too_old(a.kubectl):
        r.fail("renders", "deploy/kubernetes", kustomize_too_old(a.kubectl))
        a.kubectl = None
    renders = {}
    for d in (kustomization_dirs(kroot) if a.kubectl else []):
        where = os.path.relpath(d, os.path.dirname(deploy))
        p = subprocess.run([a.kubectl, "kustomize", d], capture_output=True, text=True)
        if p.returncode != 0:
            r.fail("renders", where, (p.stderr or p.stdout).strip().replace("\n", " ")[:2000])
            continue
        try:
            objs = [o for o in yaml.load_all(p.stdout, Loader=LOADER) if isinstance(o, dict)]
        except yaml.YAMLError as e:
            r.fail("renders", where, f"output does not parse: {e}")
            continue
        renders[where] = objs
        r.done("renders", where)
    if a.kubectl and not renders and not r.failed("renders", "deploy/kubernetes"):
        r.fail("renders", "deploy/kubernetes", "no kustomization rendered")
    for where, objs in renders.items():
        check_render(objs, where, version, r)

    # alerts read only families the plugin exports, and name their runbook
    families_path = os.path.join(deploy, "grafana", "metric-families.txt")
    families = dashboard_checks.read_families(families_path)[0] \
        if os.path.exists(families_path) else {}
    for where, objs in renders.items():
        alert_checks.check_alerts(objs, where, families, os.path.dirname(deploy), r.fail)
        r.done("alerts", where)
        r.done("alert-metrics", where)
        # and the dashboard shows what each alert watches
        alerts = [(rule.get("alert"), rule.get("expr")) for _, _, rule in
                  alert_checks.alert_rules(objs)
                  if isinstance(rule.get("alert"), str) and isinstance(rule.get("expr"), str)]
        if alerts:
            dashboard_checks.check_alert_panels(alerts, dashboard_checks.dashboard_panels(deploy),
                                                families, where, r.fail)
            r.done("dashboard-alerts", where)

    # examples refer to classes that the plain base defines, or that they define themselves
    # (checked like the base's)
    base = renders.get("deploy/kubernetes") or renders.get("deploy/kubernetes/base")
    if base is not None:
        base_classes = {(o.get("kind"), o["metadata"]["name"]) for o in base}
        for rel, docs in parsed.items():
            if not rel.startswith("kubernetes/examples/"):
                continue
            own = [d for d in docs if d.get("kind") in ("StorageClass", "VolumeSnapshotClass")]
            classes = base_classes | {(d["kind"], d["metadata"]["name"]) for d in own}
            for d in own:
                if d.get("kind") == "StorageClass" and d.get("provisioner") == DEFAULT_DRIVER:
                    for problem in storageclass_problems(d):
                        r.fail("storageclass-spec", rel, problem)
                    r.done("storageclass-spec", rel)
            for d in docs:
                spec = d.get("spec") or {}
                claims = [spec] + [(t.get("spec") or {})
                                   for t in spec.get("volumeClaimTemplates") or []]
                for sc in (c.get("storageClassName") for c in claims):
                    if sc is not None and ("StorageClass", sc) not in classes:
                        r.fail("examples-consistent", rel,
                               f"{kind_name(d)} uses StorageClass {sc!r}, which neither the base "
                               f"nor the example defines")
                vsc = spec.get("volumeSnapshotClassName")
                if vsc is not None and ("VolumeSnapshotClass", vsc) not in classes:
                    r.fail("examples-consistent", rel, f"{kind_name(d)} uses VolumeSnapshotClass "
                                                       f"{vsc!r}, which the base does not define")
        r.done("examples-consistent", "deploy/kubernetes/examples")

    # 4. Grafana dashboards and the metric families they use
    src_dir = a.source_dir or os.path.join(os.path.dirname(deploy), "src")
    crossed = dashboard_checks.check_grafana(deploy, src_dir, r.fail, r.done)
    print(f"check_manifests: metric families from deploy/grafana/metric-families.txt; "
          + (f"cross-checked against {src_dir}/metrics/*.cc" if crossed else
             f"{src_dir}/metrics/ does not exist, so no cross-check against the source"))

    bad = sorted({f[0] for f in r.failures})
    held = sorted({c[0] for c in r.checked} - set(bad))
    print(f"check_manifests: project version {version}; rendered {', '.join(renders) or 'nothing'}")
    print(f"check_manifests: {len(held)} invariants hold, {len(bad)} broken"
          + (f": {', '.join(bad)}" if bad else ""))
    return 1 if r.failures else 0


if __name__ == "__main__":
    sys.exit(main())
