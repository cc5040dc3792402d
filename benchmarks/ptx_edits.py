#!/usr/bin/env python3
"""Hand edits of a kernel's PTX for ceiling experiments (RESULTS.md, runs 75-77).

Takes the PTX of one entry (`tessera-run --bundle=B --extract=DIR`), applies one
edit and writes it under the variant name ENTRY__SUFFIX, ready for
`tessera-run --bundle=B --add-variant=ENTRY:OUT.ptx --write=B2`. The edited
kernels compute wrong results on purpose where noted; time them with
`device_runner --time-wrong` (ab.sh: TIME_WRONG=1).

  ptx_edits.py noload    IN.ptx OUT.ptx  # sm_90a: the producer loads only the
                                         # kernel's first 4 stages (wrong results)
  ptx_edits.py noload80  IN.ptx OUT.ptx  # sm_80: no cp.async after the prologue
                                         # (wrong results)
  ptx_edits.py prefetch  IN.ptx OUT.ptx  # sm_90a: thread 0 prefetches every
                                         # tensor map (prefetch.tensormap) first
  ptx_edits.py l2hint128 IN.ptx OUT.ptx  # sm_80: cp.async.cg with .L2::128B
  ptx_edits.py l2hint256 IN.ptx OUT.ptx  # sm_80: cp.async.cg with .L2::256B
  ptx_edits.py spread80  IN.ptx OUT.ptx  # sm_80 GEMM: the hot loop's 8 cp.async spread
                                         # over its first 32 mma.sync (run 83; written
                                         # for the PTX of 7104dd3's gemm_f16)
"""

import re
import sys

SUFFIX = {"noload": "noload", "noload80": "noload", "prefetch": "pf",
          "l2hint128": "l2p128", "l2hint256": "l2p256", "spread80": "spread"}


def entry_name(lines):
    for line in lines:
        m = re.match(r"\.visible \.entry (\w+)\(", line)
        if m:
            return m.group(1)
    sys.exit("ptx_edits: no .entry in the input")


def noload(lines):
    """Predicates the producer's bulk tensor loads on ring slot < 4; later
    stages complete their full barrier with a plain arrive (no bytes), so
    the consumers run on the first stages' data."""
    out, ring, edits = [], None, 0
    for line in lines:
        m = re.match(r"\s*and\.b64\s+%rd\d+, (%rd\d+), 3;", line)
        if m and ring is None:
            ring = m.group(1)  # the producer's ring counter (slot = ring & 3)
        if ring and "mbarrier.arrive.expect_tx" in line:
            bar = re.search(r"\[(%r\d+)\]", line).group(1)
            out += [f"\tsetp.lt.u64 %pz, {ring}, 4;", "\t@%pz " + line.strip(),
                    f"\t@!%pz mbarrier.arrive.shared::cta.b64 _, [{bar}];"]
            edits += 1
            continue
        if ring and "cp.async.bulk.tensor" in line and ".global.tile" in line:
            out.append("\t@%pz " + line.strip())
            continue
        out.append(line)
        if re.match(r"\s*\.reg \.pred\s+%p<\d+>;", line):
            out.append("\t.reg .pred %pz;")
    if not edits:
        sys.exit("ptx_edits: no producer expect_tx found (not a warp-specialized sm_90a loop)")
    return out


def noload80(lines):
    """Drops every cp.async after the prologue's (the first 300 lines)."""
    out = [l for i, l in enumerate(lines)
           if not (i >= 300 and re.search(r"cp\.async\.cg\.shared\.global", l))]
    if len(out) == len(lines):
        sys.exit("ptx_edits: no cp.async after the prologue")
    return out


def prefetch(lines):
    """Inserts prefetch.tensormap of every 128-byte tensor-map parameter
    before the first mbarrier.init (thread 0's block)."""
    maps = [m.group(1) for l in lines
            for m in [re.search(r"\.param \.align 64 \.b8 (\w+)\[128\]", l)] if m]
    out, done = [], False
    for line in lines:
        if not done and "mbarrier.init" in line:
            asm = out.pop()  # the "// begin inline asm" line before it
            for j, p in enumerate(maps):
                out += [f"\tmov.b64 %tmq{2 * j}, {p};",
                        f"\tcvta.param.u64 %tmq{2 * j + 1}, %tmq{2 * j};",
                        f"\tprefetch.tensormap [%tmq{2 * j + 1}];"]
            out.append(asm)
            done = True
        out.append(line)
        if re.match(r"\s*\.reg \.b64\s+%rd<\d+>;", line):
            out.append(f"\t.reg .b64 %tmq<{2 * max(len(maps), 1)}>;")
    if not (maps and done):
        sys.exit("ptx_edits: no tensor maps or no mbarrier.init")
    return out


def l2hint(lines, size):
    out = [re.sub(r"cp\.async\.cg\.shared\.global\b", f"cp.async.cg.shared.global.L2::{size}B", l)
           for l in lines]
    # The L2 prefetch qualifiers need PTX ISA 7.4.
    return [re.sub(r"^\.version 7\.[0-3]$", ".version 7.4", l) for l in out]


def spread80(lines):
    """Moves the interior loop's copy block (between '@%pN bra $L__BB0_14'
    and 'bra.uni $L__BB0_14') into $L__BB0_14: one cp.async (predicated on
    !%pN) before every fourth of the first 32 mma.sync, and the block's
    commit_group from the top of $L__BB0_14 to just before its wait_group."""
    i0 = next((i for i, l in enumerate(lines)
               if re.match(r"\s*@%p\d+ bra\s+\$L__BB0_14;", l)), None)
    if i0 is None:
        sys.exit("ptx_edits: no copy block branching to $L__BB0_14 (not the sm_80 GEMM's PTX)")
    i1 = next(i for i in range(i0 + 1, len(lines))
              if re.match(r"\s*bra\.uni\s+\$L__BB0_14;", lines[i]))
    pred = re.match(r"\s*@(%p\d+) bra", lines[i0]).group(1)
    chunks, cur = [], []
    for line in lines[i0 + 1:i1]:
        if line.strip().startswith("cp.async.cg"):
            line = f"\t@!{pred} " + line.strip()
        cur.append(line)
        if line.strip().startswith("// end inline asm") and any("cp.async" in x for x in cur[-3:]):
            chunks.append(cur)
            cur = []
    body = lines[:i0] + ["\tbra.uni \t$L__BB0_14;"] + lines[i1 + 1:]
    k = body.index("$L__BB0_14:")
    head, rest = body[:k + 1], body[k + 1:]
    del rest[next(i for i, l in enumerate(rest[:5]) if "cp.async.commit_group" in l)]
    wait = next(i for i, l in enumerate(rest) if "cp.async.wait_group" in l)
    mmas = [i for i, l in enumerate(rest[:wait]) if "mma.sync" in l]
    if len(mmas) < 4 * len(chunks):
        sys.exit("ptx_edits: too few mma.sync before the wait_group")
    at = {mmas[4 * j] - 1: j for j in range(len(chunks))}  # their '// begin inline asm'
    out = []
    for i, line in enumerate(rest):
        if i in at:
            out += chunks[at[i]]
        if i == wait - 1:
            out += ["\t// begin inline asm", "\tcp.async.commit_group;", "\t// end inline asm"]
        out.append(line)
    return head + out


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in SUFFIX:
        sys.exit(__doc__)
    edit, src, dst = sys.argv[1:]
    lines = open(src).read().split("\n")
    name = entry_name(lines)
    if edit == "noload":
        lines = noload(lines)
    elif edit == "noload80":
        lines = noload80(lines)
    elif edit == "prefetch":
        lines = prefetch(lines)
    elif edit == "spread80":
        lines = spread80(lines)
    else:
        lines = l2hint(lines, edit[-3:])
    text = "\n".join(lines)
    # Rename the entry only (its parameters keep their names).
    text = re.sub(r"\b" + re.escape(name) + r"\(", f"{name}__{SUFFIX[edit]}(", text)
    open(dst, "w").write(text)
    print(f"{dst}: {name}__{SUFFIX[edit]}")


if __name__ == "__main__":
    main()
