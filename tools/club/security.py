"""Who may write: the club PIN, the forms' CSRF token, the same-origin check, refusals counted.

    guard = Guard(pin="4711")                 # pin=None: every write is refused
    app.add_middleware(SessionCookie)         # every browser gets a random session cookie
    {{ csrf_input(request) }}                 # in a form template: the hidden token field
    form = await request.form()
    require_write(request, form)              # raises Refused (HTTP 403 page) unless allowed
    guard.refusals                            # {"wrong_pin": 1, "csrf": 0, ...}

Reading is open on the club's network; anything that writes needs the PIN given at start-up
(compared in constant time) and a form that came from this app: its hidden token is an
HMAC of the browser's session cookie under a key made at start-up, so a page of another
site can neither read nor forge it, and a request whose Origin (or Referer) names another
site is refused before the token is looked at. A refusal changes nothing and is counted.
"""

import hashlib
import hmac
import secrets
from http.cookies import SimpleCookie
from urllib.parse import urlsplit

from markupsafe import Markup, escape

SESSION_COOKIE = "club_session"
CSRF_FIELD = "csrf"
PIN_FIELD = "pin"

NO_PIN = ("Writing is switched off: the club must start the app with --pin PIN "
          "(python -m tools.club --db FILE --pin PIN).")
WRONG_PIN = "wrong PIN"
EXPIRED = "form expired, reload the page"
CROSS_SITE = "refused: the form was sent from another site"
REASONS = ("no_pin_set", "wrong_pin", "csrf", "cross_origin")


class Refused(Exception):
    """A write that is not allowed: shown as a 403 page with ``message``."""

    def __init__(self, message, reason):
        super().__init__(message)
        self.message = message
        self.reason = reason


class Guard:
    """The club's PIN, the token key and the count of refused writes."""

    def __init__(self, pin=None):
        if pin is not None and not pin.strip():
            raise ValueError("the club PIN must not be empty")
        self.pin = pin
        self.key = secrets.token_bytes(32)
        self.refusals = dict.fromkeys(REASONS, 0)

    @property
    def writable(self):
        return self.pin is not None

    def token(self, session):
        return hmac.new(self.key, session.encode(), hashlib.sha256).hexdigest()

    def refuse(self, message, reason):
        self.refusals[reason] += 1
        raise Refused(message, reason)

    def check(self, request, form):
        """Raise Refused unless the request may write (same origin, token, PIN)."""
        if not _same_origin(request):
            self.refuse(CROSS_SITE, "cross_origin")
        if self.pin is None:
            self.refuse(NO_PIN, "no_pin_set")
        session = request.scope.get(SESSION_COOKIE) or ""
        sent = str(form.get(CSRF_FIELD) or "")
        if not request.cookies.get(SESSION_COOKIE) or not hmac.compare_digest(
                sent.encode(), self.token(session).encode()):
            self.refuse(EXPIRED, "csrf")
        given = str(form.get(PIN_FIELD) or "")
        if not hmac.compare_digest(given.encode(), self.pin.encode()):
            self.refuse(WRONG_PIN, "wrong_pin")


def require_write(request, form):
    """Raise Refused (the app shows it as a 403 page, counted) unless ``form`` may write."""
    request.app.state.guard.check(request, form)


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
