# A plugin dlclose'd and loaded again (runtime/mprof/unload.c,
# runtime/common/modules.c): the objects it allocated keep its function's
# name, whether it comes back at its old place or, pushed by a mapping in
# between (squeeze), elsewhere: the monitor holds the old place, since a
# profile cannot list two objects over one address and a reload half over
# it left its frames unnamed.
. "$(dirname "$0")/../lib.sh"
plan 6
cc -O2 -g -shared -fPIC -o "$T/librtplug.so" "$TOP/tests/progs/rt_plug.c" || exit 1
cc_prog "$T/reload" rt_reload.c -ldl || exit 1
cd "$T" || exit 1
for mode in plain squeeze; do
	out=$("$MPROF" run -o $mode.data "$T/reload" "$T/librtplug.so" $mode)
	is "$?/$out" "0/ok" "$mode: the program runs as it would"
	folded=$("$MPROF" export --format folded --counter inuse_space "$T/reload" $mode.data)
	is "$(printf '%s\n' "$folded" | awk '/plug_alloc/ { s += $NF } END { print s + 0 }')" 2001 \
		"$mode: both loads' objects (1000 + 1001 bytes) are charged to plug_alloc"
	unlike "$folded" "librtplug.so\\+0x" "$mode: no frame of the plugin left as an offset"
done
done_testing
