#!/usr/bin/env python3
"""Where a bundle's bytes go: sums, over every member of a bundle, the rules
file's header, section directory, each section (strings split by what refers
to them, engines split into DFA headers, transitions, score tables and
padding), the padding that aligns sections and members, and the bundle
index (hosts, hash slots, member table, names). Prints a Markdown table, plus
the largest and mean member.

Reads the layouts of crates/robofilter/src/wire.rs and
crates/robofilter/src/dfa/mod.rs (rules file format versions 2 and 3,
bundle format versions 2 and 3). The magic octets of bundles and rules
files are not typed here: they are read from their one definition in the
engine's source (see `magic`).

Usage: tools/corpus/bundle-sizes.py BUNDLE
"""
import re
import struct
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE_SRC = ROOT / "crates" / "robofilter" / "src"


def magic(name):
    """The 8 magic octets the engine defines as `const NAME: &[u8; 8] =
    b"...";`, from whichever of its source files defines them."""
    pattern = re.compile(
        rb'\bconst %s: &\[u8; 8\] = b"([^"\\]{8})";' % name.encode())
    found = [m.group(1) for f in sorted(ENGINE_SRC.rglob("*.rs"))
             for m in pattern.finditer(f.read_bytes())]
    if len(found) != 1:
        sys.exit(f"bundle-sizes.py: {len(found)} definitions of {name} in "
                 f"{ENGINE_SRC} (expected one `const {name}: &[u8; 8] = "
                 f"b\"...\";`)")
    return found[0]


def u32(b, at):
    return struct.unpack_from("<I", b, at)[0]


def u64(b, at):
    return struct.unpack_from("<Q", b, at)[0]


def engine_parts(eng, off, length, code, acc):
    """Splits one engine's bytes into DFA header, transitions, scores."""
    if code == 1:  # verdict DFA
        dfa(eng, off, length, acc)
    elif code == 4:  # split: count, 0, (offset, length) per part, parts
        n = u32(eng, off)
        acc["engines: split headers"] += 8 + 8 * n
        used = 8 + 8 * n
        for i in range(n):
            poff = u32(eng, off + 8 + 8 * i)
            plen = u32(eng, off + 12 + 8 * i)
            dfa(eng, off + poff, plen, acc)
            used += plen
        acc["engines: padding"] += length - used


def dfa(eng, off, length, acc):
    stride, states = u32(eng, off), u32(eng, off + 4)
    width = u32(eng, off + 16)
    kind = u32(eng, off + 20)
    header = 32 + 256
    cells = width * states * stride
    acc["engines: DFA headers + class maps"] += header
    acc["engines: transitions"] += cells
    acc[f"engines: transitions, {width}-octet ids"] += cells
    rest = length - header - cells
    if kind == 1:
        acc["engines: score tables"] += rest
    else:
        acc["engines: padding"] += rest
    acc["DFAs"] += 1
    acc[f"DFAs with {width}-octet ids"] += 1
    if states <= 256:
        acc["DFAs with <= 256 states"] += 1


def member(b, acc, rules_magic):
    if b[:8] != rules_magic:
        sys.exit(f"bundle-sizes.py: a member does not start with "
                 f"{rules_magic.decode()} (a damaged bundle?)")
    version = u32(b, 12)
    sections = u32(b, 36)
    side_len = u32(b, 44)
    acc["member header"] += 64
    acc["section directory"] += 24 * sections
    secs = {}
    end = 64 + 24 * sections
    for i in range(sections):
        at = 64 + 24 * i
        tag = b[at:at + 4].decode()
        off, length = u64(b, at + 8), u64(b, at + 16)
        secs[tag] = (off, length)
    pos = end
    for tag, (off, length) in sorted(secs.items(), key=lambda kv: kv[1][0]):
        acc["section alignment padding"] += off - pos
        pos = off + length
        if tag not in ("STRS", "ENGN"):
            acc[f"{tag} section"] += length
    acc["section alignment padding"] += len(b) - pos
    # Strings, by what refers to them.
    soff, slen = secs.get("STRS", (0, 0))
    strs = b[soff:soff + slen]

    def use(what, off, length):
        if length == 0:
            return
        acc[f"STRS: {what} (per use)"] += length
    roff, rlen = secs.get("RULE", (0, 0))
    rec = 32 if version < 3 else 16
    for r in range(roff, roff + rlen, rec):
        if version < 3:
            voff, vlen = u32(b, r + 12), u32(b, r + 16)
            poff, plen = u32(b, r + 20), u32(b, r + 24)
        else:
            voff, poff, lens = u32(b, r + 4), u32(b, r + 8), u32(b, r + 12)
            vlen, plen = lens & 0x7FFF, lens >> 16
        use("rule values as written", voff, vlen)
        use("rule patterns (normalised)", poff, plen)
        if strs[voff:voff + vlen] == strs[poff:poff + plen]:
            acc["STRS: rule pattern equal to its value (per use)"] += plen
    aoff, alen = secs.get("AGNT", (0, 0))
    for r in range(aoff, aoff + alen, 16):
        use("agent names", u32(b, r), u32(b, r + 4))
    moff, mlen = secs.get("SMAP", (0, 0))
    for r in range(moff, moff + mlen, 16):
        use("sitemaps", u32(b, r + 4), u32(b, r + 8))
    doff, dlen = secs.get("DLAY", (0, 0))
    for r in range(doff, doff + dlen, 24):
        use("crawl-delays", u32(b, r + 4), u32(b, r + 8))
        use("crawl-delays' agents", u32(b, r + 12), u32(b, r + 16))
    goff, glen = secs.get("DIAG", (0, 0))
    for r in range(goff, goff + glen, 16):
        use("diagnostics", u32(b, r + 4), u32(b, r + 8))
    acc["STRS section"] += slen
    # Engines.
    eoff, elen = secs.get("ENGN", (0, 0))
    eng = b[eoff:eoff + elen]
    acc["ENGN section"] += elen
    gsec = secs.get("GRUP", (0, 0))
    placed = {}
    for r in range(gsec[0], gsec[0] + gsec[1], 32):
        code = u32(b, r)
        off = u32(b, r + 16) | (u32(b, r + 20) << 32)
        length = u32(b, r + 24) | (u32(b, r + 28) << 32)
        if length:
            placed[off] = (length, code)
    pos = 0
    for off in sorted(placed):
        length, code = placed[off]
        acc["engines: padding"] += off - pos
        engine_parts(eng, off, length, code, acc)
        pos = off + length
    acc["engines: padding"] += elen - pos
    return side_len


def main():
    if len(sys.argv) == 2 and sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip())
        sys.exit(0)
    if len(sys.argv) != 2:
        sys.exit("usage: tools/corpus/bundle-sizes.py BUNDLE (see --help)")
    path = sys.argv[1]
    with open(path, "rb") as f:
        b = f.read()
    if b[:8] != magic("BUNDLE_MAGIC"):
        sys.exit(f"bundle-sizes.py: {path}: not a bundle (it does not start "
                 f"with {magic('BUNDLE_MAGIC').decode()})")
    rules_magic = magic("MAGIC")
    index_len = u64(b, 32)
    hosts, members, slots = u32(b, 40), u32(b, 44), u32(b, 48)
    acc = Counter()
    acc["bundle header"] = 64
    acc["index: hosts"] = 16 * hosts
    acc["index: hash slots"] = 4 * slots
    acc["index: member table"] = 16 * members
    names = index_len - 64 - 16 * hosts - 4 * slots - 16 * members
    acc["index: host names (+ padding)"] = names
    pos = index_len
    sizes = []
    for m in range(members):
        at = 64 + 16 * hosts + 4 * slots + 16 * m
        off, length = u64(b, at), u64(b, at + 8)
        acc["member alignment padding"] += off - pos
        pos = off + length
        sizes.append(length)
        member(memoryview(b)[off:off + length].tobytes(), acc, rules_magic)
    acc["member alignment padding"] += len(b) - pos
    total = len(b)
    print(f"{path}: {total} bytes, {hosts} hosts, {members} members, "
          f"{total / hosts:.0f} bytes per host; members: mean "
          f"{sum(sizes) / max(members, 1):.0f}, largest {max(sizes, default=0)}")
    print()
    print("| part | bytes | bytes per host | share |")
    print("|---|--:|--:|--:|")
    counts = {k for k in acc if k.startswith("DFAs")}
    for k, v in sorted(acc.items(), key=lambda kv: -kv[1]):
        if k in counts:
            continue
        inner = k.startswith(("STRS:", "engines:"))
        name = f"&nbsp;&nbsp;{k}" if inner else k
        print(f"| {name} | {v} | {v / hosts:.1f} | {100 * v / total:.1f} % |")
    print()
    for k in sorted(counts):
        print(f"- {k}: {acc[k]}")


if __name__ == "__main__":
    main()
