# Python's shapes of code for the monitor's Python view
# (tests/e2e/89-python.t): a thread, a generator, an exception caught, a
# coroutine, a C extension (json) calling back into Python, and C code
# run with the GIL let go (os.scandir's opendir); each keeps what it
# makes, so each is a row of its own at exit.
import asyncio
import json
import os
import sys
import threading

kept = []


def in_thread():
    kept.append([bytearray(1000) for _ in range(100)])


def gen():
    for i in range(200):
        yield bytearray(500)


def from_gen():
    kept.append(list(gen()))


def raiser():
    raise ValueError("x" * 300)


def catcher():
    for _ in range(50):
        try:
            raiser()
        except ValueError as e:
            kept.append(e)


async def coro():
    kept.append([bytearray(700) for _ in range(30)])


def scan():
    # opendir's buffer, made with the GIL let go (os.scandir)
    kept.append(os.scandir("/"))


class Enc(json.JSONEncoder):
    def default(self, o):
        return "y" * (2000 + len(type(o).__name__))


def encode():
    kept.append(json.dumps([object() for _ in range(20)], cls=Enc))


t = threading.Thread(target=in_thread)
t.start()
t.join()
from_gen()
catcher()
asyncio.run(coro())
encode()
scan()
print("shapes", len(kept))
sys.stdout.flush()
os._exit(3)
