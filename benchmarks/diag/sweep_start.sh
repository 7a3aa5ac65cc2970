set -u
export GRAPH_KERNELS_KERNEL_CACHE=$(mktemp -d)
python3 -m kernels cluster local --gpus ${1:-4} --port 0 > /tmp/cl.out 2>/tmp/cl.err &
CL=$!
for i in $(seq 1 120); do grep -q "workers warm" /tmp/cl.out && break; sleep 0.5; done
cat /tmp/cl.out
A=$(head -1 /tmp/cl.out | awk '{print $2}'); A=${A%:}
python3 benchmarks/diag/sweep_start.py --scheduler $A --seed 1 2>&1
echo "--- again, new graph, cache warm"
python3 benchmarks/diag/sweep_start.py --scheduler $A --seed 2 2>&1
kill -INT $CL; wait $CL
