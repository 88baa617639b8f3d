# infer -- build, test, benchmark.
#   make            ./infer, ./tests, ./tools/convert
#   make test       build and run the tests (fast; skips what needs ../shared when it is absent)
#   make test-asan  the tests under AddressSanitizer + UBSan
#   make bench      speed table (not part of the tests)
CC      ?= cc
STB_CFLAGS := $(shell pkg-config --cflags stb 2>/dev/null)
# -ffp-contract=off: the bit-exact quant tests need plain multiply-then-add rounding.
CFLAGS  ?= -O2 -march=native
CFLAGS  += -std=c11 -D_GNU_SOURCE -Wall -Wextra -ffp-contract=off -I. $(STB_CFLAGS)
LDLIBS  := -lm -lpthread

HDR := infer.h $(wildcard wip/*.h wip/*.inc)

all: infer tests tools/convert

infer: main.c $(HDR)
	$(CC) $(CFLAGS) -o $@ main.c $(LDLIBS)

tests: tests.c $(HDR)
	$(CC) $(CFLAGS) -o $@ tests.c $(LDLIBS)

tools/convert: tools/convert.c $(HDR)
	$(CC) $(CFLAGS) -o $@ tools/convert.c $(LDLIBS)

test: tests infer tools/convert
	./tests

test-asan: $(HDR) tests.c
	$(CC) $(CFLAGS) -O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -o tests-asan tests.c $(LDLIBS)
	./tests-asan

clean:
	rm -f infer tests tests-asan tools/convert

.PHONY: all test test-asan clean bench
