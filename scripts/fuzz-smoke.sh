#!/usr/bin/env bash
# Fuzz smoke run: every cargo-fuzz target of journal/fuzz and engine/fuzz for a short budget.
#
#   scripts/fuzz-smoke.sh                      # 60 s in all, split evenly over the targets
#   FUZZ_SECONDS=600 scripts/fuzz-smoke.sh     # a longer run
#   FUZZ_TARGETS="journal_open rollout_line" scripts/fuzz-smoke.sh
#
# Environment:
#   FUZZ_SECONDS       total budget in seconds (default 60), split evenly over the targets
#   FUZZ_PER_TARGET    seconds per target (overrides the split)
#   FUZZ_TARGETS       which targets (default: all six)
#   FUZZ_SANITIZER     address (default) or none
#   FUZZ_JOBS          targets run at once (default 1)
#   CARGO_TARGET_DIR   build dir (default ./target); the scratch corpora and crash artifacts
#                      live under it: fuzz-corpus/<target>/, fuzz-artifacts/<target>/
#
# Needs `cargo fuzz` (cargo install cargo-fuzz --locked) and the stable toolchain: nightly-only
# flags are enabled with RUSTC_BOOTSTRAP=1. The committed seeds (corpus/<target>/ and
# regressions/<target>/) are only read; what libFuzzer finds goes to the scratch corpus.
#
# Exits 0 when no target crashed; otherwise 1, after printing each crashing input's path.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cd "$root"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$root/target}"
export RUSTC_BOOTSTRAP=1
sanitizer="${FUZZ_SANITIZER:-address}"
all="journal_frame journal_open codec_event codec_snapshot rollout_line rollout_chunk"
read -r -a targets <<<"${FUZZ_TARGETS:-$all}"
total="${FUZZ_SECONDS:-60}"
per="${FUZZ_PER_TARGET:-$(( (total + ${#targets[@]} - 1) / ${#targets[@]} ))}"
jobs="${FUZZ_JOBS:-1}"

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "fuzz-smoke: cargo-fuzz is not installed (cargo install cargo-fuzz --locked)" >&2
    exit 2
fi

crate_of() {
    case "$1" in
        journal_*) echo journal ;;
        codec_* | rollout_*) echo engine ;;
        *) echo "fuzz-smoke: unknown target $1" >&2; exit 2 ;;
    esac
}

# Per-target libFuzzer options.
opts_of() {
    case "$1" in
        journal_frame) echo "-max_len=4096" ;;
        journal_open) echo "-max_len=8192" ;;
        codec_event | codec_snapshot) echo "-max_len=8192" ;;
        rollout_line) echo "-max_len=16384 -dict=engine/fuzz/dict/rollout.dict" ;;
        rollout_chunk) echo "-max_len=32768 -dict=engine/fuzz/dict/rollout.dict" ;;
    esac
}

# Build each crate once.
declare -A built=()
for t in "${targets[@]}"; do
    c="$(crate_of "$t")"
    if [[ -z "${built[$c]:-}" ]]; then
        echo "fuzz-smoke: building $c/fuzz (sanitizer $sanitizer)" >&2
        (cd "$c" && cargo fuzz build --fuzz-dir fuzz -s "$sanitizer" -O) >&2
        built[$c]=1
    fi
done

triple="$(rustc -vV | sed -n 's/^host: //p')"
bin_dir="$CARGO_TARGET_DIR/$triple/release"
logs="$CARGO_TARGET_DIR/fuzz-logs"
mkdir -p "$logs"

run_one() {
    local t="$1" c work art log
    c="$(crate_of "$t")"
    work="$CARGO_TARGET_DIR/fuzz-corpus/$t"
    art="$CARGO_TARGET_DIR/fuzz-artifacts/$t/"
    log="$logs/$t.log"
    mkdir -p "$work" "$art" "$c/fuzz/regressions/$t"
    # shellcheck disable=SC2046
    "$bin_dir/$t" "$work" "$c/fuzz/corpus/$t" "$c/fuzz/regressions/$t" \
        -max_total_time="$per" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        -artifact_prefix="$art" $(opts_of "$t") >"$log" 2>&1
}

declare -A pid_of=()
status=0
report() {
    local t="$1" rc="$2" log="$logs/$1.log" runs secs
    runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
    secs="$(sed -n 's/^Done [0-9]* runs in \([0-9]*\) second.*/\1/p' "$log" | tail -1)"
    if [[ "$rc" -eq 0 ]]; then
        printf 'fuzz-smoke: %-15s ok     %9s execs in %ss (%s execs/s)\n' "$t" "${runs:-?}" \
            "${secs:-?}" "$(( ${runs:-0} / (${secs:-1} > 0 ? ${secs:-1} : 1) ))"
    else
        status=1
        printf 'fuzz-smoke: %-15s FAILED (exit %s), log %s\n' "$t" "$rc" "$log"
        grep -E '^(==[0-9]+==|thread .* panicked|SUMMARY)' "$log" | head -5 | sed 's/^/    /'
        sed -n 's/.*Test unit written to \(.*\)$/    crashing input: \1/p' "$log"
    fi
}

running=0
for t in "${targets[@]}"; do
    run_one "$t" &
    pid_of[$t]=$!
    running=$((running + 1))
    if [[ "$running" -ge "$jobs" ]]; then
        wait -n || true
        running=$((running - 1))
    fi
done
for t in "${targets[@]}"; do
    rc=0
    wait "${pid_of[$t]}" || rc=$?
    report "$t" "$rc"
done
exit "$status"
