"""How the club app is served: uvicorn with the club's limits.

    config = server_config(app, host="0.0.0.0", port=8080)   # uvicorn.Config, limits set

uvicorn (with h11) serves the app; what it does not bound itself, ClubProtocol (its HTTP/1.1
protocol class, given to uvicorn.Config as ``http``) does: a whole request must arrive
within REQUEST_TIMEOUT_S of the connection or of the last answer, else the connection is
closed; a client address (an IPv6 /64) keeps at most PER_CLIENT connections open and the
app at most Limits.total (half the process's file descriptors), the rest are answered 503
at once and closed; each kind of trouble is written to stderr once and counted in
/status.json (``connections``). BodyLimit answers 413 to a request body over the forms'
size. docs/club.md, "Under attack", says what this guarantees and what not. The app served
in a thread, and a browser to look at it, are tools.testing.browser's (tests, bench, docs).
"""

import asyncio
import resource
import sys

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from tools.club.security import client_key

REQUEST_TIMEOUT_S = 10.0  # a whole request (head and body), from connecting or the last answer
KEEP_ALIVE_S = 5  # an idle kept-alive connection (uvicorn's own timer)
PER_CLIENT = 32  # connections one address (an IPv6 /64) keeps open at once
BACKLOG = 128  # connections the kernel queues before the app accepts them
DESCRIPTOR_RESERVE = 128  # file descriptors kept for the database, the boards, the demo


class Limits:
    """The connection limits and what they refused, shared by every connection of one
    server (and shown by the app's /status.json)."""

    def __init__(self, per_client=PER_CLIENT, total=None, request_timeout_s=REQUEST_TIMEOUT_S,
                 say=None):
        self.per_client = per_client
        self._total = total
        self.request_timeout_s = request_timeout_s
        self.say = say or (lambda text: sys.stderr.write("club: %s\n" % text))
        self.open = {}  # client key -> connections open
        self.open_total = 0
        self.counts = dict.fromkeys(("refused_client", "refused_total", "timed_out",
                                     "bad_requests", "too_large", "accept_errors"), 0)
        self._said = set()

    @property
    def total(self):
        """Connections open at once, all clients together: half the file descriptors the
        process may open beyond DESCRIPTOR_RESERVE (at most 1000), so that connections
        never take the descriptors the database, the boards' ports and the simulated
        tables need, and accept() never runs out (uvicorn's backlog included)."""
        if self._total is None:
            soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
            if soft == resource.RLIM_INFINITY:
                soft = 1 << 20
            self._total = max(16, min(1000, (soft - DESCRIPTOR_RESERVE - BACKLOG) // 2))
        return self._total

    def say_once(self, topic, text):
        if topic not in self._said:
            if len(self._said) < 1000:  # many addresses: the first thousand are named
                self._said.add(topic)
                self.say(text)

    def admit(self, key):
        """None when a connection of ``key`` may stay, else why not (it is then counted
        as refused, and said once per address)."""
        if self.open.get(key, 0) >= self.per_client:
            self.counts["refused_client"] += 1
            self.say_once(("client", key), "refusing connections from %s: %d already open "
                          "(said once; every refusal is counted in /status.json)"
                          % (key, self.per_client))
            return "too many connections from your address (%d at once)" % self.per_client
        if self.open_total >= self.total:
            self.counts["refused_total"] += 1
            self.say_once("total", "refusing connections: %d open, the most this app keeps "
                          "(said once; counted in /status.json)" % self.total)
            return "too many connections to this app just now"
        self.open[key] = self.open.get(key, 0) + 1
        self.open_total += 1
        return None

    def closed(self, key):
        left = self.open.get(key, 0) - 1
        if left > 0:
            self.open[key] = left
        else:
            self.open.pop(key, None)
        self.open_total -= 1

    def status(self):
        return dict(self.counts, open=self.open_total, most=self.total,
                    per_client=self.per_client, request_timeout_s=self.request_timeout_s)

    def watch_accept_errors(self):
        """In the server's event loop: accept() out of descriptors is counted and said once
        (asyncio would log a traceback for every try, and tries again every second)."""
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()

        def handler(loop, context):
            if context.get("message") == "socket.accept() out of system resource":
                self.counts["accept_errors"] += 1
                self.say_once("accept", "out of file descriptors, new connections wait "
                              "(%s; said once, counted in /status.json)"
                              % context.get("exception"))
                return
            if previous is not None:
                previous(loop, context)
            else:
                loop.default_exception_handler(context)

        loop.set_exception_handler(handler)


class ClubProtocol(H11Protocol):
    """uvicorn's HTTP/1.1 protocol (h11) with the club's limits (Limits)."""

    def __init__(self, config, server_state, app_state, _loop=None):
        super().__init__(config, server_state, app_state, _loop)
        self.limits = getattr(config, "club_limits", None) or Limits()
        self.request_timer = None
        self.key = None
        self.admitted = False

    def connection_made(self, transport):
        super().connection_made(transport)
        self.key = client_key(self.client[0] if self.client else None)
        refusal = self.limits.admit(self.key)
        if refusal is not None:
            # Answered at once and closed: the descriptor is free again within this turn
            # of the event loop, whatever the client does.
            body = ("503 Service Unavailable: %s; try again in a moment.\n" % refusal).encode()
            transport.write(b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; "
                            b"charset=utf-8\r\nContent-Length: %d\r\nRetry-After: 5\r\n"
                            b"Connection: close\r\n\r\n%s" % (len(body), body))
            transport.close()
            return
        self.admitted = True
        self._time_the_request()

    def _time_the_request(self):
        if self.request_timer is None:
            self.request_timer = self.loop.call_later(self.limits.request_timeout_s,
                                                      self._request_timed_out)

    def _stop_timing(self):
        if self.request_timer is not None:
            self.request_timer.cancel()
            self.request_timer = None

    def _request_timed_out(self):
        self.request_timer = None
        if self.transport.is_closing() or self.conn.their_state not in (h11.IDLE,
                                                                        h11.SEND_BODY):
            return
        self.limits.counts["timed_out"] += 1
        self.limits.say_once("timeout", "closing connections that send no whole request "
                             "within %g s (said once; counted in /status.json)"
                             % self.limits.request_timeout_s)
        self.transport.close()

    def data_received(self, data):
        super().data_received(data)
        if self.conn.their_state in (h11.IDLE, h11.SEND_BODY):
            self._time_the_request()  # still waiting for a request, or the rest of one
        else:
            self._stop_timing()

    def on_response_complete(self):
        super().on_response_complete()
        self._stop_timing()
        if not self.transport.is_closing() and self.conn.their_state in (h11.IDLE,
                                                                        h11.SEND_BODY):
            self._time_the_request()  # the next request, if any, from now

    def connection_lost(self, exc):
        self._stop_timing()
        if self.admitted:
            self.admitted = False
            self.limits.closed(self.key)
        super().connection_lost(exc)

    def send_400_response(self, msg):
        self.limits.counts["bad_requests"] += 1
        self.limits.say_once("bad", "answering malformed HTTP requests with 400 (said once; "
                             "counted in /status.json)")
        super().send_400_response(msg)


class _Quiet:
    """A logging filter: uvicorn's warning for each malformed request (ClubProtocol counts
    them and says it once instead)."""

    def filter(self, record):
        return record.getMessage() not in ("Invalid HTTP request received.",
                                           "Unsupported upgrade request.")


def server_config(app, host="127.0.0.1", port=8080, **options):
    """uvicorn.Config for the club app: ClubProtocol and its Limits (the app's own,
    ``app.state.limits``, when it has them), no proxy headers (the peer's address is the
    client), short timeouts, a small backlog."""
    import logging

    import uvicorn

    quiet = logging.getLogger("uvicorn.error")
    if not any(isinstance(f, _Quiet) for f in quiet.filters):
        quiet.addFilter(_Quiet())
    limits = getattr(getattr(app, "state", None), "limits", None) or Limits()
    config = uvicorn.Config(app, host=host, port=port, http=ClubProtocol, log_level="warning",
                            lifespan="on", timeout_graceful_shutdown=1, proxy_headers=False,
                            timeout_keep_alive=KEEP_ALIVE_S, backlog=BACKLOG,
                            h11_max_incomplete_event_size=16384, **options)
    config.club_limits = limits
    return config


class BodyLimit:
    """ASGI middleware: a request body larger than ``limit`` bytes is answered 413 before
    the app sees it (and counted in ``limits``); the app gets the body already read."""

    def __init__(self, app, limit, limits=None):
        self.app = app
        self.limit = limit
        self.limits = limits

    async def _too_large(self, send):
        if self.limits is not None:
            self.limits.counts["too_large"] += 1
        body = b"413: a request body of at most %d bytes, please\n" % self.limit
        await send({"type": "http.response.start", "status": 413, "headers": [
            (b"content-type", b"text/plain; charset=utf-8"),
            (b"content-length", str(len(body)).encode()), (b"connection", b"close")]})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        for name, value in scope.get("headers", ()):
            if name == b"content-length" and (not value.isdigit() or int(value) > self.limit):
                await self._too_large(send)
                return
        if scope["method"] in ("GET", "HEAD"):
            await self.app(scope, receive, send)
            return
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away (or was timed out) half-way: nobody to answer
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await self._too_large(send)
                return
        given = False

        async def replay():
            nonlocal given
            if not given:
                given = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)
