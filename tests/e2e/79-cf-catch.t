# cfprof record and C++ catch: the time a handler's function spends after
# a catch is its own, not the thrower's, with clang too (whose unwinding
# runs no exit hooks: __cxa_begin_catch pops the dead frames).
. "$(dirname "$0")/../lib.sh"
plan 4
CFPROF=$B/bin/cfprof
cd "$T" || exit 1
. "$TOP/tests/cf.sh"

for cxx in g++ clang++; do
	if ! command -v $cxx > /dev/null 2>&1 || ! CXX=$cxx cf_build catch_$cxx cf_catch.cc 2> /dev/null; then
		absent 2 "$cxx cannot build cf_catch.cc (scripts/install-deps.sh installs g++ and clang)"
		continue
	fi
	record c_$cxx ./catch_$cxx
	s=$(share "$("$CFPROF" -p ./catch_$cxx c_$cxx.data)" catcher)
	ok $(awk -v s="${s:-0}" 'BEGIN { exit !(s >= 0.8) }'; echo $?) "catch ($cxx): catcher's time is its own (${s:-none})"
done
done_testing
