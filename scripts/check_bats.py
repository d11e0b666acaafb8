#!/usr/bin/env python3
"""Every negated command in the bats suites can fail its test (`make lint`).

bats runs a test under `set -e`, and bash's errexit ignores the status of a
command negated with `!`: `! grep -q x file` in the middle of a test passes
whatever grep finds. A negation must be written so that it fails the test:
`run ! cmd` (bats 1.5), `[[ ... ]]` / `[ ... ]`, or an `if` whose branch
fails. This check finds every bare `!` at a command's start in the bats
files and the helpers they load (e2e-tests/, cluster/tests/) outside the
condition of an `if`, `elif`, `while` or `until`, and prints file:line of
each; exit 1 when there is one.
"""

import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ["e2e-tests", "cluster/tests"]
# A `!` that starts a command: at the line's start, or after `&&`, `||`,
# `;`, `{`, `(`, `then`, `do` or `else`, followed by a blank.
BARE = re.compile(r"(?:^|&&|\|\||;|[{(]|\bthen\b|\bdo\b|\belse\b)\s*!\s")
# The condition of a compound command: its status is tested, so `!` there
# is meant (`if ! cmd; then`, `while ! cmd; do`).
CONDITION = re.compile(r"^\s*(?:if|elif|while|until)\b.*?(?:;\s*(?:then|do)\b|$)")


def strip(line):
    """The line without a trailing comment and without quoted text, which
    may hold a `!` or a `;` that is not shell syntax."""
    line = re.sub(r"'[^']*'", "''", line)
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    return re.sub(r"(^|\s)#.*$", "", line)


def problems(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = strip(raw.rstrip("\n"))
            line = CONDITION.sub("", line, count=1)
            if BARE.search(line):
                out.append(f"{os.path.relpath(path, ROOT)}:{lineno}: bare `!` cannot fail the test under "
                           f"`set -e`; write `run ! …` or `[[ … ]]`: {raw.strip()}")
    return out


def main():
    found = []
    count = 0
    for d in DIRS:
        for name in sorted(os.listdir(os.path.join(ROOT, d))):
            if name.endswith((".bats", ".bash")):
                count += 1
                found += problems(os.path.join(ROOT, d, name))
    for line in found:
        print(line, file=sys.stderr)
    if found:
        sys.exit(1)
    print(f"check_bats: no bare negation in {count} bats files and helpers")


if __name__ == "__main__":
    main()
