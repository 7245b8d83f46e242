# Each round, reader() reads a file (cached: the kernel's copy is CPU
# time) into a buffer in one call, then work() computes.  Prints "done";
# on stderr reader's share of the two's CPU time, by time.process_time
# (user and system time), the truth a profile of CPU time is held to.
# Usage: cp_pyread.py FILE ROUNDS WORK
import os
import sys
import time


def reader(f, buf):
    f.seek(0)
    return f.readinto(buf)


def work(k):
    s = 0
    for i in range(k):
        s += i * i % 7
    return s


def main():
    path, rounds, k = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    f = open(path, "rb", buffering=0)
    buf = bytearray(os.fstat(f.fileno()).st_size)
    tr = tw = 0.0
    for _ in range(rounds):
        t0 = time.process_time()
        reader(f, buf)
        t1 = time.process_time()
        work(k)
        t2 = time.process_time()
        tr += t1 - t0
        tw += t2 - t1
    print("done")
    print("%.3f" % (tr / (tr + tw)), file=sys.stderr)


main()
