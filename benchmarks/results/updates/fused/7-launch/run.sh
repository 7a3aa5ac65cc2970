#!/bin/bash
# Device call 7: the GPU tests of the batch path with the long-list race fix, ptx_check (beside
# them: it only compiles), then the fused launch's host clock (fused_batch.py --launch-clock).
out=$1
mkdir -p "$out"
export GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
(timeout 400 python3 -m kernels.run.ptx_check --quiet > "$out/ptx-check.log" 2>&1; echo "ptx_check rc $?" >> "$out/ptx-check.log") &
GRAPH_KERNELS_TARGET=cuda timeout 300 python3 -m pytest -q -m gpu -p no:randomly -p no:cacheprovider tests/test_fast_launch.py \
  tests/test_batch_updates_gpu.py tests/test_vertex_directory.py > "$out/gpu-tests.log" 2>&1
tail -2 "$out/gpu-tests.log"
wait
tail -2 "$out/ptx-check.log"
timeout 240 python3 benchmarks/diag/fused_batch.py --graphs delaunay20,rmat20 --sizes 100,1000 --reps 5 --launch-clock \
  --out "$out/fused-batch-launch.json" 2>&1 | tail -12
