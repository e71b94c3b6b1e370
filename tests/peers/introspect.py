"""Asks the tests' authorization server whether a bearer token is active (RFC 7662), as a
resource server does: `url` carries the resource server's client credentials (user:password@)."""
import base64
import json
import urllib.parse
import urllib.request


def introspect(url, token):
    parts = urllib.parse.urlsplit(url)
    plain = urllib.parse.urlunsplit(parts._replace(netloc=f"{parts.hostname}:{parts.port}"))
    request = urllib.request.Request(plain, data=urllib.parse.urlencode({"token": token}).encode())
    basic = base64.b64encode(f"{parts.username}:{parts.password}".encode()).decode()
    request.add_header("Authorization", "Basic " + basic)
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)
    except OSError:
        return {}
