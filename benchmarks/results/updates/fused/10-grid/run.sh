#!/bin/bash
# Device call 10: long lists searched by the whole grid in chunks (no block barriers) and the
# directory's fill a thread per page: GPU tests, then fused_batch.py and bench_updates.py, the
# parent commit's tree (.whl/old) against this one, in one call.
out=$1
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-new GRAPH_KERNELS_TARGET=cuda timeout 300 python3 -m pytest -q -m gpu -p no:randomly \
  -p no:cacheprovider tests/test_batch_updates_gpu.py tests/test_vertex_directory.py tests/test_fast_launch.py \
  > "$out/gpu-tests.log" 2>&1
tail -2 "$out/gpu-tests.log"
for tree in old new; do
  if [ $tree = old ]; then dir=.whl/old; else dir=.; fi
  (cd $dir && GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-$tree PYTHONPATH=/tmp/site:$PWD timeout 150 python3 \
    benchmarks/diag/fused_batch.py --graphs delaunay20,rmat20 --sizes 1000 --reps 5 --registers 128 \
    --out "$out/fused-$tree.json" > "$out/fused-$tree.log" 2>&1)
  echo "== fused_batch $tree"; grep fused "$out/fused-$tree.log" | cut -c1-300
done
for run in "rmat20 old 1" "rmat20 new 1" "delaunay20 old 1" "delaunay20 new 1" "rmat20 old 2" "rmat20 new 2"; do
  set -- $run; g=$1; tree=$2; round=$3
  [ $SECONDS -gt 520 ] && { echo "== $run skipped: the call's time"; continue; }
  if [ $tree = old ]; then dir=.whl/old; else dir=.; fi
  (cd $dir && GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-$tree PYTHONPATH=/tmp/site:$PWD timeout 100 python3 \
    benchmarks/bench_updates.py --graphs $g --max-size 1000 --compact-launch fused --out "$out/$tree-$round" \
    > "$out/bench-$tree-$round-$g.log" 2>&1)
  echo "== $g $tree $round rc $?"; grep -E "^ +1,000 .* gpu " "$out/bench-$tree-$round-$g.log"
done
cd "$out" && tar czf all.tgz *.log *.json old-* new-* && rm -rf *.log *.json old-* new-*
