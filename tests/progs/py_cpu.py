# CPU shares of two Python functions by construction (tests/e2e/89-python-cp.t):
# heavy() gives crunch() three times the work light() gives it, so
# heavy holds 3/4 of the time spent in either, light 1/4.  A thread does
# the same on its own, so the samples of both threads count.
import sys
import threading


def crunch(n):
    s = 0
    for i in range(n):
        s += i * i
    return s


def heavy(n):
    return crunch(3 * n)


def light(n):
    return crunch(n)


def run(rounds, n):
    t = 0
    for _ in range(rounds):
        t += heavy(n) + light(n)
    return t


rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 40
th = threading.Thread(target=run, args=(rounds, 20000))
th.start()
total = run(rounds, 20000)
th.join()
print("done", total % 1000)
