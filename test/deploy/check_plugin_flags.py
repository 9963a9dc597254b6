#!/usr/bin/env python3
"""Every flag the rendered manifests pass to oxide-csi-plugin is one the built binary accepts.

Renders deploy/kubernetes (and the example overlay) with kubectl kustomize, collects the args of
every container whose image is the plugin's, and runs the plugin binary itself on each flag list
with a throw-away environment: the binary must not answer "unknown flag" or "invalid setting".
(Settings that need the cluster — the socket directory, the instance file — are not checked here;
only that the binary understands what the manifests say.)

usage: check_plugin_flags.py --plugin BIN --deploy-dir DIR [--kubectl PATH]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import yaml


def containers(objects):
    for obj in objects:
        spec = (obj or {}).get("spec", {}).get("template", {}).get("spec", {})
        for c in spec.get("initContainers", []) + spec.get("containers", []):
            yield obj["metadata"]["name"], c


def check(args, deploy_dir, quiet=False):
    """Returns (plugin containers checked, containers with flags the binary rejects)."""
    failures = 0
    checked = 0
    for target in ["kubernetes", "kubernetes/overlays/example"]:
        rendered = subprocess.run([args.kubectl, "kustomize", f"{deploy_dir}/{target}"],
                                  check=True, capture_output=True, text=True).stdout
        for owner, c in containers(yaml.safe_load_all(rendered)):
            if "oxide-csi-plugin" not in c.get("image", ""):
                continue
            flags = [a for a in c.get("args", []) if a.startswith("--")]
            names = {a.split("=", 1)[0] for a in flags}
            # Replace what needs the node or the cluster by harmless values; keep every name.
            probe = [a for a in flags
                     if not a.startswith(("--state-db", "--instance-metadata-file",
                                          "--oxide-ca-file", "--endpoint"))]
            probe += ["--state-db=/nonexistent-dir-for-flag-check/state.db",
                      "--endpoint=unix:///nonexistent-dir-for-flag-check-sock/csi.sock"]
            env = {"PATH": "/usr/bin:/bin", "OXIDE_HOST": "https://oxide.invalid",
                   "OXIDE_TOKEN": "oxide-token-flag-check", "OXIDE_PROJECT": "p",
                   "OXIDE_INSTANCE_ID": "6f0c4e3b-1d2a-4c5b-9e8f-0a1b2c3d4e5f"}
            result = subprocess.run([args.plugin] + probe, capture_output=True, text=True,
                                    env=env, timeout=30)
            out = result.stderr + result.stdout
            checked += 1
            bad = [line for line in out.splitlines()
                   if "unknown flag" in line or "invalid setting" in line]
            help_text = subprocess.run([args.plugin, "--help"], capture_output=True,
                                       text=True).stdout
            missing = [n for n in sorted(names) if n not in help_text]
            if bad or missing:
                failures += 1
                if not quiet:
                    print(f"FAIL [plugin-flags]: {target} {owner}/{c['name']}: "
                          f"{'; '.join(bad)} "
                          f"{'not in --help: ' + ', '.join(missing) if missing else ''}")
    return checked, failures


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--plugin", required=True)
    parser.add_argument("--deploy-dir", required=True)
    parser.add_argument("--kubectl", default="kubectl")
    args = parser.parse_args()

    checked, failures = check(args, args.deploy_dir)
    print(f"check_plugin_flags: {checked} plugin containers checked, {failures} with unknown flags")

    # The check can fail: a copy of the manifests with one bogus plugin flag must be caught.
    with tempfile.TemporaryDirectory() as tmp:
        copy = os.path.join(tmp, "deploy")
        shutil.copytree(args.deploy_dir, copy)
        node = os.path.join(copy, "kubernetes", "base", "node.yaml")
        with open(node) as f:
            text = f.read()
        broken = text.replace("- --mode=node", "- --mode=node\n            - --no-such-flag=1", 1)
        if broken == text:
            print("FAIL [plugin-flags]: self-test could not break node.yaml (--mode=node not found)")
            return 1
        with open(node, "w") as f:
            f.write(broken)
        _, broken_failures = check(args, copy, quiet=True)
        if broken_failures == 0:
            print("FAIL [plugin-flags]: self-test: a bogus flag in node.yaml went unnoticed")
            return 1
        # A known flag with a value the binary refuses is caught too (the XFS feature profile).
        with open(node, "w") as f:
            f.write(text.replace("--xfs-feature-profile=lts_5.4", "--xfs-feature-profile=lts_3.10"))
        if "--xfs-feature-profile=lts_5.4" not in text:
            print("FAIL [plugin-flags]: self-test: node.yaml has no --xfs-feature-profile=lts_5.4")
            return 1
        _, bad_value_failures = check(args, copy, quiet=True)
        if bad_value_failures == 0:
            print("FAIL [plugin-flags]: self-test: --xfs-feature-profile=lts_3.10 went unnoticed")
            return 1
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
