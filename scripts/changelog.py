#!/usr/bin/env python3
"""CHANGELOG.md: checks its form and prints a version's release notes.

  changelog.py check [FILE]        the form of Keep a Changelog 1.1.0, and the
                                   version of Cargo.toml and policy-metadata.yml
                                   (they must agree) a released version in it
  changelog.py notes VERSION [FILE]  the body of VERSION's section; exit 3 when
                                   the changelog has no such version
  changelog.py release VERSION COMMIT [FILE]
                                   whether VERSION's notes describe the module
                                   built from COMMIT (a full hash); exit 1
                                   naming why not

What `release` holds a release to (`make release` runs it first): the notes
are VERSION's section, so everything the module holds must be in it.
- `[Unreleased]` holds no entries: a change under it is in the module built
  from the commit, and would ship without being in the notes;
- VERSION's section names no commit but COMMIT (`at commit abc1234`): notes
  describing the policy as it stood at another commit describe another module.

What `check` holds a changelog to:
- it starts with `# Changelog`;
- its version headings are `## [Unreleased]` (at most one, first) and
  `## [X.Y.Z] - YYYY-MM-DD`, X.Y.Z a Semantic Versioning 2.0.0 version and the
  date a real calendar date;
- released versions run from the newest down, each once, their dates never
  increasing;
- inside a version, subsections are Keep a Changelog's (Added, Changed,
  Deprecated, Removed, Fixed, Security) or `Upgrade notes`, each once, and
  every released version has its upgrade notes;
- a `##` heading that is not a version (Compatibility) comes before the first
  version.
"""

import datetime
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SEMVER = (r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)"
          r"(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?"
          r"(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?")
RELEASED = re.compile(rf"^## \[({SEMVER})\] - (\d{{4}}-\d{{2}}-\d{{2}})$")
SUBSECTIONS = ["Added", "Changed", "Deprecated", "Removed", "Fixed", "Security", "Upgrade notes"]


def semver_key(version):
    """Semantic Versioning 2.0.0 precedence as a sortable key."""
    m = re.fullmatch(SEMVER, version)
    core = tuple(int(m.group(i)) for i in (1, 2, 3))
    pre = m.group(4)
    if pre is None:
        return core + ((1,),)
    ids = tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in pre.split("."))
    return core + ((0,) + ids,)


def sections(text):
    """[(heading line number, heading, version or None, date or None, body lines)] of every `## ` heading."""
    out, lines = [], text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("## "):
            m = RELEASED.match(line)
            version, date = (m.group(1), m.group(7)) if m else ("Unreleased" if line == "## [Unreleased]" else None, None)
            out.append([i + 1, line, version, date, []])
        elif out:
            out[-1][4].append(line)
    return out


def check(path):
    text = open(path, encoding="utf-8").read()
    problems = []
    if not text.startswith("# Changelog\n"):
        problems.append("the first line is not `# Changelog`")
    seen_version = False
    released = []
    for lineno, heading, version, date, body in sections(text):
        where = f"{os.path.basename(path)}:{lineno}"
        if version is None:
            if heading.startswith("## ["):
                problems.append(f"{where}: `{heading}` is neither `## [Unreleased]` nor `## [X.Y.Z] - YYYY-MM-DD` "
                                "with X.Y.Z a semantic version")
            elif seen_version:
                problems.append(f"{where}: `{heading}` comes after a version; only versions follow the first one")
            continue
        if version == "Unreleased" and seen_version:
            problems.append(f"{where}: [Unreleased] must be the first version")
        seen_version = True
        if date is not None:
            try:
                datetime.date.fromisoformat(date)
            except ValueError:
                problems.append(f"{where}: {version}: {date} is not a calendar date")
            released.append((where, version, date))
        subs = [line[4:] for line in body if line.startswith("### ")]
        for sub in subs:
            if sub not in SUBSECTIONS:
                problems.append(f"{where}: {version}: subsection `### {sub}` is not one of {', '.join(SUBSECTIONS)}")
        for sub in sorted({s for s in subs if subs.count(s) > 1}):
            problems.append(f"{where}: {version}: `### {sub}` appears more than once")
        if date is not None and "Upgrade notes" not in subs:
            problems.append(f"{where}: {version} has no `### Upgrade notes`")
        if not any(line.strip() for line in body):
            problems.append(f"{where}: {version} is empty")
    names = [v for _, v, _ in released]
    for v in sorted({v for v in names if names.count(v) > 1}):
        problems.append(f"version {v} appears more than once")
    for (w1, v1, d1), (w2, v2, d2) in zip(released, released[1:]):
        if v1 != v2 and semver_key(v1) < semver_key(v2):
            problems.append(f"{w2}: {v2} comes after the older {v1}: newest first")
        if d2 > d1:
            problems.append(f"{w2}: {v2} is dated {d2}, after the newer {v1} ({d1})")
    if not released:
        problems.append("no released version (`## [X.Y.Z] - YYYY-MM-DD`)")
    return problems, names


def project_versions():
    cargo = re.search(r'^version = "([^"]+)"', open(os.path.join(ROOT, "Cargo.toml"), encoding="utf-8").read(), re.M)
    meta = re.search(r"^\s*io\.kubewarden\.policy\.version:\s*(\S+)\s*$",
                     open(os.path.join(ROOT, "policy-metadata.yml"), encoding="utf-8").read(), re.M)
    return cargo and cargo.group(1), meta and meta.group(1)


def notes(version, path):
    for _, _, v, _, body in sections(open(path, encoding="utf-8").read()):
        if v == version:
            while body and not body[0].strip():
                body.pop(0)
            while body and not body[-1].strip():
                body.pop()
            return "\n".join(body) + "\n"
    return None


# A commit named in prose: `commit abc1234`, `commit \`abc1234\``.
NAMED_COMMIT = re.compile(r"\bcommits?\s+`?([0-9a-f]{7,40})\b`?", re.I)


def release_problems(version, commit, path):
    """Why VERSION's notes would not describe the module built from COMMIT."""
    problems = []
    for _, _, v, _, body in sections(open(path, encoding="utf-8").read()):
        if v == "Unreleased":
            entries = [line for line in body if line.strip() and not line.startswith("### ")]
            if entries:
                problems.append(f"[Unreleased] holds {len(entries)} line(s) (first: {entries[0].strip()!r}): the "
                                f"module built from {commit[:12]} has them, the notes of {version} would not; move "
                                f"them under `## [{version}]` (and leave `## [Unreleased]` empty or remove it)")
        if v == version:
            for named in sorted({m.group(1) for m in NAMED_COMMIT.finditer("\n".join(body))}):
                if not commit.startswith(named.lower()):
                    problems.append(f"the notes of {version} name commit {named}, but the module is built from "
                                    f"{commit[:12]}: they would describe another module; say what the version "
                                    "holds, not at which commit")
    return problems


def main(argv):
    if len(argv) >= 1 and argv[0] == "check" and len(argv) <= 2:
        path = argv[1] if len(argv) == 2 else os.path.join(ROOT, "CHANGELOG.md")
        problems, names = check(path)
        if len(argv) == 1:
            cargo, meta = project_versions()
            if cargo != meta:
                problems.append(f"Cargo.toml says version {cargo}, policy-metadata.yml io.kubewarden.policy.version {meta}")
            elif cargo not in names:
                problems.append(f"the version of Cargo.toml and policy-metadata.yml, {cargo}, has no "
                                f"`## [{cargo}] - YYYY-MM-DD` section")
        if problems:
            print(f"changelog: {path}:", file=sys.stderr)
            for p in problems:
                print(f"  - {p}", file=sys.stderr)
            return 1
        print(f"changelog: {os.path.basename(path)} is well-formed; versions {', '.join(names)}")
        return 0
    if len(argv) in (2, 3) and argv[0] == "notes":
        path = argv[2] if len(argv) == 3 else os.path.join(ROOT, "CHANGELOG.md")
        body = notes(argv[1], path)
        if body is None:
            print(f"changelog: {os.path.basename(path)} has no section `## [{argv[1]}] - YYYY-MM-DD`", file=sys.stderr)
            return 3
        sys.stdout.write(body)
        return 0
    if len(argv) in (3, 4) and argv[0] == "release":
        path = argv[3] if len(argv) == 4 else os.path.join(ROOT, "CHANGELOG.md")
        if notes(argv[1], path) is None:
            print(f"changelog: {os.path.basename(path)} has no section `## [{argv[1]}] - YYYY-MM-DD`", file=sys.stderr)
            return 3
        if not re.fullmatch(r"[0-9a-f]{40}", argv[2]):
            print(f"changelog: release: {argv[2]!r} is not a full commit hash", file=sys.stderr)
            return 64
        problems = release_problems(argv[1], argv[2], path)
        if problems:
            print(f"changelog: {path}: the notes of {argv[1]} do not describe the module built from {argv[2][:12]}:",
                  file=sys.stderr)
            for p in problems:
                print(f"  - {p}", file=sys.stderr)
            return 1
        print(f"changelog: the notes of {argv[1]} describe the module built from {argv[2][:12]}")
        return 0
    print(__doc__.split("\n\n")[1], file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
