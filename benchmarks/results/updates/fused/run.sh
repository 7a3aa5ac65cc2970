#!/bin/bash
# One device call: the GPU tests of the batch path, then bench_updates.py side by side, fused and
# split compact launches (alternating), on the graphs given. Usage: run.sh OUT GRAPH... [--tests] [--ptx]
out=$1; shift
mkdir -p "$out"
export GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
graphs=()
for a in "$@"; do
  case $a in
    --tests) GRAPH_KERNELS_TARGET=cuda python3 -m pytest -q -m gpu -p no:randomly tests/test_fast_launch.py \
               tests/test_batch_updates_gpu.py tests/test_vertex_directory.py > "$out/gpu-tests.log" 2>&1
             tail -3 "$out/gpu-tests.log";;
    --ptx) python3 -m kernels.run.ptx_check --quiet > "$out/ptx-check.log" 2>&1; echo "ptx_check rc $?"; tail -3 "$out/ptx-check.log";;
    *) graphs+=("$a");;
  esac
done
for g in "${graphs[@]}"; do
  for launch in fused split; do
    python3 benchmarks/bench_updates.py --graphs "$g" --max-size 10000 --compact-launch $launch \
      --out "$out/$launch" > "$out/bench-$launch-$g.log" 2>&1
    echo "== $g $launch rc $?"; grep -E "^ +(100|1,000|10,000) .* gpu " "$out/bench-$launch-$g.log"
  done
done
