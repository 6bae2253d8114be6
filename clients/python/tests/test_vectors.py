"""Unit tests: every shared vector (clients/vectors.json) through redis-py's
own RESP2/RESP3 parsers (bytes and decoded replies, the cluster parser too)
and then through the package's command builders and reply parsers."""

from __future__ import annotations

import dataclasses
import json
import socket
from pathlib import Path
from typing import Any

import pytest
from redis._parsers import _RESP2Parser, _RESP3Parser
from redis._parsers.encoders import Encoder
from redis.cluster import ClusterParser
from redis.exceptions import ResponseError

import ticketgate
from ticketgate import commands, errors

VECTORS = json.loads((Path(__file__).resolve().parents[2] / "vectors.json").read_text())["vectors"]
PARSERS = {
    "resp2": [_RESP2Parser, ClusterParser],
    "resp3": [_RESP3Parser],
}


class FakeConnection:
    """What redis-py's parsers read from: a socket holding one reply."""

    def __init__(self, raw: bytes, decode: bool):
        self._sock, self._peer = socket.socketpair()
        self._peer.sendall(raw)
        self.socket_timeout = 1.0
        self.encoder = Encoder("utf-8", "strict", decode)

    def close(self) -> None:
        self._sock.close()
        self._peer.close()


def redis_py_reply(parser_class: type, raw: bytes, decode: bool) -> Any:
    """The reply as redis-py hands it over (an error as its exception)."""
    conn = FakeConnection(raw, decode)
    parser = parser_class(65536)
    try:
        parser.on_connect(conn)
        return parser.read_response()
    finally:
        parser.on_disconnect()
        conn.close()


def build(call: dict) -> commands.Call:
    builder = getattr(commands, call["method"])
    # `from` is a Python keyword: the option is `from_`.
    options = {("from_" if k == "from" else k): v for k, v in call["options"].items()}
    return builder(*call["args"], **options)


def typed(value: Any) -> dict:
    """Our typed value in the vectors' language-neutral form."""
    if value is None:
        return {"kind": "nil"}
    if isinstance(value, ticketgate.Status):
        fields = {k: v for k, v in vars(value).items() if v is not None or k == "incarnation"}
        if not value.resale:  # STATUS sends `resale` only when some are listed
            del fields["resale"]
        return {"kind": "status", "value": fields}
    if isinstance(value, ticketgate.Order):
        fields = {k: v for k, v in vars(value).items() if v is not None}
        return {"kind": "order", "value": fields}
    if isinstance(value, ticketgate.Layout):
        return {"kind": "layout", "value": dataclasses.asdict(value)}
    if isinstance(value, str):
        return {"kind": "seatmap", "value": value}
    if isinstance(value, bool):
        return {"kind": "bool", "value": value}
    if isinstance(value, list) and value and isinstance(value[0], ticketgate.Allocation):
        return {"kind": "allocations", "value": [vars(a) for a in value]}
    if isinstance(value, list):
        return {"kind": "tickets", "value": value}
    return {"kind": "integer", "value": value}


def expected(vector: dict) -> dict:
    """The vector's expectation, with kinds our Python types cannot tell apart
    merged (a ticket and a count are both `int`; `ok` is `None`; no
    allocations and no tickets are both `[]`)."""
    expect = dict(vector["expect"])
    if expect == {"kind": "allocations", "value": []}:
        expect["kind"] = "tickets"
    if expect["kind"] == "ticket":
        expect["kind"] = "integer"
    if expect["kind"] == "ok":
        expect = {"kind": "nil"}
    return expect


def test_vectors_exist(vectors):
    assert len(vectors) > 50
    codes = {v["expect"]["code"] for v in vectors if v["expect"]["kind"] == "error"}
    assert {"SOLDOUT", "NOEVENT", "EXISTS", "LIMIT", "TRYAGAIN", "ERR"} <= codes


@pytest.mark.parametrize("vector", VECTORS, ids=[v["name"] for v in VECTORS])
def test_vector_parses(vector):
    """Every parser (RESP2, cluster RESP2, RESP3), bytes and decoded replies."""
    failures = []
    for proto, classes in PARSERS.items():
        for cls in classes:
            for decode in (False, True):
                try:
                    check_vector(vector, proto, cls, decode)
                except AssertionError as e:
                    failures.append(f"{cls.__name__}, decode={decode}: {e}")
    assert not failures, "\n".join(failures)


def check_vector(vector: dict, proto: str, parser_class: type, decode: bool) -> None:
    raw = vector[proto].encode()
    reply = redis_py_reply(parser_class, raw, decode)
    expect = expected(vector)
    if isinstance(reply, ResponseError):
        mapped = errors.from_response_error(reply)
        assert isinstance(mapped, ticketgate.TicketGateError)
        assert expect["kind"] == "error", f"got error {mapped!r}"
        assert mapped.code == expect["code"]
        assert type(mapped) is errors.BY_CODE.get(expect["code"], ticketgate.TicketGateError)
        if not (parser_class is ClusterParser and expect["code"] == "TRYAGAIN"):
            # redis-py's cluster parser drops TRYAGAIN's text (and retries it).
            assert mapped.message == expect["message"]
        return
    assert vector["call"] is not None, "an operator command answered without an error"
    got = typed(build(vector["call"]).parse(reply))
    assert got == expect, f"{got} != {expect}"


def test_command_builders_send_the_vectors_argv(vectors):
    calls = [v for v in vectors if v["call"] is not None]
    assert len(calls) > 50
    for vector in calls:
        argv = [str(a) for a in build(vector["call"]).argv]
        assert argv == vector["command"], vector["name"]


def build_argv(method: str, *args: Any, **options: Any) -> list[str]:
    return [str(a) for a in getattr(commands, method)(*args, **options).argv]


def test_seat_options_go_in_order_and_seats_last():
    argv = build_argv(
        "claim", "e", "u", count=2, hold=0, section="A", category="box", accessible=1, split=True
    )
    assert argv[3:] == "COUNT 2 HOLD 0 SECTION A CATEGORY box ACCESSIBLE 1 SPLIT".split()
    assert build_argv("claim", "e", "u", hold=5, seats=[3, 1]) == [
        *["ticket.claim", "e", "u", "HOLD", "5", "SEATS", "3", "1"]
    ]
    layout = {"sections": [{"name": "A", "rows": [{"name": "1", "seats": 2}]}]}
    assert build_argv("init", "e", 2, seats=layout)[-2:] == [
        "SEATS",
        json.dumps(layout).replace(" ", ""),
    ]


def test_allocation_options_go_in_order_and_seats_last():
    argv = build_argv("allocate", "e", "house", 4, section="A", category="box", key="k", release=99)
    assert argv[3:] == "COUNT 4 SECTION A CATEGORY box KEY k RELEASE 99".split()
    assert build_argv("allocate", "e", "p", seats=[3, 1], key="k")[3:] == [
        *["KEY", "k", "SEATS", "3", "1"]
    ]
    assert build_argv("release", "e", "p")[1:] == ["e", "p"]
    assert build_argv("release", "e", "p", seats=[2])[3:] == ["SEATS", "2"]
    argv = build_argv("claim", "e", "u", count=2, split=True, from_="p", key="k", seats=[5, 6])
    assert argv[3:] == "COUNT 2 SPLIT FROM p KEY k SEATS 5 6".split()


def test_allocations_parse_with_and_without_a_release():
    reply = [[b"house", 4, 0, None], [b"partner", 2, 1, 1893456000000]]
    assert commands.allocations("e").parse(reply) == [
        ticketgate.Allocation("house", 4, 0, None),
        ticketgate.Allocation("partner", 2, 1, 1893456000000),
    ]
    assert commands.allocations("e").parse([]) == []


def test_layout_names_seat_ids():
    vector = next(v for v in VECTORS if v["name"] == "layout")
    layout = commands.layout("s1").parse(vector["resp2"].split("\r\n")[1])
    assert layout is not None
    assert [layout.seat_name(i) for i in (1, 6, 7, 10)] == ["A-1-1", "A-1-6", "A-2-101", "A-2-104"]
    assert layout.seat(7).accessible and not layout.seat(8).accessible
    assert (layout.total, layout.categories) == (10, ["front", "box"])
    with pytest.raises(KeyError):
        layout.seat(11)


def test_seat_errors_are_typed():
    for code, cls in (
        ("NOTOGETHER", ticketgate.NotTogether),
        ("TAKEN", ticketgate.Taken),
        ("ORPHAN", ticketgate.Orphan),
        ("SHORT", ticketgate.Short),
        ("NOKEY", ticketgate.NoKey),
        ("NOALLOCATION", ticketgate.NoAllocation),
    ):
        mapped = errors.from_response_error(ResponseError(f"{code} seat 'A-1-1' is taken"))
        assert type(mapped) is cls and mapped.code == code


def test_cluster_tryagain_without_text_is_typed():
    from redis.exceptions import TryAgainError

    mapped = errors.from_response_error(TryAgainError())
    assert isinstance(mapped, ticketgate.TryAgain)
    assert mapped.code == "TRYAGAIN"


def test_unknown_code_keeps_its_code():
    mapped = errors.from_response_error(
        ResponseError("QUEUE event 'e' sells through its queue: TICKET.WAIT")
    )
    assert isinstance(mapped, ticketgate.Queue)
    mapped = errors.from_response_error(ResponseError("some text without a code"))
    assert (type(mapped), mapped.code) == (ticketgate.Invalid, "ERR")
