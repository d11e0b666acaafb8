#!/usr/bin/env python3
"""Writes one target's campaign result into the fuzz-campaign table.

Usage: scripts/fuzz_table.py FILE TARGET SANITIZER COMMIT EXECUTIONS SECONDS
                             RATE FINDINGS COV FT JOBS

FILE holds the table between `<!-- fuzz-campaign:begin -->` and
`<!-- fuzz-campaign:end -->`. scripts/fuzz_campaign.sh calls this once per
target it ran: the target's row is replaced (or added), the other targets'
rows stay, so the table always shows each target's latest campaign as the
script measured it, never a figure copied by hand.
"""

import datetime
import sys

from write_section import read_section, replace_section

HEADER = [
    "| target | sanitizer | commit | date | processes | executions | seconds | executions/s | coverage (cov / ft) | findings |",
    "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- |",
]


def grouped(n):
    return f"{int(n):,}"


def main():
    if len(sys.argv) != 12:
        sys.exit(__doc__.strip().split("\n\n")[1])
    path, target, sanitizer, commit, executions, seconds, rate, findings, cov, ft, jobs = sys.argv[1:]
    lines, first, last = read_section(path, "fuzz-campaign")
    rows = [line for line in lines[first + 1:last] if line.startswith("| `")]
    findings = "none" if findings == "none" else ", ".join(f"`{f}`" for f in findings.split())
    row = (f"| `{target}` | {sanitizer} | `{commit}` | {datetime.date.today().isoformat()} | {jobs} | "
           f"{grouped(executions)} | {grouped(seconds)} | {grouped(rate)} | {cov} / {ft} | {findings} |")
    rows = [r for r in rows if not r.startswith(f"| `{target}` |")] + [row]
    order = ["validate_bytes", "settings_bytes", "mutated_objects"]
    rows.sort(key=lambda r: order.index(r.split("`")[1]) if r.split("`")[1] in order else len(order))
    replace_section(path, "fuzz-campaign", HEADER + rows)


if __name__ == "__main__":
    main()
