# Sourced by the adapters' scripts (smoke, campaign, inspect checks), never run on its own:
#   source "$HERE/../skip_or_setup.sh" "$HERE" "smoke (aihub)"
# Builds the adapter's virtualenv once (`run --setup-only`), or prints "SKIPPED: <why>" and exits
# the calling script with 0 when Python 3.11 or the package index cannot be had (an adapter step
# in CI passes on a machine without them and says why). A failed setup exits 1 with its log.
# Sets PYTHON, the interpreter the adapters use.

skip_or_setup() {
    local adapter_dir="$1" label="$2" log rc
    PYTHON="${HISTSIM_PYTHON:-python3.11}"
    if ! command -v "$PYTHON" >/dev/null 2>&1; then
        echo "SKIPPED: $PYTHON is not installed"
        exit 0
    fi
    log="$(mktemp)"
    set +e
    "$adapter_dir/run" --setup-only 2>"$log"
    rc=$?
    set -e
    if [[ $rc -eq 75 ]]; then
        echo "SKIPPED: $(grep 'unavailable:' "$log" | tail -1 | sed 's/^.* adapter: unavailable: //')"
        rm -f "$log"
        exit 0
    elif [[ $rc -ne 0 ]]; then
        cat "$log" >&2
        rm -f "$log"
        echo "$label: setup failed with exit $rc" >&2
        exit 1
    fi
    rm -f "$log"
}

skip_or_setup "$@"
