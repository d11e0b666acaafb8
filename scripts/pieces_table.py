#!/usr/bin/env python3
"""The table `make bench-pieces` writes (scripts/bench-pieces.sh).

Usage: scripts/pieces_table.py OUT DECIDE UNSAFE SCENARIOS PIECES

OUT holds counts/<module>.<scenario> (one number: instructions per
evaluation; the module is `policy` or a piece's plain form) and each
module's size, <module>.wasm. DECIDE names the scenarios that stand for
real use, UNSAFE the pieces that are `unsafe` code; SCENARIOS and PIECES
the rows and columns, each a space-separated list. A piece stays when it
saves at least 3 % (5 % if unsafe) on at least two DECIDE scenarios.
"""

import os
import sys

BAR, UNSAFE_BAR, TIMES = 3.0, 5.0, 2


def count(out, module, scenario):
    with open(os.path.join(out, "counts", f"{module}.{scenario}"), encoding="utf-8") as f:
        return int(f.read().strip())


def main():
    out, decide, unsafe, scenarios, pieces = sys.argv[1:6]
    decide, unsafe = set(decide.split()), set(unsafe.split())
    scenarios, pieces = scenarios.split(), pieces.split()
    bar = {piece: UNSAFE_BAR if piece in unsafe else BAR for piece in pieces}
    names = {piece: f"{piece} (`unsafe`)" if piece in unsafe else piece for piece in pieces}
    print("| scenario | policy | " + " | ".join(names[p] for p in pieces) + " |")
    print("|---|---:|" + "---:|" * len(pieces))
    paying = {piece: 0 for piece in pieces}
    for scenario in scenarios:
        policy = count(out, "policy", scenario)
        cells = []
        for piece in pieces:
            saves = 100 * (1 - policy / count(out, piece, scenario))
            if scenario in decide and saves >= bar[piece]:
                paying[piece] += 1
            cells.append(f"{saves:.1f} %")
        name = f"**{scenario}**" if scenario in decide else scenario
        print(f"| {name} | {policy:,} | " + " | ".join(cells) + " |")
    decided = len(decide & set(scenarios))
    verdicts = []
    for piece in pieces:
        stays = paying[piece] >= TIMES
        verdicts.append(f"{'stays' if stays else 'goes'}: {paying[piece]} of {decided}")
    print("| verdict (pays on two in bold) | | " + " | ".join(verdicts) + " |")
    print()
    size = lambda module: os.path.getsize(os.path.join(out, f"{module}.wasm"))
    sizes = ", ".join(f"plain {piece} {size(piece):,}" for piece in pieces)
    print(f"A piece pays on a scenario where it saves at least {BAR:g} % ({UNSAFE_BAR:g} % if `unsafe`).")
    print(f"Sizes of `policy.wasm`: {size('policy'):,} bytes; {sizes}.")


if __name__ == "__main__":
    main()
