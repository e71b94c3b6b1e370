"""A DNS server on loopback for the tests (dnslib's zone resolver, UDP and TCP): it answers from
a zone file, so discovery by SRV and TXT records (RFC 6186 mail, RFC 6764 CalDAV) is tested
against real DNS messages. Usage: dns_zone.py PORT ZONE_FILE"""
import sys
import time

from dnslib.server import DNSLogger, DNSServer
from dnslib.zoneresolver import ZoneResolver

port, zone_file = int(sys.argv[1]), sys.argv[2]
with open(zone_file, encoding="utf-8") as f:
    resolver = ZoneResolver(f.read())
quiet = DNSLogger(log="-request,-reply,-truncated,-error", prefix=False)
for tcp in (False, True):
    DNSServer(resolver, port=port, address="127.0.0.1", tcp=tcp, logger=quiet).start_thread()
while True:
    time.sleep(3600)
