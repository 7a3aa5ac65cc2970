#!/bin/bash
# Device call 8: the GPU tests of the batch path and planned launches; then the fused batch with
# the batch's sizes in its uploaded header and launch_known (this tree) against the code before
# (.whl/old: `git archive` of the parent commit), alternating, in one call; the host clock of a
# 10^3 batch last.
out=$1
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc GRAPH_KERNELS_TARGET=cuda timeout 300 python3 -m pytest -q -m gpu -p no:randomly \
  -p no:cacheprovider tests/test_fast_launch.py tests/test_batch_updates_gpu.py tests/test_vertex_directory.py \
  > "$out/gpu-tests.log" 2>&1
tail -2 "$out/gpu-tests.log"
for round in 1; do
  for tree in old new; do
    if [ $tree = old ]; then dir=.whl/old; extra=""; else dir=.; extra="--launch-clock"; fi
    (cd $dir && GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-$tree PYTHONPATH=/tmp/site:$PWD timeout 200 python3 \
      benchmarks/diag/fused_batch.py --graphs delaunay20,rmat20 --sizes 100,1000 --reps 5 $extra \
      --out "$out/fused-$tree-$round.json" > "$out/fused-$tree-$round.log" 2>&1)
    echo "== $tree $round"; grep fused "$out/fused-$tree-$round.log" | cut -c1-100
  done
done
GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc timeout 100 python3 benchmarks/diag/line_stopwatch.py --graph delaunay --edges 1000 \
  --batches 40 > "$out/stopwatch-delaunay.txt" 2>&1; head -25 "$out/stopwatch-delaunay.txt"
cd "$out" && tar czf logs.tgz *.log *.json && rm -f *.log *.json
