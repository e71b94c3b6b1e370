"""A loopback stand-in for Microsoft Graph's calendar API (v1.0), for the tests: no local peer of
Microsoft 365 exists. It answers with the response shapes Graph's reference documents, seeded
from tests/data/graph/calendar.json (whose `_source` says where the shapes come from), and
behaves as Graph does where the client depends on it: bearer tokens checked (here by
introspection at the tests' authorization server), times stored in UTC with the zone they were
given kept as originalStartTimeZone, new ids and iCalUIds chosen by the server, a new changeKey
and ETag on every change, `If-Match` honoured (412), paging by @odata.nextLink.

Usage: graph_calendar.py PORT SEED_JSON INTROSPECTION_URL
Test controls (no token, not Graph): GET /_test/events, PATCH /_test/events/ID (a change made
"on the server", as the person would in Outlook), GET /_test/last-patch (the body of the last
PATCH), POST /_test/lose-next-answer (the next create is made, its answer never sent).
"""
import base64
import datetime
import json
import sys
import threading
import urllib.parse
import uuid
import zoneinfo
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from introspect import introspect

PORT, SEED, INTROSPECTION = int(sys.argv[1]), sys.argv[2], sys.argv[3]
ROOT = "/v1.0"
LOCK = threading.Lock()
with open(SEED, encoding="utf-8") as f:
    DATA = json.load(f)
CALENDARS = DATA["calendars"]
EVENTS = {e["id"]: dict(e, _calendar=cid) for cid, es in DATA["events"].items() for e in es}
STATE = {"last_patch": None, "lose_next_answer": False}


def base():
    return f"http://127.0.0.1:{PORT}{ROOT}"


def new_change(event):
    key = base64.b64encode(uuid.uuid4().bytes).decode()
    event["changeKey"] = key
    event["@odata.etag"] = f'W/"{key}"'
    event["lastModifiedDateTime"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%S.%f0Z")


def to_utc(value, all_day):
    """Graph keeps times in UTC; the zone they were given in is the event's original zone."""
    wall = datetime.datetime.fromisoformat(value["dateTime"].split(".")[0])
    zone = value.get("timeZone") or "UTC"
    if not all_day:
        wall = wall.replace(tzinfo=zoneinfo.ZoneInfo(zone)).astimezone(datetime.timezone.utc)
    return {"dateTime": wall.strftime("%Y-%m-%dT%H:%M:%S.0000000"), "timeZone": "UTC"}, zone


WRITABLE = ("subject", "body", "start", "end", "isAllDay", "location", "attendees", "recurrence",
            "isReminderOn", "reminderMinutesBeforeStart", "showAs")


def apply(event, body):
    for key in WRITABLE:
        if key in body:
            event[key] = body[key]
    all_day = event.get("isAllDay", False)
    for side, original in (("start", "originalStartTimeZone"), ("end", "originalEndTimeZone")):
        if side in body:
            event[side], event[original] = to_utc(body[side], all_day)
    for a in event.get("attendees") or []:
        a.setdefault("status", {"response": "none", "time": "0001-01-01T00:00:00Z"})
    event["type"] = "seriesMaster" if event.get("recurrence") else "singleInstance"
    new_change(event)


def public(event, select=None):
    shown = {k: v for k, v in event.items() if not k.startswith("_")}
    if select:
        keep = set(select.split(","))
        shown = {k: v for k, v in shown.items() if k in keep or k.startswith("@odata")}
    return shown


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def answer(self, status, body=None):
        data = b"" if body is None else json.dumps(body).encode()
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", "application/json; odata.metadata=minimal")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def error(self, status, code, message):
        self.answer(status, {"error": {"code": code, "message": message}})

    def body(self):
        length = int(self.headers.get("Content-Length") or 0)
        return json.loads(self.rfile.read(length) or b"{}")

    def route(self):
        url = urllib.parse.urlsplit(self.path)
        query = dict(urllib.parse.parse_qsl(url.query))
        parts = [urllib.parse.unquote(p) for p in url.path.split("/") if p]
        return parts, query

    def signed_in(self):
        header = self.headers.get("Authorization", "")
        token = header[len("Bearer "):].strip() if header.startswith("Bearer ") else ""
        if token and introspect(INTROSPECTION, token).get("active") is True:
            return True
        self.error(401, "InvalidAuthenticationToken", "Access token is empty or invalid.")
        return False

    def handle_any(self, method):
        parts, query = self.route()
        with LOCK:
            if parts[:1] == ["_test"]:
                return self.test_control(method, parts)
            if parts[:2] != ["v1.0", "me"] or not self.signed_in():
                return None if parts[:2] == ["v1.0", "me"] else self.error(404, "NotFound", "")
            return self.graph(method, parts[2:], query)

    def graph(self, method, parts, query):
        if method == "GET" and parts == ["calendars"]:
            shown = [public(c, query.get("$select")) for c in CALENDARS]
            return self.answer(200, {"@odata.context": f"{base()}/$metadata#users('alice')/calendars",
                                     "value": shown})
        if len(parts) == 3 and parts[0] == "calendars" and parts[2] == "events":
            if not any(c["id"] == parts[1] for c in CALENDARS):
                return self.error(404, "ErrorItemNotFound", "The specified object was not found in the store.")
            return self.list_events(parts[1], query) if method == "GET" else self.create(parts[1])
        if len(parts) == 2 and parts[0] == "events":
            return self.one_event(method, parts[1])
        return self.error(400, "BadRequest", f"{method} {self.path} is not part of this stand-in")

    def list_events(self, calendar, query):
        mine = [e for e in EVENTS.values() if e["_calendar"] == calendar]
        top, skip = int(query.get("$top", "10")), int(query.get("$skip", "0"))
        page = {"value": [public(e, query.get("$select")) for e in mine[skip:skip + top]]}
        if skip + top < len(mine):
            rest = dict(query, **{"$skip": str(skip + top)})
            page["@odata.nextLink"] = (f"{base()}/me/calendars/{urllib.parse.quote(calendar)}/events?"
                                       + urllib.parse.urlencode(rest))
        return self.answer(200, page)

    def create(self, calendar):
        body = self.body()
        # Graph's transactionId: a create sent again returns the event the first one made.
        again = [e for e in EVENTS.values()
                 if body.get("transactionId") and e.get("transactionId") == body["transactionId"]]
        if again:
            return self.answer(201, public(again[0]))
        event_id = "AAMkAG" + base64.urlsafe_b64encode(uuid.uuid4().bytes).decode()
        event = {"id": event_id, "_calendar": calendar,
                 "iCalUId": "040000008200E00074C5B7101A82E008" + uuid.uuid4().hex.upper(),
                 "isCancelled": False, "isOrganizer": True, "type": "singleInstance",
                 "organizer": {"emailAddress": {"name": "Alice Wong", "address": "alice@contoso.test"}}}
        apply(event, body)
        event["transactionId"] = body.get("transactionId")
        EVENTS[event_id] = event
        if STATE["lose_next_answer"]:
            STATE["lose_next_answer"] = False
            self.close_connection = True
            return None
        return self.answer(201, public(event))

    def one_event(self, method, event_id):
        event = EVENTS.get(event_id)
        if event is None:
            return self.error(404, "ErrorItemNotFound", "The specified object was not found in the store.")
        wanted = self.headers.get("If-Match")
        if method in ("PATCH", "DELETE") and wanted and wanted != event["@odata.etag"]:
            return self.error(412, "ErrorIrresolvableConflict",
                              "The send or update operation could not be performed because the change key passed in the request does not match the current change key for the item.")
        if method == "GET":
            return self.answer(200, public(event))
        if method == "PATCH":
            STATE["last_patch"] = self.body()
            apply(event, STATE["last_patch"])
            return self.answer(200, public(event))
        if method == "DELETE":
            del EVENTS[event_id]
            return self.answer(204)
        return self.error(405, "MethodNotAllowed", method)

    def test_control(self, method, parts):
        if parts[-1] == "last-patch":
            return self.answer(200, STATE["last_patch"])
        if parts[-1] == "lose-next-answer":
            STATE["lose_next_answer"] = True
            return self.answer(204)
        if method == "GET":
            return self.answer(200, [public(e) for e in EVENTS.values()])
        event = EVENTS.get(parts[-1])
        if method == "PATCH" and event is not None:
            apply(event, self.body())
            return self.answer(200, public(event))
        return self.error(404, "NotFound", "")

    def do_GET(self):
        self.handle_any("GET")

    def do_POST(self):
        self.handle_any("POST")

    def do_PATCH(self):
        self.handle_any("PATCH")

    def do_DELETE(self):
        self.handle_any("DELETE")


ThreadingHTTPServer(("127.0.0.1", PORT), Handler).serve_forever()
