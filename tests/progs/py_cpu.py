# CPU shares of two Python functions by construction (tests/e2e/89-python-cp.t):
# heavy() gives crunch() three times the work light() gives it, so
# heavy holds 3/4 of the time spent in either, light 1/4.  A second
# thread does the same (argument 2, "threads": 2 by default), so the
# samples of both threads count.
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
threads = int(sys.argv[2]) if len(sys.argv) > 2 else 2
th = [threading.Thread(target=run, args=(rounds, 20000)) for _ in range(threads - 1)]
for t in th:
    t.start()
total = run(rounds, 20000)
for t in th:
    t.join()
print("done", total % 1000)
