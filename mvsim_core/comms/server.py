"""The MVSim comms server: a directory of nodes, topics and services (upstream ``mvsim::Server``, wire compatible).

One socket, by default on ``tcp://127.0.0.1:23700`` (upstream binds every interface; we bind loopback unless asked).
Upstream's is a REP socket; ours is a ROUTER that answers exactly as a REP would (a REQ client's envelope, the empty
delimiter frame, comes back with the answer), so upstream clients, our :class:`~mvsim_core.comms.client.Client` and
bare REQ sockets see no difference; the ROUTER also tells which connection each request came on (see *Liveness*).
Requests and answers (all framed, see :mod:`mvsim_core.comms.framing`):

=========================  =======================================================================================
RegisterNodeRequest        → RegisterNodeAnswer. A name registered again replaces the old node and its records.
UnregisterNodeRequest      → GenericAnswer. Drops the node's publishers and services.
AdvertiseTopicRequest      → GenericAnswer. Adds (node, endpoint) as a publisher; a topic keeps one type.
AdvertiseServiceRequest    → GenericAnswer. A service keeps one (input, output) type pair; the last offer wins.
GetServiceInfoRequest      → GetServiceInfoAnswer (endpoint and node of the service).
ListNodesRequest           → ListNodesAnswer (sorted; ``nodeStartsWith`` filters).
ListTopicsRequest          → ListTopicsAnswer (sorted; ``topicStartsWith`` filters).
SubscribeRequest           → SubscribeAnswer; then a TopicInfo (the topic's publishers) goes to the subscriber's
                             PAIR ``updatesEndpoint`` now and whenever the publishers change; the subscriber answers
                             each with a GenericAnswer.
anything else / malformed  → GenericAnswer{success=false, errorMessage}. The server never stops on a bad request.
=========================  =======================================================================================

**Strict requests.** Every string field is decoded strictly (invalid UTF-8 is refused, naming the field: see
:func:`~mvsim_core.comms.framing.parse_bytes`), and every node, topic and service name follows one rule, as ROS names
(:mod:`mvsim_core.comms.names`): ``../../``, ``tcp://x``, ``//``, control or non-ASCII characters are refused with
``success=false`` and an errorMessage naming the field and the rule.

**Liveness.** A node belongs to the connection it registered (or advertised) on. A socket monitor reports closed
connections: a client process that dies (even SIGKILLed) closes its connection, and ZMQ heartbeats
(:data:`HEARTBEAT_IVL_MS`, :data:`HEARTBEAT_TIMEOUT_MS`) close the connection of a host that vanished without a word.
:attr:`Server.node_timeout` seconds after its connection closed (10 s by default; environment variable
``MVSIM_NODE_TIMEOUT``; 0 = never) a node leaves the registry, with its publishers and services, unless one of the
endpoints it advertised still takes a TCP connection (then it is checked again after another ``node_timeout``); the
subscriptions made on that connection whose update endpoint no longer answers go too. A quiet client whose
connection stays open stays listed however long it says nothing (libzmq answers the heartbeats by itself).

Threads: one serves the socket (and its monitor); one sends the TopicInfo notifications (so a dead subscriber delays
nobody); one expires the nodes of closed connections (its probes of their endpoints delay no request).
Registries are bounded (:data:`MAX_NODES`, ...) so no sequence of requests makes the server grow without limit.

**In-process nodes are protected.** A client in the server's own process (the World of ``mvsim launch``, through
``Client(server=...)`` / ``WorldComms(server=...)``) sends its requests straight to :meth:`Server.handle` with
``local=True``; the node it registers is *local*. Over the wire nobody can then register or unregister a local node,
advertise a topic or service under its name, or re-advertise (take over) a service a local node offers: those
requests are answered ``success=false`` with an errorMessage saying so. Upstream lets any client do all of that
(``World`` can be unregistered, its ``set_pose`` re-pointed at another endpoint); no upstream client needs it, so
the protection is always on. A World that joins a server in another process (``mvsim server``, or a second
``mvsim launch`` on the same port) registers over the wire and is not protected: that server cannot tell it from
an impostor, and must let a restarted World take its name back.
"""

from __future__ import annotations

import errno
import logging
import math
import os
import queue
import re
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field

import zmq
from zmq.utils.monitor import recv_monitor_message

from mvsim_core.comms.errors import AddressInUse, CommsError
from mvsim_core.comms.framing import pack_message, parse_payload, unpack
from mvsim_core.comms.names import check_name
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    GenericAnswer_pb2,
    GetServiceInfoAnswer_pb2,
    GetServiceInfoRequest_pb2,
    ListNodesAnswer_pb2,
    ListNodesRequest_pb2,
    ListTopicsAnswer_pb2,
    ListTopicsRequest_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SubscribeAnswer_pb2,
    SubscribeRequest_pb2,
    TopicInfo_pb2,
    UnregisterNodeRequest_pb2,
)

log = logging.getLogger("mvsim.comms.server")

DEFAULT_PORT = 23700
"""Upstream's port of the server's REP socket (``MVSIM_PORTNO_MAIN_REP``)."""
LOOPBACK = "127.0.0.1"

MAX_NODES = 4096
MAX_TOPICS = 4096
MAX_SERVICES = 4096
MAX_SUBSCRIBERS_PER_TOPIC = 256
MAX_NAME = 1024
"""Longest type name or endpoint accepted (characters); node, topic and service names follow
:mod:`mvsim_core.comms.names`."""
MAX_REQUEST_BYTES = 1 << 20
"""Largest request frame: bigger ones make ZMQ drop the sender's connection (no message in the protocol is this big)."""
NOTIFY_TIMEOUT_MS = 2000
"""How long the notifier waits for a subscriber to take and acknowledge a TopicInfo."""
NODE_TIMEOUT = 10.0
"""Default seconds a node outlives its closed connection (see *Liveness*); ``MVSIM_NODE_TIMEOUT`` overrides it."""
NODE_TIMEOUT_ENV = "MVSIM_NODE_TIMEOUT"
HEARTBEAT_IVL_MS = 2000
"""The server pings every connection this often (ms, ZMQ_HEARTBEAT_IVL)..."""
HEARTBEAT_TIMEOUT_MS = 6000
"""...and closes one that sent nothing, not even a pong, for this long (ms, ZMQ_HEARTBEAT_TIMEOUT)."""
PROBE_TIMEOUT = 0.5
"""Seconds a liveness probe waits for an advertised endpoint to take a TCP connection."""
_MAX_NOTIFY_QUEUE = 1024
_MAX_NOTIFY_SOCKETS = 256

_ENDPOINT = re.compile(r"tcp://[A-Za-z0-9_.:\-\[\]*]+:\d{1,5}|ipc://[^\x00-\x1f]+")


@dataclass
class TopicRecord:
    """A topic: its type ("" while only subscribers know it), publishers (node -> endpoint) and subscribers'
    update endpoints (an ordered set)."""

    name: str
    type_name: str = ""
    publishers: dict[str, str] = field(default_factory=dict)
    subscribers: dict[str, None] = field(default_factory=dict)


@dataclass
class ServiceRecord:
    """A service: input and output message types, the REP endpoint serving it and the node offering it."""

    name: str
    input_type: str
    output_type: str
    endpoint: str
    node: str


@dataclass(eq=False)
class _Connection:
    """One client connection of the server socket: the nodes that registered or advertised on it and the
    subscriptions made on it (topic, updates endpoint). ``deadline`` (time.monotonic() s) is set once it closed."""

    fd: int
    peer: str = ""
    nodes: set[str] = field(default_factory=set)
    subscriptions: set[tuple[str, str]] = field(default_factory=set)
    deadline: float | None = None


def node_timeout_from_env() -> float:
    """Seconds from ``MVSIM_NODE_TIMEOUT`` (unset or empty: :data:`NODE_TIMEOUT`; 0 = never).

    Raises:
        CommsError: the variable is not a number of seconds >= 0.
    """
    text = os.environ.get(NODE_TIMEOUT_ENV, "").strip()
    if not text:
        return NODE_TIMEOUT
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value) or value < 0:
        raise CommsError(f"{NODE_TIMEOUT_ENV}={text[:64]!r} is not a number of seconds >= 0; set it to e.g. 10 "
                         f"(0 = nodes never expire) or unset it")
    return value


def endpoint_answers(endpoint: str, peer: str = "", timeout: float = PROBE_TIMEOUT) -> bool:
    """Whether something takes a connection at ``endpoint`` (``tcp://HOST:PORT`` or ``ipc://PATH``).

    Args:
        endpoint: as a client advertised it; ``0.0.0.0`` / ``*`` (bound on every interface) is reached at ``peer``.
        peer: IP address the advertising client connected from ("" = this machine).
        timeout: seconds to wait for the connection.
    """
    try:
        if endpoint.startswith("ipc://"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(timeout)
                s.connect(endpoint[len("ipc://"):])
            return True
        if not endpoint.startswith("tcp://"):
            return False
        host, _, port = endpoint[len("tcp://"):].rpartition(":")
        host = host.strip("[]")
        if host in ("0.0.0.0", "*", "::", ""):
            host = peer or LOOPBACK
        with socket.create_connection((host, int(port)), timeout=timeout):
            return True
    except (OSError, ValueError):
        return False


class _Reject(Exception):
    """A request that is well formed but refused; its message goes back as ``errorMessage``."""


def _owned(name: str) -> str:
    return f"node `{name}` is served in the server's own process"


def _check_name(what: str, value: str) -> str:
    """A type name or endpoint: not empty, at most :data:`MAX_NAME` characters, no control characters."""
    if not value:
        raise _Reject(f"{what} must not be empty")
    if len(value) > MAX_NAME:
        raise _Reject(f"{what} is {len(value)} characters long; the limit is {MAX_NAME}")
    if any(ord(c) < 0x20 for c in value):
        raise _Reject(f"{what} {value[:64]!r} contains control characters")
    return value


def _check_endpoint(value: str) -> str:
    _check_name("endpoint", value)
    if _ENDPOINT.fullmatch(value) is None:
        raise _Reject(f"endpoint {value[:64]!r} is not tcp://HOST:PORT or ipc://PATH")
    return value


class Server:
    """The comms server (see the module docstring for the protocol).

    Args:
        port: TCP port of the server socket (0 = an ephemeral port; see :attr:`port` after :meth:`start`).
        bind_host: interface to bind; ``127.0.0.1`` (default) keeps the server private to this machine, ``0.0.0.0``
            (or ``*``) exposes it to the network: anyone who reaches it can drive and stop the simulation.
        node_timeout: seconds a node outlives its closed connection (None = ``MVSIM_NODE_TIMEOUT``, else 10 s;
            0 = nodes never expire). See *Liveness* in the module docstring.

    Raises:
        CommsError: ``port`` out of range, or ``node_timeout`` (or ``MVSIM_NODE_TIMEOUT``) not seconds >= 0.

    Use as a context manager, or :meth:`start` / :meth:`stop`.
    """

    def __init__(self, port: int = DEFAULT_PORT, bind_host: str = LOOPBACK, *,
                 node_timeout: float | None = None) -> None:
        if not 0 <= int(port) <= 65535:
            raise CommsError(f"port {port} out of range 0..65535")
        timeout = node_timeout_from_env() if node_timeout is None else float(node_timeout)
        if not math.isfinite(timeout) or timeout < 0:
            raise CommsError(f"node_timeout {node_timeout} is not a number of seconds >= 0 (0 = never)")
        self.node_timeout = timeout
        """Seconds a node outlives its closed connection (0 = forever)."""
        self.bind_host = "*" if bind_host in ("*", "0.0.0.0") else bind_host
        self.port = int(port)
        self.nodes: dict[str, None] = {}
        self.local_nodes: set[str] = set()
        """Nodes registered in-process (``handle(..., local=True)``): requests over the wire cannot touch them."""
        self.topics: dict[str, TopicRecord] = {}
        self.services: dict[str, ServiceRecord] = {}
        self.requests = 0
        """Requests answered so far."""
        self.errors = 0
        """Requests answered with an error."""
        self.expired = 0
        """Nodes dropped because their connection closed (see *Liveness*)."""
        self._conns: dict[int, _Connection] = {}
        """Open connections by file descriptor."""
        self._closed: list[_Connection] = []
        """Closed connections still holding nodes or subscriptions, waiting for their deadline."""
        self._node_conn: dict[str, _Connection] = {}
        self._current: _Connection | None = None
        """The connection of the request being answered (None: in-process, or not over the socket)."""
        self._ctx: zmq.Context | None = None
        self._rep: zmq.Socket | None = None
        self._monitor: zmq.Socket | None = None
        self._liveness: threading.Thread | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._notifier: threading.Thread | None = None
        self._notify_q: queue.Queue[tuple[str, bytes] | None] = queue.Queue(_MAX_NOTIFY_QUEUE)
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ life cycle
    @property
    def endpoint(self) -> str:
        """``tcp://HOST:PORT`` the server listens on (valid after :meth:`start`)."""
        host = "0.0.0.0" if self.bind_host == "*" else self.bind_host
        return f"tcp://{host}:{self.port}"

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> Server:
        """Bind the server socket (in the calling thread, so a busy port raises here) and start serving.

        Raises:
            AddressInUse: the port is taken (another simulation or server listens there).
            CommsError: the address cannot be bound otherwise (an unknown interface).
        """
        if self._thread is not None:
            raise CommsError("server already started")
        self._ctx = zmq.Context()
        rep = self._ctx.socket(zmq.ROUTER)
        rep.setsockopt(zmq.LINGER, 0)
        rep.setsockopt(zmq.MAXMSGSIZE, MAX_REQUEST_BYTES)
        rep.setsockopt(zmq.HEARTBEAT_IVL, HEARTBEAT_IVL_MS)
        rep.setsockopt(zmq.HEARTBEAT_TIMEOUT, HEARTBEAT_TIMEOUT_MS)
        addr = f"tcp://{self.bind_host}:{self.port if self.port else '*'}"
        try:
            rep.bind(addr)
        except zmq.ZMQError as e:
            rep.close()
            self._ctx.term()
            self._ctx = None
            where = addr.replace("*:", "0.0.0.0:")
            reason = os.strerror(e.errno) if e.errno is not None else e.strerror
            if e.errno == errno.EADDRINUSE:
                raise AddressInUse(f"cannot listen on {where}: {reason} (another simulation or MVSim server?)",
                                   self.port) from None
            raise CommsError(f"cannot listen on {where}: {reason}") from None
        self.port = int(rep.getsockopt_string(zmq.LAST_ENDPOINT).rsplit(":", 1)[1])
        self._rep = rep
        self._monitor = rep.get_monitor_socket(zmq.EVENT_ACCEPTED | zmq.EVENT_DISCONNECTED)
        self._stop.clear()
        if self.node_timeout > 0:
            self._liveness = threading.Thread(target=self._liveness_loop, name="mvsim-server-liveness", daemon=True)
            self._liveness.start()
        self._notifier = threading.Thread(target=self._notify_loop, name="mvsim-server-notify", daemon=True)
        self._notifier.start()
        self._thread = threading.Thread(target=self._serve, name="mvsim-server", daemon=True)
        self._thread.start()
        log.info("server listening on %s", self.endpoint)
        return self

    def stop(self, timeout: float = 5.0) -> None:
        """Stop serving, close every socket (idempotent)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._liveness is not None:
            self._liveness.join(timeout)
        if self._notifier is not None:
            try:
                self._notify_q.put_nowait(None)
            except queue.Full:
                pass
        if self._ctx is not None:
            self._ctx.term()  # blocking calls in the notifier return ETERM; returns once every socket is closed
        if self._notifier is not None:
            self._notifier.join(timeout)
        self._thread = self._notifier = self._liveness = None
        self._ctx = self._rep = self._monitor = None

    def __enter__(self) -> Server:
        return self if self.running else self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server stops (or ``timeout`` s pass); True when it stopped."""
        return self._stop.wait(timeout)

    # ------------------------------------------------------------------ serving
    def _serve(self) -> None:
        rep, mon = self._rep, self._monitor
        assert rep is not None and mon is not None
        poller = zmq.Poller()
        poller.register(rep, zmq.POLLIN)
        poller.register(mon, zmq.POLLIN)
        try:
            while not self._stop.is_set():
                ready = dict(poller.poll(100))
                # connection events first: a closed connection's descriptor may already carry a new one's request
                self._take_monitor_events(mon)
                if rep in ready:
                    self._answer(rep, rep.recv_multipart(copy=False))
        except zmq.ZMQError as e:  # context terminated while stopping, or a socket failure
            if not self._stop.is_set():
                log.error("server socket failed: %s", e)
        finally:
            try:
                rep.disable_monitor()
            except zmq.ZMQError:
                pass
            mon.close(linger=0)
            rep.close(linger=0)

    def _answer(self, rep: zmq.Socket, parts: list[zmq.Frame]) -> None:
        """Answer one message of the ROUTER socket: ``[routing id, (hops...), b"", request]`` from a REQ peer
        (the envelope, up to the empty delimiter, goes back with the answer); without a delimiter (a DEALER peer)
        the answer goes back after the routing id alone."""
        split = next((i for i in range(1, len(parts)) if len(parts[i]) == 0), 0)
        envelope, body = parts[:split + 1], parts[split + 1:]
        if len(body) != 1:
            reply = self._error(f"expected one frame per request, got {len(body)}")
            self.requests += 1
        else:
            fd, peer = -1, ""
            try:
                fd = int(body[0].get(zmq.SRCFD))
                peer = str(body[0].get("Peer-Address"))
            except (zmq.ZMQError, ValueError, TypeError):
                pass
            reply = self.handle(body[0].bytes, connection=fd if fd >= 0 else None, peer=peer)
        rep.send_multipart([*envelope, reply], copy=False)

    def _take_monitor_events(self, mon: zmq.Socket) -> None:
        while mon.poll(0):
            ev = recv_monitor_message(mon)
            fd = int(ev["value"])
            with self._lock:
                self._connection_closed(fd)  # ACCEPTED on a known descriptor: its old connection is gone too

    def _connection_closed(self, fd: int) -> None:
        """The connection on ``fd`` closed (with ``self._lock`` held): its nodes and subscriptions start to expire."""
        conn = self._conns.pop(fd, None)
        if conn is None or not (conn.nodes or conn.subscriptions) or self.node_timeout <= 0:
            return
        conn.deadline = time.monotonic() + self.node_timeout
        self._closed.append(conn)
        log.debug("connection of node(s) %s closed; they expire in %g s unless their endpoints answer",
                  sorted(conn.nodes), self.node_timeout)

    def _liveness_loop(self) -> None:
        """Expire the nodes and subscriptions of closed connections whose deadline passed (see *Liveness*)."""
        period = min(1.0, max(0.05, self.node_timeout / 4))
        while not self._stop.wait(period):
            now = time.monotonic()
            with self._lock:
                due = [c for c in self._closed if c.deadline is not None and c.deadline <= now]
                probes = {c: self._endpoints_of(c) for c in due}
            for c, (by_node, subs) in probes.items():
                alive_nodes = {n for n, eps in by_node.items() if any(endpoint_answers(e, c.peer) for e in eps)}
                alive_subs = {ts for ts in subs if endpoint_answers(ts[1], c.peer)}
                with self._lock:
                    self._expire(c, alive_nodes, alive_subs)

    def _endpoints_of(self, conn: _Connection) -> tuple[dict[str, list[str]], set[tuple[str, str]]]:
        """(node -> the endpoints it advertises, the subscriptions) of ``conn``, to probe (``self._lock`` held)."""
        by_node: dict[str, list[str]] = {n: [] for n in conn.nodes}
        for t in self.topics.values():
            for n, ep in t.publishers.items():
                if n in by_node:
                    by_node[n].append(ep)
        for sv in self.services.values():
            if sv.node in by_node:
                by_node[sv.node].append(sv.endpoint)
        return by_node, set(conn.subscriptions)

    def _expire(self, conn: _Connection, alive_nodes: set[str], alive_subs: set[tuple[str, str]]) -> None:
        """Drop what of closed ``conn`` did not answer its probe; check the rest again later (``self._lock`` held).
        """
        for name in sorted(conn.nodes - alive_nodes):
            log.info("node '%s' expired: its connection closed %g s ago and none of its endpoints answers",
                     name, self.node_timeout)
            self._remove_node(name)
            self.expired += 1
        for topic, endpoint in sorted(conn.subscriptions - alive_subs):
            conn.subscriptions.discard((topic, endpoint))
            t = self.topics.get(topic)
            if t is None:
                continue
            t.subscribers.pop(endpoint, None)
            if not t.publishers and not t.subscribers:
                del self.topics[topic]
        if conn.nodes or conn.subscriptions:
            conn.deadline = time.monotonic() + self.node_timeout
        elif conn in self._closed:
            self._closed.remove(conn)

    def handle(self, frame: bytes, *, local: bool = False, connection: int | None = None, peer: str = "") -> bytes:
        """The framed answer to one framed request. Never raises.

        Args:
            frame: the request.
            local: the request comes from a client in this process (``Client(server=...)``), not over the wire;
                the node it registers is protected (see the module docstring).
            connection: file descriptor of the connection the request came on (None: not over the socket); the
                nodes it registers or advertises for expire once that connection closes (see *Liveness*).
            peer: IP address of that connection's other end ("" unknown).
        """
        self.requests += 1
        try:
            type_name, payload = unpack(frame)
            handler = self._HANDLERS.get(type_name)
            if handler is None:
                raise _Reject(f"unknown request type {type_name}; the server answers "
                              f"{', '.join(sorted(self._HANDLERS))}")
            cls, fn = handler
            req = parse_payload(type_name, payload, cls)
            with self._lock:
                self._current = None
                if connection is not None and not local:
                    conn = self._conns.get(connection)
                    if conn is None:
                        conn = self._conns[connection] = _Connection(connection, peer)
                    self._current = conn
                try:
                    return pack_message(fn(self, req, local))
                finally:
                    self._current = None
        except (_Reject, CommsError) as e:
            return self._error(str(e))
        except Exception as e:  # the server must survive anything a client sends
            log.exception("unexpected error answering a request")
            return self._error(f"internal error: {type(e).__name__}: {e}")

    def _error(self, message: str) -> bytes:
        self.errors += 1
        log.debug("request refused: %s", message)
        return pack_message(GenericAnswer_pb2.GenericAnswer(success=False, errorMessage=message))

    # ------------------------------------------------------------------ handlers (called with self._lock held)
    def _guard(self, node: str, local: bool, what: str) -> None:
        """Refuse a request from the wire that would act as, or on, the in-process node ``node``."""
        if not local and node in self.local_nodes:
            raise _Reject(f"{_owned(node)}: {what}")

    def _attach(self, node: str) -> None:
        """``node`` now lives as long as the connection of the current request (none: forever)."""
        old = self._node_conn.pop(node, None)
        if old is not None:
            old.nodes.discard(node)
        conn = self._current
        if conn is not None:
            conn.nodes.add(node)
            self._node_conn[node] = conn

    def _register(self, m: RegisterNodeRequest_pb2.RegisterNodeRequest,
                  local: bool) -> RegisterNodeAnswer_pb2.RegisterNodeAnswer:
        name = check_name("nodeName", m.nodeName)
        try:
            self._guard(name, local, "another client cannot register under its name; choose another nodeName")
        except _Reject as e:
            self.errors += 1
            return RegisterNodeAnswer_pb2.RegisterNodeAnswer(success=False, errorMessage=str(e))
        self._remove_node(name)  # the same node reconnecting: forget its old records
        if len(self.nodes) >= MAX_NODES:
            return RegisterNodeAnswer_pb2.RegisterNodeAnswer(
                success=False, errorMessage=f"too many nodes registered ({MAX_NODES})")
        self.nodes[name] = None
        self._attach(name)
        if local:
            self.local_nodes.add(name)
        log.debug("node '%s' registered%s", name, " (in-process)" if local else "")
        return RegisterNodeAnswer_pb2.RegisterNodeAnswer(success=True)

    def _unregister(self, m: UnregisterNodeRequest_pb2.UnregisterNodeRequest,
                    local: bool) -> GenericAnswer_pb2.GenericAnswer:
        name = check_name("nodeName", m.nodeName)
        self._guard(name, local, "only that node can unregister itself")
        self._remove_node(name)
        return GenericAnswer_pb2.GenericAnswer(success=True)

    def _remove_node(self, name: str) -> None:
        self.nodes.pop(name, None)
        self.local_nodes.discard(name)
        conn = self._node_conn.pop(name, None)
        if conn is not None:
            conn.nodes.discard(name)
        for t in list(self.topics.values()):
            if t.publishers.pop(name, None) is not None:
                self._notify_subscribers(t)
            if not t.publishers and not t.subscribers:
                del self.topics[t.name]
        for s in [s for s in self.services.values() if s.node == name]:
            del self.services[s.name]

    def _advertise_topic(self, m: AdvertiseTopicRequest_pb2.AdvertiseTopicRequest,
                         local: bool) -> GenericAnswer_pb2.GenericAnswer:
        topic = check_name("topicName", m.topicName)
        type_name = _check_name("topicTypeName", m.topicTypeName)
        endpoint = _check_endpoint(m.endpoint)
        node = check_name("nodeName", m.nodeName)
        self._guard(node, local, f"another client cannot advertise topic `{topic}` under its name")
        t = self.topics.get(topic)
        if t is None:
            if len(self.topics) >= MAX_TOPICS:
                raise _Reject(f"too many topics ({MAX_TOPICS})")
            t = self.topics[topic] = TopicRecord(topic)
        if t.type_name and t.type_name != type_name:
            raise _Reject(f"Trying to register topic `{topic}` [{type_name}] but already known with type "
                          f"[{t.type_name}]")
        t.type_name = type_name
        t.publishers[node] = endpoint
        if self._current is not None:
            self._attach(node)
        log.debug("topic '%s' [%s] published by '%s' at %s", topic, type_name, node, endpoint)
        self._notify_subscribers(t)
        return GenericAnswer_pb2.GenericAnswer(success=True)

    def _advertise_service(self, m: AdvertiseServiceRequest_pb2.AdvertiseServiceRequest,
                           local: bool) -> GenericAnswer_pb2.GenericAnswer:
        name = check_name("serviceName", m.serviceName)
        tin = _check_name("inputTypeName", m.inputTypeName)
        tout = _check_name("outputTypeName", m.outputTypeName)
        endpoint = _check_endpoint(m.endpoint)
        node = check_name("nodeName", m.nodeName)
        self._guard(node, local, f"another client cannot advertise service `{name}` under its name")
        old = self.services.get(name)
        if old is not None and old.node != node:
            self._guard(old.node, local, f"it offers service `{name}`, which no other node can take over")
        if old is not None and (old.input_type, old.output_type) != (tin, tout):
            raise _Reject(f"Trying to register service `{name}` [{tin}->{tout}] but already known with types "
                          f"[{old.input_type}->{old.output_type}]")
        if old is None and len(self.services) >= MAX_SERVICES:
            raise _Reject(f"too many services ({MAX_SERVICES})")
        self.services[name] = ServiceRecord(name, tin, tout, endpoint, node)
        if self._current is not None:
            self._attach(node)
        log.debug("service '%s' [%s->%s] offered by '%s' at %s", name, tin, tout, node, endpoint)
        return GenericAnswer_pb2.GenericAnswer(success=True)

    def _service_info(self, m: GetServiceInfoRequest_pb2.GetServiceInfoRequest,
                      local: bool) -> GetServiceInfoAnswer_pb2.GetServiceInfoAnswer:
        try:
            name = check_name("serviceName", m.serviceName)
        except CommsError as e:  # answered in kind, so a caller sees "no such service" with the reason
            self.errors += 1
            return GetServiceInfoAnswer_pb2.GetServiceInfoAnswer(success=False, errorMessage=str(e))
        s = self.services.get(name)
        if s is None:
            return GetServiceInfoAnswer_pb2.GetServiceInfoAnswer(
                success=False, errorMessage=f"Could not find service `{name}`")
        return GetServiceInfoAnswer_pb2.GetServiceInfoAnswer(success=True, serviceEndpoint=s.endpoint,
                                                             serviceNodeName=s.node)

    def _list_nodes(self, m: ListNodesRequest_pb2.ListNodesRequest,
                    local: bool) -> ListNodesAnswer_pb2.ListNodesAnswer:
        prefix = m.nodeStartsWith
        return ListNodesAnswer_pb2.ListNodesAnswer(nodes=sorted(n for n in self.nodes if n.startswith(prefix)))

    def _list_topics(self, m: ListTopicsRequest_pb2.ListTopicsRequest,
                     local: bool) -> ListTopicsAnswer_pb2.ListTopicsAnswer:
        prefix = m.topicStartsWith
        ans = ListTopicsAnswer_pb2.ListTopicsAnswer()
        for name in sorted(self.topics):
            if name.startswith(prefix):
                ans.topics.append(self._topic_info(self.topics[name]))
        return ans

    def _subscribe(self, m: SubscribeRequest_pb2.SubscribeRequest,
                   local: bool) -> SubscribeAnswer_pb2.SubscribeAnswer:
        topic = check_name("topic", m.topic)
        try:
            endpoint = _check_endpoint(m.updatesEndpoint)
        except _Reject as e:
            log.warning("subscription to '%s' refused: %s", topic[:64], e)
            self.errors += 1
            return SubscribeAnswer_pb2.SubscribeAnswer(topic=topic, success=False)
        t = self.topics.get(topic)
        if t is None:
            if len(self.topics) >= MAX_TOPICS:
                raise _Reject(f"too many topics ({MAX_TOPICS})")
            t = self.topics[topic] = TopicRecord(topic)
        if endpoint not in t.subscribers:
            if len(t.subscribers) >= MAX_SUBSCRIBERS_PER_TOPIC:
                t.subscribers.pop(next(iter(t.subscribers)))  # forget the oldest
            t.subscribers[endpoint] = None
        if self._current is not None:
            self._current.subscriptions.add((topic, endpoint))
        self._queue_notification(endpoint, t)
        return SubscribeAnswer_pb2.SubscribeAnswer(topic=topic, success=True)

    _HANDLERS = {
        "mvsim_msgs.RegisterNodeRequest": (RegisterNodeRequest_pb2.RegisterNodeRequest, _register),
        "mvsim_msgs.UnregisterNodeRequest": (UnregisterNodeRequest_pb2.UnregisterNodeRequest, _unregister),
        "mvsim_msgs.AdvertiseTopicRequest": (AdvertiseTopicRequest_pb2.AdvertiseTopicRequest, _advertise_topic),
        "mvsim_msgs.AdvertiseServiceRequest": (AdvertiseServiceRequest_pb2.AdvertiseServiceRequest,
                                               _advertise_service),
        "mvsim_msgs.GetServiceInfoRequest": (GetServiceInfoRequest_pb2.GetServiceInfoRequest, _service_info),
        "mvsim_msgs.ListNodesRequest": (ListNodesRequest_pb2.ListNodesRequest, _list_nodes),
        "mvsim_msgs.ListTopicsRequest": (ListTopicsRequest_pb2.ListTopicsRequest, _list_topics),
        "mvsim_msgs.SubscribeRequest": (SubscribeRequest_pb2.SubscribeRequest, _subscribe),
    }

    # ------------------------------------------------------------------ topic-update notifications
    @staticmethod
    def _topic_info(t: TopicRecord) -> TopicInfo_pb2.TopicInfo:
        return TopicInfo_pb2.TopicInfo(topicName=t.name, topicType=t.type_name,
                                       publisherEndpoint=list(t.publishers.values()),
                                       publisherName=list(t.publishers))

    def _notify_subscribers(self, t: TopicRecord) -> None:
        for ep in t.subscribers:
            self._queue_notification(ep, t)

    def _queue_notification(self, endpoint: str, t: TopicRecord) -> None:
        try:
            self._notify_q.put_nowait((endpoint, pack_message(self._topic_info(t))))
        except queue.Full:
            log.warning("topic-update queue full; %s misses an update of '%s'", endpoint, t.name)

    def _notify_loop(self) -> None:
        """Send queued TopicInfo frames, each to its subscriber's PAIR socket, and take the acknowledgement.

        One connected PAIR socket per subscriber endpoint is kept (a PAIR peer accepts one connection at a time, so
        reconnecting for every update could be refused); a subscriber that does not acknowledge in time loses its
        socket (it is made again for the next update). Before a socket is made, the endpoint is probed with a plain
        TCP connection (:func:`endpoint_answers`): one that refuses it is skipped at once instead of holding every
        later update up for a send timeout."""
        ctx = self._ctx
        assert ctx is not None
        socks: OrderedDict[str, zmq.Socket] = OrderedDict()
        try:
            while not self._stop.is_set():
                try:
                    item = self._notify_q.get(timeout=0.2)
                except queue.Empty:
                    continue
                if item is None:
                    break
                endpoint, frame = item
                s = socks.pop(endpoint, None)
                if s is None:
                    if not endpoint_answers(endpoint):  # refused at once: no 2 s send timeout for the queue behind
                        log.warning("subscriber at %s does not answer; it misses an update", endpoint)
                        continue
                    s = ctx.socket(zmq.PAIR)
                    s.setsockopt(zmq.LINGER, 0)
                    s.setsockopt(zmq.SNDTIMEO, NOTIFY_TIMEOUT_MS)
                    s.setsockopt(zmq.RCVTIMEO, NOTIFY_TIMEOUT_MS)
                    s.setsockopt(zmq.MAXMSGSIZE, 1 << 16)
                    try:
                        s.connect(endpoint)
                    except zmq.ZMQError as e:
                        log.warning("cannot reach subscriber at %s: %s", endpoint, e)
                        s.close()
                        continue
                try:
                    while s.poll(0):  # late acknowledgements of earlier updates
                        s.recv()
                    s.send(frame)
                    s.recv()  # the acknowledgement (a GenericAnswer); its content does not matter
                except zmq.ZMQError as e:
                    if self._stop.is_set():
                        s.close()
                        break
                    log.warning("subscriber at %s did not take a topic update: %s", endpoint, e)
                    s.close()
                    continue
                socks[endpoint] = s
                while len(socks) > _MAX_NOTIFY_SOCKETS:
                    socks.popitem(last=False)[1].close()
        except zmq.ZMQError:
            pass
        finally:
            for s in socks.values():
                s.close(linger=0)
