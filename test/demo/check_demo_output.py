#!/usr/bin/env python3
"""Runs scripts/demo.sh against an already-built tree and checks its output (issue 23).

Checked: exit code 0; every step header ("==== ...") appears, in this order, and nothing else is
a step header; the last line is the "all done" header; the lines that show a step did its job
(a refusal refused, data equal on the restore and the clone, no mount left, a clean shutdown);
no line says "terminate called" (an exception escaping a program); no colour codes (the output
is not a terminal). Exit 77 (skipped) when not root (1 under CI=true): the demo needs loop devices and mounts.
"""
import argparse
import os
import subprocess
import sys

# Each step header's start, in the order the demo prints them.
STEPS = [
    "using the programs already built in",
    "starting the Oxide simulator",
    "creating the node's Oxide instance",
    "starting oxide-csi-plugin --mode=all",
    "Identity service",
    "Controller and Node services: a volume's whole life",
    "Snapshots: take one, restore it into a new volume, clone the volume",
    "deleting the first volume",
    "graceful shutdown (SIGTERM)",
    "the plugin's log",
    "all done: the main job finished",
]

# Lines that must appear somewhere: each shows one part of the job was done.
EXPECTED_LINES = [
    "(refused as expected)",
    "hello from pod-1",
    "(the restored volume and the clone hold the same data as the original)",
    "(the copies are independent)",
    "(no snapshot left)",
    "no mount left behind",
    "plugin exit code: 0",
    "socket removed",
]


def check(output, code):
    """Returns a list of problems found in the demo's output (empty: all good)."""
    problems = []
    lines = output.splitlines()
    if code != 0:
        problems.append(f"exit code {code}, expected 0")
    headers = [line[len("==== "):] for line in lines if line.startswith("==== ")]
    position = 0
    for header in headers:
        if position < len(STEPS) and header.startswith(STEPS[position]):
            position += 1
        else:
            problems.append(f"step header out of order or unknown: {header!r}")
    if position < len(STEPS):
        problems.append(f"missing step header: {STEPS[position]!r} (and any after it)")
    non_empty = [line for line in lines if line.strip()]
    if not non_empty or non_empty[-1] != "==== " + STEPS[-1]:
        last = non_empty[-1] if non_empty else ""
        problems.append(f"the last line is {last!r}, not the 'all done' header")
    for expected in EXPECTED_LINES:
        if not any(expected in line for line in lines):
            problems.append(f"no line says {expected!r}")
    for number, line in enumerate(lines, 1):
        if "terminate called" in line:
            problems.append(f"line {number}: {line!r}")
        if "\033[" in line:
            problems.append(f"line {number} has a terminal colour code (output is not a terminal)")
            break
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--demo", required=True, help="path of scripts/demo.sh")
    parser.add_argument("--build-dir", required=True, help="build tree holding the programs")
    args = parser.parse_args()
    if os.geteuid() != 0:
        if os.environ.get("CI") == "true":
            print("CI=true, and the demo cannot run here: it needs root (loop devices, mounts)")
            return 1
        print("skipped: the demo needs root (loop devices, mounts)")
        return 77
    env = dict(os.environ, OXIDE_CSI_DEMO_PREBUILT=args.build_dir)
    result = subprocess.run(["bash", args.demo], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            errors="replace", timeout=540, check=False)
    problems = check(result.stdout, result.returncode)
    if problems:
        print(result.stdout)
        print("---- the demo's output above is wrong:")
        for problem in problems:
            print(f"  - {problem}")
        return 1
    headers = sum(1 for line in result.stdout.splitlines() if line.startswith("==== "))
    print(f"demo output: exit 0, {headers} step headers in order, "
          f"{len(EXPECTED_LINES)} result lines present, no 'terminate called'")
    return 0


if __name__ == "__main__":
    sys.exit(main())
