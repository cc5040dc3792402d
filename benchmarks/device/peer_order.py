"""cuBLAS right after a heavy GEMM (RESULTS.md run 151): 3000 x 5000 x 4000 and
8192 x 8192 x 1000 timed fresh, right after 8192^3, after 3 s idle, and after 8192^3 with the
allocator cache emptied, in one process (f16, peers.matmul). Run on the GPU machine after
prepare.sh: python3 .device/peer_order.py"""
import sys, time, torch
sys.argv = ["x"]
sys.path.insert(0, ".device")
import peers
def t(m, n, k, label):
    ms, tf = peers.matmul(m, n, k, torch.float16)
    print(f"{label:40s} {m}x{n}x{k} {ms:.4f} ms {tf:.1f} TFLOP/s", flush=True)
t(3000, 5000, 4000, "fresh")
t(8192, 8192, 8192, "heavy")
t(3000, 5000, 4000, "right after 8192^3")
time.sleep(3)
t(3000, 5000, 4000, "3 s idle later")
t(8192, 8192, 8192, "heavy")
torch.cuda.empty_cache()
t(3000, 5000, 4000, "after 8192^3, cache emptied")
t(8192, 8192, 1000, "8192x8192x1000")
t(8192, 8192, 8192, "heavy")
t(8192, 8192, 1000, "8192x8192x1000 after 8192^3")
