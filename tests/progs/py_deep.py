# py_deep.py DEPTH [ROUNDS] - for 89-python.t and 89-python-cp.t: rec()
# recurses DEPTH Python frames (one C frame: 3.11 calls Python from Python
# in the same eval loop) and allocates at the bottom, ROUNDS (30) times
# from driver().
# Past 1,024 frames the stacks are cut: their outer callers (driver,
# <module>) are not recorded, and the stack says so.
import sys

sys.setrecursionlimit(10000)


def rec(n):
    if n == 0:
        return [bytearray(2000) for _ in range(200)]
    return rec(n - 1)


def driver(depth, rounds):
    t = 0
    for _ in range(rounds):
        t += len(rec(depth))
    return t


print(driver(int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 30))
