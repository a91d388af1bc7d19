#!/bin/sh
# Share of cpu-clock samples spent in the three functions of ractor 0.16.5 that take its
# process-wide TREE_MUTATION_LOCK (SupervisionTree::link, ::unlink, ::take_children), and
# the part of those spent waiting for it (a contended lock: futex lock_contended/futex wait).
# Usage: compare/scripts/lock-share.sh perf.data [comm]   (record with --call-graph dwarf)
# The optional comm filters samples by thread name (e.g. tokio-runtime-w).
set -eu
data=${1:?usage: lock-share.sh perf.data [comm]}
comm=${2:-}
perf script -i "$data" 2>/dev/null | awk -v comm="$comm" '
function flush() {
    if (in_sample && (comm == "" || index(head, comm) == 1)) {
        total++
        if (holds) { lock++; if (waits) contended++ }
    }
    in_sample = 0; holds = 0; waits = 0
}
/^[^ \t]/ { flush(); in_sample = 1; head = $0; next }
/^[ \t]*$/ { flush(); next }
{
    if ($0 ~ /SupervisionTree::(link|unlink|take_children)\+/) holds = 1
    # perf prints the leaf first: a futex frame before the lock function is inside it.
    if (!holds && $0 ~ /lock_contended|futex_wait|do_futex|__x64_sys_futex/) waits = 1
}
END {
    flush()
    if (total == 0) { print "no samples"; exit 1 }
    printf "samples %d; in TREE_MUTATION_LOCK functions %d (%.2f %%); of those waiting on the lock %d (%.2f %% of all)\n", total, lock, 100 * lock / total, contended, 100 * contended / total
}'
