"""One call of cuDNN's FP8 attention (tools/peers.py's cudnn-fp8 graph, the same inputs) between
cudaProfilerStart and cudaProfilerStop, for Nsight Compute (ncu --profile-from-start off):
FWD_DTYPE=e4m3 lab/fwd_source.sh runs it beside 07g (issue 38: what cuDNN's FP8 kernel does that
07g does not).

    python3 lab/fp8_cudnn_one.py B Hq Hkv N M d causal

peers.py builds the graph, checks its O against float32 math and hands its call to time_call; here
time_call runs it three times to warm up, then once under the profiler. Needs PyTorch and the cuDNN
frontend (../shared/peers/cudnn_fp8.sh)."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
import peers  # noqa: E402

B, Hq, Hkv, N, M, d, c = map(int, sys.argv[1:8])
torch, _, _, _ = peers.import_torch()
import cudnn  # noqa: E402  (after torch: it binds the libcudnn torch loaded)


def profiled(fn):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    fn()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0.0, 0.0, 0.0, 1


def row(rung, case, status, *rest):
    print(rung, " ".join(str(x) for x in case["shape"]), status, *(r for r in rest[1:2]))


case = {"shape": (B, Hq, Hkv, N, M, d, c), "inputs": "normal"}
peers.run_cudnn_fp8(torch, cudnn, torch.device("cuda"), case, row, profiled, "none")
