"""Who may write: the club PIN, the forms' CSRF token, the same-origin check, the PIN's
rate limit, the Host header; refusals counted.

    guard = Guard(pin="4711")                 # pin=None: every write is refused
    app.add_middleware(SessionCookie)         # every browser gets a random session cookie
    app.add_middleware(HostCheck, names=["club-pc.local"], guard=guard)
    {{ csrf_input(request) }}                 # in a form template: the hidden token field
    form = await request.form()
    await require_write(request, form)        # raises Refused (HTTP 403/429 page) unless allowed
    guard.refusals                            # {"wrong_pin": 1, "csrf": 0, ...}

Reading is open on the club's network; anything that writes needs the PIN given at start-up
(compared in constant time) and a form that came from this app: its hidden token is an
HMAC of the browser's session cookie under a key made at start-up, so a page of another
site can neither read nor forge it, and a request whose Origin (or Referer) names another
site is refused before the token is looked at. A refusal changes nothing and is counted.

Wrong PINs are rate-limited (PinLimiter): per client address, and for every client
together, with lockouts that double up to a day, so that a 4-digit PIN holds for a season
(docs/club.md, "Under attack", has the arithmetic). While a lockout runs every write is
refused with HTTP 429 before the PIN is looked at. The Host header must name this app
(HostCheck): a name the club configured, localhost, or an IP address, never a name an
attacker's DNS points here (DNS rebinding).
"""

import hashlib
import hmac
import ipaddress
import secrets
import threading
import time
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from markupsafe import Markup, escape
from starlette.concurrency import run_in_threadpool

SESSION_COOKIE = "club_session"
CSRF_FIELD = "csrf"
PIN_FIELD = "pin"

NO_PIN = ("Writing is switched off: the club must start the app with --pin PIN "
          "(python -m tools.club --db FILE --pin PIN).")
WRONG_PIN = "wrong PIN"
EXPIRED = "form expired, reload the page"
CROSS_SITE = "refused: the form was sent from another site"
LOCKED = ("Too many wrong PINs: writing is locked for %s (until %s). Reading goes on; "
          "the lockout doubles with every further wrong PIN.")
REASONS = ("no_pin_set", "wrong_pin", "csrf", "cross_origin", "locked", "host")


class Refused(Exception):
    """A write that is not allowed: shown as a 403 page (429 while locked out) with
    ``message``."""

    def __init__(self, message, reason, status=403, retry_after=None):
        super().__init__(message)
        self.message = message
        self.reason = reason
        self.status = status
        self.retry_after = retry_after


def client_key(address):
    """Who a client is, for the limits: its IPv4 address, or its IPv6 /64 (one household
    or one phone can have a whole /64 of addresses to rotate through)."""
    try:
        ip = ipaddress.ip_address(address or "")
    except ValueError:
        return address or "?"
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network("%s/64" % ip, strict=False))
    return str(ip)


def request_client(request):
    """The client key of a request: its peer address (uvicorn runs without proxy headers,
    so nobody can name another address in a header)."""
    return client_key(request.client.host if request.client else None)


class Strikes:
    """Wrong PINs counted with a lockout: the first ``free`` cost nothing; every one after
    locks for ``first_s`` doubling, at most ``max_s``; one is forgiven every ``decay_s``
    since the last."""

    def __init__(self, free, first_s, max_s, decay_s, count=0, last=0.0, until=0.0):
        self.free, self.first_s, self.max_s, self.decay_s = free, first_s, max_s, decay_s
        self.count, self.last, self.until = count, last, until
        self.pending = 0  # a client's wrong PINs since its last right one

    def forgive(self, count, now):
        self.count = max(0, self.now_count(now) - count)
        self.last = now

    def now_count(self, now):
        if self.count and now > self.last:
            return max(0, self.count - int((now - self.last) // self.decay_s))
        return self.count

    def strike(self, now):
        self.count = self.now_count(now) + 1
        self.last = now
        over = self.count - self.free
        if over > 0:
            self.until = now + min(self.max_s, self.first_s * 2 ** min(over - 1, 40))
        return self.until

    def locked_for(self, now):
        return max(0.0, self.until - now)


class PinLimiter:
    """How many wrong PINs may be tried: per client (CLIENT_FREE free, then lockouts of one
    minute doubling to a day; a right PIN from the client clears its count) and for all
    clients together (GLOBAL_FREE free, then the same lockouts for every write). A right
    PIN takes back from the count of all clients only the wrong PINs of its own client
    since its last right one (a member's typos), never anybody else's: an attacker, who
    never gets one right, gains nothing from the club's own writes. One strike is forgiven
    a day. ``load()`` -> (count, last, until) and ``save(count, last, until)`` keep the
    count of all clients where a restart does not lose it (the club's database)."""

    CLIENT_FREE = 3
    GLOBAL_FREE = 10
    FIRST_LOCK_S = 60.0
    MAX_LOCK_S = 86400.0
    DECAY_S = 86400.0
    CLIENTS_KEPT = 10000  # clients remembered; the oldest go first

    def __init__(self, clock=time.time, load=None, save=None):
        self.clock = clock
        self.load = load
        self.save = save
        self.loaded = load is None
        self.all = self._strikes(self.GLOBAL_FREE)
        self.clients = {}
        self.lock = threading.Lock()
        self.wrong_total = 0  # wrong PINs since start-up
        self.locked_refusals = 0  # writes refused while a lockout ran

    def _strikes(self, free, *state):
        return Strikes(free, self.FIRST_LOCK_S, self.MAX_LOCK_S, self.DECAY_S, *state)

    def _ensure_loaded(self):
        if not self.loaded:
            self.loaded = True
            state = self.load()
            if state is not None:
                self.all = self._strikes(self.GLOBAL_FREE, *state)

    def locked_for(self, client):
        """Seconds the client must wait before a write (0: none)."""
        now = self.clock()
        with self.lock:
            self._ensure_loaded()
            mine = self.clients.get(client)
            return max(self.all.locked_for(now), mine.locked_for(now) if mine else 0.0)

    def wrong(self, client):
        now = self.clock()
        with self.lock:
            self._ensure_loaded()
            self.wrong_total += 1
            mine = self.clients.pop(client, None) or self._strikes(self.CLIENT_FREE)
            self.clients[client] = mine  # newest last: the oldest are dropped first
            if len(self.clients) > self.CLIENTS_KEPT:
                del self.clients[next(iter(self.clients))]
            mine.strike(now)
            mine.pending += 1
            self.all.strike(now)
            state = (self.all.count, self.all.last, self.all.until)
        if self.save is not None:
            self.save(*state)

    def right(self, client):
        now = self.clock()
        with self.lock:
            mine = self.clients.pop(client, None)
            if mine is None or not mine.pending:
                return
            self.all.forgive(mine.pending, now)
            state = (self.all.count, self.all.last, self.all.until)
        if self.save is not None:
            self.save(*state)

    def status(self):
        now = self.clock()
        with self.lock:
            self._ensure_loaded()
            return {"wrong": self.wrong_total, "locked_refusals": self.locked_refusals,
                    "strikes": self.all.now_count(now),
                    "locked_s": round(self.all.locked_for(now), 1),
                    "clients_locked": sum(1 for c in self.clients.values()
                                          if c.locked_for(now) > 0)}


def wait_text(seconds):
    """A lockout's length for people: "45 s", "3 min", "2 h 5 min"."""
    seconds = int(seconds + 0.999)
    if seconds < 60:
        return "%d s" % seconds
    minutes = (seconds + 59) // 60
    if minutes < 60:
        return "%d min" % minutes
    return "%d h %d min" % divmod(minutes, 60)


class Guard:
    """The club's PIN, the token key, the PIN's rate limit and the count of refused
    writes."""

    def __init__(self, pin=None, limiter=None):
        if pin is not None and not pin.strip():
            raise ValueError("the club PIN must not be empty")
        self.pin = pin
        self.key = secrets.token_bytes(32)
        self.refusals = dict.fromkeys(REASONS, 0)
        self.limiter = limiter or PinLimiter()

    def lockout(self, request):
        """Seconds this request's client must wait before writing, 0 when it may."""
        if self.pin is None:
            return 0.0
        return self.limiter.locked_for(request_client(request))

    @property
    def writable(self):
        return self.pin is not None

    def token(self, session):
        return hmac.new(self.key, session.encode(), hashlib.sha256).hexdigest()

    def refuse(self, message, reason, **kw):
        self.refusals[reason] += 1
        raise Refused(message, reason, **kw)

    def check(self, request, form):
        """Raise Refused unless the request may write (same origin, token, no lockout,
        PIN). Runs in a worker thread: a wrong PIN is kept in the database."""
        if not _same_origin(request):
            self.refuse(CROSS_SITE, "cross_origin")
        if self.pin is None:
            self.refuse(NO_PIN, "no_pin_set")
        session = request.scope.get(SESSION_COOKIE) or ""
        sent = str(form.get(CSRF_FIELD) or "")
        if not request.cookies.get(SESSION_COOKIE) or not hmac.compare_digest(
                sent.encode(), self.token(session).encode()):
            self.refuse(EXPIRED, "csrf")
        client = request_client(request)
        wait = self.limiter.locked_for(client)
        if wait > 0:
            # The PIN is not even looked at: a lockout tells nothing about it.
            self.limiter.locked_refusals += 1
            until = time.strftime("%H:%M", time.localtime(time.time() + wait))
            self.refuse(LOCKED % (wait_text(wait), until), "locked", status=429,
                        retry_after=int(wait + 0.999))
        given = str(form.get(PIN_FIELD) or "")
        if not hmac.compare_digest(given.encode(), self.pin.encode()):
            self.limiter.wrong(client)
            self.refuse(WRONG_PIN, "wrong_pin")
        self.limiter.right(client)


async def require_write(request, form):
    """Raise Refused (the app shows it as a 403 or 429 page, counted) unless ``form`` may
    write."""
    await run_in_threadpool(request.app.state.guard.check, request, form)


def csrf_input(request):
    """The hidden form field that proves the form came from this app."""
    token = request.app.state.guard.token(request.scope.get(SESSION_COOKIE) or "")
    return Markup('<input type="hidden" name="%s" value="%s">' % (CSRF_FIELD, escape(token)))


def _same_origin(request):
    host = request.headers.get("host", "")
    for header in ("origin", "referer"):
        value = request.headers.get(header)
        if value:
            if value == "null":
                return False
            return urlsplit(value).netloc == host
    return True  # neither sent (not a browser form): the token still has to be right


class SessionCookie:
    """ASGI middleware: every browser gets a random session cookie (HttpOnly, SameSite=Strict);
    its value is in ``scope["club_session"]`` for the token."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        session = None
        for name, value in scope.get("headers", ()):
            if name == b"cookie":
                jar = SimpleCookie()
                try:
                    jar.load(value.decode("latin-1"))
                except Exception:  # a garbled cookie header: treated as none
                    continue
                if SESSION_COOKIE in jar and len(jar[SESSION_COOKIE].value) == 32:
                    session = jar[SESSION_COOKIE].value
        fresh = session is None
        if fresh:
            session = secrets.token_hex(16)
        scope[SESSION_COOKIE] = session

        async def send_with_cookie(message):
            if fresh and message["type"] == "http.response.start":
                cookie = "%s=%s; Path=/; HttpOnly; SameSite=Strict" % (SESSION_COOKIE, session)
                message = dict(message, headers=[*message.get("headers", ()),
                                                 (b"set-cookie", cookie.encode())])
            await send(message)

        await self.app(scope, receive, send_with_cookie)


def host_allowed(host, names):
    """True when ``host`` (a Host header: name or address, maybe with a port) names this
    app: one of ``names`` (lower case), localhost, or an IP address. An IP address cannot
    be a DNS-rebinding attack's (that needs a name the attacker's DNS answers for)."""
    host = host.strip().lower()
    if host.startswith("["):  # [v6]:port
        end = host.find("]")
        name, rest = host[1:end], host[end + 1:] if end > 0 else "x"
        if end < 0 or rest and not (rest.startswith(":") and rest[1:].isdigit()):
            return False
    else:
        name, sep, port = host.rpartition(":") if host.count(":") == 1 else (host, "", "")
        if sep and not port.isdigit():
            return False
        name = name if sep else host
    if not name:
        return False
    if name == "localhost" or name in names:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """ASGI middleware: a request whose Host header does not name this app (host_allowed)
    is answered 421 with a message, and counted (``guard.refusals["host"]``), before
    anything else runs."""

    def __init__(self, app, names=(), guard=None):
        self.app = app
        self.names = {n.strip().lower().rstrip(".") for n in names if n.strip()}
        self.guard = guard

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http":
            host = ""
            for name, value in scope.get("headers", ()):
                if name == b"host":
                    host = value.decode("latin-1")
                    break
            if not host_allowed(host.rstrip("."), self.names):
                if self.guard is not None:
                    self.guard.refusals["host"] += 1
                body = ("This club app does not answer to the name %r. It answers to "
                        "localhost, an IP address, or a name the club gave with "
                        "--allow-host NAME.\n" % host[:100]).encode("utf-8", "replace")
                await send({"type": "http.response.start", "status": 421, "headers": [
                    (b"content-type", b"text/plain; charset=utf-8"),
                    (b"content-length", str(len(body)).encode()),
                    (b"connection", b"close")]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)
