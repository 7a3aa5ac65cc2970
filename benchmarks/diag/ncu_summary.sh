#!/bin/sh
# One line per kernel of an Nsight Compute text report: name, duration, L2 hit rate, L2 and DRAM throughput.
#   sh benchmarks/diag/ncu_summary.sh ncu.txt
awk '
/^  [^ ].*\(.*\)x\(/ { if (name != "") print name " | " d " | L2hit " h " | L2 " l " | DRAM " m;
                       name = ($1 == "void" ? $2 : $1); sub(/\[abi.*/, "", name); sub(/<.*/, "", name); d = h = l = m = "?" }
/^    Duration/ { d = $(NF) " " $(NF-1) }
/^    L2 Hit Rate/ { h = $NF }
/^    L2 Cache Throughput/ { l = $NF }
/^    DRAM Throughput/ { m = $NF }
END { if (name != "") print name " | " d " | L2hit " h " | L2 " l " | DRAM " m }' "$1"
