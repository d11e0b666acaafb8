#!/usr/bin/env python3
"""Trims a scratch copy of the workspace to what the policy module (or the runner) is built from, for the SBOM.

  sbom_workspace.py DIR                  (DIR holds copies of Cargo.toml, crates/core/Cargo.toml, …)
  sbom_workspace.py DIR MEMBER...        the workspace's members become MEMBER... (the runner's SBOM:
                                         . crates/core crates/audit crates/runner)

cargo-cyclonedx reads `cargo metadata`, whose resolve unifies features across
every workspace member and dev-dependency: on the whole workspace it lists
crates the runner's or the tests' features pull in (allocator-api2,
foldhash), which the module never contains. In DIR, the workspace's members
become the policy crate and the core, and both manifests lose their
[dev-dependencies] tables. scripts/release.sh runs it on a scratch copy only.
Two crates remain that the module does not contain: cargo metadata's resolve
turns on slog's optional anyhow and jiff-core's optional log, which the
module's own build (cargo tree -p metadata-propagation-policy --target
wasm32-wasip1) leaves off. An SBOM that names two crates too many errs on the
safe side; e2e-tests/release.bats holds it to exactly these two. The runner's SBOM is made the
same way from the members it is built from.
"""

import re
import sys


def trim(path, members):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if members:
        listed = ", ".join(f'"{m}"' for m in members)
        text, n = re.subn(r'^(members|default-members) = \[[^\]]*\]$', lambda m: f"{m.group(1)} = [{listed}]", text, flags=re.M)
        if n != 2:
            sys.exit(f"sbom_workspace: {path}: expected `members` and `default-members`, found {n}")
    text = re.sub(r'^\[dev-dependencies\]\n(?:(?!\[).*\n?)*', "", text, flags=re.M)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv):
    if len(argv) < 1:
        sys.exit(__doc__.split("\n\n")[1])
    members = argv[1:] or [".", "crates/core"]
    if "." not in members:
        sys.exit("sbom_workspace: the root package (.) must stay a member")
    trim(f"{argv[0]}/Cargo.toml", members)
    for member in members:
        if member != ".":
            trim(f"{argv[0]}/{member}/Cargo.toml", None)


if __name__ == "__main__":
    main(sys.argv[1:])
