#!/bin/sh
# demo.sh BUILD - `make demo`: build the paper's producer/consumer example,
# run it under the monitor, print the four tables.
set -eu
B=$1
mkdir -p "$B/demo"
cc -g -O0 -o "$B/demo/widgets" examples/widgets.c
echo "\$ mprof run -o $B/demo/mprof.data $B/demo/widgets"
"$B/bin/mprof" run -o "$B/demo/mprof.data" "$B/demo/widgets"
echo "\$ mprof $B/demo/widgets $B/demo/mprof.data"
"$B/bin/mprof" "$B/demo/widgets" "$B/demo/mprof.data"
