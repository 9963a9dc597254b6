#!/usr/bin/env python3
"""Prints one line per test that a ctest run skipped, from its JUnit report (ctest
--output-junit): the reason the test gave (GoogleTest's line after "Skipped", or the first
line a script printed that says "skipped"), a tab, and the test's name.
scripts/lib/test-steps.sh groups the lines by reason."""
import sys
import xml.etree.ElementTree as ET


def reason_of(case):
    out = case.findtext("system-out") or ""
    lines = [line.strip() for line in out.splitlines()]
    for i, line in enumerate(lines):
        if line.endswith(": Skipped") and i + 1 < len(lines) and lines[i + 1]:
            return lines[i + 1]
    for line in lines:
        if "skipped" in line.lower():
            return line
    skipped = case.find("skipped")
    if skipped is not None and skipped.get("message"):
        return skipped.get("message")
    return "no reason given"


def main():
    root = ET.parse(sys.argv[1]).getroot()
    for case in root.iter("testcase"):
        if case.find("skipped") is None and case.get("status") not in (
                "notrun", "skipped", "disabled"):
            continue
        print(f"{reason_of(case)}\t{case.get('name')}")


if __name__ == "__main__":
    main()
