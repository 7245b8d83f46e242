# Page faults the kernel takes for a Python program: kread() reads 32 MiB
# of /dev/zero into a new bytes object (fresh memory: every page is
# faulted in by the kernel, in read's copy to the user); ufill() makes 32
# MiB itself (memset's faults, in user mode).  8 rounds each.  Prints
# "done"; on stderr each one's minor faults ("faults K U", by getrusage
# RUSAGE_THREAD around each) and, last, kread's share of the two, the
# truth a page-fault profile is held to.
import os
import resource
import sys


def faults():
    return resource.getrusage(resource.RUSAGE_THREAD).ru_minflt


def kread(fd):
    return len(os.read(fd, 32 << 20))


def ufill():
    return len(b"\x01" * (32 << 20))


def main():
    fd = os.open("/dev/zero", os.O_RDONLY)
    k = u = 0
    for _ in range(8):
        a = faults()
        kread(fd)
        k += faults() - a
        a = faults()
        ufill()
        u += faults() - a
    print("done")
    print("faults %d %d" % (k, u), file=sys.stderr)
    print("%.3f" % (k / (k + u)), file=sys.stderr)


main()
