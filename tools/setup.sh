#!/bin/sh
# tools/setup.sh -- everything infer needs, on a Debian or Ubuntu machine, in one command.
#
#   sh tools/setup.sh          install what is missing, build, and write a story with the
#                              built-in model (data/tales.gguf)
#   sh tools/setup.sh --deps   only install what is missing (make run and make test do this)
#
# Needed: a C compiler, make and stb_ds.h (Debian's libstb-dev). Wanted: pkg-config and GNU
# libmicrohttpd (libmicrohttpd-dev), for --server; without them ./infer builds without the
# server. What is missing is installed with apt-get when this user may (root, or sudo that
# asks no password); otherwise the script prints the command to run and, if something needed
# is missing, fails.
set -u
cd "$(dirname "$0")/.." || exit 1

missing=""
command -v cc >/dev/null 2>&1 || missing="$missing build-essential"
command -v make >/dev/null 2>&1 || case "$missing" in *build-essential*) ;; *) missing="$missing make" ;; esac
have_stb() {
    printf '#include <stb_ds.h>\n' | cc -I/usr/include/stb -E -x c - >/dev/null 2>&1
}
command -v cc >/dev/null 2>&1 && have_stb || missing="$missing libstb-dev"
command -v pkg-config >/dev/null 2>&1 || missing="$missing pkg-config"
pkg-config --exists libmicrohttpd 2>/dev/null || missing="$missing libmicrohttpd-dev"

if [ -n "$missing" ]; then
    if [ "$(id -u)" = 0 ]; then sudo=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo"
    else sudo="none"
    fi
    if [ "$sudo" = none ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: missing:$missing"
        echo "setup: install them (as root: apt-get update && apt-get install -y$missing), then run this again"
        case "$missing" in *build-essential*|*make*|*libstb-dev*) exit 1 ;; esac
    else
        echo "setup: installing$missing"
        export DEBIAN_FRONTEND=noninteractive
        $sudo apt-get update -qq && $sudo apt-get install -y -qq $missing >/dev/null || { echo "setup: apt-get install$missing failed"; exit 1; }
    fi
fi
[ "${1:-}" = "--deps" ] && exit 0

make infer tools/convert || exit 1
./infer -p "Once upon a time"
