#!/usr/bin/env python3
"""Removes named exports from a wasm module: wasm-unexport.py IN OUT NAME...

The page's module links the Kubewarden SDK, whose waPC guest (wapc-guest)
exports `__guest_call`, a `#[no_mangle]` function every cdylib re-exports. It
calls three host functions from the `wapc` import module, which a browser
cannot provide. With the export gone, wasm-bindgen's dead-code pass removes the
function, the waPC plumbing behind it and the imports.
"""
import sys


def leb_u32(data, pos):
    result = shift = 0
    while True:
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


def enc_u32(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def unexport(module, names):
    if module[:4] != b"\0asm":
        sys.exit("wasm-unexport: not a wasm module")
    out, removed, pos = bytearray(module[:8]), [], 8
    while pos < len(module):
        section_id = module[pos]
        size, body = leb_u32(module, pos + 1)
        end = body + size
        if section_id != 7:  # not the export section: copy as is
            out += module[pos:end]
            pos = end
            continue
        count, p = leb_u32(module, body)
        kept = []
        for _ in range(count):
            start = p
            name_len, p = leb_u32(module, p)
            name = module[p:p + name_len].decode()
            p += name_len + 1  # name, kind
            _, p = leb_u32(module, p)  # index
            if name in names:
                removed.append(name)
            else:
                kept.append(module[start:p])
        payload = enc_u32(len(kept)) + b"".join(kept)
        out += bytes([7]) + enc_u32(len(payload)) + payload
        pos = end
    return bytes(out), removed


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__.splitlines()[0])
    src, dst, names = sys.argv[1], sys.argv[2], set(sys.argv[3:])
    with open(src, "rb") as f:
        module, removed = unexport(f.read(), names)
    with open(dst, "wb") as f:
        f.write(module)
    print(f"wasm-unexport: removed {', '.join(sorted(removed)) or 'nothing'}")


if __name__ == "__main__":
    main()
