#!/usr/bin/python3
"""browser.py - drive headless Chromium over the DevTools protocol, for the
tests of the HTML report (tests/e2e/84-report.t).

usage: browser.py PAGE.html < COMMANDS

Opens PAGE in Debian's chromium (headless, a fresh profile, 1280x900) and
runs one command per input line, printing one line of JSON per command:

  eval EXPR          the value of a JavaScript expression in the page
  click EXPR         a real mouse click (Input.dispatchMouseEvent) at the
                     centre of the element EXPR evaluates to
  hover EXPR         the mouse moved there
  type EXPR TEXT     focus the element, then type TEXT (Input.insertText)
  errors             console errors, warnings and uncaught exceptions so far
  requests           URLs the page asked for besides itself
  shot FILE          a PNG screenshot of the page

Exit status 2 with one line on stderr when the browser cannot be started
or spoken to.  Needs chromium and python3-websocket (scripts/install-deps.sh).
"""
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request

import websocket


def fail(msg):
    print("browser.py: " + msg, file=sys.stderr)
    sys.exit(2)


class Page:
    def __init__(self, url):
        self.dir = tempfile.mkdtemp(prefix="report-chrome.")
        exe = shutil.which("chromium") or shutil.which("chromium-browser")
        if not exe:
            fail("no chromium in PATH (scripts/install-deps.sh installs it)")
        self.proc = subprocess.Popen(
            [exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--mute-audio",
             "--remote-debugging-port=0", "--enable-precise-memory-info", "--js-flags=--expose-gc",
             "--remote-allow-origins=*",
             "--user-data-dir=" + self.dir, "--window-size=1280,900", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            # Its own temporaries (org.chromium.Chromium.*) in the profile's
            # folder, removed with it: each run left three in /tmp.
            env=dict(os.environ, TMPDIR=self.dir))
        ws = None
        deadline = time.time() + 60
        while time.time() < deadline:
            line = self.proc.stderr.readline()
            if not line:
                break
            m = re.search(r"DevTools listening on (ws://[^\s]+)", line)
            if m:
                ws = m.group(1)
                break
        if not ws:
            self.close()
            fail("chromium did not start its DevTools server")
        # Keep reading chromium's stderr so it never blocks on a full pipe.
        import threading
        threading.Thread(target=lambda: [None for _ in self.proc.stderr], daemon=True).start()
        port = re.match(r"ws://[^:]+:(\d+)/", ws).group(1)
        targets = []
        for _ in range(100):
            with urllib.request.urlopen("http://127.0.0.1:%s/json/list" % port) as r:
                targets = [t for t in json.load(r) if t.get("type") == "page"]
            if targets:
                break
            time.sleep(0.1)
        if not targets:
            self.close()
            fail("chromium has no page to drive")
        self.ws = websocket.create_connection(targets[0]["webSocketDebuggerUrl"],
                                              suppress_origin=True, timeout=60)
        self.next_id = 0
        self.errors, self.requests = [], []
        self.loaded = False
        for domain in ("Runtime", "Log", "Page", "Network"):
            self.call(domain + ".enable")
        self.url = url
        self.call("Page.navigate", url=url)
        deadline = time.time() + 60
        while not self.loaded and time.time() < deadline:
            self.event(self.recv())
        if not self.loaded:
            fail("the page did not load in 60 s")

    def recv(self):
        return json.loads(self.ws.recv())

    def event(self, msg):
        m, p = msg.get("method"), msg.get("params", {})
        if m == "Page.loadEventFired":
            self.loaded = True
        elif m == "Runtime.exceptionThrown":
            d = p["exceptionDetails"]
            self.errors.append("exception: " + d.get("exception", {}).get("description", d.get("text", "")))
        elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "warning", "assert"):
            self.errors.append("console.%s: %s" % (p["type"], " ".join(str(a.get("value", a.get("description", ""))) for a in p["args"])))
        elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
            self.errors.append("log: " + p["entry"]["text"])
        elif m == "Network.requestWillBeSent":
            u = p["request"]["url"]
            if u != self.url and u != "about:blank":
                self.requests.append(u)

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = self.recv()
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"].get("message")))
                return msg.get("result", {})
            self.event(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            return {"error": r["exceptionDetails"].get("exception", {}).get("description", "exception")}
        return r["result"].get("value")

    def centre(self, expr):
        c = self.eval("(() => { const e = (%s); if (!e) return null; e.scrollIntoView({block: 'nearest'});"
                      " const r = e.getBoundingClientRect();"
                      " return [r.left + Math.min(r.width / 2, 20), r.top + r.height / 2]; })()" % expr)
        if not isinstance(c, list):
            raise RuntimeError("no element: " + expr)
        return c

    def mouse(self, kind, x, y):
        extra = {"button": "left", "clickCount": 1} if kind != "mouseMoved" else {}
        self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, **extra)

    def close(self):
        try:
            self.proc.kill()
            self.proc.wait(10)
        except Exception:
            pass
        shutil.rmtree(self.dir, ignore_errors=True)


def main():
    if len(sys.argv) != 2 or not os.path.isfile(sys.argv[1]):
        fail("usage: browser.py PAGE.html < COMMANDS")
    page = Page("file://" + os.path.abspath(sys.argv[1]))
    try:
        for line in sys.stdin:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cmd, _, arg = line.partition(" ")
            try:
                if cmd == "eval":
                    out = page.eval(arg)
                elif cmd in ("click", "hover"):
                    x, y = page.centre(arg)
                    page.mouse("mouseMoved", x, y)
                    if cmd == "click":
                        page.mouse("mousePressed", x, y)
                        page.mouse("mouseReleased", x, y)
                    out = "ok"
                elif cmd == "type":
                    expr, _, text = arg.partition(" ||| ")
                    page.eval("(%s).focus()" % expr)
                    page.call("Input.insertText", text=text)
                    out = "ok"
                elif cmd == "errors":
                    page.eval("0")  # drain events that arrived meanwhile
                    out = page.errors
                elif cmd == "requests":
                    page.eval("0")
                    out = page.requests
                elif cmd == "shot":
                    png = page.call("Page.captureScreenshot", format="png")["data"]
                    with open(arg, "wb") as f:
                        f.write(base64.b64decode(png))
                    out = "ok"
                else:
                    out = {"error": "unknown command " + cmd}
            except RuntimeError as e:
                out = {"error": str(e)}
            print(json.dumps(out), flush=True)
    finally:
        page.close()


if __name__ == "__main__":
    main()
