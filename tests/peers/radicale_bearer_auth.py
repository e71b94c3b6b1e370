"""Radicale authentication that also takes OAuth 2 bearer tokens, as a CalDAV server of a
provider that signs people in with OAuth does (Google's CalDAV takes nothing else).

`Authorization: Bearer TOKEN` is valid when the authorization server says, by introspection
(RFC 7662, at RADICALE_BEARER_INTROSPECTION: a URL with the resource server's client
credentials in it), that the token is active; the user is its `sub`. Basic logins still work
from the htpasswd file (the tests make calendars with them).

Radicale passes only a login and a password to `_login`: a bearer login reaches it as the
token's `sub` and the token behind a marker no htpasswd password has, and is checked again there.
"""
import os

from radicale.auth import htpasswd

from introspect import introspect as ask


def introspect(token):
    return ask(os.environ["RADICALE_BEARER_INTROSPECTION"], token)

MARKER = "\0bearer\0"


class Auth(htpasswd.Auth):
    def get_external_login(self, environ):
        header = environ.get("HTTP_AUTHORIZATION", "")
        if not header.startswith("Bearer "):
            return ()
        token = header[len("Bearer "):].strip()
        answer = introspect(token)
        if answer.get("active") is True and answer.get("sub"):
            return (answer["sub"], MARKER + token)
        return ("", "")

    def _login(self, login, password):
        if password.startswith(MARKER):
            answer = introspect(password[len(MARKER):])
            return login if answer.get("active") is True and answer.get("sub") == login else ""
        return super()._login(login, password)
