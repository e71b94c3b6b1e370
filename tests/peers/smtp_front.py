"""The SMTP front of the tests' mail server: accepts mail on loopback with AUTH PLAIN/LOGIN
(the users given, no TLS: loopback only) and delivers it to Dovecot over LMTP, so a
message sent by Cowork appears in the recipient's IMAP mailbox.

usage: smtp_front.py PORT LMTP_PORT USER:PASSWORD[,USER:PASSWORD...]
"""
import asyncio
import signal
import smtplib
import sys

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword


class DeliverOverLmtp:
    def __init__(self, lmtp_port):
        self.lmtp_port = lmtp_port

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
    users = dict(pair.split(":", 1) for pair in sys.argv[3].split(","))

    def authenticate(server, session, envelope, mechanism, auth_data):
        ok = isinstance(auth_data, LoginPassword) and users.get(auth_data.login.decode()) == auth_data.password.decode()
        return AuthResult(success=ok, handled=False)

    controller = Controller(
        DeliverOverLmtp(lmtp_port),
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
