#!/usr/bin/env python3
"""Records clients/vectors.json from a real redis-server with the module.

Runs one fixed script of TICKET.* commands twice on a fresh server, once
over RESP2 and once over RESP3, and stores for every command the exact reply
bytes of both protocols with the typed value a client must turn them into.
Each typed value is written by hand below and checked against what the
server answered, so a change in the module's replies fails here first.
The format is described in clients/vectors/README.md.

    python3 clients/vectors/generate.py [--redis-server PATH] [--module PATH] [--out FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import testenv  # noqa: E402 (after the path set-up above)

FORMAT = 1
OUT = HERE.parent / "vectors.json"
# Volatile values are replaced in the raw bytes (same length for bulk strings).
NORMAL_INCARNATION = "1111111111111111"
NORMAL_EXPIRES_AT = 4102444800000  # 2100-01-01T00:00:00Z
# A draw's seed is random per event, and so its commitment: both are replaced,
# the commitment by the normalised seed's own, so the pair still verifies.
NORMAL_SEED = "5eed" * 16
NORMAL_DRAW = hashlib.sha256(bytes.fromhex(NORMAL_SEED)).hexdigest()
# A USED error names the time of the admitting scan: replaced by this one.
NORMAL_SCANNED_AT = 4102444800000
ENTERED = -1  # WAIT/POSITION of a draw event before its draw
FAR_FUTURE = 4102444800000
LATER_STILL = 4102448400000
# Option order the wrappers send, per method: (option, RESP word, is a flag).
OPTIONS = {
    "init": [
        ("opens", "OPENS"),
        ("closes", "CLOSES"),
        ("hold", "HOLD"),
        ("limit", "LIMIT"),
        ("offer", "OFFER"),
        ("draw", "DRAW"),
        ("admit", "ADMIT"),
        ("transfer_until", "TRANSFER_UNTIL"),
        ("seats", "SEATS"),
    ],
    "claim": [
        ("count", "COUNT"),
        ("hold", "HOLD"),
        ("section", "SECTION"),
        ("category", "CATEGORY"),
        ("accessible", "ACCESSIBLE"),
        ("split", "SPLIT"),
        ("from", "FROM"),
        ("key", "KEY"),
        ("seats", "SEATS"),
    ],
    "allocate": [
        ("count", "COUNT"),
        ("section", "SECTION"),
        ("category", "CATEGORY"),
        ("key", "KEY"),
        ("release", "RELEASE"),
        ("seats", "SEATS"),
    ],
    "release": [("count", "COUNT"), ("seats", "SEATS")],
    "transfer": [("tickets", "TICKETS")],
    "resell": [("tickets", "TICKETS")],
    "unlist": [("tickets", "TICKETS")],
    "scan": [("gate", "GATE")],
    "wait": [("count", "COUNT")],
    "drop": [("force", "FORCE")],
}


def ok():
    return {"kind": "ok"}


def ticket(n):
    return {"kind": "ticket", "value": n}


def tickets(ns):
    return {"kind": "tickets", "value": ns}


def integer(n):
    return {"kind": "integer", "value": n}


def boolean(b):
    return {"kind": "bool", "value": b}


def nil():
    return {"kind": "nil"}


def err(code, message):
    return {"kind": "error", "code": code, "message": message}


def order(ts, state, expires_at=0, seats=None, gens=None):
    """An order; `gens` (each ticket's generation) is 1 for every ticket
    unless given (a transferred ticket's is higher)."""
    value = {"tickets": ts, "state": state, "expires_at": expires_at}
    value |= {"seats": seats} if seats else {}
    return {"kind": "order", "value": value | {"gens": gens or [1] * len(ts)}}


def layout(value):
    return {"kind": "layout", "value": value}


def seatmap(value):
    return {"kind": "seatmap", "value": value}


def allocations(value):
    return {"kind": "allocations", "value": value}


def allocation(name, free, claimed, release=None):
    return {"name": name, "free": free, "claimed": claimed, "release": release}


def status(total, remaining, claimed, **rest):
    value = {
        "total": total,
        "remaining": remaining,
        "claimed": claimed,
        "status": "open",
    }
    value |= {"opens_at": 0, "closes_at": 0, "unsynced": 1, "held": 0, "waiting": 0}
    value["incarnation"] = NORMAL_INCARNATION
    value |= rest
    return {"kind": "status", "value": value}


def build_command(method, args, options):
    """The argv a wrapper sends for a call: lower-case name, options in order."""
    argv = [f"ticket.{method}", *map(str, args)]
    for name, word in OPTIONS.get(method, []):
        value = options.get(name)
        if value is True:
            argv.append(word)
        elif isinstance(value, list):
            argv += [word, *map(str, value)]
        elif value is not None and value is not False:
            argv += [word, str(value)]
    return argv


def V(name, method, args, expect, **options):
    """A vector for a wrapper method (`call` in the JSON)."""
    return (
        "vector",
        name,
        {"method": method, "args": args, "options": options},
        None,
        expect,
    )


# Vectors whose message is Redis's own text, which differs between versions
# (7.0: "this user has no permissions...", 8: "User tg-app has no ..."):
# regenerating on another version compares their code only.
VARIES_BY_VERSION = {"drop: no permission (ACL)"}


def R(name, argv, expect):
    """A vector for a command no wrapper method sends (an operator command,
    a hand-made bad call): for the error mapping only."""
    return ("vector", name, None, argv, expect)


def S(*argv):
    """A setup command, not recorded (hand edits that provoke an error)."""
    return ("setup", None, None, list(argv), None)


NOPERM_USER = [
    "ACL",
    "SETUSER",
    "tg-app",
    "on",
    ">pw",
    "~*",
    "&*",
    "+@all",
    "-ticket.drop",
]

# A seated event: section A, row 1 of six seats (ids 1-6, A-1-1..A-1-6), row
# 2 of four labelled from 101 (ids 7-10), its first a wheelchair space, and
# category "box".
HALL = json.dumps(
    {
        "sections": [
            {
                "name": "A",
                "category": "front",
                "rows": [
                    {"name": "1", "seats": 6},
                    {"name": "2", "seats": 4, "first": 101, "accessible": [1], "category": "box"},
                ],
            }
        ]
    },
    separators=(",", ":"),
)
HALL_STORED = {
    "sections": [
        {
            "name": "A",
            "category": "front",
            "rows": [
                {
                    "name": "1",
                    "seats": 6,
                    "first": 1,
                    "blocked": [],
                    "accessible": [],
                    "rank": 0,
                    "center": 3.5,
                    "category": "front",
                    "first_id": 1,
                },
                {
                    "name": "2",
                    "seats": 4,
                    "first": 101,
                    "blocked": [],
                    "accessible": [1],
                    "rank": 1,
                    "center": 2.5,
                    "category": "box",
                    "first_id": 7,
                },
            ],
        }
    ]
}
SEATED = [
    V("init: seated", "init", ["s1", 10], ok(), limit=4, seats=HALL),
    V("layout", "layout", ["s1"], layout(HALL_STORED)),
    V("layout: not seated", "layout", ["e2"], nil()),
    V("seatmap: all free", "seatmap", ["s1"], seatmap("..........")),
    V("seatmap: not seated", "seatmap", ["e2"], nil()),
    V("claim: best available", "claim", ["s1", "ann"], tickets([3, 4]), count=2),
    V("claim: picked seat taken", "claim", ["s1", "bob"], err("TAKEN", None), seats=[4]),
    V(
        "claim: picked seat leaves one alone",
        "claim",
        ["s1", "bob"],
        err("ORPHAN", None),
        seats=[8],
    ),
    V("claim: picked seats", "claim", ["s1", "bob"], tickets([5, 6]), seats=[5, 6]),
    V(
        "claim: wheelchair space",
        "claim",
        ["s1", "cy"],
        tickets([7, 8]),
        count=2,
        hold=600000,
        accessible=1,
    ),
    V("claim: not together", "claim", ["s1", "dee"], err("NOTOGETHER", None), count=3),
    V(
        "claim: section and category",
        "claim",
        ["s1", "eve"],
        tickets([1, 2]),
        count=2,
        section="A",
        category="front",
    ),
    V("claim: split", "claim", ["s1", "fay"], err("SOLDOUT", None), count=3, split=True),
    V("claim: unknown category", "claim", ["s1", "gus"], err("ERR", None), count=1, category="x"),
    V(
        "claim: seat options, event not seated",
        "claim",
        ["e2", "gus"],
        err("ERR", None),
        count=1,
        section="A",
    ),
    V(
        "status: seated",
        "status",
        ["s1"],
        status(10, 2, 8, unsynced=5, held=2, categories={"front": 0, "box": 2}, accessible=0),
    ),
    V(
        "order: seats",
        "order",
        ["s1", "cy"],
        order([7, 8], "held", NORMAL_EXPIRES_AT, ["A-2-101", "A-2-102"]),
    ),
    V("seatmap: held and sold", "seatmap", ["s1"], seatmap("sssssshh..")),
]

# Allocations: a general-admission event g1 of 10 (house seats released in
# 2100, a partner with a key), and the seated HALL again as s2.
FROM_PARTNER = {"from": "partner", "key": "s3cret"}
ALLOCATIONS = [
    V("init: for allocations", "init", ["g1", 10], ok(), limit=4),
    V("allocations: none", "allocations", ["g1"], allocations([])),
    V(
        "allocate: count, release time",
        "allocate",
        ["g1", "house"],
        tickets([1, 2, 3]),
        count=3,
        release=NORMAL_EXPIRES_AT,
    ),
    V("allocate: key", "allocate", ["g1", "partner"], tickets([4, 5]), count=2, key="s3cret"),
    V(
        "allocate: again with another key",
        "allocate",
        ["g1", "partner"],
        err("NOKEY", None),
        count=1,
        key="other",
    ),
    V("allocate: short", "allocate", ["g1", "big"], err("SHORT", None), count=6),
    V("status: allocated", "status", ["g1"], status(10, 5, 0, unsynced=3, allocated=5)),
    V(
        "claim: from without its key",
        "claim",
        ["g1", "fan1"],
        err("NOKEY", None),
        count=1,
        **{"from": "partner"},
    ),
    V(
        "claim: from with its key",
        "claim",
        ["g1", "fan1"],
        tickets([4, 5]),
        count=2,
        **FROM_PARTNER,
    ),
    V(
        "claim: from, none left",
        "claim",
        ["g1", "fan2"],
        err("SOLDOUT", None),
        count=1,
        **FROM_PARTNER,
    ),
    V(
        "claim: from an unknown allocation",
        "claim",
        ["g1", "fan2"],
        err("NOALLOCATION", None),
        count=1,
        **{"from": "nope"},
    ),
    V("claim: public, allocated skipped", "claim", ["g1", "pub"], ticket(6)),
    V(
        "allocations",
        "allocations",
        ["g1"],
        allocations([allocation("house", 3, 0, NORMAL_EXPIRES_AT), allocation("partner", 0, 2)]),
    ),
    V("release: count", "release", ["g1", "house"], integer(1), count=1),
    V("release: more than it has", "release", ["g1", "house"], err("SHORT", None), count=5),
    V("release: all", "release", ["g1", "house"], integer(2)),
    V("release: unknown allocation", "release", ["g1", "house"], err("NOALLOCATION", None)),
    V("init: seated, for allocations", "init", ["s2", 10], ok(), limit=4, seats=HALL),
    V("allocate: seats", "allocate", ["s2", "house"], tickets([5, 6]), seats=[5, 6], key="k"),
    V(
        "allocate: seated count",
        "allocate",
        ["s2", "kill"],
        tickets([3, 4]),
        count=2,
        section="A",
        category="front",
    ),
    V("allocate: picked seat not free", "allocate", ["s2", "x"], err("TAKEN", None), seats=[5]),
    V("seatmap: allocated", "seatmap", ["s2"], seatmap("..aaaa....")),
    V(
        "claim: picked seats from",
        "claim",
        ["s2", "vip"],
        tickets([5, 6]),
        seats=[5, 6],
        **{"from": "house", "key": "k"},
    ),
    V("release: seats", "release", ["s2", "kill"], integer(1), seats=[4]),
    V(
        "status: seated, allocated",
        "status",
        ["s2"],
        status(10, 7, 2, unsynced=5, categories={"front": 3, "box": 4}, accessible=1, allocated=1),
    ),
]

# After the sale: sold tickets change hands (a generation up each) and are
# scanned at the door once. x1 of 10, LIMIT 3; x2 stops transfers in 2001.
SCANNED_AT = f"ticket 2 was scanned at {NORMAL_SCANNED_AT} at gate 'north'"
AFTER_SALE = [
    V("init: for transfers", "init", ["x1", 10], ok(), hold=600000, limit=3),
    V(
        "claim: sold at once, to give away",
        "claim",
        ["x1", "ann"],
        tickets([1, 2]),
        count=2,
        hold=0,
    ),
    V(
        "order: generations at sale",
        "order",
        ["x1", "ann"],
        order([1, 2], "sold", gens=[1, 1]),
    ),
    V(
        "transfer: one ticket",
        "transfer",
        ["x1", "ann", "ben"],
        integer(1),
        tickets=[2],
    ),
    V("order: a generation up", "order", ["x1", "ben"], order([2], "sold", gens=[2])),
    V("scan: admitted", "scan", ["x1", 2, 2], ok(), gate="north"),
    V("scan: used", "scan", ["x1", 2, 2], err("USED", SCANNED_AT)),
    V(
        "scan: stale",
        "scan",
        ["x1", 2, 1],
        err("STALE", "ticket 2 was transferred (generation 2 now)"),
    ),
    V("scan: not sold", "scan", ["x1", 9, 1], err("NOTSOLD", "ticket 9 is free")),
    V(
        "transfer: a scanned ticket",
        "transfer",
        ["x1", "ben", "cy"],
        err("USED", SCANNED_AT),
    ),
    V("claim: held, for transfers", "claim", ["x1", "dee"], ticket(3)),
    V(
        "order: a held order's generations",
        "order",
        ["x1", "dee"],
        order([3], "held", NORMAL_EXPIRES_AT),
    ),
    V(
        "transfer: a held order",
        "transfer",
        ["x1", "dee", "cy"],
        err("NOTSOLD", "ticket 3 is held, not sold"),
    ),
    V("scan: held", "scan", ["x1", 3, 1], err("NOTSOLD", "ticket 3 is held, not sold")),
    V(
        "transfer: nothing held",
        "transfer",
        ["x1", "nobody", "cy"],
        err(
            "NOHOLD",
            "user 'nobody' holds no tickets of event 'x1' "
            "(never claimed, cancelled, or the hold expired)",
        ),
    ),
    V(
        "claim: up to the limit",
        "claim",
        ["x1", "eve"],
        tickets([4, 5, 6]),
        count=3,
        hold=0,
    ),
    V(
        "transfer: over the receiver's limit",
        "transfer",
        ["x1", "ann", "eve"],
        err("LIMIT", "event 'x1' allows at most 3 tickets per user, asked for 4"),
    ),
    V(
        "transfer: to oneself",
        "transfer",
        ["x1", "ann", "ann"],
        err("ERR", "TRANSFER needs two different users"),
    ),
    V(
        "transfer: a ticket not the giver's",
        "transfer",
        ["x1", "ann", "fay"],
        err("NOTSOLD", "ticket 5 is not the giver's"),
        tickets=[5],
    ),
    V("transfer: all", "transfer", ["x1", "ann", "fay"], integer(1)),
    V("init: transfers until", "init", ["x2", 5], ok(), transfer_until=1000000000000),
    S("TICKET.CLAIM", "x2", "gus", "HOLD", "0"),
    V(
        "transfer: after TRANSFER_UNTIL",
        "transfer",
        ["x2", "gus", "hal"],
        err("CLOSED", "event 'x2' is closed"),
    ),
]

# Face-value resale: a seller lists sold tickets (still theirs until a
# buyer confirms) and takes back what no buyer holds. y1 of 10, LIMIT 4:
# ann owns 1-3, ben's 4 was scanned, cy holds 5.
RESALE = [
    S("TICKET.INIT", "y1", "10", "HOLD", "600000", "LIMIT", "4"),
    S("TICKET.CLAIM", "y1", "ann", "COUNT", "3", "HOLD", "0"),
    S("TICKET.CLAIM", "y1", "ben", "HOLD", "0"),
    S("TICKET.SCAN", "y1", "4", "1"),
    S("TICKET.CLAIM", "y1", "cy"),
    V("resell: one ticket", "resell", ["y1", "ann"], integer(1), tickets=[1]),
    V(
        "resell: listed already",
        "resell",
        ["y1", "ann"],
        err("LISTED", "ticket 1 is listed already"),
        tickets=[1],
    ),
    V("resell: the rest", "resell", ["y1", "ann"], integer(2)),
    V(
        "transfer: a listed ticket",
        "transfer",
        ["y1", "ann", "dan"],
        err("LISTED", "ticket 1 is listed for resale (TICKET.UNLIST it first)"),
    ),
    V(
        "status: resale",
        "status",
        ["y1"],
        status(10, 5, 5, unsynced=7, held=1, resale=3),
    ),
    V(
        "resell: a held order",
        "resell",
        ["y1", "cy"],
        err("NOTSOLD", "ticket 5 is held, not sold"),
    ),
    V(
        "resell: a scanned ticket",
        "resell",
        ["y1", "ben"],
        err("USED", f"ticket 4 was scanned at {NORMAL_SCANNED_AT}"),
    ),
    V(
        "resell: nothing held",
        "resell",
        ["y1", "nobody"],
        err(
            "NOHOLD",
            "user 'nobody' holds no tickets of event 'y1' "
            "(never claimed, cancelled, or the hold expired)",
        ),
    ),
    V("unlist: one ticket", "unlist", ["y1", "ann"], integer(1), tickets=[1]),
    V(
        "unlist: not listed",
        "unlist",
        ["y1", "ann"],
        err("NOTLISTED", "ticket 1 is not listed by 'ann'"),
        tickets=[1],
    ),
    V("unlist: the rest", "unlist", ["y1", "ann"], integer(2)),
    V("unlist: none listed", "unlist", ["y1", "ann"], integer(0)),
]

SCRIPT = [
    V("init", "init", ["e1", 2], ok()),
    V("init: exists", "init", ["e1", 2], err("EXISTS", "event 'e1' already exists")),
    V("status: new event", "status", ["e1"], status(2, 2, 0)),
    V("claim: first ticket", "claim", ["e1", "alice"], ticket(1)),
    V("claim: again gives the same ticket", "claim", ["e1", "alice"], ticket(1)),
    V("holder", "holder", ["e1", "alice"], ticket(1)),
    V("holder: none", "holder", ["e1", "nobody"], nil()),
    V("order: sold", "order", ["e1", "alice"], order([1], "sold")),
    V("order: none", "order", ["e1", "nobody"], nil()),
    V("claim: second ticket", "claim", ["e1", "bob"], ticket(2)),
    V(
        "claim: sold out",
        "claim",
        ["e1", "carol"],
        err("SOLDOUT", "event 'e1' is sold out"),
    ),
    V("wait: first in line", "wait", ["e1", "carol"], integer(1)),
    V("wait: with count", "wait", ["e1", "dave"], integer(2), count=1),
    V("position", "position", ["e1", "dave"], integer(2)),
    V("position: not waiting", "position", ["e1", "nobody"], nil()),
    V(
        "wait: holding",
        "wait",
        ["e1", "alice"],
        err(
            "HOLDING",
            "user 'alice' already holds tickets of event 'e1': nothing to wait for",
        ),
    ),
    V("leave", "leave", ["e1", "dave"], boolean(True)),
    V("leave: not waiting", "leave", ["e1", "dave"], boolean(False)),
    V(
        "confirm: no hold",
        "confirm",
        ["e1", "zoë"],
        err(
            "NOHOLD",
            "user 'zo\\xc3\\xab' holds no tickets of event 'e1' "
            "(never claimed, cancelled, or the hold expired)",
        ),
    ),
    V("confirm: a final sale", "confirm", ["e1", "alice"], integer(1)),
    V("cancel", "cancel", ["e1", "bob"], ticket(2)),
    V("cancel: nothing held", "cancel", ["e1", "nobody"], nil()),
    V(
        "order: offered from the waiting list",
        "order",
        ["e1", "carol"],
        order([2], "held", NORMAL_EXPIRES_AT),
    ),
    V("status: held, waiting", "status", ["e1"], status(2, 0, 2, unsynced=5, held=1)),
    V("confirm: the offer", "confirm", ["e1", "carol"], integer(1)),
    V("close", "close", ["e1"], ok()),
    V("claim: closed", "claim", ["e1", "erin"], err("CLOSED", "event 'e1' is closed")),
    V("claim: a holder after close", "claim", ["e1", "alice"], ticket(1)),
    V("status: closed", "status", ["e1"], status(2, 0, 2, status="closed", unsynced=7)),
    V("open", "open", ["e1"], ok()),
    V(
        "drop: unsynced",
        "drop",
        ["e1"],
        err(
            "UNSYNCED",
            "event 'e1' has 8 log entries not yet drained; wait for the sidecar or use FORCE",
        ),
    ),
    V("drop: force", "drop", ["e1"], integer(2), force=True),
    V(
        "claim: no event",
        "claim",
        ["e1", "alice"],
        err("NOEVENT", "event 'e1' does not exist"),
    ),
    V(
        "status: no event",
        "status",
        ["e1"],
        err("NOEVENT", "event 'e1' does not exist"),
    ),
    V(
        "init: checkout options",
        "init",
        ["e2", 10],
        ok(),
        hold=600000,
        limit=3,
        offer=300000,
    ),
    V("claim: count", "claim", ["e2", "u1"], tickets([1, 2]), count=2),
    V("claim: count, already holding", "claim", ["e2", "u1"], tickets([1, 2]), count=3),
    V("order: held", "order", ["e2", "u1"], order([1, 2], "held", NORMAL_EXPIRES_AT)),
    V(
        "claim: over the limit",
        "claim",
        ["e2", "u2"],
        err("LIMIT", "event 'e2' allows at most 3 tickets per user, asked for 4"),
        count=4,
    ),
    V("claim: hold override", "claim", ["e2", "u2"], ticket(3), hold=1000000),
    V(
        "claim: count and final sale",
        "claim",
        ["e2", "u3"],
        tickets([4]),
        count=1,
        hold=0,
    ),
    V("confirm: a hold", "confirm", ["e2", "u1"], integer(2)),
    V("confirm: again", "confirm", ["e2", "u1"], integer(2)),
    V("status: checkout", "status", ["e2"], status(10, 6, 4, unsynced=5, held=1)),
    V(
        "wait: over the limit",
        "wait",
        ["e2", "u4"],
        err("LIMIT", "event 'e2' allows at most 3 tickets per user, asked for 5"),
        count=5,
    ),
    V("wait: offered at once", "wait", ["e2", "u4"], integer(0), count=2),
    V(
        "init: opens later",
        "init",
        ["e3", 5],
        ok(),
        opens=FAR_FUTURE,
        closes=LATER_STILL,
    ),
    V(
        "claim: not open",
        "claim",
        ["e3", "x"],
        err("NOTOPEN", f"event 'e3' opens at {FAR_FUTURE} (unix ms)"),
    ),
    V(
        "status: window",
        "status",
        ["e3"],
        status(5, 5, 0, opens_at=FAR_FUTURE, closes_at=LATER_STILL),
    ),
    V("init: closed window", "init", ["e4", 5], ok(), closes=1000000000000),
    V(
        "claim: past closes_at",
        "claim",
        ["e4", "x"],
        err("CLOSED", "event 'e4' is closed"),
    ),
    S("HDEL", "ticket:{e4}:meta", "incarnation"),
    V(
        "status: no incarnation (made before 0.3)",
        "status",
        ["e4"],
        status(5, 5, 0, closes_at=1000000000000, incarnation=None),
    ),
    V(
        "init: total out of range",
        "init",
        ["e5", 0],
        err("ERR", "total must be between 1 and 2147483647, got 0"),
    ),
    V(
        "init: hold out of range",
        "init",
        ["e5", 5],
        err("ERR", "HOLD must be between 0 and 604800000, got 99999999999"),
        hold=99999999999,
    ),
    # redis-py strips "ERR ": this one must not read as a LIMIT error.
    V(
        "init: limit out of range",
        "init",
        ["e5", 5],
        err("ERR", "LIMIT must be between 1 and 1000, got 0"),
        limit=0,
    ),
    V("claim: invalid event id", "claim", ["bad{id}", "u"], err("ERR", None)),
    V("claim: invalid user id", "claim", ["e2", "a\nb"], err("ERR", None)),
    V("claim: count out of range", "claim", ["e2", "u9"], err("ERR", None), count=0),
    R("init: unknown option", ["ticket.init", "e5", "5", "FOO", "1"], err("ERR", None)),
    R(
        "claim: wrong arity",
        ["ticket.claim", "e2"],
        err("ERR", "wrong number of arguments for 'ticket.claim' command"),
    ),
    S("SET", "ticket:{w1}:meta", "x"),
    V(
        "claim: wrong type",
        "claim",
        ["w1", "u"],
        err(
            "WRONGTYPE",
            "key 'ticket:{w1}:meta' holds the wrong kind of value (expected hash)",
        ),
    ),
    S("TICKET.INIT", "c1", "5"),
    S("HSET", "ticket:{c1}:meta", "total", "abc"),
    V(
        "claim: corrupt",
        "claim",
        ["c1", "u"],
        err("CORRUPT", "ticket:{c1}:meta has a missing or invalid field 'total'"),
    ),
    S("TICKET.INIT", "t1", "5"),
    S("TICKET.CLAIM", "t1", "a"),
    S("DEL", "ticket:{t1}:log"),
    V(
        "claim: keys disagree",
        "claim",
        ["t1", "b"],
        err(
            "TRYAGAIN",
            "the keys of event 't1' disagree (a slot migration in progress?); "
            "nothing changed, retry",
        ),
    ),
    R(
        "restore: not restoring",
        ["ticket.restore", "r1", "FREE", "1"],
        err(
            "NOTRESTORING",
            "event 'r1' is not being restored (TICKET.RESTORE E BEGIN first)",
        ),
    ),
    S(
        "TICKET.RESTORE",
        "r1",
        "BEGIN",
        NORMAL_INCARNATION,
        "10",
        "10",
        "open",
        "0",
        "0",
        "0",
        "1",
        "600000",
        "0",
        "0",
    ),
    V(
        "claim: being restored",
        "claim",
        ["r1", "u"],
        err("TRYAGAIN", "event 'r1' is being restored"),
    ),
    V(
        "status: being restored",
        "status",
        ["r1"],
        status(10, 0, 0, status="restoring", unsynced=0),
    ),
    R(
        "restore: incomplete",
        ["ticket.restore", "r1", "COMMIT"],
        err("INCOMPLETE", None),
    ),
    V("init: a draw", "init", ["d1", 1], ok(), hold=600000, draw=True),
    V(
        "status: a draw, not drawn yet",
        "status",
        ["d1"],
        status(1, 1, 0, status="closed", draw=NORMAL_DRAW),
    ),
    V("wait: enters the draw", "wait", ["d1", "ann"], integer(ENTERED)),
    V("wait: entering again changes nothing", "wait", ["d1", "ann"], integer(ENTERED)),
    V("position: entered the draw", "position", ["d1", "ann"], integer(ENTERED)),
    V("wait: another entrant", "wait", ["d1", "ben"], integer(ENTERED)),
    V(
        "claim: before the draw",
        "claim",
        ["d1", "zed"],
        err("NOTOPEN", "event 'd1' is not open yet: it opens at TICKET.OPEN"),
    ),
    V("open: draws", "open", ["d1"], ok()),
    V(
        "status: drawn",
        "status",
        ["d1"],
        status(1, 0, 1, held=1, waiting=1, unsynced=6, draw=NORMAL_DRAW, seed=NORMAL_SEED),
    ),
    V(
        "claim: the queue",
        "claim",
        ["d1", "zed"],
        err("QUEUE", "event 'd1' sells through its queue: TICKET.WAIT"),
    ),
    V("wait: after the draw, behind the entrants", "wait", ["d1", "zed"], integer(2)),
    V(
        "init: a draw with admit",
        "init",
        ["d2", 5],
        ok(),
        offer=300000,
        draw=True,
        admit=100,
    ),
    V(
        "status: a draw with admit",
        "status",
        ["d2"],
        status(5, 5, 0, status="closed", draw=NORMAL_DRAW, admit=100),
    ),
    V(
        "init: draw without hold or offer",
        "init",
        ["d3", 5],
        err("ERR", "DRAW needs HOLD > 0 or OFFER (its offers are held orders)"),
        draw=True,
    ),
    V(
        "init: admit 0",
        "init",
        ["d3", 5],
        err("ERR", "ADMIT must be between 1 and 1000000, got 0"),
        hold=600000,
        draw=True,
        admit=0,
    ),
    V(
        "init: admit without draw",
        "init",
        ["d3", 5],
        err("ERR", "ADMIT needs DRAW"),
        admit=10,
    ),
    *SEATED,
    *ALLOCATIONS,
    *AFTER_SALE,
    *RESALE,
    S(*NOPERM_USER),
    S("AUTH", "tg-app", "pw"),
    V("drop: no permission (ACL)", "drop", ["e2"], err("NOPERM", None), force=True),
    S("AUTH", "default", "unused"),
]


def normalise(raw: bytes) -> bytes:
    check_commitment(raw)
    for name, value in ((b"draw", NORMAL_DRAW), (b"seed", NORMAL_SEED)):
        raw = re.sub(
            rb"(" + name + rb"\r\n\$64\r\n)[0-9a-f]{64}",
            rb"\g<1>" + value.encode(),
            raw,
        )
    raw = re.sub(
        rb"(incarnation\r\n\$16\r\n)[0-9a-f]{16}",
        rb"\g<1>" + NORMAL_INCARNATION.encode(),
        raw,
    )
    raw = re.sub(rb"(^-USED .* scanned at )[0-9]+", rb"\g<1>%d" % NORMAL_SCANNED_AT, raw)
    return re.sub(rb"(expires_at\r\n:)[1-9][0-9]*", rb"\g<1>%d" % NORMAL_EXPIRES_AT, raw)


def check_commitment(raw: bytes) -> None:
    """A reply showing both a draw's seed and its commitment: they must match
    (SHA-256), before both are normalised away."""
    seed = re.search(rb"seed\r\n\$64\r\n([0-9a-f]{64})", raw)
    draw = re.search(rb"draw\r\n\$64\r\n([0-9a-f]{64})", raw)
    if seed and draw:
        digest = hashlib.sha256(bytes.fromhex(seed[1].decode())).hexdigest()
        if digest != draw[1].decode():
            raise AssertionError(f"the seed does not hash to the commitment: {raw!r}")


def record(conn: testenv.Connection) -> list[bytes | None]:
    """Runs the script on `conn`; the raw reply of each vector (None for setup)."""
    replies = []
    for kind, _name, call, argv, _expect in SCRIPT:
        if call is not None:
            argv = build_command(call["method"], call["args"], call["options"])
        raw = conn.raw(*argv)
        if kind == "setup":
            if raw.startswith(b"-"):
                raise RuntimeError(f"setup {argv} failed: {raw!r}")
            replies.append(None)
        else:
            replies.append(normalise(raw))
    return replies


def typed(call, parsed):
    """The language-neutral typed value of a parsed reply, for checking the
    hand-written expectations (the reference mapping every client follows)."""
    if isinstance(parsed, testenv.ReplyError):
        code, _, message = str(parsed).partition(" ")
        return err(code, message)
    if parsed is None:
        return nil()
    method = call["method"] if call else None
    if method in ("init", "open", "close", "scan"):
        return ok() if parsed == b"OK" else {"kind": "unexpected"}
    if method in ("claim", "allocate") and isinstance(parsed, list):
        return tickets(parsed)
    if method == "allocations":
        return allocations([allocation(plain(a[0]), *a[1:]) for a in parsed])
    if method in ("claim", "cancel", "holder"):
        return ticket(parsed)
    if method == "leave":
        return boolean(bool(parsed))
    if method in ("status", "order"):
        fields = parsed if isinstance(parsed, dict) else dict(zip(parsed[::2], parsed[1::2]))
        value = {k.decode(): plain(v) for k, v in fields.items()}
        if "categories" in value:  # category, free seats, ... -> an ordered object
            pairs = value["categories"]
            value["categories"] = dict(zip(pairs[::2], pairs[1::2]))
        return {"kind": method, "value": value}
    if method == "layout":
        return layout(json.loads(parsed))
    if method == "seatmap":
        return seatmap(parsed.decode())
    return integer(parsed)


def plain(value):
    """Bytes as text, arrays element-wise (ORDER's seats, STATUS's categories)."""
    if isinstance(value, bytes):
        return value.decode()
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def check(name, expect, got) -> list[str]:
    if expect["kind"] == "error" and expect["message"] is None:
        expect["message"] = got.get("message")  # long Redis/arg texts: recorded as answered
    return [] if got == expect else [f"{name!r}: expected {expect}, the server gave {got}"]


def generate(binary: str, module: str) -> dict:
    """Records the script over RESP2 and RESP3 on a fresh server; the document."""
    root = Path(tempfile.mkdtemp(prefix="ticketgate-vectors-"))
    try:
        server = testenv.Server(binary, module, root, cluster=False)
        try:
            by_protocol = {}
            for protocol in (2, 3):
                server.conn.call("FLUSHALL")
                server.conn.call("ACL", "DELUSER", "tg-app")
                server.conn.call("HELLO", protocol)
                by_protocol[protocol] = record(server.conn)
        finally:
            server.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return assemble(by_protocol, testenv.server_version(binary))


def assemble(by_protocol: dict[int, list], version: str) -> dict:
    vectors, mismatches = [], []
    for i, (kind, name, call, argv, expect) in enumerate(SCRIPT):
        if kind == "setup":
            continue
        expect = json.loads(json.dumps(expect))
        for protocol in (2, 3):
            got = typed(call, testenv.parse(by_protocol[protocol][i]))
            mismatches += check(f"{name} (RESP{protocol})", expect, got)
        command = build_command(call["method"], call["args"], call["options"]) if call else argv
        extra = {"varies_by_redis_version": True} if name in VARIES_BY_VERSION else {}
        vectors.append(
            {
                "name": name,
                "command": command,
                "call": call,
                "resp2": by_protocol[2][i].decode(),
                "resp3": by_protocol[3][i].decode(),
                "expect": expect,
            }
            | extra
        )
    if mismatches:
        raise AssertionError("the module answered otherwise:\n" + "\n".join(mismatches))
    return {
        "format": FORMAT,
        "about": "Raw replies of the ticketgate module and the typed value each must become; "
        "see clients/vectors/README.md. Generated by clients/vectors/generate.py: do not edit.",
        "recorded_with": f"redis-server {version}",
        "normalised": {
            "incarnation": NORMAL_INCARNATION,
            "expires_at": NORMAL_EXPIRES_AT,
            "seed": NORMAL_SEED,
            "draw": NORMAL_DRAW,
            "scanned_at": NORMAL_SCANNED_AT,
        },
        "vectors": vectors,
    }


def render(doc: dict) -> str:
    """Stable JSON, one line per field of a vector (readable diffs)."""

    def line(value) -> str:
        return json.dumps(value, ensure_ascii=False)

    head = ",\n".join(f" {line(k)}: {line(v)}" for k, v in doc.items() if k != "vectors")
    vectors = ",\n".join(
        "  {\n" + ",\n".join(f"   {line(k)}: {line(v)}" for k, v in vector.items()) + "\n  }"
        for vector in doc["vectors"]
    )
    return "{\n" + head + ',\n "vectors": [\n' + vectors + "\n ]\n}\n"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--module", default=str(testenv.module_path()))
    p.add_argument("--out", default=str(OUT))
    a = p.parse_args()
    Path(a.out).write_text(render(generate(a.redis_server, a.module)))
    print(f"wrote {a.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
