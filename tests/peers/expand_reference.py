"""The reference side of the calendar's generated comparison (crates/calendar/src/reference.rs).

Reads a JSON list of cases, {"id", "ics", "zone", "from", "to"} with the range as Unix seconds,
expands each calendar with recurring-ical-events over [from, to) read in `zone` (where dates
and floating times are placed), and prints {"id": {"spans": [[start, end, its end], ...],
"repeated": n, "gaps": n}} as Unix seconds, or {"id": {"error": "..."}} for a calendar it refuses.

Which instances exist and where each starts is the reference's answer, with one correction
(`by_instant`). Where an instance of a zoned series ends is not taken from it: the package
adds an instance's length as wall-clock time (Python's arithmetic on aware datetimes), so a
one-hour instance at 02:30 on a spring-forward night ends when it starts. RFC 5545 gives an
instance the series' exact duration (§3.8.5.3 for DTEND, §3.3.6 for DURATION's hours and
minutes), so here a zoned instance ends at its start plus its exact duration: an override's
own, or for one computed from the series the master's (or, after a THISANDFUTURE change, that
override's) DTEND minus DTSTART as instants, its DURATION, or its RDATE period's.
The package's own end is printed third, so that the test can count where the two part.

A local time a clock change skips is read with the offset before the gap (RFC 5545 §3.3.5,
"interpreted using the UTC offset before the gap"). IANA zones (zoneinfo, fold=0) read it so;
a zone the file defines itself is evaluated by dateutil's VTIMEZONE reader, which takes the
offset after the gap (an hour early): such a start, end, RECURRENCE-ID or EXDATE is read
again here (`rfc_instant`) and counted in "gaps".

A recurrence set holds each instance once (RFC 5545 §3.8.5.3). The package lists an instant
twice where two wall times of the series name it (a time a clock change skips reads as the one
after it): such a repeat is dropped and counted in "repeated".
"""

import datetime
import json
import sys
from zoneinfo import ZoneInfo

import icalendar
import recurring_ical_events
import recurring_ical_events.adapters.component
import recurring_ical_events.series.rrule


def by_instant(time):
    """An instance's identity as RFC 5545 names it (§3.8.4.4, §3.8.5.1): its date-time. The
    package also keys an aware time by its naive local reading, which equals another instance's
    naive UTC reading when they are an offset apart (00:45 and 01:45 in London in summer), so
    one EXDATE removed both: aware times are keyed by their instant alone here."""
    if isinstance(time, datetime.datetime) and time.tzinfo is not None:
        return (rfc_instant(time).astimezone(datetime.timezone.utc).replace(tzinfo=None),)
    return recurring_ical_events.util.to_recurrence_ids(time)


recurring_ical_events.series.rrule.to_recurrence_ids = by_instant
recurring_ical_events.adapters.component.to_recurrence_ids = by_instant


GAPS = {"read": 0}


def rfc_instant(value):
    """An aware time as RFC 5545 §3.3.5 reads it: a wall time its zone skips takes the offset
    before the gap (the offset a day earlier; gaps last hours)."""
    naive = value.replace(tzinfo=None)
    utc = datetime.timezone.utc
    if value.astimezone(utc).astimezone(value.tzinfo).replace(tzinfo=None) == naive:
        return value
    GAPS["read"] += 1
    before = value.tzinfo.utcoffset(naive - datetime.timedelta(days=1))
    return (naive - before).replace(tzinfo=utc)


def instant(value, zone):
    """Unix seconds of an occurrence's start or end, a date or floating time placed in `zone`."""
    if not isinstance(value, datetime.datetime):
        value = datetime.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=zone)
    return int(rfc_instant(value).timestamp())


def is_zoned(value):
    return isinstance(value, datetime.datetime) and value.tzinfo is not None


def exact_length(event, zone):
    """An event's exact length in seconds: its DURATION, or DTEND minus DTSTART as instants."""
    if "DURATION" in event:
        return event["DURATION"].dt.total_seconds()
    if "DTEND" in event:
        return instant(event["DTEND"].dt, zone) - instant(event["DTSTART"].dt, zone)
    return 0


def exact_lengths(calendar, zone):
    """The series' exact instance length (seconds) from each THISANDFUTURE split on (the
    master's from the start), each RDATE period's by its start, and the start and exact length
    of each override by the instant of the instance it replaces."""
    lengths, periods, overridden = [], {}, {}
    for event in calendar.walk("VEVENT"):
        if "RECURRENCE-ID" in event:
            replaced = instant(event["RECURRENCE-ID"].dt, zone)
            # The package keeps the first of overrides of one instance (equal SEQUENCE).
            overridden.setdefault(
                replaced, (instant(event["DTSTART"].dt, zone), exact_length(event, zone))
            )
            if event["RECURRENCE-ID"].params.get("RANGE", "").upper() == "THISANDFUTURE":
                lengths.append((replaced, exact_length(event, zone)))
            continue
        lengths.append((float("-inf"), exact_length(event, zone)))
        rdates = event.get("RDATE", [])
        for rdate in rdates if isinstance(rdates, list) else [rdates]:
            for value in rdate.dts:
                if isinstance(value.dt, tuple):
                    begin, end = value.dt
                    periods[instant(begin, zone)] = (
                        end.total_seconds()
                        if isinstance(end, datetime.timedelta)
                        else instant(end, zone) - instant(begin, zone)
                    )
    return sorted(lengths), periods, overridden


def length_at(lengths, replaced):
    """The length of the part of a split series an instance (by the start it replaces) is in."""
    return [length for since, length in lengths if since <= replaced][-1]


def expand(case):
    zone = ZoneInfo(case["zone"])
    start = datetime.datetime.fromtimestamp(case["from"], zone)
    stop = datetime.datetime.fromtimestamp(case["to"], zone)
    calendar = icalendar.Calendar.from_ical(case["ics"])
    lengths, periods, overridden = exact_lengths(calendar, zone)
    GAPS["read"] = 0
    spans, computed_starts, repeated = [], set(), 0
    for event in recurring_ical_events.of(calendar).between(start, stop):
        begin, its_end = instant(event["DTSTART"].dt, zone), instant(event["DTEND"].dt, zone)
        end = its_end
        # Instances after a THISANDFUTURE change carry its RECURRENCE-ID: an override is the
        # one that starts where its component does.
        replaced = instant(event["RECURRENCE-ID"].dt, zone)
        own_start, own_length = overridden.get(replaced, (None, None))
        computed = own_start != begin
        if computed and begin in computed_starts:
            repeated += 1
            continue
        if computed:
            computed_starts.add(begin)
            length = periods.get(replaced, length_at(lengths, replaced))
        else:
            length = own_length
        if is_zoned(event["DTSTART"].dt):
            end = begin + int(length)
        spans.append((begin, end, its_end))
    return {"spans": sorted(spans), "repeated": repeated, "gaps": GAPS["read"]}


def main():
    out = {}
    for case in json.load(open(sys.argv[1], encoding="utf-8")):
        try:
            out[case["id"]] = expand(case)
        except Exception as e:  # a refusal is an answer to compare, not a crash
            out[case["id"]] = {"error": f"{type(e).__name__}: {e}"}
    json.dump(out, sys.stdout)


main()
