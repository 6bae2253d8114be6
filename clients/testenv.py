#!/usr/bin/env python3
"""Test servers for every client's integration tests (standard library only).

Starts, in temp dirs on free ports, a standalone redis-server and a 3-master
cluster (all slots assigned, cluster_state ok), both with the ticketgate
module, and with --sentinel also a primary and its replica (with the
module) under three sentinels (quorum 2, master name "tg", a master is down
after 1 s), runs a command with their addresses in the environment, tears
everything down and exits with the command's status:

    python3 clients/testenv.py [--redis-server PATH] [--module PATH] [--sentinel] -- CMD ARGS...

The command sees:

    TICKETGATE_TEST_REDIS          redis://127.0.0.1:PORT   (standalone)
    TICKETGATE_TEST_CLUSTER        127.0.0.1:P1,127.0.0.1:P2,127.0.0.1:P3
    TICKETGATE_TEST_REDIS_SERVER   the redis-server binary used
    TICKETGATE_TEST_REDIS_VERSION  its version, e.g. 7.0.15
    TICKETGATE_MODULE              the module loaded
    TICKETGATE_TEST_SENTINELS      127.0.0.1:S1,127.0.0.1:S2,127.0.0.1:S3   (--sentinel)
    TICKETGATE_TEST_SENTINEL_MASTER  tg, the name they monitor the primary under

A test fails the primary over with `SENTINEL FAILOVER tg` on a sentinel
(it waits up to ~6 s after a previous failover) and follows it through
its driver's Sentinel client.

A reshard for the clients' "recovers after MOVED" tests, any language:

    python3 clients/testenv.py move-slot --cluster HOST:P,... --key KEY --to HOST:P

moves the slot of KEY (e.g. `ticket:{e1}:meta`) with its keys to the node
HOST:P and tells every node. The module also has a small RESP client
(`Connection`) that clients/vectors/generate.py uses to record raw replies.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_MODULE = REPO / "target" / "release" / "libticketgate.so"
SLOT_COUNT = 16384
SENTINEL_MASTER = "tg"


class ReplyError(Exception):
    """An error reply (`-CODE message`), as text."""


class Connection:
    """A blocking RESP connection that keeps the raw bytes of each reply."""

    def __init__(self, host: str, port: int, timeout: float = 10.0):
        self.sock = socket.create_connection((host, port), timeout=timeout)
        self.buf = b""

    def close(self) -> None:
        self.sock.close()

    def send(self, *args: str | bytes | int) -> None:
        parts = [b"*%d\r\n" % len(args)]
        for arg in args:
            data = arg if isinstance(arg, bytes) else str(arg).encode()
            parts.append(b"$%d\r\n%s\r\n" % (len(data), data))
        self.sock.sendall(b"".join(parts))

    def raw(self, *args: str | bytes | int) -> bytes:
        """Sends one command and returns its reply's exact bytes."""
        self.send(*args)
        start = self._pos = 0
        self._parse()
        raw, self.buf = self.buf[start : self._pos], self.buf[self._pos :]
        return raw

    def call(self, *args: str | bytes | int):
        """Sends one command and returns its reply parsed (errors raised)."""
        value = parse(self.raw(*args))
        if isinstance(value, ReplyError):
            raise value
        return value

    def _line(self) -> bytes:
        while True:
            end = self.buf.find(b"\r\n", self._pos)
            if end >= 0:
                line, self._pos = self.buf[self._pos : end], end + 2
                return line
            self._fill()

    def _exactly(self, n: int) -> None:
        while len(self.buf) < self._pos + n + 2:
            self._fill()
        self._pos += n + 2

    def _fill(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("server closed the connection")
        self.buf += chunk

    def _parse(self) -> None:
        """Advances past one complete reply (any RESP2/RESP3 type)."""
        line = self._line()
        kind, rest = line[:1], line[1:]
        if kind in b"$=!" and rest != b"-1":
            self._exactly(int(rest))
        elif kind in b"*~>" and rest != b"-1":
            for _ in range(int(rest)):
                self._parse()
        elif kind == b"%" or kind == b"|":
            for _ in range(2 * int(rest)):
                self._parse()


def parse(raw: bytes):
    """Parses one reply's bytes: int, bytes, None, list, dict, ReplyError."""
    value, end = _parse_at(raw, 0)
    if end != len(raw):
        raise ValueError("trailing bytes after the reply")
    return value


def _parse_at(raw: bytes, pos: int):
    end = raw.index(b"\r\n", pos)
    kind, rest, pos = raw[pos : pos + 1], raw[pos + 1 : end], end + 2
    if kind == b"+":
        return rest, pos
    if kind == b"-":
        return ReplyError(rest.decode()), pos
    if kind == b":":
        return int(rest), pos
    if kind == b"_" or rest == b"-1":
        return None, pos
    if kind in b"$=!":
        n = int(rest)
        return raw[pos : pos + n], pos + n + 2
    if kind in b"*~>":
        items = []
        for _ in range(int(rest)):
            item, pos = _parse_at(raw, pos)
            items.append(item)
        return items, pos
    if kind == b"%":
        pairs = {}
        for _ in range(int(rest)):
            key, pos = _parse_at(raw, pos)
            pairs[key], pos = _parse_at(raw, pos)
        return pairs, pos
    if kind == b"#":
        return rest == b"t", pos
    if kind == b",":
        return float(rest), pos
    if kind == b"(":
        return int(rest), pos
    raise ValueError(f"unknown RESP type {kind!r}")


def free_port() -> int:
    """A free port whose cluster bus port (+10000) is free too."""
    while True:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        if port + 10000 < 65536 and _is_free(port + 10000):
            return port


def _is_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


class Server:
    """One redis-server process with the module, in its own temp dir."""

    def __init__(self, binary: str, module: str, root: Path, cluster: bool, extra=()):
        self.port = free_port()
        self.dir = root / str(self.port)
        self.dir.mkdir()
        args = [binary, "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--dir", str(self.dir), "--save", "", "--appendonly", "no"]
        args += ["--loadmodule", module, "--logfile", "redis.log", *extra]
        if cluster:
            args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
            args += ["--cluster-node-timeout", "5000"]
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        self.conn = self._connect()

    def _connect(self) -> Connection:
        deadline = time.monotonic() + 10
        while True:
            try:
                conn = Connection("127.0.0.1", self.port)
                conn.call("PING")
                return conn
            except (OSError, ReplyError):
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (self.dir / "redis.log").read_text(errors="replace")
                    raise RuntimeError(f"redis-server did not start:\n{log}") from None
                time.sleep(0.05)

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class Sentinel(Server):
    """One `redis-server --sentinel` process monitoring `primary` as "tg"."""

    def __init__(self, binary: str, root: Path, primary: Server):
        self.port = free_port()
        self.dir = root / f"sentinel-{self.port}"
        self.dir.mkdir()
        conf = self.dir / "sentinel.conf"
        conf.write_text(
            f"port {self.port}\nbind 127.0.0.1\ndir {self.dir}\nlogfile redis.log\n"
            f"sentinel monitor {SENTINEL_MASTER} 127.0.0.1 {primary.port} 2\n"
            f"sentinel down-after-milliseconds {SENTINEL_MASTER} 1000\n"
            f"sentinel failover-timeout {SENTINEL_MASTER} 3000\n"
        )
        self.proc = subprocess.Popen(
            [binary, str(conf), "--sentinel"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT
        )
        self.conn = self._connect()

    def ready(self, sentinels: int) -> bool:
        """Knows the other sentinels and one replica not flagged down."""
        fields = self.conn.call("SENTINEL", "MASTER", SENTINEL_MASTER)
        master = dict(zip(fields[::2], fields[1::2]))
        if master.get(b"num-other-sentinels") != str(sentinels - 1).encode():
            return False
        replicas = self.conn.call("SENTINEL", "REPLICAS", SENTINEL_MASTER)
        flags = [dict(zip(r[::2], r[1::2])).get(b"flags", b"") for r in replicas]
        return any(b"down" not in f and b"disconnected" not in f for f in flags)


def start_sentinels(binary: str, module: str, root: Path) -> list[Server]:
    """A primary, its replica (in sync) and three sentinels that know both."""
    primary = Server(binary, module, root, cluster=False)
    replica = Server(
        binary, module, root, cluster=False, extra=("--replicaof", "127.0.0.1", str(primary.port))
    )
    started: list[Server] = [primary, replica]
    started += [Sentinel(binary, root, primary) for _ in range(3)]
    deadline = time.monotonic() + 60
    while not (
        info_field(replica.conn, "replication", "master_link_status") == "up"
        and all(s.ready(3) for s in started[2:] if isinstance(s, Sentinel))
    ):
        if time.monotonic() > deadline:
            raise RuntimeError("the sentinels did not see the primary and its replica in 60 s")
        time.sleep(0.1)
    return started


def module_path() -> Path:
    """The module to load: $TICKETGATE_MODULE, else the repo's release build."""
    return Path(os.environ.get("TICKETGATE_MODULE") or DEFAULT_MODULE)


def info_field(conn: Connection, section: str, name: str) -> str:
    for line in conn.call("INFO", section).decode().splitlines():
        if line.startswith(name + ":"):
            return line.split(":", 1)[1]
    return ""


def form_cluster(nodes: list[Server]) -> None:
    """Assigns the slots evenly, joins the nodes and waits until all agree."""
    share = SLOT_COUNT // len(nodes)
    for i, node in enumerate(nodes):
        last = SLOT_COUNT - 1 if i == len(nodes) - 1 else (i + 1) * share - 1
        node.conn.call("CLUSTER", "ADDSLOTSRANGE", i * share, last)
    for node in nodes[1:]:
        nodes[0].conn.call("CLUSTER", "MEET", "127.0.0.1", node.port)
    deadline = time.monotonic() + 30
    while not all(_cluster_ready(node, len(nodes)) for node in nodes):
        if time.monotonic() > deadline:
            raise RuntimeError("the cluster did not become ready in 30 s")
        time.sleep(0.1)


def _cluster_ready(node: Server, count: int) -> bool:
    info = node.conn.call("CLUSTER", "INFO").decode()
    fields = dict(line.split(":", 1) for line in info.split() if ":" in line)
    if fields.get("cluster_state") != "ok" or fields.get("cluster_known_nodes") != str(count):
        return False
    return len(node.conn.call("CLUSTER", "SLOTS")) == count


def server_version(binary: str) -> str:
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True)
    for word in out.stdout.split():
        if word.startswith("v="):
            return word[2:]
    return "unknown"


def run(
    binary: str, module: str, command: list[str], cluster: bool = True, sentinel: bool = False
) -> int:
    root = Path(tempfile.mkdtemp(prefix="ticketgate-testenv-"))
    servers: list[Server] = []
    try:
        standalone = Server(binary, module, root, cluster=False)
        servers.append(standalone)
        env = dict(os.environ)
        env["TICKETGATE_TEST_REDIS"] = f"redis://{standalone.address}"
        if cluster:
            nodes = [Server(binary, module, root, cluster=True) for _ in range(3)]
            servers += nodes
            form_cluster(nodes)
            env["TICKETGATE_TEST_CLUSTER"] = ",".join(n.address for n in nodes)
        if sentinel:
            started = start_sentinels(binary, module, root)
            servers += started
            env["TICKETGATE_TEST_SENTINELS"] = ",".join(s.address for s in started[2:])
            env["TICKETGATE_TEST_SENTINEL_MASTER"] = SENTINEL_MASTER
        env["TICKETGATE_TEST_REDIS_SERVER"] = binary
        env["TICKETGATE_TEST_REDIS_VERSION"] = server_version(binary)
        env["TICKETGATE_MODULE"] = module
        return subprocess.call(command, env=env)
    finally:
        for server in servers:
            server.stop()
        shutil.rmtree(root, ignore_errors=True)


def key_slot(conn: Connection, key: str) -> int:
    return conn.call("CLUSTER", "KEYSLOT", key)


def move_slot(cluster: list[str], key: str, to: str) -> None:
    """Migrates the slot of `key` (and its keys) to node `to`, then tells every node."""
    conns = {addr: Connection(*_host_port(addr)) for addr in cluster}
    try:
        target = conns[to]
        slot = key_slot(target, key)
        source_addr = _owner(conns, slot)
        if source_addr == to:
            return
        source = conns[source_addr]
        ids = {addr: c.call("CLUSTER", "MYID").decode() for addr, c in conns.items()}
        target.call("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source_addr])
        source.call("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[to])
        host, port = _host_port(to)
        while keys := source.call("CLUSTER", "GETKEYSINSLOT", slot, 100):
            source.call("MIGRATE", host, port, "", 0, 5000, "KEYS", *keys)
        for c in [target, source] + [c for a, c in conns.items() if a not in (to, source_addr)]:
            c.call("CLUSTER", "SETSLOT", slot, "NODE", ids[to])
    finally:
        for c in conns.values():
            c.close()


def _owner(conns: dict[str, Connection], slot: int) -> str:
    any_conn = next(iter(conns.values()))
    for start, end, master, *_ in any_conn.call("CLUSTER", "SLOTS"):
        if start <= slot <= end:
            return f"{master[0].decode()}:{master[1]}"
    raise RuntimeError(f"slot {slot} has no owner")


def _host_port(addr: str) -> tuple[str, int]:
    host, port = addr.rsplit(":", 1)
    return host, int(port)


def main(argv: list[str]) -> int:
    if argv[:1] == ["move-slot"]:
        p = argparse.ArgumentParser(prog="testenv.py move-slot")
        p.add_argument("--cluster", required=True, help="HOST:P,HOST:P,...")
        p.add_argument("--key", required=True)
        p.add_argument("--to", required=True, help="HOST:P")
        a = p.parse_args(argv[1:])
        move_slot(a.cluster.split(","), a.key, a.to)
        return 0
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--redis-server", default=shutil.which("redis-server") or "redis-server")
    p.add_argument("--module", default=str(module_path()))
    p.add_argument("--no-cluster", action="store_true", help="standalone server only")
    p.add_argument("--sentinel", action="store_true", help="also a primary+replica+3 sentinels")
    p.add_argument("command", nargs=argparse.REMAINDER)
    a = p.parse_args(argv)
    command = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not command:
        p.error("no command to run (put it after --)")
    if not Path(a.module).is_file():
        p.error(f"module not found: {a.module} (build it or set TICKETGATE_MODULE)")
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    module = str(Path(a.module).resolve())
    return run(a.redis_server, module, command, not a.no_cluster, a.sentinel)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
