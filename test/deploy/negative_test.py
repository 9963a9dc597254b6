#!/usr/bin/env python3
"""Proves that the deploy checks can fail, and fail with the right name.

Each case copies deploy/ into a temporary directory, breaks one thing the way a careless edit
would, runs the checker on the copy and requires: exit status 1, a `FAIL [<invariant>]` line for
the invariant the case breaks, and no failure of any other invariant (except the few a case
lists as unavoidable side effects). Two positive cases run first: the untouched copy passes, and
so does the example overlay with all of its commented-out optional patches switched on.

Usage: negative_test.py [--project-version X.Y.Z] [--kubectl PATH] [-k SUBSTRING] [-v]
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CHECKERS = {"manifests": os.path.join(HERE, "check_manifests.py"),
            "containerfile": os.path.join(HERE, "check_containerfile.py")}
FAIL_RE = re.compile(r"^FAIL \[([a-z0-9-]+)\]", re.M)


class Copy:
    """A scratch copy of deploy/ with editing helpers that insist their edit really happened."""

    def __init__(self, root):
        self.root = root

    def path(self, rel):
        return os.path.join(self.root, rel)

    def text(self, rel, old, new, count=None):
        p = self.path(rel)
        with open(p) as f:
            s = f.read()
        n = s.count(old)
        if n == 0 or (count is not None and n != count):
            raise AssertionError(f"mutation did not apply: {old!r} occurs {n} times in {rel}")
        with open(p, "w") as f:
            f.write(s.replace(old, new))

    def write(self, rel, content):
        os.makedirs(os.path.dirname(self.path(rel)), exist_ok=True)
        with open(self.path(rel), "w") as f:
            f.write(content)

    def yaml(self, rel, fn):
        p = self.path(rel)
        with open(p) as f:
            docs = list(yaml.safe_load_all(f))
        fn(docs)
        with open(p, "w") as f:
            yaml.safe_dump_all(docs, f, sort_keys=False)


def doc(docs, kind, name=None):
    for d in docs:
        if d and d.get("kind") == kind and (name is None or d["metadata"]["name"] == name):
            return d
    raise AssertionError(f"no {kind}/{name}")


def spec(d):
    return d["spec"]["template"]["spec"]


def container(d, name):
    for c in spec(d)["containers"]:
        if c["name"] == name:
            return c
    raise AssertionError(f"no container {name}")


def replace_arg(c, prefix, new):
    hits = [i for i, a in enumerate(c["args"]) if a.startswith(prefix)]
    if not hits:
        raise AssertionError(f"container {c['name']} has no arg {prefix}")
    for i in hits:
        if new is None:
            del c["args"][i]
        else:
            c["args"][i] = new


def mount(c, name):
    for m in c["volumeMounts"]:
        if m["name"] == name:
            return m
    raise AssertionError(f"container {c['name']} has no mount {name}")


def volume(d, name):
    for v in spec(d)["volumes"]:
        if v["name"] == name:
            return v
    raise AssertionError(f"no volume {name}")


CTRL = "kubernetes/base/controller.yaml"
NODE = "kubernetes/base/node.yaml"
BASE_K = "kubernetes/base/kustomization.yaml"
CASES = []


def case(expect, also=(), checker="manifests", version=None, binaries=None, message=None):
    """Register a broken copy: the checker must fail `expect` (with a line matching `message`
    when given) and nothing else but `also`. `binaries(root, binaries)` may replace the binaries
    passed to check_containerfile.py."""
    def register(fn):
        CASES.append({"id": fn.__name__, "expect": expect, "also": set(also), "checker": checker,
                      "version": version, "mutate": fn, "binaries": binaries,
                      "message": message})
        return fn
    return register


def on(rel, kind, name, fn):
    """Mutation helper: edit one object of one file."""
    return lambda cp: cp.yaml(rel, lambda docs: fn(doc(docs, kind, name)))


# ---------------------------------------------------------------- yaml-parses, renders

@case("yaml-parses")
def broken_yaml_file(cp):
    cp.write("kubernetes/examples/broken.yaml", "kind: Pod\nmetadata: {name: [unclosed\n")


@case("renders")
def kustomization_lists_missing_file(cp):
    cp.text(BASE_K, "  - volumesnapshotclass.yaml\n", "  - volumesnapshotclass.yaml\n  - missing.yaml\n")


@case("renders")
def overlay_patch_targets_missing_object(cp):
    cp.text("kubernetes/overlays/example/default-storageclass.yaml", "name: oxide-disk",
            "name: no-such-class")


# ---------------------------------------------------------------- driver-name

@case("driver-name")
def storageclass_provisioner_renamed(cp):
    cp.text("kubernetes/base/storageclass.yaml", "provisioner: csi.oxide.computer",
            "provisioner: disk.oxide.computer")


@case("driver-name")
def csidriver_renamed(cp):
    cp.text("kubernetes/base/csidriver.yaml", "name: csi.oxide.computer", "name: oxide.csi.example")


@case("driver-name")
def volumesnapshotclass_driver_renamed(cp):
    cp.text("kubernetes/base/volumesnapshotclass.yaml", "driver: csi.oxide.computer",
            "driver: csi.oxide.example")


@case("driver-name")
def controller_plugin_driver_name_flag(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "oxide-csi-plugin"),
                                           "--driver-name", "--driver-name=oxide"))


@case("driver-name")
def registration_dir_not_named_after_driver(cp):
    # socket dir and registration path moved together: the socket still matches, the name not
    cp.text(NODE, "/var/lib/kubelet/plugins/csi.oxide.computer/", "/var/lib/kubelet/plugins/oxide/")


@case("driver-name", also={"socket-path"})
def overlay_renames_driver_in_its_storageclass(cp):
    cp.text("kubernetes/overlays/example/storageclass-xfs.yaml", "provisioner: csi.oxide.computer",
            "provisioner: csi.oxide")


# ---------------------------------------------------------------- socket-path

@case("socket-path")
def sidecar_uses_other_socket(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "csi-attacher"),
                                           "--csi-address", "--csi-address=/csi/attacher.sock"))


@case("socket-path")
def plugin_serves_other_socket(cp):
    cp.text(CTRL, "value: unix:///csi/csi.sock", "value: unix:///csi/controller.sock")


@case("socket-path")
def plugin_flag_and_env_disagree(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "oxide-csi-plugin")["args"]
            .append("--endpoint=unix:///run/csi/csi.sock"))


@case("socket-path")
def sidecar_mounts_socket_volume_elsewhere(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "node-driver-registrar")
        mount(c, "socket-dir")["mountPath"] = "/plugin"
    cp.yaml(NODE, f)


@case("socket-path")
def sidecar_mounts_other_volume_at_socket_dir(cp):
    def f(docs):
        d = doc(docs, "Deployment")
        mount(container(d, "csi-provisioner"), "socket-dir")["name"] = "other-dir"
        spec(d)["volumes"].append({"name": "other-dir", "emptyDir": {}})
    cp.yaml(CTRL, f)


@case("socket-path")
def sidecar_without_csi_address(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "csi-snapshotter"),
                                           "--csi-address", None))


@case("socket-path")
def registration_path_not_the_host_socket(cp):
    cp.text(NODE, "plugins/csi.oxide.computer/csi.sock", "plugins/csi.oxide.computer/reg.sock")


@case("socket-path")
def socket_volume_is_a_configmap(cp):
    def f(docs):
        v = volume(doc(docs, "Deployment"), "socket-dir")
        del v["emptyDir"]
        v["configMap"] = {"name": "x"}
    cp.yaml(CTRL, f)


# ---------------------------------------------------------------- node plugin

@case("node-privileged-bidirectional")
def node_plugin_not_privileged(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
            ["securityContext"].update(privileged=False))


@case("node-privileged-bidirectional")
def kubelet_dir_host_to_container(cp):
    cp.text(NODE, "mountPropagation: Bidirectional", "mountPropagation: HostToContainer")


@case("node-privileged-bidirectional")
def kubelet_dir_mounted_at_other_path(cp):
    cp.yaml(NODE, lambda docs: mount(container(doc(docs, "DaemonSet"), "oxide-csi-plugin"),
                                     "kubelet-dir").update(mountPath="/kubelet"))


@case("node-privileged-bidirectional")
def kubelet_dir_not_mounted(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "kubelet-dir"]
    cp.yaml(NODE, f)


@case("node-host-dirs")
def node_without_sys(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "sys-dir"]
    cp.yaml(NODE, f)


# ---------------------------------------------------------------- state database

@case("state-not-in-socket-dir")
def node_state_db_in_socket_dir(cp):
    cp.yaml(NODE, lambda docs: replace_arg(container(doc(docs, "DaemonSet"), "oxide-csi-plugin"),
                                           "--state-db", "--state-db=/csi/state.db"))


@case("state-not-in-socket-dir")
def controller_state_db_in_socket_dir(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "oxide-csi-plugin"),
                                           "--state-db", "--state-db=/csi/state.db"))


@case("state-not-in-socket-dir")
def node_state_db_in_socket_dir_through_kubelet_mount(cp):
    cp.yaml(NODE, lambda docs: replace_arg(
        container(doc(docs, "DaemonSet"), "oxide-csi-plugin"), "--state-db",
        "--state-db=/var/lib/kubelet/plugins/csi.oxide.computer/state.db"))


@case("state-not-in-socket-dir")
def node_state_hostpath_inside_socket_hostpath(cp):
    cp.yaml(NODE, lambda docs: volume(doc(docs, "DaemonSet"), "state-dir")["hostPath"].update(
        path="/var/lib/kubelet/plugins/csi.oxide.computer/state"))


@case("state-not-in-socket-dir")
def state_db_default_path_with_socket_dir_there(cp):
    # no --state-db: the default /var/lib/oxide-csi/state.db, and the socket moved next to it
    def f(docs):
        c = container(doc(docs, "Deployment"), "oxide-csi-plugin")
        replace_arg(c, "--state-db", None)
        for cc in spec(doc(docs, "Deployment"))["containers"]:
            for m in cc["volumeMounts"]:
                if m["name"] == "socket-dir":
                    m["mountPath"] = "/var/lib/oxide-csi"
            if any(a.startswith("--csi-address") for a in cc.get("args", [])):
                replace_arg(cc, "--csi-address", "--csi-address=/var/lib/oxide-csi/csi.sock")
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "state-dir"]
        for e in c["env"]:
            if e["name"] == "CSI_ENDPOINT":
                e["value"] = "unix:///var/lib/oxide-csi/csi.sock"
    cp.yaml(CTRL, f)


@case("state-on-volume")
def node_state_on_emptydir(cp):
    def f(docs):
        v = volume(doc(docs, "DaemonSet"), "state-dir")
        del v["hostPath"]
        v["emptyDir"] = {}
    cp.yaml(NODE, f)


@case("state-on-volume")
def controller_state_on_root_filesystem(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "oxide-csi-plugin"),
                                           "--state-db", "--state-db=/opt/state.db"))


# ---------------------------------------------------------------- images, resources

@case("images-pinned")
def sidecar_untagged(cp):
    cp.text(CTRL, "csi-attacher:v4.7.0", "csi-attacher")


@case("images-pinned")
def sidecar_latest(cp):
    cp.text(NODE, "csi-node-driver-registrar:v2.12.0", "csi-node-driver-registrar:latest")


@case("resource-requests")
def sidecar_without_requests(cp):
    cp.yaml(CTRL, lambda docs: container(doc(docs, "Deployment"), "csi-snapshotter")
            ["resources"].pop("requests"))


@case("resource-requests")
def plugin_without_cpu_request(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
            ["resources"]["requests"].pop("cpu"))


@case("resource-requests", also={"memory-limits"})
def init_container_without_resources(cp):
    cp.yaml(NODE, lambda docs: spec(doc(docs, "DaemonSet")).setdefault("initContainers", []).append(
        {"name": "init", "image": "ghcr.io/oxidecomputer/oxide-csi-plugin",
         "command": ["/usr/bin/oxide-csi-ctl", "version"]}))


@case("memory-limits")
def sidecar_without_limits(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "node-driver-registrar")
            ["resources"].pop("limits"))


# ---------------------------------------------------------------- secrets

@case("no-inline-secrets", also={"controller-credentials"})
def token_as_env_value(cp):
    cp.yaml(CTRL, lambda docs: container(doc(docs, "Deployment"), "oxide-csi-plugin")["env"].append(
        {"name": "OXIDE_TOKEN", "value": "not-a-real-token"}))


@case("no-inline-secrets")
def template_with_real_token(cp):
    cp.text("kubernetes/secret.template.yaml", '"<OXIDE-API-TOKEN>"', '"oxide-token-abc123"')


@case("no-inline-secrets")
def template_with_real_host(cp):
    cp.text("kubernetes/secret.template.yaml", '"<https://SILO-API-ENDPOINT>"',
            '"https://silo.example.com"')


@case("no-inline-secrets")
def secret_generator_in_base(cp):
    cp.text(BASE_K, "images:\n", "secretGenerator:\n  - name: oxide-csi-credentials\n"
                                 "    literals: [token=hunter2]\nimages:\n")


@case("no-inline-secrets")
def other_secretish_env_value(cp):
    cp.yaml(CTRL, lambda docs: container(doc(docs, "Deployment"), "csi-provisioner").setdefault(
        "env", []).append({"name": "PROXY_PASSWORD", "value": "x"}))


@case("controller-credentials")
def token_file_not_on_secret_volume(cp):
    cp.text(CTRL, "value: /etc/oxide-csi/credentials/token", "value: /var/lib/oxide-csi/token")


@case("controller-credentials")
def controller_without_project(cp):
    def f(docs):
        c = container(doc(docs, "Deployment"), "oxide-csi-plugin")
        c["env"] = [e for e in c["env"] if e["name"] != "OXIDE_PROJECT"]
    cp.yaml(CTRL, f)


@case("node-without-credentials")
def node_gets_the_token(cp):
    def f(docs):
        d = doc(docs, "DaemonSet")
        container(d, "oxide-csi-plugin")["env"].append(
            {"name": "OXIDE_TOKEN", "valueFrom": {"secretKeyRef": {"name": "oxide-csi-credentials",
                                                                   "key": "token"}}})
    cp.yaml(NODE, f)


@case("node-without-credentials")
def node_mounts_the_secret(cp):
    cp.yaml(NODE, lambda docs: spec(doc(docs, "DaemonSet"))["volumes"].append(
        {"name": "creds", "secret": {"secretName": "oxide-csi-credentials"}}))


@case("node-without-credentials")
def node_gets_api_token(cp):
    cp.text(NODE, "      automountServiceAccountToken: false\n", "")


# ---------------------------------------------------------------- image version

@case("image-version")
def plugin_tag_not_project_version(cp):
    cp.text(BASE_K, "newTag: 0.1.0", "newTag: 0.0.9")


@case("image-version", version="9.9.9")
def project_version_bumped_manifests_not(cp):
    pass


@case("image-version")
def overlay_overrides_tag(cp):
    cp.text("kubernetes/overlays/example/kustomization.yaml", "patches:\n",
            "images:\n  - name: ghcr.io/oxidecomputer/oxide-csi-plugin\n    newTag: dev\npatches:\n")


# ---------------------------------------------------------------- RBAC

@case("rbac-least-privilege")
def wildcard_verb(cp):
    cp.text("kubernetes/base/rbac-controller.yaml",
            'verbs: ["get", "list", "watch", "create", "patch", "delete"]', 'verbs: ["*"]')


@case("rbac-least-privilege")
def secrets_access(cp):
    cp.text("kubernetes/base/rbac-controller.yaml", 'resources: ["persistentvolumeclaims"]',
            'resources: ["persistentvolumeclaims", "secrets"]')


@case("rbac-least-privilege")
def bound_to_cluster_admin(cp):
    cp.yaml("kubernetes/base/rbac-controller.yaml",
            lambda docs: doc(docs, "ClusterRoleBinding", "oxide-csi-attacher")["roleRef"]
            .update(name="cluster-admin"))


@case("rbac-consistent")
def serviceaccount_typo(cp):
    cp.text(NODE, "serviceAccountName: oxide-csi-node", "serviceAccountName: oxide-csi-nodes")


@case("rbac-consistent")
def binding_to_missing_role(cp):
    cp.yaml("kubernetes/base/rbac-controller.yaml",
            lambda docs: doc(docs, "RoleBinding")["roleRef"].update(name="leader-election"))


# ---------------------------------------------------------------- scheduling, health

@case("priority-class")
def node_without_priority(cp):
    cp.text(NODE, "      priorityClassName: system-node-critical\n", "")


@case("priority-class")
def controller_wrong_priority(cp):
    cp.text(CTRL, "priorityClassName: system-cluster-critical",
            "priorityClassName: system-node-critical")


@case("node-tolerations")
def node_does_not_tolerate_the_startup_taint(cp):
    cp.text(NODE, "        - operator: Exists\n",
            "        - operator: Exists\n          effect: NoSchedule\n")


@case("node-tolerations")
def node_tolerates_only_one_taint(cp):
    cp.text(NODE, "        - operator: Exists\n",
            "        - key: node-role.kubernetes.io/control-plane\n          operator: Exists\n")


@case("health-wiring")
def liveness_on_wrong_port(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
            ["livenessProbe"]["httpGet"].update(port=9809))


@case("health-wiring")
def controller_without_readiness(cp):
    cp.yaml(CTRL, lambda docs: container(doc(docs, "Deployment"), "oxide-csi-plugin")
            .pop("readinessProbe"))


@case("health-wiring")
def node_readiness_on_other_path(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
            ["readinessProbe"]["httpGet"].update(path="/metrics"))


@case("health-wiring")
def controller_liveness_restarts_after_ten_seconds(cp):
    cp.yaml(CTRL, lambda docs: container(doc(docs, "Deployment"), "oxide-csi-plugin")
            ["livenessProbe"].update(periodSeconds=5, failureThreshold=2))


# ---------------------------------------------------------------- liveness-is-local (issue 34)

LIVENESSPROBE_SIDECAR = {
    "name": "liveness-probe", "image": "registry.k8s.io/sig-storage/livenessprobe:v2.14.0",
    "args": ["--csi-address=/csi/csi.sock", "--health-port=9808", "--probe-timeout=3s"],
    "resources": {"requests": {"cpu": "5m", "memory": "16Mi"}, "limits": {"memory": "64Mi"}},
    "volumeMounts": [{"name": "socket-dir", "mountPath": "/csi"}]}


@case("liveness-is-local", also={"health-wiring"})
def controller_liveness_through_the_livenessprobe_sidecar(cp):
    # the old wiring: liveness = CSI Probe (Oxide's health) through the sidecar
    def f(docs):
        d = doc(docs, "Deployment")
        spec(d)["containers"].append(dict(LIVENESSPROBE_SIDECAR))
        plugin = container(d, "oxide-csi-plugin")
        plugin["ports"].append({"name": "healthz", "containerPort": 9808, "protocol": "TCP"})
        plugin["livenessProbe"]["httpGet"].update(port="healthz")
    cp.yaml(CTRL, f)


@case("liveness-is-local")
def node_sidecar_liveness_asks_csi_probe(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "node-driver-registrar")
            .update(livenessProbe={"exec": {"command": ["/usr/bin/oxide-csi-ctl", "identity",
                                                        "probe"]}, "periodSeconds": 10}))


# ---------------------------------------------------------------- alerts (issue 34)

RULES = "kubernetes/overlays/prometheus-operator/prometheusrule.yaml"


@case("alerts")
def servicemonitor_without_alerts(cp):
    cp.text("kubernetes/overlays/prometheus-operator/kustomization.yaml",
            "  - prometheusrule.yaml\n", "")


@case("alerts")
def alert_without_runbook(cp):
    cp.text(RULES, "            runbook: docs/alerts.md#oxidecsioxidetokenrefused\n", "")


@case("alerts")
def alert_without_severity(cp):
    cp.text(RULES, "          for: 5m\n          labels:\n            severity: critical\n",
            "          for: 5m\n", count=2)


@case("alerts")
def runbook_without_a_section_for_an_alert(cp):
    # a docs/alerts.md beside the copied deploy/ (the copy has none, so sections go unchecked)
    cp.write("../docs/alerts.md", "# Alerts\n\n## OxideCSIOxideUnreachable\n\nWhat to do.\n")


@case("alert-metrics")
def alert_on_a_metric_the_plugin_does_not_export(cp):
    cp.text(RULES, "expr: oxide_csi_oxide_api_up == 0", "expr: oxide_csi_oxide_up == 0")


@case("alert-metrics")
def alert_on_a_histogram_without_its_series(cp):
    cp.text(RULES, "increase(oxide_csi_store_commit_failures_total[10m]) > 0",
            "oxide_csi_store_commit_duration_seconds > 5")


DASHBOARD = "grafana/oxide-csi-dashboard.json"


@case("dashboard-alerts")
def alert_family_in_no_panel(cp):
    # the oldest-pending panel queries the in-flight gauge instead: nothing shows the family
    # OxideCSIOperationsPending reads
    cp.text(DASHBOARD, "time() - oxide_csi_oldest_pending_operation_start_time_seconds"
            "{instance=~\\\"$instance\\\"} and oxide_csi_oldest_pending_operation_start_time_seconds",
            "oxide_csi_rpcs_in_flight{instance=~\\\"$instance\\\"} and oxide_csi_rpcs_in_flight")


@case("dashboard-alerts")
def alert_named_by_no_panel(cp):
    cp.text(DASHBOARD, "Alert: OxideCSIRPCErrorRatioHigh", "Alert: the error ratio one")


@case("dashboard-alerts")
def alert_panel_without_the_alerts_family(cp):
    # the panel naming OxideCSINodeStageFailing graphs the RPC counts, not the node operations
    cp.text(DASHBOARD, "oxide_csi_node_operation_duration_seconds_count{instance=~\\\"$instance\\\", "
            "operation=\\\"stage\\\"",
            "oxide_csi_rpc_duration_seconds_count{instance=~\\\"$instance\\\", "
            "operation=\\\"stage\\\"")


# ---------------------------------------------------------------- sidecar sets, spec

@case("controller-sidecars")
def attacher_without_leader_election(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "csi-attacher"),
                                           "--leader-election", None))


@case("controller-sidecars")
def provisioner_without_topology(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "csi-provisioner"),
                                           "--feature-gates", None))


@case("controller-sidecars")
def overlay_single_replica(cp):
    cp.text("kubernetes/overlays/example/kustomization.yaml", "value: 3", "value: 1")


@case("controller-sidecars")
def controller_plugin_in_mode_all(cp):
    cp.text(CTRL, "--mode=controller", "--mode=all")


@case("controller-sidecars")
def snapshotter_removed(cp):
    def f(docs):
        s = spec(doc(docs, "Deployment"))
        s["containers"] = [c for c in s["containers"] if c["name"] != "csi-snapshotter"]
    cp.yaml(CTRL, f)


@case("node-sidecars")
def registrar_removed(cp):
    def f(docs):
        s = spec(doc(docs, "DaemonSet"))
        s["containers"] = [c for c in s["containers"] if c["name"] != "node-driver-registrar"]
    cp.yaml(NODE, f)


@case("node-instance-id")
def node_without_instance_id(cp):
    # only the file source, and no file
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        replace_arg(c, "--instance-metadata-file", None)
        replace_arg(c, "--instance-id-source", "--instance-id-source=file")
    cp.yaml(NODE, f)


@case("node-instance-id")
def unknown_instance_id_source(cp):
    cp.text(NODE, "--instance-id-source=env,file,kubernetes", "--instance-id-source=env,imds")


@case("node-instance-id")
def instance_metadata_not_mounted(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "instance-metadata"]
    cp.yaml(NODE, f)


@case("csidriver-spec")
def csidriver_attach_not_required(cp):
    cp.text("kubernetes/base/csidriver.yaml", "attachRequired: true", "attachRequired: false")


@case("csidriver-spec")
def csidriver_fsgroup_policy(cp):
    cp.text("kubernetes/base/csidriver.yaml", "fsGroupPolicy: File",
            "fsGroupPolicy: ReadWriteOnceWithFSType")


@case("storageclass-spec")
def storageclass_immediate(cp):
    cp.text("kubernetes/base/storageclass.yaml", "volumeBindingMode: WaitForFirstConsumer",
            "volumeBindingMode: Immediate")


@case("storageclass-spec")
def storageclass_expansion(cp):
    cp.text("kubernetes/overlays/example/storageclass-xfs.yaml", "allowVolumeExpansion: false",
            "allowVolumeExpansion: true")


@case("storageclass-spec")
def storageclass_bad_block_size(cp):
    cp.text("kubernetes/base/storageclass.yaml", 'blockSize: "4096"', 'blockSize: "1024"')


@case("storageclass-spec")
def storageclass_unknown_parameter(cp):
    cp.text("kubernetes/base/storageclass.yaml", 'blockSize: "4096"',
            'blockSize: "4096"\n  type: ssd')


@case("storageclass-spec")
def storageclass_bad_disk_type(cp):
    cp.text("kubernetes/examples/local-disk.yaml", "\n  diskType: local\n", "\n  diskType: nvme\n")


@case("storageclass-spec")
def storageclass_local_with_512_byte_blocks(cp):
    cp.text("kubernetes/examples/local-disk.yaml", "\n  diskType: local\n",
            '\n  diskType: local\n  blockSize: "512"\n')


@case("storageclass-spec")
def storageclass_encrypted_without_a_secret(cp):
    cp.text("kubernetes/examples/encrypted-pvc.yaml",
            "  csi.storage.k8s.io/node-stage-secret-name: oxide-volume-key\n", "")


@case("storageclass-spec")
def storageclass_encrypted_yes(cp):
    cp.text("kubernetes/examples/encrypted-pvc.yaml", 'encrypted: "true"', 'encrypted: "yes"')


@case("shutdown-grace")
def shutdown_grace_too_long(cp):
    cp.text(NODE, "--shutdown-grace=20s", "--shutdown-grace=45s")


@case("shutdown-grace")
def shutdown_grace_old_name_too_long(cp):
    cp.text(CTRL, "--shutdown-grace=20s", "--shutdown-grace-seconds=30")


@case("log-format-json")
def plugin_logs_text(cp):
    cp.text(CTRL, "--log-format=json", "--log-format=text")


@case("namespace-privileged")
def namespace_baseline(cp):
    cp.text("kubernetes/base/namespace.yaml", "pod-security.kubernetes.io/enforce: privileged",
            "pod-security.kubernetes.io/enforce: baseline")


@case("examples-consistent")
def example_uses_unknown_class(cp):
    cp.text("kubernetes/examples/pvc-pod.yaml", "storageClassName: oxide-disk",
            "storageClassName: oxide-ssd")


@case("examples-consistent")
def example_claim_template_uses_unknown_class(cp):
    cp.text("kubernetes/examples/local-disk.yaml", "storageClassName: oxide-disk-local",
            "storageClassName: oxide-disk-nvme")


# ---------------------------------------------------------------- node identity

RBAC_NODE = "kubernetes/base/rbac-node.yaml"


@case("node-name-downward")
def node_name_literal(cp):
    def f(docs):
        for e in container(doc(docs, "DaemonSet"), "oxide-csi-plugin")["env"]:
            if e["name"] == "NODE_NAME":
                e.pop("valueFrom")
                e["value"] = "node-1"
    cp.yaml(NODE, f)


@case("node-name-downward")
def node_name_from_pod_name(cp):
    cp.text(NODE, "fieldPath: spec.nodeName", "fieldPath: metadata.name")


@case("node-name-downward")
def node_name_missing(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        c["env"] = [e for e in c["env"] if e["name"] != "NODE_NAME"]
    cp.yaml(NODE, f)


@case("node-rbac-get-nodes")
def node_rbac_lists_nodes(cp):
    cp.text(RBAC_NODE, 'verbs: ["get", "patch"]', 'verbs: ["get", "patch", "list", "watch"]')


@case("node-rbac-get-nodes")
def node_rbac_cannot_patch_nodes(cp):
    # the startup taint removal (on by default) would get HTTP 403
    cp.text(RBAC_NODE, 'verbs: ["get", "patch"]', 'verbs: ["get"]')


@case("node-rbac-get-nodes")
def node_rbac_cannot_read_csinodes(cp):
    cp.text(RBAC_NODE, 'resources: ["csinodes"]', 'resources: ["csidrivers"]')


@case("node-rbac-get-nodes")
def node_rbac_patches_with_the_removal_off(cp):
    # --remove-startup-taint=false: patch and csinodes are more than the plugin needs
    cp.text(NODE, "- --remove-startup-taint=true", "- --remove-startup-taint=false")


@case("node-rbac-get-nodes")
def node_rbac_reads_pods_too(cp):
    cp.text(RBAC_NODE, 'resources: ["nodes"]', 'resources: ["nodes", "pods"]')


@case("node-rbac-get-nodes")
def node_rbac_unbound(cp):
    cp.yaml(RBAC_NODE, lambda docs: docs.remove(doc(docs, "ClusterRoleBinding")))


@case("node-rbac-get-nodes")
def node_bound_to_attacher_role(cp):
    cp.yaml(RBAC_NODE, lambda docs: docs.append(
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "oxide-csi-node-attacher"},
         "subjects": [{"kind": "ServiceAccount", "name": "oxide-csi-node",
                       "namespace": "oxide-csi"}],
         "roleRef": {"kind": "ClusterRole", "name": "oxide-csi-attacher",
                     "apiGroup": "rbac.authorization.k8s.io"}}))


@case("node-api-token")
def registrar_mounts_api_token(cp):
    cp.yaml(NODE, lambda docs: container(doc(docs, "DaemonSet"), "node-driver-registrar")
            ["volumeMounts"].append({"name": "kube-api-access", "readOnly": True,
                                     "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}))


@case("node-api-token")
def plugin_without_api_token(cp):
    def f(docs):
        c = container(doc(docs, "DaemonSet"), "oxide-csi-plugin")
        c["volumeMounts"] = [m for m in c["volumeMounts"] if m["name"] != "kube-api-access"]
    cp.yaml(NODE, f)


@case("node-api-token")
def api_token_without_ca(cp):
    def f(docs):
        v = volume(doc(docs, "DaemonSet"), "kube-api-access")
        v["projected"]["sources"] = [src for src in v["projected"]["sources"]
                                     if "configMap" not in src]
    cp.yaml(NODE, f)


@case("node-api-token")
def api_token_for_another_audience(cp):
    cp.text(NODE, "path: token\n", "path: token\n                  audience: vault\n")


@case("instance-metadata-optional")
def instance_metadata_dir_required(cp):
    def f(docs):
        volume(doc(docs, "DaemonSet"), "instance-metadata")["hostPath"]["type"] = "Directory"
    cp.yaml(NODE, f)


@case("instance-metadata-optional")
def instance_file_required(cp):
    # the file mounted on its own, as a File that must exist
    def f(docs):
        d = doc(docs, "DaemonSet")
        volume(d, "instance-metadata")["hostPath"] = {"path": "/etc/oxide-csi/instance.env",
                                                     "type": "File"}
        mount(container(d, "oxide-csi-plugin"), "instance-metadata")["mountPath"] = \
            "/etc/oxide-csi/instance.env"
    cp.yaml(NODE, f)


# ---------------------------------------------------------------- metrics

PROM_K = "kubernetes/overlays/prometheus-operator/"


# the probes use /healthz on the metrics port, so they break with it
@case("metrics-port", also={"health-wiring"})
def controller_metrics_port_not_declared(cp):
    def f(docs):
        c = container(doc(docs, "Deployment"), "oxide-csi-plugin")
        c["ports"] = [pt for pt in c["ports"] if pt["name"] != "metrics"]
    cp.yaml(CTRL, f)


# the probes use /healthz on the metrics port, so they break with it
@case("metrics-port", also={"health-wiring"})
def node_metrics_address_other_port(cp):
    cp.yaml(NODE, lambda docs: replace_arg(container(doc(docs, "DaemonSet"), "oxide-csi-plugin"),
                                           "--metrics-address", "--metrics-address=0.0.0.0:9811"))


@case("metrics-port")
def controller_metrics_on_loopback(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "oxide-csi-plugin"),
                                           "--metrics-address", "--metrics-address=127.0.0.1:9810"))


# the probes use /healthz on the metrics port, so they break with it
@case("metrics-port", also={"health-wiring"})
def controller_without_metrics_address(cp):
    cp.yaml(CTRL, lambda docs: replace_arg(container(doc(docs, "Deployment"), "oxide-csi-plugin"),
                                           "--metrics-address", None))


@case("metrics-port")
def node_annotation_names_other_port(cp):
    cp.yaml(NODE, lambda docs: doc(docs, "DaemonSet")["spec"]["template"]["metadata"]
            ["annotations"].update({"prometheus.io/port": "9808"}))


@case("metrics-port")
def controller_not_scraped(cp):
    cp.yaml(CTRL, lambda docs: doc(docs, "Deployment")["spec"]["template"]["metadata"]
            ["annotations"].pop("prometheus.io/scrape"))


@case("metrics-port")
def node_metrics_path_wrong(cp):
    cp.yaml(NODE, lambda docs: doc(docs, "DaemonSet")["spec"]["template"]["metadata"]
            ["annotations"].update({"prometheus.io/path": "/healthz"}))


@case("metrics-port")
def node_metrics_on_registrar_port(cp):
    # moved consistently (address, port, annotation) onto the registrar's 9809
    cp.text(NODE, "9810", "9809", count=4)


@case("metrics-service")
def metrics_service_targets_healthz(cp):
    cp.text(PROM_K + "metrics-service.yaml", "targetPort: metrics", "targetPort: healthz")


@case("metrics-service")
def metrics_service_selects_controller_only(cp):
    cp.text(PROM_K + "metrics-service.yaml", "  selector:\n    app.kubernetes.io/name: oxide-csi-plugin",
            "  selector:\n    app.kubernetes.io/name: oxide-csi-plugin\n"
            "    app.kubernetes.io/component: controller")


@case("metrics-service")
def servicemonitor_selects_nothing(cp):
    cp.text(PROM_K + "servicemonitor.yaml", "app.kubernetes.io/component: metrics",
            "app.kubernetes.io/component: monitoring")


# ---------------------------------------------------------------- Grafana dashboard

DASH = "grafana/oxide-csi-dashboard.json"
FAMILIES = "grafana/metric-families.txt"


def edit_dashboard(cp, fn):
    import json
    with open(cp.path(DASH)) as f:
        d = json.load(f)
    fn(d)
    with open(cp.path(DASH), "w") as f:
        json.dump(d, f, indent=2)


def first_panel(d, title_part):
    for p in d["panels"]:
        if title_part in p.get("title", ""):
            return p
    raise AssertionError(f"no panel titled *{title_part}*")


@case("dashboard")
def dashboard_not_json(cp):
    cp.text(DASH, '"panels": [', '"panels": [,')


@case("dashboard")
def dashboard_panel_without_title(cp):
    edit_dashboard(cp, lambda d: first_panel(d, "RPCs in flight").pop("title"))


@case("dashboard")
def dashboard_panel_without_targets(cp):
    edit_dashboard(cp, lambda d: first_panel(d, "Open file descriptors").update(targets=[]))


@case("dashboard")
def dashboard_bound_to_one_datasource(cp):
    edit_dashboard(cp, lambda d: first_panel(d, "CPU").update(
        datasource={"type": "prometheus", "uid": "P1809F7CD0C75ACF3"}))


@case("dashboard")
def dashboard_without_datasource_variable(cp):
    edit_dashboard(cp, lambda d: d["templating"]["list"].pop(0))


@case("dashboard-metrics")
def dashboard_misspelt_metric(cp):
    cp.text(DASH, "oxide_csi_rpcs_in_flight", "oxide_csi_rpc_in_flight")


@case("dashboard-metrics")
def dashboard_metric_from_elsewhere(cp):
    cp.text(DASH, "process_open_fds{", "node_filefd_allocated{")


@case("dashboard-metrics")
def dashboard_quantile_over_counter(cp):
    cp.text(DASH, "oxide_csi_loop_turn_duration_seconds_bucket",
            "oxide_csi_token_reloads_total_bucket")


@case("dashboard-metrics")
def dashboard_variable_queries_unknown_metric(cp):
    cp.text(DASH, "label_values(oxide_csi_build_info, instance)",
            "label_values(oxide_csi_info, instance)", count=2)


@case("dashboard-metrics")
def families_file_garbled(cp):
    cp.text(FAMILIES, "oxide_csi_snapshots_tracked gauge", "oxide_csi_snapshots_tracked gaug")


def write_fake_metrics_source(cp, families):
    """A stand-in for src/metrics/ next to the copied deploy/ (the real one is written by the
    metrics work of issue 21): the families as string literals, the way the registry names them."""
    body = "".join(f'  registry.Add("{n}", "help");\n' for n in families)
    cp.write("../src/metrics/families.cc", "// test stand-in\nvoid Register() {\n" + body + "}\n")


def listed_families(cp):
    import dashboard_checks
    return list(dashboard_checks.read_families(cp.path(FAMILIES))[0])


@case("metric-families-match-source")
def source_drops_a_listed_family(cp):
    write_fake_metrics_source(cp, [n for n in listed_families(cp) if n != "oxide_csi_snapshots_tracked"])


@case("metric-families-match-source")
def source_adds_an_unlisted_family(cp):
    write_fake_metrics_source(cp, listed_families(cp) + ["oxide_csi_disks_total",
                                                         "oxide_csi_rpc_duration_seconds_bucket"])


# ---------------------------------------------------------------- Containerfile

CF = "Containerfile"


@case("containerfile-stages", checker="containerfile")
def single_stage(cp):
    cp.text(CF, "FROM docker.io/library/debian:12 AS build", "FROM docker.io/library/debian:12-slim")
    cp.text(CF, "FROM docker.io/library/debian:12-slim\nARG VERSION",
            "ARG VERSION")  # now one stage only


@case("containerfile-stages", checker="containerfile")
def runtime_not_slim(cp):
    cp.text(CF, "FROM docker.io/library/debian:12-slim", "FROM docker.io/library/ubuntu:24.04")


@case("containerfile-build", checker="containerfile")
def build_without_install_deps(cp):
    cp.text(CF, "RUN scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*",
            "RUN apt-get update && apt-get install -y cmake g++")


@case("containerfile-build", checker="containerfile")
def build_with_tests(cp):
    cp.text(CF, "-DOXIDE_CSI_BUILD_TESTS=OFF ", "")


@case("containerfile-runtime-packages", checker="containerfile")
def runtime_without_xfsprogs(cp):
    cp.text(CF, " xfsprogs ", " ")


@case("containerfile-runtime-packages", checker="containerfile")
def runtime_with_dev_package(cp):
    cp.text(CF, "libmicrohttpd12 \\", "libmicrohttpd12 libcurl4-openssl-dev build-essential \\")


@case("containerfile-runtime-libraries", checker="containerfile")
def runtime_without_libuv(cp):
    cp.text(CF, " libuv1 ", " ")


@case("containerfile-runtime-libraries", checker="containerfile")
def runtime_with_a_library_nothing_loads(cp):
    cp.text(CF, "libmicrohttpd12 \\", "libmicrohttpd12 libabsl20220623 \\")


def ctl_with_metrics_flag(root, binaries):
    """A copy of the built oxide-csi-ctl whose --help mentions --metrics-address: a binary that
    has the metrics endpoint's flag but does not load libmicrohttpd. (Its usage line is patched in
    place, same length, so ldd sees the real binary.)"""
    ctl = next((b for b in binaries if os.path.basename(b) == "oxide-csi-ctl"), None)
    if ctl is None:
        raise AssertionError("no --binary .../oxide-csi-ctl given")
    with open(ctl, "rb") as f:
        data = f.read()
    old = b"Usage: oxide-csi-ctl"
    if data.count(old) != 1:
        raise AssertionError(f"{old!r} occurs {data.count(old)} times in {ctl}")
    fake = os.path.join(root, "oxide-csi-ctl")
    with open(fake, "wb") as f:
        f.write(data.replace(old, b"--metrics-address".ljust(len(old))))
    os.chmod(fake, 0o755)
    return [fake]


@case("containerfile-runtime-libraries", checker="containerfile", binaries=ctl_with_metrics_flag,
      message=r"installs libmicrohttpd12, which no binary loads")
def metrics_library_package_once_the_flag_exists(cp):
    pass   # libmicrohttpd12 is in the Containerfile; a binary with --metrics-address must load it


@case("containerfile-runtime-packages", checker="containerfile")
def runtime_with_recommends(cp):
    cp.text(CF, "apt-get install -y --no-install-recommends", "apt-get install -y")


@case("containerfile-binary", checker="containerfile")
def binary_not_copied(cp):
    cp.text(CF, "COPY --from=build /out/usr/bin/oxide-csi-plugin /out/usr/bin/oxide-csi-ctl /usr/bin/\n",
            "")


@case("containerfile-binary", checker="containerfile")
def wrong_entrypoint(cp):
    cp.text(CF, 'ENTRYPOINT ["/usr/bin/oxide-csi-plugin"]', 'ENTRYPOINT ["/bin/sh"]')


@case("containerfile-version", checker="containerfile")
def containerfile_version_stale(cp):
    cp.text(CF, "ARG VERSION=0.1.0", "ARG VERSION=0.0.1")


@case("containerfile-version", checker="containerfile")
def containerfile_label_literal(cp):
    cp.text(CF, 'org.opencontainers.image.version="${VERSION}"',
            'org.opencontainers.image.version="latest"')


# ---------------------------------------------------------------- runner

def enable_optional_overlay_patches(cp):
    """Uncomment the optional patches in the example overlay (the CA bundle, the topology zone,
    the image mirror), so that what the comments tell operators to do is checked too."""
    rel = "kubernetes/overlays/example/kustomization.yaml"
    keys = r"(- target:|kind:|name:|patch: \|-|- op:|path:|value:|images:|- name:|newName:)"
    with open(cp.path(rel)) as f:
        lines = f.read().split("\n")
    out, n = [], 0
    for line in lines:
        m = re.match(r"^(\s*)# (\s*" + keys + r".*)$", line)
        if m:
            line = m.group(1) + m.group(2)
            n += 1
        out.append(line)
    if n < 10:
        raise AssertionError(f"only {n} optional overlay lines found to uncomment")
    cp.write(rel, "\n".join(out))


def run_checker(checker, root, version, kubectl, binaries):
    cmd = [sys.executable, CHECKERS[checker], "--project-version", version]
    if checker == "manifests":
        cmd += ["--deploy-dir", root] + (["--kubectl", kubectl] if kubectl else [])
    else:
        cmd += ["--containerfile", os.path.join(root, "Containerfile")]
        for binary in binaries:
            cmd += ["--binary", binary]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout + p.stderr


def run_case(c, version, kubectl, scratch, binaries):
    root = tempfile.mkdtemp(dir=scratch)
    deploy = os.path.join(root, "deploy")
    shutil.copytree(os.path.join(REPO, "deploy"), deploy)
    cp = Copy(deploy)
    try:
        c["mutate"](cp)
    except AssertionError as e:
        return False, f"{c['id']}: {e}"
    if c.get("binaries"):
        try:
            binaries = c["binaries"](root, binaries)
        except AssertionError as e:
            return False, f"{c['id']}: {e}"
    rc, out = run_checker(c["checker"], deploy, c.get("version") or version, kubectl, binaries)
    failed = set(FAIL_RE.findall(out))
    if c.get("positive"):
        ok = rc == 0 and not failed
        return ok, f"{c['id']}: " + ("passes" if ok else f"expected to pass, got rc={rc}\n{out}")
    if rc != 1 or c["expect"] not in failed:
        return False, f"{c['id']}: expected FAIL [{c['expect']}], got rc={rc}\n{out}"
    extra = failed - {c["expect"]} - c["also"]
    if extra:
        return False, f"{c['id']}: FAIL [{c['expect']}] as expected, but also {sorted(extra)}\n{out}"
    lines = [l for l in out.splitlines() if l.startswith(f"FAIL [{c['expect']}]")]
    if c.get("message"):
        lines = [l for l in lines if re.search(c["message"], l)]
        if not lines:
            return False, f"{c['id']}: no FAIL [{c['expect']}] line matches {c['message']!r}\n{out}"
    return True, f"{c['id']}: {lines[0]}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--project-version")
    ap.add_argument("--kubectl", default=os.environ.get("KUBECTL") or shutil.which("kubectl"))
    ap.add_argument("-k", dest="only", help="run only cases whose name contains this")
    ap.add_argument("-v", action="store_true", help="print the checker's message for every case")
    ap.add_argument("-j", type=int, default=4)
    ap.add_argument("--binary", action="append", default=[],
                    help="a built binary the image carries (passed on to check_containerfile.py)")
    a = ap.parse_args()
    sys.path.insert(0, HERE)
    sys.dont_write_bytecode = True   # leave no __pycache__ in the source tree
    import check_manifests
    version = a.project_version or check_manifests.project_version_from(
        os.path.join(REPO, "CMakeLists.txt"))

    positives = [
        {"id": "untouched_copy_passes_manifests", "checker": "manifests", "positive": True,
         "mutate": lambda cp: None},
        {"id": "untouched_copy_passes_containerfile", "checker": "containerfile", "positive": True,
         "mutate": lambda cp: None},
        {"id": "overlay_optional_patches_pass", "checker": "manifests", "positive": True,
         "mutate": enable_optional_overlay_patches},
        {"id": "families_matching_the_source_pass", "checker": "manifests", "positive": True,
         "mutate": lambda cp: write_fake_metrics_source(cp, listed_families(cp))},
    ]
    cases = positives + CASES
    if a.only:
        cases = [c for c in cases if a.only in c["id"]]

    # every invariant of both checkers has at least one case that breaks it
    import check_containerfile
    covered = {c["expect"] for c in CASES}
    uncovered = (set(check_manifests.INVARIANTS) | set(check_containerfile.INVARIANTS)) - covered
    passed = failed = 0
    if uncovered and not a.only:
        print(f"FAIL: no negative case for invariants {sorted(uncovered)}")
        failed += 1

    with tempfile.TemporaryDirectory(prefix="oxide-csi-deploy-neg-") as scratch, \
            concurrent.futures.ThreadPoolExecutor(max_workers=a.j) as pool:
        results = list(pool.map(lambda c: run_case(c, version, a.kubectl, scratch, a.binary), cases))
    for ok, msg in results:
        if ok:
            passed += 1
            print(("ok   " + msg) if a.v else ("ok   " + msg.split(":", 1)[0]))
        else:
            failed += 1
            print("FAIL " + msg)
    nneg = sum(1 for c in cases if not c.get("positive"))
    print(f"negative_test: {nneg} broken copies, {len(cases) - nneg} intact ones")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
