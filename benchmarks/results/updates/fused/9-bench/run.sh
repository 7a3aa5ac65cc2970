#!/bin/bash
# Device call 9: k-clique auto's fifth check (issue 26), then bench_updates.py up to 10^3 edges,
# the fused compact launch, this tree against the code before the header change (.whl/old),
# old-new-old-new on each graph, in one call.
out=$1
mkdir -p "$out"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt"
GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc timeout 240 python3 benchmarks/bench_kclique_auto.py --check5 --out-dir "$out" \
  > "$out/kclique-auto-check5-nvidia-h200.log" 2>&1
echo "check5 rc $?"; tail -6 "$out/kclique-auto-check5-nvidia-h200.log"
for g in delaunay20 rmat20; do
  for round in 1 2; do
    for tree in old new; do
      [ $SECONDS -gt 470 ] && { echo "== $g $tree $round skipped: the call's time"; continue; }
      if [ $tree = old ]; then dir=.whl/old; else dir=.; fi
      (cd $dir && GRAPH_KERNELS_KERNEL_CACHE=/tmp/kc-$tree PYTHONPATH=/tmp/site:$PWD timeout 150 python3 \
        benchmarks/bench_updates.py --graphs $g --max-size 1000 --compact-launch fused --out "$out/$tree-$round" \
        > "$out/bench-$tree-$round-$g.log" 2>&1)
      echo "== $g $tree $round rc $?"; grep -E "^ +(100|1,000) .* gpu " "$out/bench-$tree-$round-$g.log"
    done
  done
done
cd "$out" && tar czf bench.tgz bench-*.log old-* new-* && rm -rf bench-*.log old-* new-*
