#!/usr/bin/env bash
# The GPU run: what no machine without a GPU can show. At most 8 minutes on a machine with one
# NVIDIA GPU, a driver, python3.11+ and pip access (or --wheels DIR holding every wheel):
#
#   1. installs the tool into a fresh virtual environment (pip install of this checkout);
#   2. builds a working CUDA stack (onnxruntime-gpu + the NVIDIA CUDA 13 / cuDNN 9 wheels, the
#      pins of tests/scenarios/scenario_stacks.py) and runs `fallback-doctor diagnose` on it:
#      expects gpu_verified, nodes on the CUDA provider, GPU memory held by the probe, the GPU
#      at least 5x faster than the CPU baseline (yardstick: BERT-base 16x128 ~480 ms on 8 CPU
#      cores vs ~12 ms on a T4), and NVML showing the GPU busy;
#   3. the application's side on the working stack: its own model (--model, the convolutional
#      encoder at batch 16x128) and a running GPU application diagnosed by its process id (--pid),
#      both expected on the GPU; then breaks the stack in turn (cuDNN hidden from the loader, so
#      the convolution's first kernel fails; CUDA_VISIBLE_DEVICES=-1; CUDA libraries of another
#      major) and expects the right finding and a real fallback;
#   4. records the NVML series of the working run and of the CUDA_VISIBLE_DEVICES=-1 fallback
#      into tests/data/gpu_series/ (dated, with the GPU's name);
#   5. writes docs/gpu-run.md (every expectation with its evidence).
#
# Usage: scripts/gpu-check.sh [--fake] [--out DIR] [--wheels DIR] [--runs N]
#   --fake (or GPU_CHECK_FAKE=1): no GPU; the fake driver libraries in GPU_CHECK_FAKE_LIBS
#       (folders holding libcuda.so.1 and libnvidia-ml.so.1, as tests/fakes/fakebuild.py builds
#       them) go first on LD_LIBRARY_PATH. Everything runs for real but the GPU, so the GPU
#       expectations FAIL; outputs go under --out, never into the checkout.
#   GPU_CHECK_TOOL_PYTHON / GPU_CHECK_APP_PYTHON / GPU_CHECK_OTHER_PYTHON: reuse these
#       interpreters (the tool installed / the working stack / the other-major stack) instead
#       of building them. GPU_CHECK_BUDGET_S (default 480) bounds the whole run.
#   GPU_CHECK_OTHER_PYTHON=skip with GPU_CHECK_SKIP_REASON="why": the other-major case is not
#       run (a machine that cannot fetch the second onnxruntime-gpu wheel); it is written down
#       as SKIP with the reason, never as a pass.
# Exit status: 0 every expectation held, 1 some failed, 2 cannot start, 3 out of time.
set -euo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
FAKE=${GPU_CHECK_FAKE:-0}
OUT=""
WHEELS=${GPU_CHECK_WHEELS:-}
RUNS=${GPU_CHECK_RUNS:-20}
BUDGET_S=${GPU_CHECK_BUDGET_S:-480}
PYTHON=${PYTHON:-python3}

while (($#)); do
    case "$1" in
        --fake | --dry-run) FAKE=1 ;;
        --out) OUT=$2; shift ;;
        --wheels) WHEELS=$2; shift ;;
        --runs) RUNS=$2; shift ;;
        -h | --help) sed -n '2,26p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done

OUT=${OUT:-$(mktemp -d "${TMPDIR:-/tmp}/gpu-check.XXXXXX")}
WORK=$OUT/work
RESULTS=$OUT/results.txt
mkdir -p "$WORK"
: >"$RESULTS"
SECONDS=0
# No recorder outlives the script, whatever way it ends.
trap 'kill $(jobs -p) 2>/dev/null || true' EXIT

log() { printf '[%3ds] %s\n' "$SECONDS" "$*" | tee -a "$OUT/gpu-check.log" >&2; }
die() { log "cannot run: $*"; exit 2; }

# The seconds a step may take: what it asks for, never more than what is left of the budget
# (call it as `limit=$(allowance N) || exit 3`: it runs in a subshell).
allowance() {
    local want=$1 left=$((BUDGET_S - SECONDS))
    if ((left < 15)); then
        log "out of time (${BUDGET_S} s budget)"
        exit 3
    fi
    ((want > left)) && want=$left
    echo "$want"
}

pip_install() { # venv-python, requirement...
    local python=$1
    shift
    local source=() limit
    [[ -n $WHEELS ]] && source=(--no-index --find-links "$WHEELS")
    limit=$(allowance 240) || exit 3
    timeout "$limit" "$python" -m pip install --quiet --disable-pip-version-check "${source[@]}" "$@" \
        >>"$OUT/pip.log" 2>&1 || die "pip install $* failed (see $OUT/pip.log)"
}

fresh_venv() { # folder -> prints its python
    "$PYTHON" -m venv "$1" || die "$PYTHON -m venv $1 failed"
    echo "$1/bin/python"
}

# --- preflight: the machine ------------------------------------------------------------------
BASE_LD=${LD_LIBRARY_PATH:-}
if [[ $FAKE == 1 ]]; then
    [[ -n ${GPU_CHECK_FAKE_LIBS:-} ]] || die "--fake needs GPU_CHECK_FAKE_LIBS (folders of the fake libcuda / libnvidia-ml)"
    BASE_LD=$GPU_CHECK_FAKE_LIBS${BASE_LD:+:$BASE_LD}
    MODE="fake driver libraries, no GPU: the GPU expectations cannot hold"
    GPU="none (fake libnvidia-ml)"
    DRIVER="fake"
    DATA_DIR=$OUT/gpu_series
    DOC=$OUT/docs/gpu-run.md
else
    command -v nvidia-smi >/dev/null || die "nvidia-smi not found: this script needs a machine with an NVIDIA GPU"
    GPU=$(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader | head -n 1)
    DRIVER=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader | head -n 1)
    MODE="real GPU"
    DATA_DIR=$REPO/tests/data/gpu_series
    DOC=$REPO/docs/gpu-run.md
fi
"$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' || die "$PYTHON is older than 3.11"
log "mode: $MODE; GPU: $GPU; driver: $DRIVER; output: $OUT"

# --- 1. the tool, in a fresh virtual environment ----------------------------------------------
if [[ -n ${GPU_CHECK_TOOL_PYTHON:-} ]]; then
    TOOL_PY=$GPU_CHECK_TOOL_PYTHON
    log "1. the tool: reusing $TOOL_PY"
else
    log "1. installing the tool into $WORK/tool"
    TOOL_PY=$(fresh_venv "$WORK/tool")
    pip_install "$TOOL_PY" "$REPO"
fi
"$TOOL_PY" -m fallback_doctor --version >>"$OUT/gpu-check.log" || die "the installed tool does not start"
HELPER=("$TOOL_PY" "$REPO/scripts/gpu_check.py")

# --- 2. the stacks ----------------------------------------------------------------------------
mapfile -t PINS < <("${HELPER[@]}" pins)
[[ ${#PINS[@]} == 2 ]] || die "could not read the pinned wheels"
read -r -a WORKING_PINS <<<"${PINS[0]}"
read -r -a OTHER_PINS <<<"${PINS[1]}"
if [[ -n ${GPU_CHECK_APP_PYTHON:-} ]]; then
    APP_PY=$GPU_CHECK_APP_PYTHON
else
    log "2. building the working stack: ${PINS[0]}"
    APP_PY=$(fresh_venv "$WORK/app")
    pip_install "$APP_PY" --no-deps "${WORKING_PINS[@]}"
fi
if [[ ${GPU_CHECK_OTHER_PYTHON:-} == skip ]]; then
    OTHER_PY=""
elif [[ -n ${GPU_CHECK_OTHER_PYTHON:-} ]]; then
    OTHER_PY=$GPU_CHECK_OTHER_PYTHON
else
    log "3. building the other-major stack: ${PINS[1]}"
    OTHER_PY=$(fresh_venv "$WORK/other")
    pip_install "$OTHER_PY" --no-deps "${OTHER_PINS[@]}"
fi
site_of() { "$1" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])'; }
APP_SITE=$(site_of "$APP_PY")
OTHER_SITE=""
[[ -n $OTHER_PY ]] && OTHER_SITE=$(site_of "$OTHER_PY")
WORKING_LD=$APP_SITE/nvidia/cu13/lib:$APP_SITE/nvidia/cudnn/lib

# One diagnosis with the NVML series recorded beside it; then its expectations. TARGET (an
# array), when set, replaces `--python PYTHON` as what is diagnosed.
TARGET=()
run_case() { # case python loader-path [VAR=value ...]
    local case=$1 python=$2 ld=$3 limit
    shift 3
    local target=(--python "$python")
    ((${#TARGET[@]} == 0)) || target=("${TARGET[@]}")
    limit=$(allowance 150) || exit 3
    log "   $case: diagnose ${target[*]} (LD_LIBRARY_PATH=$ld${*:+; $*})"
    env LD_LIBRARY_PATH="$BASE_LD" "${HELPER[@]}" record "$WORK/$case.series.csv" 300 &
    local recorder=$! status=0
    env LD_LIBRARY_PATH="$ld${BASE_LD:+:$BASE_LD}" "$@" timeout "$limit" \
        "$TOOL_PY" -m fallback_doctor diagnose --json "${target[@]}" --runs "$RUNS" \
        >"$WORK/$case.json" 2>"$WORK/$case.stderr.txt" || status=$?
    kill -TERM "$recorder" 2>/dev/null || true
    wait "$recorder" || true
    ((status <= 1)) || log "   $case: diagnose exited with status $status (see $WORK/$case.stderr.txt)"
    "${HELPER[@]}" expect "$case" "$WORK/$case.json" "$RESULTS" "$WORK/$case.series.csv" | sed 's/^/     /' >&2 || true
}

log "2. the working stack"
run_case working "$APP_PY" "$WORKING_LD"
log "3. the application's side: its own model, its running process"
MODEL=$REPO/resources/model/encoder.onnx
TARGET=(--python "$APP_PY" --model "$MODEL" --dim batch=16 --dim seq=128)
run_case app_model "$APP_PY" "$WORKING_LD"
# A GPU application that runs until we end it: a session on the CUDA provider, one inference.
# With the fake driver there is no GPU to open a session on: it only imports ONNX Runtime.
APP_CODE='import sys, time
import onnxruntime as ort
if sys.argv[2] != "fake":
    session = ort.InferenceSession(sys.argv[1], providers=["CUDAExecutionProvider"])
print("ready", flush=True)
time.sleep(600)'
READY=$WORK/pid_running.ready
env LD_LIBRARY_PATH="$WORKING_LD${BASE_LD:+:$BASE_LD}" "$APP_PY" -c "$APP_CODE" "$MODEL" \
    "$([[ $FAKE == 1 ]] && echo fake || echo gpu)" >"$READY" 2>"$WORK/pid_running.app.txt" &
APP_PID=$!
for _ in $(seq 1 60); do
    grep -q ready "$READY" 2>/dev/null && break
    kill -0 "$APP_PID" 2>/dev/null || break
    sleep 1
done
TARGET=(--pid "$APP_PID")
run_case pid_running "$APP_PY" "$WORKING_LD"
kill -TERM "$APP_PID" 2>/dev/null || true
wait "$APP_PID" 2>/dev/null || true
TARGET=()
log "   the broken stacks"
run_case cudnn_hidden "$APP_PY" "$APP_SITE/nvidia/cu13/lib"
run_case no_visible_gpu "$APP_PY" "$WORKING_LD" CUDA_VISIBLE_DEVICES=-1
if [[ -n $OTHER_PY ]]; then
    run_case other_major "$OTHER_PY" "$OTHER_SITE/nvidia/cu13/lib"
else
    reason=${GPU_CHECK_SKIP_REASON:-GPU_CHECK_OTHER_PYTHON=skip}
    log "   other_major: skipped ($reason)"
    echo "SKIP other_major a CUDA 12 build with the CUDA 13 wheels: $reason" >>"$RESULTS"
fi

# --- 4. the recordings ------------------------------------------------------------------------
log "4. recordings into $DATA_DIR"
mkdir -p "$DATA_DIR"
last=$(find "$DATA_DIR" -maxdepth 1 -name '[0-9][0-9]-*.txt' -printf '%f\n' | sort | tail -n 1 | cut -c1-2)
number=$((10#${last:-0}))
slug=$(printf '%s' "${GPU%%,*}" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-//; s/-$//; s/^nvidia-//')
RECORDINGS=()
for case in working no_visible_gpu; do
    number=$((number + 1))
    name=$(printf '%02d-%s-gfd-%s.txt' "$number" "${slug:-gpu}" "${case//_/-}")
    "${HELPER[@]}" recording "$DATA_DIR/$name" "$WORK/$case.series.csv" "$case" "$GPU (driver $DRIVER)" "$MODE"
    RECORDINGS+=("$name")
done

# --- 5. the report ----------------------------------------------------------------------------
printf '{"date": "%s", "gpu": "%s", "driver": "%s", "mode": "%s", "seconds": %d, "recordings": [%s]}\n' \
    "$(date -u '+%Y-%m-%d %H:%M UTC')" "$GPU" "$DRIVER" "$MODE" "$SECONDS" \
    "$(printf '"%s",' "${RECORDINGS[@]}" | sed 's/,$//')" >"$WORK/info.json"
"${HELPER[@]}" write-doc "$DOC" "$RESULTS" "$WORK/info.json"
log "5. wrote $DOC"
failed=$(grep -c '^FAIL' "$RESULTS" || true)
log "done in ${SECONDS} s: $(grep -c '^PASS' "$RESULTS" || true) expectations held, $failed failed, $(grep -c '^SKIP' "$RESULTS" || true) skipped"
((failed == 0))
