#!/bin/bash
# tools/gpu_bench.sh OUT [quick|ncu] -- one pass of the GPU measurements on a machine with a GPU,
# with binaries built elsewhere (./infer-cuda, ./tests-cuda, ./tools/convert in the current
# directory; ../shared for the tests' data, when there). Writes OUT/run.log (a line a result)
# and OUT/tests.log. About 100 s on an H100 (quick: the tests and the four models only; ncu:
# only Nsight Compute's decode kernel tables, F16 one token and llama-1b-Q4_0 batches of 16
# and 64 with and without k_mmv, into OUT/ncu.txt).
#
#   1. ./tests-cuda cuda_ gpu_ (the summary line and any FAIL/SKIP lines into run.log)
#   2. tools/convert synth of the reference's shapes: llama-1b Q4_0 / Q8_0 / F16, qwen35-0.8b Q8_0
#   3. --bench pp512 / tg128 of each, twice (the default build), then the switches a build
#      keeps for timing its paths against each other (each on the model it matters for):
#        INFER_CUDA_MVQ_U=1        the one-row matvec one slice at a time (tg)
#        INFER_CUDA_NORM_MV=0      the norm before a float matvec as its own launch (F16 tg)
#        INFER_CUDA_MMV_MIN=1      one-row decode on the tensor-core matvec (Q4_0, Q8_0 tg)
#        INFER_CUDA_QKV_STORE=0    rope and the cache stores in their own launch (Q4_0, F16 tg)
#        INFER_CUDA_PDL=0          no programmatic dependent launch (tg)
#        INFER_CUDA_DN=chunks      DeltaNet prompts in chunks, INFER_CUDA_DNC_COLS=16/8/4 (pp)
#        INFER_CUDA_QGEMM=tiles    quantized prompts on the int8 tiles (pp)
#        INFER_CUDA_BF16_CACHE=auto quantized weights kept as BF16 for the GEMM (pp, batches)
#   4. --bench-batch 1,8,16,32,64 (llama-1b-Q4_0), again with the BF16 copies, 9-64 with
#      INFER_CUDA_MMV=64 (the tensor-core matvec; 16 rows with Q8_0 too), and tg128 at depth
#      4096 against depth 0
#   5. ./infer-cuda --diff -m M on the golden models ../shared holds (its exit code a line)
set -u
R=${1:?usage: tools/gpu_bench.sh OUT [quick]}; Q=${2:-}
mkdir -p "$R"; K=$(mktemp -d); M=${GPU_BENCH_MODELS:-/tmp/gpu-bench-models}; mkdir -p "$M"; T0=$(date +%s)
el() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$R/run.log"; }
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
el "GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
synth() {
    for m in "$@"; do
        [ -f "$M/$m.gguf" ] || ( ./tools/convert synth "${m%%-*}" "${m%-*}" "$M/$m.gguf" --type "${m##*-}" > "$K/synth-$m.log" 2>&1; el "synth $m rc $?" ) &
    done
}
b() {      # b MODEL TAG ARGS...: one --bench line into run.log
    local m=$1 tag=$2; shift 2
    timeout 60 ./infer-cuda --gpu -m "$M/$m.gguf" --bench "$@" 2>>"$K/bench.err" | grep '^bench' | sed "s/^/$m $tag /" >> "$R/run.log"
}
if [ "$Q" = ncu ]; then      # decode-only kernel tables (Nsight Compute at real clocks) into OUT/ncu.txt, ~120 s
    synth llama-1b-Q4_0 llama-1b-F16; wait
    TAB=$(ls .kit/ncu_table.py ../shared/gpu-kit/ncu_table.py 2>/dev/null | head -1)
    N="$(command -v ncu || echo /usr/local/cuda/bin/ncu) --clock-control none --cache-control none --metrics gpu__time_duration.sum --print-summary per-kernel --csv"
    tab() { if [ -n "$TAB" ]; then python3 "$TAB" "$1" 16 "$2" >> "$R/ncu.txt" 2>&1; else cp "$1" "$R/"; fi; el "ncu: $2"; }
    timeout 60 $N ./infer-cuda --gpu -m "$M/llama-1b-F16.gguf" --prompt-ids 1000,1001,1002,1003 -n 17 --temp 0 > "$K/f16.csv" 2>&1
    tab "$K/f16.csv" "F16 decode, per token"
    for v in "16 0" "16 16" "64 64"; do set -- $v
        INFER_CUDA_MMV=$2 timeout 60 $N ./infer-cuda --gpu -m "$M/llama-1b-Q4_0.gguf" --bench --bench-reps 1 --bench-pp 1 --bench-tg 8 --bench-batch $1 > "$K/b$1-$2.csv" 2>&1
        tab "$K/b$1-$2.csv" "batch $1, INFER_CUDA_MMV=$2: (1-token prompt + 8 decode steps) x 2 runs, per step /16 (llama-1b-Q4_0)"
    done
    el "done (ncu)"; rm -rf "$K"; exit 0
fi
synth llama-1b-Q4_0 llama-1b-Q8_0 qwen35-0.8b-Q8_0 llama-1b-F16
timeout 150 ./tests-cuda cuda_ gpu_ > "$R/tests.log" 2>&1; el "tests rc $?: $(tail -1 "$R/tests.log")"
grep -E 'FAIL|SKIP|tests.c:' "$R/tests.log" | head -40 >> "$R/run.log"
wait; el "models"
P="--bench-pp 512 --bench-tg 128 -c 704"
for i in 1 2; do for m in llama-1b-Q4_0 llama-1b-Q8_0 llama-1b-F16 qwen35-0.8b-Q8_0; do b $m default $P; done; done
[ "$Q" = quick ] && { el "done (quick)"; rm -rf "$K"; exit 0; }
T="--bench-pp 16 --bench-tg 128 -c 704"
for m in llama-1b-Q4_0 llama-1b-Q8_0 llama-1b-F16 qwen35-0.8b-Q8_0; do INFER_CUDA_MVQ_U=1 b $m mvq_u=1 $T; b $m default $T; done
INFER_CUDA_NORM_MV=0 b llama-1b-F16 norm_mv=0 $T; b llama-1b-F16 default $T
for m in llama-1b-Q4_0 llama-1b-F16; do INFER_CUDA_QKV_STORE=0 b $m qkv_store=0 $T; b $m default $T; done
for m in llama-1b-Q4_0 llama-1b-Q8_0; do INFER_CUDA_MMV=16 INFER_CUDA_MMV_MIN=1 b $m mmv_min=1 $T; b $m default $T; done
INFER_CUDA_PDL=0 b llama-1b-Q4_0 pdl=0 $T
for co in 16 8 4; do INFER_CUDA_DN=chunks INFER_CUDA_DNC_COLS=$co b qwen35-0.8b-Q8_0 "dn=chunks/$co" --bench-pp 512 --bench-tg 0 -c 704; done
b qwen35-0.8b-Q8_0 dn=recurrence --bench-pp 512 --bench-tg 0 -c 704
INFER_CUDA_QGEMM=tiles b llama-1b-Q8_0 qgemm=tiles --bench-pp 512 --bench-tg 0 -c 704
for m in llama-1b-Q4_0 llama-1b-Q8_0; do INFER_CUDA_BF16_CACHE=auto b $m bf16_cache --bench-pp 512 --bench-tg 0 -c 704; done
el "switches"
timeout 90 ./infer-cuda --gpu -m "$M/llama-1b-Q4_0.gguf" --bench --bench-batch 1,8,16,32,64 2>>"$K/bench.err" | grep '^bench' | sed 's/^/batch /' >> "$R/run.log"
INFER_CUDA_BF16_CACHE=auto timeout 90 ./infer-cuda --gpu -m "$M/llama-1b-Q4_0.gguf" --bench --bench-batch 16,32,64 2>>"$K/bench.err" | grep '^bench' | sed 's/^/batch bf16_cache /' >> "$R/run.log"
INFER_CUDA_MMV=64 timeout 90 ./infer-cuda --gpu -m "$M/llama-1b-Q4_0.gguf" --bench --bench-batch 9,16,32,64 2>>"$K/bench.err" | grep '^bench' | sed 's/^/batch mmv /' >> "$R/run.log"
INFER_CUDA_MMV=1 timeout 60 ./infer-cuda --gpu -m "$M/llama-1b-Q8_0.gguf" --bench --bench-batch 1,16 2>>"$K/bench.err" | grep '^bench' | sed 's/^/batch mmv Q8_0 /' >> "$R/run.log"
timeout 60 ./infer-cuda --gpu -m "$M/llama-1b-Q8_0.gguf" --bench --bench-batch 16 2>>"$K/bench.err" | grep '^bench' | sed 's/^/batch Q8_0 /' >> "$R/run.log"
b llama-1b-Q4_0 depth4096 --bench-pp 16 --bench-tg 128 --bench-depth 4096 -c 4352
b llama-1b-Q4_0 depth0 --bench-pp 16 --bench-tg 128 -c 4352
el "bench done"
for f in ../shared/golden/*/model-*.gguf; do
    [ -f "$f" ] || continue
    timeout 120 ./infer-cuda --diff -m "$f" > "$K/diff.log" 2>&1; rc=$?
    echo "diff $f rc $rc $(grep -c '^ *FAIL' "$K/diff.log") FAIL lines" >> "$R/run.log"
    [ $rc -ne 0 ] && grep -m 5 'FAIL' "$K/diff.log" >> "$R/run.log"
done
el "done"
cp "$K/bench.err" "$R/bench.err" 2>/dev/null
rm -rf "$K"
