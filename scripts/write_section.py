#!/usr/bin/env python3
"""Replaces a generated section of a markdown file with stdin.

Usage: scripts/write_section.py FILE NAME < text

The section lies between the lines `<!-- NAME:begin -->` and
`<!-- NAME:end -->`; both stay, everything between them is replaced. The
benchmark scripts write their tables into BENCHMARKS.md this way, so the
numbers there are the ones the named command printed, never copied by hand.
"""

import sys


def read_section(path, name):
    """(the file's lines, the index of its begin marker, of its end marker)."""
    begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    try:
        first = lines.index(begin)
        return lines, first, lines.index(end, first)
    except ValueError:
        sys.exit(f"{path} has no {begin} … {end} section")


def replace_section(path, name, body):
    """Writes `body` (a list of lines) between the markers of section `name`."""
    lines, first, last = read_section(path, name)
    lines[first + 1 : last] = body
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__.strip().splitlines()[2])
    replace_section(sys.argv[1], sys.argv[2], sys.stdin.read().strip("\n").split("\n"))


if __name__ == "__main__":
    main()
