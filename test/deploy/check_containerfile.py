#!/usr/bin/env python3
"""Static checks of deploy/Containerfile (no container engine is needed or used).

Each broken invariant prints `FAIL [name]: what is wrong`; the script then exits 1.
Usage: check_containerfile.py --binary PLUGIN --binary CTL [--containerfile FILE]
                              [--project-version X.Y.Z | --cmakelists F]
The runtime library packages are derived from the built binaries: the shared libraries `ldd`
lists plus those they dlopen() (their sonames appear in the binary), each mapped to its Debian
package with `dpkg -S`. So the list cannot drift from what the binaries need.
"""
import argparse
import os
import re
import shlex
import subprocess
import sys

INVARIANTS = {
    "containerfile-stages": "multi-stage: a Debian 12 build stage, a debian:12-slim runtime stage",
    "containerfile-build": "the build stage runs scripts/install-deps.sh, configures with "
                           "-DOXIDE_CSI_BUILD_TESTS=OFF -DOXIDE_CSI_BUILD_BENCH=OFF, builds, installs",
    "containerfile-runtime-packages": "the runtime stage installs e2fsprogs, xfsprogs, cryptsetup-bin, "
                                      "util-linux, "
                                      "mount, ca-certificates, without recommends, and no compiler "
                                      "or -dev package",
    "containerfile-runtime-libraries": "the runtime stage installs the Debian package of every "
                                       "shared library the binaries load or dlopen, and no "
                                       "library package they do not",
    "containerfile-binary": "the runtime stage copies /usr/bin/oxide-csi-plugin from the build "
                            "stage and runs it as the entrypoint",
    "containerfile-version": "ARG VERSION defaults to the project version and labels the image",
}
# A library package the image may install ahead of the binaries: while no --binary's --help
# mentions the feature's flag (the feature has not landed in this tree yet), the package is not
# reported as one "no binary loads"; once a binary has the flag, the usual rule holds again and
# the binaries must really load it. (Issue 21: the metrics endpoint loads libmicrohttpd.so.12;
# the Containerfile was changed on a branch of its own, before the C++.)
AHEAD_OF_BINARIES = {"libmicrohttpd12": "--metrics-address"}
# The node service's tools and the CA bundle; library packages are derived from the binaries.
RUNTIME_PACKAGES = ["e2fsprogs", "xfsprogs", "cryptsetup-bin", "util-linux", "mount", "ca-certificates"]
SONAME = re.compile(rb"lib[A-Za-z0-9_+-]+\.so(?:\.[0-9]+)+")


def help_text(binary):
    """The binary's --help output ('' when it has none)."""
    try:
        r = subprocess.run([binary, "--help"], capture_output=True, text=True, timeout=30,
                           env={"PATH": "/usr/bin:/bin"})
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return r.stdout + r.stderr


def dpkg_owner(path):
    """The Debian package that ships `path` (trying the /usr-merged and resolved spellings)."""
    real = os.path.realpath(path)
    candidates = [path, real]
    for p in (path, real):
        candidates.append(p[4:] if p.startswith("/usr/") else "/usr" + p)
    for c in candidates:
        r = subprocess.run(["dpkg", "-S", c], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split(":", 1)[0].strip()
    return None


def library_packages(binaries):
    """{package: [sonames]} for every shared library the binaries load or dlopen; or an error."""
    paths = {}
    for binary in binaries:
        r = subprocess.run(["ldd", binary], capture_output=True, text=True)
        if r.returncode != 0:
            return None, f"ldd {binary} failed: {r.stderr.strip()}"
        for line in r.stdout.splitlines():
            if "not found" in line:
                return None, f"{binary}: {line.strip()}"
            m = re.match(r"\s*(\S+)\s+=>\s+(/\S+)", line)
            if m:
                paths[m.group(1)] = m.group(2)
        with open(binary, "rb") as f:
            named = {s.decode() for s in SONAME.findall(f.read())}
        cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
        for soname in sorted(named - set(paths)):     # opened with dlopen()
            m = re.search(r"^\s*" + re.escape(soname) + r" \(libc6,x86-64[^)]*\) => (\S+)$", cache,
                          re.M)
            if not m:
                return None, f"{binary} names {soname} (dlopen), which this machine does not have"
            paths[soname] = m.group(1)
    packages = {}
    for soname, path in sorted(paths.items()):
        owner = dpkg_owner(path)
        if owner is None:
            return None, f"no Debian package ships {path} ({soname})"
        packages.setdefault(owner, []).append(soname)
    return packages, None
BUILD_ONLY = re.compile(r"^(build-essential|cmake|g\+\+.*|gcc.*|clang.*|make|pkg-config|git|"
                        r"protobuf-compiler.*|.*-dev)$")
DEBIAN12 = re.compile(r"^(docker\.io/(library/)?)?debian:(12|bookworm)(-slim)?([-.][\w.-]*)?(@sha256:[0-9a-f]+)?$")


def instructions(text):
    """[(INSTRUCTION, argument text)], with line continuations joined and comments dropped."""
    out, cur = [], ""
    for line in text.splitlines():
        s = line.strip()
        if s.startswith("#") and not cur:
            continue
        if s.startswith("#"):      # a comment inside a continued instruction
            continue
        if s.endswith("\\"):
            cur += s[:-1] + " "
            continue
        cur += s
        if cur.strip():
            word, _, rest = cur.strip().partition(" ")
            out.append((word.upper(), rest.strip()))
        cur = ""
    return out


def project_version_from(cmakelists):
    with open(cmakelists) as f:
        m = re.search(r"project\s*\(\s*oxide-csi-plugin\b[^)]*\bVERSION\s+([0-9][0-9.]*)", f.read())
    if not m:
        raise SystemExit(f"check_containerfile: no project(... VERSION ...) in {cmakelists}")
    return m.group(1)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    repo = os.path.dirname(os.path.dirname(here))
    ap = argparse.ArgumentParser()
    ap.add_argument("--containerfile", default=os.path.join(repo, "deploy", "Containerfile"))
    ap.add_argument("--project-version")
    ap.add_argument("--cmakelists", default=os.path.join(repo, "CMakeLists.txt"))
    ap.add_argument("--binary", action="append", default=[],
                    help="a built binary the image carries (oxide-csi-plugin, oxide-csi-ctl)")
    a = ap.parse_args(argv)
    version = a.project_version or project_version_from(a.cmakelists)
    fails = []

    def fail(inv, msg):
        assert inv in INVARIANTS
        fails.append(inv)
        print(f"FAIL [{inv}]: {msg}")

    with open(a.containerfile) as f:
        ins = instructions(f.read())

    # global ARGs (before the first FROM) and stages
    global_args, stages, cur = {}, [], None
    for word, rest in ins:
        if word == "FROM":
            toks = rest.split()
            toks = [t for t in toks if not t.startswith("--")]
            cur = {"image": toks[0] if toks else "", "name": toks[2] if len(toks) > 2 and
                   toks[1].lower() == "as" else None, "ins": []}
            stages.append(cur)
        elif cur is None:
            if word == "ARG":
                k, _, v = rest.partition("=")
                global_args[k.strip()] = v.strip().strip('"')
        else:
            cur["ins"].append((word, rest))

    # ---- stages
    if len(stages) < 2:
        fail("containerfile-stages", f"{len(stages)} stage(s); want a build stage and a runtime stage")
        return 1
    build, runtime = stages[0], stages[-1]
    if not build["name"]:
        fail("containerfile-stages", "the first (build) stage has no name (FROM ... AS build)")
    if not DEBIAN12.match(build["image"]):
        fail("containerfile-stages", f"build stage image {build['image']!r} is not Debian 12")
    if not DEBIAN12.match(runtime["image"]) or "-slim" not in runtime["image"]:
        fail("containerfile-stages", f"runtime stage image {runtime['image']!r} is not debian:12-slim")

    # ---- build stage
    runs = " ; ".join(r for w, r in build["ins"] if w == "RUN")
    if not re.search(r"(^|[\s;&|])(\./)?scripts/install-deps\.sh\b", runs):
        fail("containerfile-build", "the build stage does not run scripts/install-deps.sh")
    cfg = re.search(r"cmake\s+-S\s+\S+\s+-B\s+(\S+)([^;&|]*)", runs)
    if not cfg:
        fail("containerfile-build", "the build stage does not configure with cmake -S . -B <dir>")
    else:
        for opt in ("-DOXIDE_CSI_BUILD_TESTS=OFF", "-DOXIDE_CSI_BUILD_BENCH=OFF"):
            if opt not in cfg.group(2).split():
                fail("containerfile-build", f"the cmake configure lacks {opt}")
        bdir = re.escape(cfg.group(1))
        if not re.search(r"cmake\s+--build\s+" + bdir + r"\b", runs):
            fail("containerfile-build", f"the build stage does not run cmake --build {cfg.group(1)}")
        if not re.search(r"cmake\s+--install\s+" + bdir + r"\b", runs):
            fail("containerfile-build", f"the build stage does not run cmake --install {cfg.group(1)}")

    # ---- runtime stage packages
    installed = []
    for w, r in runtime["ins"]:
        if w != "RUN":
            continue
        for cmd in re.split(r"&&|;|\|\|", r):
            toks = shlex.split(cmd.replace("\\", " "))
            if len(toks) >= 2 and toks[0] in ("apt-get", "apt") and "install" in toks:
                if "--no-install-recommends" not in toks:
                    fail("containerfile-runtime-packages",
                         "apt-get install in the runtime stage without --no-install-recommends")
                installed += [t for t in toks[toks.index("install") + 1:] if not t.startswith("-")]
    for p in RUNTIME_PACKAGES:
        if p not in installed:
            fail("containerfile-runtime-packages", f"the runtime stage does not install {p}")
    if not a.binary:
        fail("containerfile-runtime-libraries", "no --binary given: the library packages are "
                                                "derived from the built binaries")
    else:
        needed, error = library_packages(a.binary)
        if error:
            fail("containerfile-runtime-libraries", error)
        else:
            for pkg, sonames in sorted(needed.items()):
                if pkg not in installed:
                    fail("containerfile-runtime-libraries",
                         f"the runtime stage does not install {pkg} ({', '.join(sonames)})")
            helps = {b: help_text(b) for b in a.binary}
            for pkg in installed:
                if pkg.startswith("lib") and not BUILD_ONLY.match(pkg) and pkg not in needed:
                    flag = AHEAD_OF_BINARIES.get(pkg)
                    if flag and not any(flag in h for h in helps.values()):
                        print(f"NOTE [containerfile-runtime-libraries]: {pkg} is installed ahead "
                              f"of the binaries: none loads it yet, and none has {flag} yet")
                        continue
                    fail("containerfile-runtime-libraries",
                         f"the runtime stage installs {pkg}, which no binary loads")
    for p in installed:
        if BUILD_ONLY.match(p):
            fail("containerfile-runtime-packages", f"the runtime stage installs build-only package {p}")
    if any(w == "RUN" and "install-deps.sh" in r for w, r in runtime["ins"]):
        fail("containerfile-runtime-packages", "the runtime stage runs install-deps.sh (build tools)")

    # ---- binary and entrypoint
    copied = False
    for w, r in runtime["ins"]:
        if w == "COPY" and re.search(r"--from=" + re.escape(build["name"] or "0") + r"\b", r) and \
                re.search(r"/oxide-csi-plugin\b", r):
            dest = r.split()[-1]
            copied = dest in ("/usr/bin/", "/usr/bin/oxide-csi-plugin")
    if not copied:
        fail("containerfile-binary", "the runtime stage does not COPY --from=<build stage> "
                                     "oxide-csi-plugin into /usr/bin/")
    ep = [r for w, r in runtime["ins"] if w == "ENTRYPOINT"]
    if not ep or "/usr/bin/oxide-csi-plugin" not in ep[-1]:
        fail("containerfile-binary", f"ENTRYPOINT is {ep[-1] if ep else None!r}, want "
                                     f"/usr/bin/oxide-csi-plugin")

    # ---- version
    if global_args.get("VERSION") != version:
        fail("containerfile-version", f"ARG VERSION={global_args.get('VERSION')!r} before the first "
                                      f"FROM, the project version is {version!r}")
    if not any(w == "ARG" and r.split("=")[0].strip() == "VERSION" for w, r in runtime["ins"]):
        fail("containerfile-version", "the runtime stage does not declare ARG VERSION")
    labels = " ".join(r for w, r in runtime["ins"] if w == "LABEL")
    m = re.search(r"org\.opencontainers\.image\.version=\"?([^\"\s]+)", labels)
    if not m or m.group(1) not in ("${VERSION}", "$VERSION", version):
        fail("containerfile-version", f"LABEL org.opencontainers.image.version is "
                                      f"{m.group(1) if m else None!r}, want ${{VERSION}}")

    held = [k for k in INVARIANTS if k not in fails]
    print(f"check_containerfile: project version {version}; {len(held)} invariants hold, "
          f"{len(set(fails))} broken" + (f": {', '.join(sorted(set(fails)))}" if fails else ""))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
