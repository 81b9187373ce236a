# Shared by scripts/up and its tests: how many nodes to run on this machine. Python runs one core
# per process, so a machine is used by several nodes: one per core by default, at most 4.

#: The default node count: one per core, at most 4.
MAX_DEFAULT_NODES=4

# node_count [N]: N (from --nodes), else $FLOWSITE_NODES, else one per core (at most 4); prints
# it, or says why it is not a node count and fails.
node_count() {
    local count="${1:-${FLOWSITE_NODES:-}}"
    if [ -z "$count" ]; then
        count=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
        [ "$count" -le "$MAX_DEFAULT_NODES" ] || count=$MAX_DEFAULT_NODES
    fi
    case "$count" in
        ''|*[!0-9]*|0*) echo "the node count must be a whole number from 1 up, not '$count'" >&2; return 2 ;;
    esac
    echo "$count"
}
