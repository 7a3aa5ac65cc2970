#!/bin/bash
# Device call 11: long lists searched by the whole grid a page at a time (each warp a contiguous
# range of the deferred lists' pages): the batch GPU tests, then fused_batch.py on R-MAT 20 (the
# long lists) with the parent commit's tree (.whl/old) and this one, and this one on the Delaunay
# graph, in one call.
out=$1
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-new GRAPH_KERNELS_TARGET=cuda timeout 130 python3 -m pytest -q -m gpu -p no:randomly \
  -p no:cacheprovider tests/test_batch_updates_gpu.py > "$out/gpu-tests.log" 2>&1
tail -2 "$out/gpu-tests.log"
for run in "rmat20 old" "rmat20 new" "delaunay20 new"; do
  set -- $run; g=$1; tree=$2
  [ $SECONDS -gt 190 ] && { echo "== $run skipped: the call's time"; continue; }
  if [ $tree = old ]; then dir=.whl/old; else dir=.; fi
  (cd $dir && GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-$tree PYTHONPATH=/tmp/site:$PWD timeout 50 python3 \
    benchmarks/diag/fused_batch.py --graphs $g --sizes 1000 --reps 5 --registers 128 \
    --out "$out/fused-$tree-$g.json" > "$out/fused-$tree-$g.log" 2>&1)
  echo "== $g $tree rc $?"; grep -E "fused|Error|error" "$out/fused-$tree-$g.log" | cut -c1-300 | tail -4
done
cd "$out" && tar czf all.tgz *.log *.json && rm -f *.log *.json
