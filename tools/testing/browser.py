"""The club app served in a thread, and a headless Chromium to look at it: for the tests,
the bench and the docs' screenshots.

    served = Served(app)             # uvicorn on 127.0.0.1 and a free port picked now
    served.url("/table/T01") ; served.stop()
    why = chromium_missing()         # None, or why no browser can run here
    driver = chromium(1920, 1080)    # selenium with Debian's chromium and chromedriver
    viewport(driver, 1920, 1080) ; quit_chromium(driver)
"""

import os
import shutil
import socket
import tempfile
import threading
import time

from tools.club.serving import server_config

CHROMIUM = ("/usr/bin/chromium", "/usr/bin/chromium-browser")
CHROMEDRIVER = "/usr/bin/chromedriver"
CHROMIUM_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--disable-quic", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--hide-scrollbars",
                  "--force-device-scale-factor=1")


class Served:
    """An ASGI app served by uvicorn in a thread on 127.0.0.1 and a free port."""

    def __init__(self, app, timeout=30.0):
        import uvicorn

        self.app = app
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        # The event streams never end by themselves: on stop they get a second to go.
        self.server = uvicorn.Server(server_config(app))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]},
                                       daemon=True)
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the club app did not start")
            time.sleep(0.02)

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def url(self, path):
        return self.base + path

    def stop(self):
        hub = getattr(getattr(self.app, "state", None), "hub", None)
        if hub is not None:
            hub.close_streams()  # the open event streams end first, then the server
        self.server.should_exit = True
        self.thread.join(timeout=10)
        self.sock.close()


def chromium_missing():
    """Why no headless Chromium can run here, or None."""
    if not any(os.path.exists(p) for p in CHROMIUM):
        return "Chromium is not installed (Debian: apt-get install chromium chromium-driver)"
    if not os.path.exists(CHROMEDRIVER):
        return "chromedriver is not installed (Debian: apt-get install chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (make venv installs it)"
    return None


def chromium(width=1280, height=900, flags=()):
    """A fresh headless Chromium driven by selenium, with a profile folder of its own;
    ``flags``: more command-line flags (e.g. --host-resolver-rules=...)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="club-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = next(p for p in CHROMIUM if os.path.exists(p))
    for flag in CHROMIUM_FLAGS:
        options.add_argument(flag)
    options.add_argument("--user-data-dir=" + profile)
    options.add_argument("--window-size=%d,%d" % (width, height))
    for flag in flags:
        options.add_argument(flag)
    try:
        driver = webdriver.Chrome(options=options, service=Service(CHROMEDRIVER))
    except Exception:
        shutil.rmtree(profile, ignore_errors=True)
        raise
    driver.set_page_load_timeout(30)
    driver.profile_dir = profile
    return driver


def viewport(driver, width, height):
    """Make the page exactly ``width`` x ``height`` CSS pixels (a screenshot's size)."""
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})


def quit_chromium(driver):
    try:
        driver.quit()
    finally:
        shutil.rmtree(driver.profile_dir, ignore_errors=True)
