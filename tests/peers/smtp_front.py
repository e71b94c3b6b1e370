"""The SMTP front of the tests' mail server: accepts mail on loopback with AUTH PLAIN/LOGIN
(the users given, no TLS: loopback only) and delivers it to Dovecot over LMTP, so a
message sent by Cowork appears in the recipient's IMAP mailbox.

With an introspection URL (RFC 7662, client credentials in it), it also takes AUTH XOAUTH2:
the bearer token is valid when the authorization server says it is active and issued to the
user named (its `sub`) — as Gmail's and Outlook's SMTP servers check theirs.

usage: smtp_front.py PORT LMTP_PORT USER:PASSWORD[,USER:PASSWORD...] [INTROSPECTION_URL]
"""
import asyncio
import base64
import json
import signal
import smtplib
import sys
import urllib.parse
import urllib.request

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class DeliverOverLmtp:
    def __init__(self, lmtp_port, introspection_url=None):
        self.lmtp_port = lmtp_port
        self.introspection_url = introspection_url

    def introspect(self, token):
        parts = urllib.parse.urlsplit(self.introspection_url)
        url = urllib.parse.urlunsplit(parts._replace(netloc=parts.hostname + ":" + str(parts.port)))
        request = urllib.request.Request(url, data=urllib.parse.urlencode({"token": token}).encode())
        basic = base64.b64encode(("%s:%s" % (parts.username, parts.password)).encode()).decode()
        request.add_header("Authorization", "Basic " + basic)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.load(response)

    async def auth_XOAUTH2(self, server, args):
        if self.introspection_url is None or len(args) != 2:
            return AuthResult(success=False)
        try:
            fields = dict(
                f.split("=", 1) for f in base64.b64decode(args[1]).decode().split("\x01") if "=" in f
            )
            user, token = fields["user"], fields["auth"].removeprefix("Bearer ")
            answer = await asyncio.get_running_loop().run_in_executor(None, self.introspect, token)
        except Exception:
            return AuthResult(success=False)
        ok = answer.get("active") is True and answer.get("sub") == user
        return AuthResult(success=ok, auth_data=user if ok else None)

    async def handle_DATA(self, server, session, envelope):
        def deliver():
            with smtplib.LMTP("127.0.0.1", self.lmtp_port) as lmtp:
                lmtp.sendmail(envelope.mail_from, envelope.rcpt_tos, envelope.original_content)

        try:
            await asyncio.get_running_loop().run_in_executor(None, deliver)
        except smtplib.SMTPRecipientsRefused as e:
            return "550 unknown recipient: " + ", ".join(e.recipients)
        except Exception as e:  # the test should see why, not a hang
            return "451 delivery failed: %s" % e
        return "250 OK delivered"


def main():
    port, lmtp_port = int(sys.argv[1]), int(sys.argv[2])
    users = dict(pair.split(":", 1) for pair in sys.argv[3].split(",") if pair)
    introspection_url = sys.argv[4] if len(sys.argv) > 4 else None

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and users.get(auth_data.login.decode()) == auth_data.password.decode()
        return AuthResult(success=ok, handled=False)

    controller = Controller(
        DeliverOverLmtp(lmtp_port, introspection_url),
        hostname="127.0.0.1",
        port=port,
        authenticator=authenticate,
        auth_require_tls=False,
        auth_required=True,
    )
    controller.start()
    print("ready", flush=True)
    stop = asyncio.Event()
    loop = asyncio.new_event_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    loop.run_until_complete(stop.wait())
    controller.stop()


if __name__ == "__main__":
    main()
