#!/usr/bin/env python3
"""Writes the fuzzers' seed corpora into fuzz/corpus/<fuzzer>/.

  tile_ir:  every `// -----` piece of tests/lit/*.mlir and tests/lit/Inputs,
            examples/mlir, and each example kernel's tile IR per target
            (bazel-bin/examples/<name> --emit=tile, when built).
  bundle:   kernel files tessera-compile writes for a few lit inputs, as
            they are (mode byte 0) and as payloads the fuzzer wraps (1).
  frontend: a few byte strings (the grammar reads any bytes).

Run from the repository root after `bazel build //tools/... //examples/...`:
  python3 fuzz/make_corpus.py
"""

import glob
import hashlib
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# The default build's outputs (bazel-bin follows the last --config used).
BIN = os.environ.get("BAZEL_BIN", os.path.join(ROOT, "bazel-bin"))
CORPUS = os.path.join(ROOT, "fuzz", "corpus")
MAX_BYTES = 16 * 1024  # tile_ir_fuzzer skips larger inputs
TARGETS = ["sm_60", "sm_70", "sm_80", "sm_90a"]


def put(fuzzer, data):
    """Adds `data` under its content hash (so reruns do not duplicate)."""
    if not data or len(data) > MAX_BYTES:
        return
    path = os.path.join(CORPUS, fuzzer)
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, hashlib.sha1(data).hexdigest()[:16]), "wb") as f:
        f.write(data)


def tile_ir():
    sources = sorted(glob.glob(os.path.join(ROOT, "tests/lit/*.mlir")) +
                     glob.glob(os.path.join(ROOT, "tests/lit/Inputs/*.mlir")) +
                     glob.glob(os.path.join(ROOT, "examples/mlir/*.mlir")))
    for source in sources:
        with open(source, "rb") as f:
            text = f.read()
        for piece in text.split(b"// -----"):
            lines = [l for l in piece.split(b"\n") if not l.startswith(b"// RUN")]
            put("tile_ir", b"\n".join(lines).strip() + b"\n")
    for example in ["vector_add", "gemm", "gemm_bias_gelu", "softmax", "layernorm", "rmsnorm"]:
        binary = os.path.join(BIN, "examples", example)
        if not os.path.exists(binary):
            continue
        for target in TARGETS:
            run = subprocess.run([binary, "--target=" + target, "--emit=tile"],
                                 capture_output=True)
            if run.returncode == 0:
                put("tile_ir", run.stdout)


def bundle():
    compiler = os.path.join(BIN, "tools/tessera-compile")
    inputs = ["examples/mlir/vector_add.mlir", "tests/lit/Inputs/reduce-rows.mlir",
              "tests/lit/Inputs/gemm-simt.mlir"]
    with tempfile.TemporaryDirectory() as tmp:
        for source in inputs:
            for target in TARGETS:
                out = os.path.join(tmp, "b.pb")
                run = subprocess.run([compiler, os.path.join(ROOT, source), "--target=" + target,
                                      "-o", os.path.join(tmp, "k.ptx"), "--bundle=" + out],
                                     capture_output=True)
                if run.returncode != 0:
                    continue
                with open(out, "rb") as f:
                    data = f.read()
                put("bundle", b"\x00" + data)
                put("bundle", b"\x01" + data[32:])


def frontend():
    for seed in [b"\x00", b"\x01\x02\x03\x04", bytes(range(64)), bytes(range(255, 0, -3)),
                 b"\x02\x00\x01\x02\x10\x01\x03\x07\x09\x02\x0b\x01\x02\x03"]:
        put("frontend", seed)


if __name__ == "__main__":
    tile_ir()
    bundle()
    frontend()
    for name in sorted(os.listdir(CORPUS)):
        print("%s: %d files" % (name, len(os.listdir(os.path.join(CORPUS, name)))))
