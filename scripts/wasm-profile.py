#!/usr/bin/env python3
"""Which of a wasm module's functions one evaluation's instructions go to.

`make wasm-profile SCENARIO=<name>` runs this on a scenario of
test_data/bench. callgrind counts the instructions of the runner (deterministically, as `MEASURE=instructions make bench` does), and
wasmtime names the guest functions it compiled in a perf map
(POLICY_RUNNER_PERFMAP, /tmp/perf-<pid>.map); callgrind sees the compiled
code without symbols and names each of its blocks by address, so this maps
every such address into the perf map's ranges and adds up the self cost of
each guest function. Two runs (LARGE and SMALL evaluations) are subtracted,
so compiling the module drops out, as in the benchmark.

Usage: wasm-profile.py RUNNER MODULE REQUEST SETTINGS PARENTS|- [TOP]
MODULE is annotated (`policy-runner annotate`), as the benchmark's are,
so look-ups are allowed. It should keep its name section (built without
stripping) for the functions to have names; otherwise they are wasm
function indices.
"""

import bisect
import collections
import glob
import os
import re
import subprocess
import sys
import tempfile

LARGE, SMALL = 30, 10


def run(runner, module, request, settings, parents, n, workdir):
    out = os.path.join(workdir, f"callgrind.{n}")
    args = [runner, "bench", "--output", "json", "--request-path", request,
            "--settings-path", settings, "--allow-context-aware",
            "--iterations", str(n), "--warmup", "0"]
    if parents != "-":
        args += ["--parents", parents]
    # A scenario whose look-ups read a user's kind is granted it by the
    # metadata beside its request (scripts/bench.sh, `grants`).
    grants = request.removesuffix(".request.json") + ".metadata.yml"
    if os.path.exists(grants):
        args += ["-m", grants]
    args.append(module)
    env = dict(os.environ, POLICY_RUNNER_SERIAL_COMPILATION="1", POLICY_RUNNER_PERFMAP="1")
    proc = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"] + args,
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _, err = proc.communicate()
    if proc.returncode != 0:
        sys.exit(f"wasm-profile: the runner failed:\n{err}")
    maps = glob.glob(f"/tmp/perf-{proc.pid}.map")
    if not maps:
        sys.exit("wasm-profile: no perf map was written (POLICY_RUNNER_PERFMAP)")
    return out, maps[0]


def perf_map(path):
    ranges = []
    with open(path) as f:
        for line in f:
            start, size, name = line.rstrip("\n").split(" ", 2)
            ranges.append((int(start, 16), int(size, 16), name))
    ranges.sort()
    return ranges


def self_costs(callgrind_out, ranges):
    """Self cost per guest function (by perf-map name) and per other function."""
    starts = [r[0] for r in ranges]
    names = {}
    costs = collections.Counter()
    edges = collections.Counter()
    fn = None
    callee = None
    in_call = False
    with open(callgrind_out) as f:
        for line in f:
            if line.startswith("fn="):
                in_call = False
                m = re.match(r"fn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                ident, name = m.group(1), m.group(2)
                if name is not None:
                    names[ident] = name
                fn = names[ident]
                continue
            if line.startswith("cfn="):
                # cfn= and fn= share one table of compressed names.
                m = re.match(r"cfn=\((\d+)\)(?: (.*))?", line.rstrip("\n"))
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                callee = names[m.group(1)]
                continue
            if line.startswith("calls="):
                in_call = True
                continue
            if line and (line[0].isdigit() or line[0] in "+-*"):
                if in_call:
                    in_call = False  # the inclusive cost of the call: not self
                    parts = line.split()
                    if len(parts) >= 2:
                        edges[(fn, callee)] += int(parts[1])
                    continue
                parts = line.split()
                if len(parts) >= 2:
                    costs[fn] += int(parts[1])
    def name_of(fn):
        m = re.match(r"0x([0-9a-f]+)(?:'\d+)?$", fn)
        if not m:
            return None
        addr = int(m.group(1), 16)
        at = bisect.bisect_right(starts, addr) - 1
        if at >= 0 and addr < ranges[at][0] + ranges[at][1]:
            return ranges[at][2]
        return "(unnamed, outside the module)"

    guest = collections.Counter()
    other = collections.Counter()
    for fn, cost in costs.items():
        name = name_of(fn)
        if name is None or name.startswith("(unnamed"):
            other[name or fn] += cost
        else:
            guest[name] += cost
    # Inclusive cost of each guest caller -> guest callee edge (calls within
    # one function, block to block, left out).
    calls = collections.Counter()
    for (caller, callee), cost in edges.items():
        a, b = name_of(caller), name_of(callee)
        if a and b and a != b and not a.startswith("(unnamed") and not b.startswith("(unnamed"):
            calls[(a, b)] += cost
    return guest, other, calls


def main():
    if len(sys.argv) < 6:
        sys.exit(__doc__)
    runner, module, request, settings, parents = sys.argv[1:6]
    top = int(sys.argv[6]) if len(sys.argv) > 6 else 40
    with tempfile.TemporaryDirectory() as workdir:
        totals = []
        for n in (LARGE, SMALL):
            out, pmap = run(runner, module, request, settings, parents, n, workdir)
            totals.append(self_costs(out, perf_map(pmap)))
            os.unlink(pmap)
    span = LARGE - SMALL
    guest = {k: (totals[0][0][k] - totals[1][0].get(k, 0)) / span for k in totals[0][0]}
    other = {k: (totals[0][1][k] - totals[1][1].get(k, 0)) / span for k in totals[0][1]}
    calls = {k: (totals[0][2][k] - totals[1][2].get(k, 0)) / span for k in totals[0][2]}
    g, o = sum(guest.values()), sum(other.values())
    print(f"per evaluation: {g + o:,.0f} instructions; guest {g:,.0f}, host {o:,.0f}")
    print("\n## guest functions (self)")
    for name, cost in sorted(guest.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{cost:12,.0f}  {name[:150]}")
    print("\n## guest calls (inclusive cost of the call, caller -> callee)")
    for (a, b), cost in sorted(calls.items(), key=lambda kv: -kv[1])[:3 * top]:
        print(f"{cost:12,.0f}  {a[:90]} -> {b[:90]}")
    print("\n## host functions (self)")
    for name, cost in sorted(other.items(), key=lambda kv: -kv[1])[:top]:
        print(f"{cost:12,.0f}  {name[:150]}")


if __name__ == "__main__":
    main()
