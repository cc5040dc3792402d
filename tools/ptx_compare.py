#!/usr/bin/env python3
"""Compares two directories written by tools/ptx_dump.sh.

For each kernel (a .ptx file under the same relative path in both): is the
PTX byte-identical, and if not, is its instruction mix the same? The mix is
the histogram of opcodes (the instruction's name with its modifiers, e.g.
`mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32`), so renamed registers,
moved instructions and changed labels or constants leave it unchanged.
Prints the kernels whose mix changed (with the opcodes whose counts differ),
the kernels present on one side only, and a summary line. Exit status: 0
when every kernel's mix is the same, 1 otherwise.

    tools/ptx_compare.py BEFORE_DIR AFTER_DIR [--show-identical]
"""

import argparse
import collections
import pathlib
import re
import sys

# A line that is an instruction: optional predicate guard, then an opcode of
# letters, digits, '.' and '_' (directives start with '.', labels end with ':').
_INSTRUCTION = re.compile(r"^\s*(?:@!?%\w+\s+)?([a-z][a-z0-9_.]*)\b")


def opcode_histogram(text):
    """Counts each opcode of the PTX `text`, skipping directives and labels."""
    histogram = collections.Counter()
    for line in text.splitlines():
        line = line.split("//", 1)[0].strip()
        if not line or line.startswith((".", "{", "}", ")")) or line.endswith(":"):
            continue
        match = _INSTRUCTION.match(line)
        if match:
            histogram[match.group(1)] += 1
    return histogram


def kernels(root):
    """Relative paths of every .ptx file under `root`."""
    return {p.relative_to(root) for p in root.rglob("*.ptx")}


def describe_change(before, after):
    """The opcodes whose counts differ, as 'opcode: a -> b' strings."""
    changes = []
    for opcode in sorted(set(before) | set(after)):
        if before[opcode] != after[opcode]:
            changes.append(f"{opcode}: {before[opcode]} -> {after[opcode]}")
    return changes


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=pathlib.Path)
    parser.add_argument("after", type=pathlib.Path)
    parser.add_argument("--show-identical", action="store_true",
                        help="also list kernels whose PTX changed but whose mix did not")
    args = parser.parse_args()
    for root in (args.before, args.after):
        if not root.is_dir():
            print(f"ptx_compare: {root} is not a directory", file=sys.stderr)
            return 2
    old, new = kernels(args.before), kernels(args.after)
    identical = same_mix = 0
    changed = []
    for path in sorted(old & new):
        before_text = (args.before / path).read_text()
        after_text = (args.after / path).read_text()
        if before_text == after_text:
            identical += 1
            continue
        before, after = opcode_histogram(before_text), opcode_histogram(after_text)
        if before == after:
            same_mix += 1
            if args.show_identical:
                print(f"same mix, other PTX: {path}")
            continue
        changed.append(path)
        print(f"mix changed: {path}")
        for change in describe_change(before, after):
            print(f"    {change}")
    for path in sorted(old - new):
        print(f"only before: {path}")
    for path in sorted(new - old):
        print(f"only after: {path}")
    print(f"ptx_compare: {len(old & new)} kernels compared: {identical} byte-identical, "
          f"{same_mix} same instruction mix, {len(changed)} mix changed; "
          f"{len(old - new)} only before, {len(new - old)} only after")
    return 0 if not changed and old == new else 1


if __name__ == "__main__":
    sys.exit(main())
