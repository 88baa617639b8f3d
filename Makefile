# infer -- build, test, benchmark.
#   make            ./infer, ./tests, ./tools/convert, ./tools/train
#   make run        install what is missing (tools/setup.sh), build, write a story with the
#                   built-in model (data/tales.gguf)
#   make test       install what is missing, build and run the tests (fast; skips what needs
#                   ../shared when it is absent)
#   make tales      data/tales.gguf trained again from nothing (tools/train, ~10-20 minutes)
#   make test-asan  the tests under AddressSanitizer + UBSan
#   make fuzz       the fuzzer (tools/fuzz.c) over every input format, FUZZ_SECONDS in all
#   make bench      speed table (not part of the tests)
#   make tales      data/tales.gguf trained again from nothing (tools/train; not part of the tests)
#   make toc        infer.h's table of contents rewritten to match its sections
#   make cuda       ./infer-cuda and ./tests-cuda: the same programs with the CUDA backend
#                   (infer_cuda.cu, built by nvcc); the targets above never need nvcc
#   make cuda-emu   ./tests-cuda-emu, ./infer-cuda-emu: the CUDA kernels emulated on the CPU
CC      ?= cc
STB_CFLAGS := $(shell pkg-config --cflags stb 2>/dev/null)
# -ffp-contract=off: the bit-exact quant tests need plain multiply-then-add rounding.
CFLAGS  ?= -O2 -march=native
override CFLAGS += -std=c11 -D_GNU_SOURCE -Wall -Wextra -ffp-contract=off -I. $(STB_CFLAGS)
LDLIBS  := -lm -lpthread

HDR := infer.h

all: infer tests tools/convert tools/train

# --server (tools/server.c) needs GNU libmicrohttpd; without it ./infer is built without the
# server and says so when asked for one
MHD_OK     := $(shell pkg-config --exists libmicrohttpd 2>/dev/null && echo 1)
ifeq ($(MHD_OK),1)
SERVER_CFLAGS := -DINFER_SERVER $(shell pkg-config --cflags libmicrohttpd)
SERVER_LIBS   := $(shell pkg-config --libs libmicrohttpd)
else
$(info note: libmicrohttpd not found (apt-get install libmicrohttpd-dev): ./infer is built without --server)
endif

infer: main.c tools/server.c tools/server_req.c tools/bench.c $(HDR)
	$(CC) $(CFLAGS) $(SERVER_CFLAGS) -o $@ main.c $(LDLIBS) $(SERVER_LIBS)

tests: tests.c tools/fuzz.c tools/server_req.c tools/train.c $(HDR)
	$(CC) $(CFLAGS) -o $@ tests.c $(LDLIBS)

tools/convert: tools/convert.c $(HDR)
	$(CC) $(CFLAGS) -o $@ tools/convert.c $(LDLIBS)

# tools/train: the trainer of the default model (tests.c includes its source)
tools/train: tools/train.c $(HDR)
	$(CC) $(CFLAGS) -o $@ tools/train.c $(LDLIBS)

# data/tales.gguf made again from nothing: stories, vocabulary, training, file (about 20
# minutes on 2 cores; never part of `make test`). data/README.md records the run.
TALES_FLAGS ?= --seed 1
tales: tools/train
	./tools/train tales data/tales.gguf $(TALES_FLAGS)

# what the build needs, installed when missing and this user may (tools/setup.sh --deps); the
# builds then run in a new make, which sees what was just installed
deps:
	@sh tools/setup.sh --deps

run:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory infer
	./infer -p "Once upon a time"

test:
	@$(MAKE) --no-print-directory deps
	@$(MAKE) --no-print-directory tests infer tools/convert check-cxx check-c11 check-min
	./tests

# infer.h's table of contents made true to the file (section lengths, new sections)
toc: tests
	./tests --write-toc

# the public part of infer.h must compile as C++ (infer_cuda.cu includes it under nvcc)
CXX ?= c++
check-cxx: infer.h
	@printf '#include "infer.h"\nint main(void) { return infer_status_str(INFER_OK) == 0; }\n' | $(CXX) -std=c++11 -Wall -Wextra -pedantic -I. $(STB_CFLAGS) -x c++ -fsyntax-only - && echo "infer.h public part compiles as C++"

# the implementation compiles in strict C11 (no _GNU_SOURCE from the including file), whether
# infer.h comes before or after the file's own system headers
check-c11: infer.h
	@printf '#define INFER_IMPLEMENTATION\n#include "infer.h"\nint main(void) { return infer_time_seconds() < 0; }\n' | $(CC) -std=c11 -Wall -Wextra -Werror -O2 -march=native -I. $(STB_CFLAGS) -x c -fsyntax-only - && \
	printf '#include <stdio.h>\n#include <time.h>\n#define INFER_IMPLEMENTATION\n#include "infer.h"\nint main(void) { return infer_time_seconds() < 0; }\n' | $(CC) -std=c11 -Wall -Wextra -Werror -O2 -march=native -I. $(STB_CFLAGS) -x c -fsyntax-only - && \
	echo "infer.h's implementation compiles as strict C11"

# the engine without its optional appendices (chat templates, Hugging Face import) builds and
# runs a GGUF model, and a call that needs an appendix fails with a message naming it
check-min: infer.h main.c tools/bench.c tools/convert
	@$(CC) -std=c11 -D_GNU_SOURCE -O0 -Wall -Wextra -Werror -DINFER_NO_JINJA -DINFER_NO_HF -I. $(STB_CFLAGS) -o infer-min main.c $(LDLIBS) && \
	d=$$(mktemp -d) && ./tools/convert synth llama tiny $$d/m.gguf > /dev/null 2>&1 && \
	./infer-min -m $$d/m.gguf -p "hi" -n 3 --temp 0 > $$d/out 2>&1 && \
	{ echo hi | ./infer-min -m $$d/m.gguf --chat -n 3 > $$d/chat 2>&1; grep -q INFER_NO_JINJA $$d/chat; } && \
	{ ./infer-min -m $$d 2> $$d/hf; grep -q INFER_NO_HF $$d/hf; } && \
	rm -rf $$d && echo "infer.h builds and runs a GGUF model with -DINFER_NO_JINJA -DINFER_NO_HF"

# the tests and the command line under AddressSanitizer + UBSan (+ LeakSanitizer; a UBSan
# report stops the run); the tests run ./infer-asan where they check the command line's
# error paths for leaks
ASAN_FLAGS := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
test-asan: $(HDR) tests.c tools/fuzz.c main.c tools/server.c tools/server_req.c tools/bench.c infer tools/convert
	$(CC) $(CFLAGS) $(ASAN_FLAGS) -o tests-asan tests.c $(LDLIBS)
	$(CC) $(CFLAGS) $(ASAN_FLAGS) $(SERVER_CFLAGS) -o infer-asan main.c $(LDLIBS) $(SERVER_LIBS)
	./tests-asan

# Fuzzing (tools/fuzz.c; its header lists the targets): tools/fuzz under ASan + UBSan, with
# clang's libFuzzer where clang has it, else with the built-in mutator ($(CC)). make fuzz
# replays data/fuzz (the seeds, and every input that ever failed: a failure belongs there once
# it is fixed), then fuzzes each target for FUZZ_SECONDS / (the number of targets) s; new inputs, logs and failing
# inputs go to fuzz-out/ (git-ignored). make fuzz-seeds writes the seeds again.
FUZZ_SECONDS ?= 100
FUZZ_TARGETS := gguf safetensors hf tokenizer text server
FUZZ_FLAGS   := -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
tools/fuzz: tools/fuzz.c tools/server_req.c $(HDR)
	@if printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }\n' | clang -fsanitize=fuzzer -x c - -o /dev/null 2>/dev/null; then \
	  echo "tools/fuzz: clang's libFuzzer"; clang $(CFLAGS) $(FUZZ_FLAGS) -fsanitize=fuzzer -DFUZZ_LIBFUZZER -o $@ tools/fuzz.c $(LDLIBS); \
	else \
	  echo "tools/fuzz: the built-in mutator (no clang with libFuzzer here)"; $(CC) $(CFLAGS) $(FUZZ_FLAGS) -o $@ tools/fuzz.c $(LDLIBS); \
	fi
fuzz: tools/fuzz
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz-out/$$t; \
	  FUZZ_TARGET=$$t ./tools/fuzz -max_total_time=$$(( $(FUZZ_SECONDS) / $(words $(FUZZ_TARGETS)) )) -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
	    -artifact_prefix=fuzz-out/$$t- fuzz-out/$$t data/fuzz/$$t > fuzz-out/$$t.log 2>&1 || \
	    { tail -60 fuzz-out/$$t.log; echo "fuzz $$t: FAILED (the input is in fuzz-out/)"; exit 1; }; \
	  echo "fuzz $$t: no failure: $$(ls data/fuzz/$$t | wc -l) corpus inputs replayed; $$(grep -E 'Done [0-9]+ runs|mutated inputs' fuzz-out/$$t.log | tail -1 | sed 's/^fuzz [a-z]*: //')"; \
	done
fuzz-seeds: tools/fuzz.c tools/server_req.c $(HDR)
	$(CC) $(CFLAGS) -o tools/fuzz-seeds tools/fuzz.c $(LDLIBS)
	./tools/fuzz-seeds seeds data/fuzz

# Speed table. Models are synthesized once into bench-cache/ (git-ignored). Each entry of
# BENCH_MODELS is ARCH:PRESET:TYPE (see tools/convert synth).
BENCH_DIR   ?= bench-cache
BENCH_TYPES ?= q4_0 q8_0 f16 q4_K_M
BENCH_MODELS ?= $(foreach t,$(BENCH_TYPES),llama:llama-1b:$(t)) bitnet:bitnet-2b:tq2_0 qwen35:qwen35-0.8b:q8_0 \
                qwen35moe:qwen35moe-small:q8_0 deepseek4:deepseek4-small:q8_0
BENCH_THREADS ?= $(shell nproc)
bench: infer tools/convert
	@mkdir -p $(BENCH_DIR)
	@for m in $(BENCH_MODELS); do \
	  a=$${m%%:*}; r=$${m#*:}; p=$${r%%:*}; t=$${r#*:}; f=$(BENCH_DIR)/$$p-$$t.gguf; \
	  [ -f $$f ] || ./tools/convert synth $$a $$p $$f --type $$t || exit 1; \
	done
	@mb=$$(./infer --membw -t $(BENCH_THREADS)); bw=$$(echo "$$mb" | sed -n 's/membw_gbs=\([0-9.]*\).*/\1/p'); \
	printf '\nmemory read bandwidth (measured, %s threads): %s GB/s  (%s)\n\n' $(BENCH_THREADS) $$bw "$$(echo "$$mb" | cut -d' ' -f3-)"; \
	printf '%-12s %-6s %7s %10s %10s %10s %8s %8s\n' model type threads pp128_t/s tg64_t/s decode_GB/s roofline rss_MB; \
	for m in $(BENCH_MODELS); do \
	  r=$${m#*:}; p=$${r%%:*}; t=$${r#*:}; f=$(BENCH_DIR)/$$p-$$t.gguf; \
	  out=$$(./infer -m $$f --bench -t $(BENCH_THREADS) -c 256 2>/dev/null); \
	  echo "$$out" | awk -v p=$$p -v t=$$t -v th=$(BENCH_THREADS) -v bw=$$bw ' \
	    { for (i = 1; i <= NF; i++) if (split($$i, kv, "=") == 2) v[kv[1]] = kv[2] } \
	    END { gbs = v["decode_mb"] / 1e3 * v["tg_tok_s"]; \
	      printf "%-12s %-6s %7s %10.2f %10.2f %10.2f %7.0f%% %8s\n", p, t, th, v["pp_tok_s"], v["tg_tok_s"], gbs, 100 * gbs / bw, v["rss_mb"] }'; \
	done
	@f=$(BENCH_DIR)/qwen35-0.8b-q8_0.gguf; if [ -f $$f ]; then \
	  printf '\nqwen35-0.8b decode at context 128 vs 2048 (DeltaNet state is O(1); only the 6 attention layers grow):\n'; \
	  for pp in 128 2048; do ./infer -m $$f --bench --bench-depth $$pp --bench-pp 16 --bench-tg 32 --bench-reps 1 -t $(BENCH_THREADS) -c 2200 2>/dev/null | \
	    awk -v pp=$$pp '/^bench/ { split($$5, kv, "="); printf "  context %5d: tg %s tok/s\n", pp, kv[2] }'; done; fi
	@f=$(BENCH_DIR)/llama-1b-q4_0.gguf; if [ -f $$f ]; then \
	  printf '\nllama-1b q4_0, B sequences at once (tok/s summed over the B sequences):\n'; \
	  ./infer -m $$f --bench --bench-batch 1,4,16 --bench-reps 2 -t $(BENCH_THREADS) 2>/dev/null | \
	    awk '/^bench/ { for (i = 1; i <= NF; i++) if (split($$i, kv, "=") == 2) v[kv[1]] = kv[2]; \
	      printf "  batch %3s: pp %8.2f tok/s   tg %8.2f tok/s\n", v["batch"], v["pp_tok_s"], v["tg_tok_s"] }'; fi
	@f=$(BENCH_DIR)/llama-1b-q4_0.gguf; n=$$(nproc); if [ -f $$f ]; then \
	  printf '\nmore threads than cores: llama-1b q4_0 decode on %s cores (a waiting thread yields, then sleeps):\n' $$n; \
	  a=$$(./infer -m $$f --bench --bench-pp 16 --bench-tg 32 --bench-reps 2 -t $$n -c 64 2>/dev/null | sed -n 's/.*tg_tok_s=\([0-9.]*\).*/\1/p'); \
	  b=$$(./infer -m $$f --bench --bench-pp 16 --bench-tg 32 --bench-reps 2 -t $$((2 * n)) -c 64 2>/dev/null | sed -n 's/.*tg_tok_s=\([0-9.]*\).*/\1/p'); \
	  awk -v n=$$n -v a=$$a -v b=$$b 'BEGIN { printf "  -t %d: tg %.2f tok/s   -t %d: tg %.2f tok/s   (%.2fx slower)\n", n, a, 2 * n, b, a / b }'; fi

# The CUDA build. main.c and tests.c are compiled by $(CC) with -DINFER_CUDA (which makes
# infer_gpu_kernels call into infer_cuda.cu), infer_cuda.cu by nvcc: SASS for Hopper (sm_90)
# plus compute_80 PTX, which the driver compiles for any newer GPU (Ampere and later).
# Objects go to build-cuda/, the programs to ./infer-cuda and ./tests-cuda, so the plain
# ./infer and ./tests (and `make test`) are untouched by it.
NVCC      ?= $(shell command -v nvcc 2>/dev/null || echo /usr/local/cuda/bin/nvcc)
CUDA_ARCH ?= -gencode arch=compute_90,code=sm_90 -gencode arch=compute_80,code=compute_80
NVCCFLAGS ?= -O3
override NVCCFLAGS += -std=c++17 $(CUDA_ARCH) -Xcompiler -Wall,-Wextra -I.
CUDA_DIR  := build-cuda
# cuBLAS, where nvcc's toolkit has it (CUBLAS=0 leaves it out): the fast mode's F16/BF16/F32
# matmuls of more than 8 rows run on it (infer_cuda_gemm_half, _f32); without it, on the tiles.
CUDA_HOME   := $(patsubst %/bin/,%,$(dir $(realpath $(NVCC))))
CUBLAS_LIB  := $(firstword $(wildcard $(CUDA_HOME)/lib64/libcublas.so $(CUDA_HOME)/lib/libcublas.so $(CUDA_HOME)/targets/*/lib/libcublas.so))
CUBLAS      ?= $(if $(and $(CUBLAS_LIB),$(wildcard $(CUDA_HOME)/include/cublas_v2.h $(CUDA_HOME)/targets/*/include/cublas_v2.h)),1,0)
ifeq ($(CUBLAS),1)
override NVCCFLAGS += -DINFER_CUDA_CUBLAS
CUDA_LIBS := -lcublas $(if $(CUBLAS_LIB),-Xlinker -rpath=$(dir $(CUBLAS_LIB)))
endif

cuda: infer-cuda tests-cuda

# `make CUDA=1` builds the CUDA variants along with the plain programs
ifeq ($(CUDA),1)
all: cuda
endif

# The flags each kind of object was built with, one file each, rewritten only when they
# change: an object depends on its file, so a build with other flags (a binary for another
# machine, -march=x86-64-v3, after the emulator's -march=native objects) rebuilds it rather
# than linking what was made for another machine.
$(CUDA_DIR)/flags-c $(CUDA_DIR)/flags-nvcc: FORCE
	@mkdir -p $(CUDA_DIR)
	@f='$(if $(findstring nvcc,$(notdir $@)),$(NVCC) $(NVCCFLAGS),$(CC) $(CFLAGS) $(SERVER_CFLAGS))'; \
	  [ -f $@ ] && [ "$$(cat $@)" = "$$f" ] || echo "$$f" > $@
FORCE:

$(CUDA_DIR)/infer_cuda.o: infer_cuda.cu $(HDR) $(CUDA_DIR)/flags-nvcc
	@mkdir -p $(CUDA_DIR)
	$(NVCC) $(NVCCFLAGS) -c -o $@ infer_cuda.cu

$(CUDA_DIR)/%.o: %.c $(HDR) $(CUDA_DIR)/flags-c
	@mkdir -p $(CUDA_DIR)
	$(CC) $(CFLAGS) -DINFER_CUDA -c -o $@ $<

# ./infer-cuda has --server too when libmicrohttpd is there
$(CUDA_DIR)/main.o: main.c tools/server.c tools/server_req.c tools/bench.c $(HDR) $(CUDA_DIR)/flags-c
	@mkdir -p $(CUDA_DIR)
	$(CC) $(CFLAGS) -DINFER_CUDA $(SERVER_CFLAGS) -c -o $@ main.c

infer-cuda: $(CUDA_DIR)/main.o $(CUDA_DIR)/infer_cuda.o
	$(NVCC) -o $@ $^ $(LDLIBS) $(SERVER_LIBS) $(CUDA_LIBS)

tests-cuda: $(CUDA_DIR)/tests.o $(CUDA_DIR)/infer_cuda.o
	$(NVCC) -o $@ $^ $(LDLIBS) $(CUDA_LIBS)

# ./tests-cuda-emu, ./infer-cuda-emu: the CUDA backend with its kernels run on the CPU by
# tools/cuda_emu.h (no nvcc, no GPU): `./tests-cuda-emu gpu_` checks the kernels' logic with
# the same diff harness a GPU gets. Slow (every CUDA thread is a fiber); a test tool only.
$(CUDA_DIR)/infer_cuda_emu.o: infer_cuda.cu tools/cuda_emu.h $(HDR)
	@mkdir -p $(CUDA_DIR)
	$(CXX) -O2 -std=c++17 -Wall -Wextra -DINFER_CUDA_EMU -x c++ -I. -c -o $@ infer_cuda.cu

tests-cuda-emu: $(CUDA_DIR)/tests.o $(CUDA_DIR)/infer_cuda_emu.o
	$(CXX) -o $@ $^ $(LDLIBS)

infer-cuda-emu: $(CUDA_DIR)/main.o $(CUDA_DIR)/infer_cuda_emu.o
	$(CXX) -o $@ $^ $(LDLIBS) $(SERVER_LIBS)

cuda-emu: tests-cuda-emu infer-cuda-emu

clean:
	rm -f infer tests tests-asan infer-asan tools/convert tools/train tools/fuzz tools/fuzz-seeds infer-cuda tests-cuda tests-cuda-emu infer-cuda-emu
	rm -rf fuzz-out
	rm -rf $(CUDA_DIR)

.PHONY: all deps run test test-asan clean bench tales check-cxx check-c11 cuda cuda-emu fuzz fuzz-seeds toc FORCE
