#!/usr/bin/env bash
# tools/server_bench.sh -- aggregate generated tokens/s of `infer --server` with 1, 4 and 16
# concurrent streaming clients (not a test: a measurement).
#
#   tools/server_bench.sh [MODEL.gguf] [TOKENS] [CLIENTS...]
#
# MODEL defaults to bench-cache/llama-1b-q4_0.gguf (synthesized by tools/convert when it is
# missing, as `make bench` does), TOKENS (per client, default 64) to max_tokens, CLIENTS to
# "1 4 16". The server runs with -np as large as the most clients and all cores; each client
# streams a completion of its own prompt with curl (stream_options.include_usage, so the
# last event counts its tokens); a round's figure is all clients' completion tokens over the
# round's wall time, prompts included (short ones). A warm-up request runs first.
set -euo pipefail
cd "$(dirname "$0")/.."
model=${1:-bench-cache/llama-1b-q4_0.gguf}
tokens=${2:-64}
shift $(( $# > 2 ? 2 : $# ))
clients=("$@")
[ ${#clients[@]} -gt 0 ] || clients=(1 4 16)
most=1
for c in "${clients[@]}"; do [ "$c" -gt "$most" ] && most=$c; done
command -v curl >/dev/null || { echo "server_bench: needs curl" >&2; exit 1; }
make -s infer tools/convert
if [ ! -f "$model" ]; then
    mkdir -p "$(dirname "$model")"
    ./tools/convert synth llama llama-1b "$model" --type q4_0
fi
tmp=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
./infer --server -m "$model" --port 0 -np "$most" -c $(( most * (tokens + 64) )) 2>"$tmp/server.log" &
pid=$!
port=
for _ in $(seq 200); do
    port=$(sed -n 's/.*listening on port \([0-9]*\).*/\1/p' "$tmp/server.log")
    [ -n "$port" ] && break
    kill -0 "$pid" 2>/dev/null || { cat "$tmp/server.log" >&2; exit 1; }
    sleep 0.1
done
[ -n "$port" ] || { echo "server_bench: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
url="http://127.0.0.1:$port/v1/completions"
request() {   # client number -> the SSE stream in $tmp/out.N
    curl -sN "$url" -H 'Content-Type: application/json' \
        -d "{\"prompt\":\"Client $1 asks for a story about the number $1.\",\"max_tokens\":$tokens,\"temperature\":0,\"stream\":true,\"stream_options\":{\"include_usage\":true}}" \
        > "$tmp/out.$1"
}
request 0
echo "model $model, $tokens tokens per client, -np $most, $(nproc) cores"
printf '%8s %10s %12s %14s\n' clients tokens seconds 'tok/s (all)'
base=
for c in "${clients[@]}"; do
    t0=$(date +%s.%N)
    pids=()
    for i in $(seq "$c"); do request "$i" & pids+=($!); done
    wait "${pids[@]}"
    t1=$(date +%s.%N)
    n=0
    for i in $(seq "$c"); do
        k=$(grep -o '"completion_tokens":[0-9]*' "$tmp/out.$i" | tail -1 | cut -d: -f2)
        n=$(( n + ${k:-0} ))
    done
    rate=$(awk -v n="$n" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", n / (b - a) }')
    [ -n "$base" ] || base=$rate
    printf '%8s %10s %12.3f %14s   (%.2fx one client)\n' "$c" "$n" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$rate" "$(awk -v r="$rate" -v b="$base" 'BEGIN { print r / b }')"
done
