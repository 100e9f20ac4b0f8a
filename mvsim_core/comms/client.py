"""Python client of the MVSim comms protocol (upstream ``mvsim::Client``, wire compatible).

::

    from mvsim_core.comms import Client
    from mvsim_core.comms.proto import SrvGetPose_pb2

    with Client("my_node", port=23700) as c:                     # connects and registers the node
        ans = c.call_service("get_pose", SrvGetPose_pb2.SrvGetPose(objectId="r1"))
        print(ans.pose.x, ans.twist.vx)
        c.subscribe("/r1/laser1_scan", lambda type_name, payload: ...)   # called from the client's thread

Sockets, as upstream: a REQ socket to the server; a PAIR socket bound on an ephemeral port for topic-update
notifications; a REP socket bound on an ephemeral port for the services this node offers; one publisher socket per
advertised topic (XPUB, which a SUB peer sees as a PUB; it also tells whether anyone listens, so unheard messages
are not even built); one SUB socket per subscribed topic, connected to each publisher endpoint.
Sockets are bound on ``bind_host``: loopback when the server is local, every interface otherwise.

Threads: calls (``call_service``, ``publish``, ...) may come from any thread; a service thread runs the handlers
of offered services; a topic thread takes topic updates and runs subscription callbacks. Callbacks must not block
for long (they delay the other subscriptions of this client).
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, TypeVar, cast

import zmq
from google.protobuf.message import Message

from mvsim_core.comms.errors import CommsError, CommsTimeout, FramingError, ServiceError, UnexpectedMessageError
from mvsim_core.comms.framing import decode_payload, pack, pack_message, parse_bytes, parse_payload, unpack
from mvsim_core.comms.names import check_name
from mvsim_core.comms.proto import (
    AdvertiseServiceRequest_pb2,
    AdvertiseTopicRequest_pb2,
    CallService_pb2,
    GenericAnswer_pb2,
    GetServiceInfoAnswer_pb2,
    GetServiceInfoRequest_pb2,
    ListNodesAnswer_pb2,
    ListNodesRequest_pb2,
    ListTopicsAnswer_pb2,
    ListTopicsRequest_pb2,
    RegisterNodeAnswer_pb2,
    RegisterNodeRequest_pb2,
    SrvGetAllPoses_pb2,
    SrvGetAllPosesAnswer_pb2,
    SubscribeAnswer_pb2,
    SubscribeRequest_pb2,
    TopicInfo_pb2,
    UnregisterNodeRequest_pb2,
    message_class,
    mvsim_core_msgs_pb2,
)
from mvsim_core.comms.server import DEFAULT_PORT, LOOPBACK, Server

log = logging.getLogger("mvsim.comms.client")

M = TypeVar("M", bound=Message)
TopicCallback = Callable[[str, bytes], None]
"""``callback(type_name, payload)``: the message's full type name and its serialized bytes."""

_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1"}
_POLL_MS = 50
_MAX_SERVICE_REPLY = 64 << 20


def _generic_error(type_name: str, payload: bytes) -> str | None:
    """The errorMessage of a failed GenericAnswer, else None."""
    if type_name != "mvsim_msgs.GenericAnswer":
        return None
    try:
        ans = parse_payload(type_name, payload, GenericAnswer_pb2.GenericAnswer)
    except CommsError:
        return None
    return None if ans.success else (ans.errorMessage or "failed (no error message)")


class _Publisher:
    """One advertised topic: its XPUB socket and how many peers subscribe."""

    def __init__(self, sock: zmq.Socket, type_name: str, endpoint: str) -> None:
        self.sock = sock
        self.type_name = type_name
        self.endpoint = endpoint
        self.subscribers = 0
        self.lock = threading.Lock()

    def _drain(self) -> None:
        """Count the (un)subscriptions the XPUB socket reports (cheap: no poller, just the socket's event flags)."""
        # EVENTS is an int option (pyzmq's getsockopt is typed int | bytes for every option)
        while cast(int, self.sock.getsockopt(zmq.EVENTS)) & zmq.POLLIN:
            ev = self.sock.recv(zmq.NOBLOCK)
            if ev[:1] == b"\x01":
                self.subscribers += 1
            elif ev[:1] == b"\x00":
                self.subscribers = max(0, self.subscribers - 1)


class Client:
    """A node of an MVSim comms network.

    Args:
        name: node name (upstream's default is "anonymous"); registering a name again replaces the old node.
        host: the server's host. port: the server's port (default 23700).
        bind_host: interface for this node's own sockets (default: 127.0.0.1 when the server is local, else 0.0.0.0).
        timeout: seconds to wait for the server or a service before :class:`CommsTimeout`.
        server: the :class:`~mvsim_core.comms.server.Server` when it runs in this process: requests to the server
            then go straight to it (``host`` and ``port`` are only reported), and the node is protected there
            (nobody over the wire can unregister it, register its name or take over its services).
    """

    def __init__(self, name: str = "anonymous", host: str = LOOPBACK, port: int = DEFAULT_PORT, *,
                 bind_host: str | None = None, timeout: float = 5.0, server: Server | None = None) -> None:
        self.name = name
        self.host = host
        self.port = int(port)
        self.server = server
        self.bind_host = bind_host or (LOOPBACK if host in _LOCAL_HOSTS else "0.0.0.0")
        self.timeout = float(timeout)
        self.registered = False
        self._ctx: zmq.Context | None = None
        self._req: zmq.Socket | None = None
        self._req_lock = threading.Lock()
        self._pair: zmq.Socket | None = None
        self._updates_endpoint = ""
        self._srv_rep: zmq.Socket | None = None
        self._srv_endpoint = ""
        self._publishers: dict[str, _Publisher] = {}
        self._pub_lock = threading.Lock()
        self._services: dict[str, tuple[type[Message], type[Message], Callable[[Any], Message]]] = {}
        self._subs: dict[str, list[TopicCallback]] = {}
        self._subs_lock = threading.Lock()
        self._svc_cache: dict[str, str] = {}
        self._svc_socks: dict[str, zmq.Socket] = {}
        self._svc_lock = threading.Lock()
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []

    # ------------------------------------------------------------------ connection
    @property
    def server_endpoint(self) -> str:
        return f"tcp://{self.host}:{self.port}"

    @property
    def connected(self) -> bool:
        """True between :meth:`connect` and :meth:`shutdown`."""
        return self._req is not None

    def connect(self, register: bool = True) -> Client:
        """Open the sockets, start the client's threads and (by default) register the node with the server.

        Raises:
            CommsTimeout: no server answered within :attr:`timeout`.
            CommsError: the server refused the node.
        """
        if self._ctx is not None:
            raise CommsError(f"client '{self.name}' is already connected")
        self._ctx = zmq.Context()
        self._stop.clear()
        self._req = self._new_req(self.server_endpoint)
        self._pair = self._ctx.socket(zmq.PAIR)
        self._pair.setsockopt(zmq.LINGER, 0)
        self._pair.setsockopt(zmq.MAXMSGSIZE, 1 << 20)
        self._pair.bind(f"tcp://{self.bind_host}:*")
        self._updates_endpoint = self._pair.getsockopt_string(zmq.LAST_ENDPOINT)
        self._srv_rep = self._ctx.socket(zmq.REP)
        self._srv_rep.setsockopt(zmq.LINGER, 0)
        self._srv_rep.setsockopt(zmq.MAXMSGSIZE, _MAX_SERVICE_REPLY)
        self._srv_rep.bind(f"tcp://{self.bind_host}:*")
        self._srv_endpoint = self._srv_rep.getsockopt_string(zmq.LAST_ENDPOINT)
        self._threads = [threading.Thread(target=self._topic_loop, name=f"mvsim-client-topics-{self.name}",
                                          daemon=True),
                         threading.Thread(target=self._service_loop, name=f"mvsim-client-services-{self.name}",
                                          daemon=True)]
        for t in self._threads:
            t.start()
        if register:
            try:
                self.register()
            except BaseException:
                self.shutdown()
                raise
        return self

    def register(self) -> None:
        """Register this node's name with the server (RegisterNodeRequest).

        Raises:
            InvalidName: the name breaks the name rule (:mod:`mvsim_core.comms.names`); nothing was sent.
            CommsError: the server refused the node.
        """
        check_name("node name", self.name)
        ans = self._request(RegisterNodeRequest_pb2.RegisterNodeRequest(nodeName=self.name),
                            RegisterNodeAnswer_pb2.RegisterNodeAnswer)
        if not ans.success:
            raise CommsError(f"Server did not allow registering node '{self.name}': {ans.errorMessage}")
        self.registered = True

    def unregister(self) -> None:
        """Tell the server this node leaves (its topics and services are forgotten)."""
        ans = self._request(UnregisterNodeRequest_pb2.UnregisterNodeRequest(nodeName=self.name),
                            GenericAnswer_pb2.GenericAnswer)
        self.registered = False
        if not ans.success:
            raise CommsError(f"Server answered an error unregistering node '{self.name}': {ans.errorMessage}")

    def shutdown(self) -> None:
        """Unregister (when registered and the server answers within 1 s), stop the threads, close every socket.
        Idempotent."""
        if self._ctx is None:
            return
        if self.registered and self._req is not None:
            old, self.timeout = self.timeout, min(self.timeout, 1.0)
            try:
                self.unregister()
            except CommsError as e:
                log.debug("unregistering '%s': %s", self.name, e)
            finally:
                self.timeout = old
        self._stop.set()
        for t in self._threads:
            if t is not threading.current_thread():
                t.join(5.0)
        self._threads = []
        with self._req_lock:
            if self._req is not None:
                self._req.close(linger=0)
                self._req = None
        with self._pub_lock:
            for p in self._publishers.values():
                with p.lock:
                    p.sock.close(linger=0)
            self._publishers.clear()
        with self._svc_lock:
            for s in self._svc_socks.values():
                s.close(linger=0)
            self._svc_socks.clear()
        ctx, self._ctx = self._ctx, None
        ctx.term()

    close = shutdown

    def __enter__(self) -> Client:
        return self if self.connected else self.connect()

    def __exit__(self, *exc: object) -> None:
        self.shutdown()

    # ------------------------------------------------------------------ server requests
    def _new_req(self, endpoint: str) -> zmq.Socket:
        assert self._ctx is not None
        s = self._ctx.socket(zmq.REQ)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.MAXMSGSIZE, _MAX_SERVICE_REPLY)
        s.connect(endpoint)
        return s

    def _exchange(self, sock: zmq.Socket, frame: bytes, timeout: float, what: str) -> tuple[str, bytes]:
        """Send one frame on a REQ socket and take the framed reply. On a timeout the caller must drop ``sock``."""
        sock.send(frame)
        if not sock.poll(int(timeout * 1000)):
            raise CommsTimeout(f"no answer from {what} within {timeout:g} s; is the simulator (mvsim launch) or "
                               f"`mvsim server` running, and on this port?")
        return unpack(sock.recv())

    def request_raw(self, frame: bytes, timeout: float | None = None) -> tuple[str, bytes]:
        """Send one framed request to the server; (type name, payload) of its answer."""
        if self._ctx is None:
            raise CommsError(f"client '{self.name}' is not connected; call connect() first")
        if self.server is not None:
            return unpack(self.server.handle(frame, local=True))
        t = self.timeout if timeout is None else timeout
        with self._req_lock:
            if self._req is None:
                self._req = self._new_req(self.server_endpoint)
            try:
                return self._exchange(self._req, frame, t, f"the MVSim server at {self.server_endpoint}")
            except (CommsError, zmq.ZMQError):
                self._req.close(linger=0)  # a REQ socket without its reply cannot send again
                self._req = None
                raise

    def _request(self, msg: Message, answer: type[M]) -> M:
        type_name, payload = self.request_raw(pack_message(msg))
        err = _generic_error(type_name, payload) if answer is not GenericAnswer_pb2.GenericAnswer else None
        if err is not None:
            raise CommsError(f"the server refused {msg.DESCRIPTOR.name}: {err}")
        return parse_payload(type_name, payload, answer)

    def list_nodes(self, prefix: str = "") -> list[str]:
        """Names of the registered nodes (sorted), optionally only those starting with ``prefix``."""
        req = ListNodesRequest_pb2.ListNodesRequest()
        if prefix:
            req.nodeStartsWith = prefix
        return list(self._request(req, ListNodesAnswer_pb2.ListNodesAnswer).nodes)

    def list_topics(self, prefix: str = "") -> list[TopicInfo_pb2.TopicInfo]:
        """Known topics (sorted): TopicInfo messages with name, type, publisher endpoints and names."""
        req = ListTopicsRequest_pb2.ListTopicsRequest()
        if prefix:
            req.topicStartsWith = prefix
        return list(self._request(req, ListTopicsAnswer_pb2.ListTopicsAnswer).topics)

    def service_info(self, name: str) -> GetServiceInfoAnswer_pb2.GetServiceInfoAnswer:
        """The server's GetServiceInfoAnswer for ``name`` (``success`` False when no node offers it)."""
        return self._request(GetServiceInfoRequest_pb2.GetServiceInfoRequest(serviceName=name),
                             GetServiceInfoAnswer_pb2.GetServiceInfoAnswer)

    # ------------------------------------------------------------------ publishing
    def advertise_topic(self, topic: str, msg_type: type[Message] | str) -> str:
        """Open a publisher socket for ``topic`` and tell the server; returns its endpoint.

        Args:
            topic: the topic name (e.g. ``/r1/pose``).
            msg_type: the message class, or its full type name.

        Raises:
            InvalidName: ``topic`` breaks the name rule (:mod:`mvsim_core.comms.names`); no socket was opened.
            CommsError: not connected, already advertised, or the server refused.
        """
        check_name("topic name", topic)
        type_name = msg_type if isinstance(msg_type, str) else msg_type.DESCRIPTOR.full_name
        if self._ctx is None:
            raise CommsError(f"client '{self.name}' is not connected; call connect() first")
        with self._pub_lock:
            if topic in self._publishers:
                raise CommsError(f"Topic `{topic}` already advertised by this client")
            s = self._ctx.socket(zmq.XPUB)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.SNDHWM, 100)
            s.bind(f"tcp://{self.bind_host}:*")
            pub = _Publisher(s, type_name, s.getsockopt_string(zmq.LAST_ENDPOINT))
            self._publishers[topic] = pub
        try:
            ans = self._request(AdvertiseTopicRequest_pb2.AdvertiseTopicRequest(
                topicName=topic, topicTypeName=type_name, endpoint=pub.endpoint, nodeName=self.name),
                GenericAnswer_pb2.GenericAnswer)
            if not ans.success:
                raise CommsError(f"Error registering topic `{topic}` in server: `{ans.errorMessage}`")
        except BaseException:
            with self._pub_lock:
                self._publishers.pop(topic, None)
                s.close(linger=0)
            raise
        return pub.endpoint

    def has_subscribers(self, topic: str) -> bool:
        """Whether at least one subscriber listens to ``topic`` (advertised by this client)."""
        pub = self._publisher(topic)
        with pub.lock:
            pub._drain()
            return pub.subscribers > 0

    def _publisher(self, topic: str) -> _Publisher:
        pub = self._publishers.get(topic)
        if pub is None:
            raise CommsError(f"Topic `{topic}` has not been advertised by this client; call advertise_topic() first")
        return pub

    def publish(self, topic: str, msg: Message) -> bool:
        """Send ``msg`` on ``topic``; False when nobody subscribes (nothing is sent) or the queue is full.

        Raises:
            CommsError: the topic was not advertised, or ``msg`` is not of its type.
        """
        pub = self._publisher(topic)
        if msg.DESCRIPTOR.full_name != pub.type_name:
            raise CommsError(f"Topic `{topic}` has type `{pub.type_name}`, not `{msg.DESCRIPTOR.full_name}`")
        return self.publish_raw(topic, pub.type_name, msg.SerializeToString())

    def publish_raw(self, topic: str, type_name: str, payload: bytes) -> bool:
        """Send an already-serialized message on ``topic`` (see :meth:`publish`)."""
        pub = self._publisher(topic)
        with pub.lock:
            pub._drain()
            if pub.subscribers <= 0:
                return False
            try:
                pub.sock.send(pack(type_name, payload), zmq.NOBLOCK)
            except zmq.Again:
                return False
            return True

    # ------------------------------------------------------------------ subscribing
    def subscribe(self, topic: str, callback: TopicCallback) -> None:
        """Call ``callback(type_name, payload)`` (from the client's topic thread) for every message on ``topic``.

        The topic need not exist yet: the server tells this client about publishers as they appear. Subscribing
        twice to a topic adds a second callback.

        Raises:
            InvalidName: ``topic`` breaks the name rule (:mod:`mvsim_core.comms.names`).
        """
        check_name("topic name", topic)
        if self._ctx is None:
            raise CommsError(f"client '{self.name}' is not connected; call connect() first")
        with self._subs_lock:
            self._subs.setdefault(topic, []).append(callback)
        ans = self._request(SubscribeRequest_pb2.SubscribeRequest(topic=topic, updatesEndpoint=self._updates_endpoint),
                            SubscribeAnswer_pb2.SubscribeAnswer)
        if not ans.success or ans.topic != topic:
            raise CommsError(f"the server refused the subscription to `{topic}`")

    @staticmethod
    def decode(type_name: str, payload: bytes) -> Message:
        """The message of a subscription callback as a protobuf object (any ``mvsim_msgs`` /
        ``mvsim_core_msgs`` type).

        Raises:
            UnexpectedMessageError: unknown type. FramingError: the payload does not parse.
        """
        return decode_payload(type_name, payload)

    def _connect_host(self, endpoint: str) -> str:
        """Endpoints reported as ``tcp://0.0.0.0:P`` (bound on every interface) are reached via the server's host."""
        if endpoint.startswith("tcp://0.0.0.0:") or endpoint.startswith("tcp://*:"):
            host = LOOPBACK if self.host in _LOCAL_HOSTS else self.host
            return f"tcp://{host}:{endpoint.rsplit(':', 1)[1]}"
        return endpoint

    def _topic_loop(self) -> None:
        """Topic updates on the PAIR socket (acknowledged with a GenericAnswer, as upstream) and subscription data."""
        ctx, pair = self._ctx, self._pair
        assert ctx is not None and pair is not None
        poller = zmq.Poller()
        poller.register(pair, zmq.POLLIN)
        subs: dict[str, tuple[zmq.Socket, set[str]]] = {}
        by_sock: dict[zmq.Socket, str] = {}
        ack = pack_message(GenericAnswer_pb2.GenericAnswer(success=True))
        try:
            while not self._stop.is_set():
                for sock, _ in poller.poll(_POLL_MS):
                    if sock is pair:
                        self._take_topic_update(pair, pair.recv(), ack, subs, by_sock, poller, ctx)
                    else:
                        self._deliver(by_sock[sock], sock.recv())
        except zmq.ZMQError as e:
            if not self._stop.is_set():
                log.error("client '%s' topic thread: %s", self.name, e)
        finally:
            for s, _ in subs.values():
                s.close(linger=0)
            pair.close(linger=0)

    def _take_topic_update(self, pair: zmq.Socket, frame: bytes, ack: bytes,
                           subs: dict[str, tuple[zmq.Socket, set[str]]], by_sock: dict[zmq.Socket, str],
                           poller: zmq.Poller, ctx: zmq.Context) -> None:
        try:
            type_name, payload = unpack(frame)
            info = parse_payload(type_name, payload, TopicInfo_pb2.TopicInfo)
        except CommsError as e:
            log.warning("client '%s': bad topic update: %s", self.name, e)
            pair.send(pack_message(GenericAnswer_pb2.GenericAnswer(success=False, errorMessage=str(e))))
            return
        pair.send(ack)
        with self._subs_lock:
            wanted = info.topicName in self._subs
        if not wanted:
            log.debug("client '%s': update of topic '%s' it does not subscribe to", self.name, info.topicName)
            return
        entry = subs.get(info.topicName)
        if entry is None:
            s = ctx.socket(zmq.SUB)
            s.setsockopt(zmq.LINGER, 0)
            s.setsockopt(zmq.RCVHWM, 1000)
            s.setsockopt(zmq.SUBSCRIBE, b"")
            entry = subs[info.topicName] = (s, set())
            by_sock[s] = info.topicName
            poller.register(s, zmq.POLLIN)
        sock, connected = entry
        now = {self._connect_host(e) for e in info.publisherEndpoint}
        for ep in sorted(now - connected):
            try:
                sock.connect(ep)
                connected.add(ep)
            except zmq.ZMQError as e:
                log.warning("client '%s': cannot connect to publisher %s of '%s': %s", self.name, ep,
                            info.topicName, e)
        for ep in sorted(connected - now):
            try:
                sock.disconnect(ep)
            except zmq.ZMQError:
                pass
            connected.discard(ep)

    def _deliver(self, topic: str, frame: bytes) -> None:
        try:
            type_name, payload = unpack(frame)
        except FramingError as e:
            log.warning("client '%s': malformed message on '%s': %s", self.name, topic, e)
            return
        with self._subs_lock:
            callbacks = list(self._subs.get(topic, ()))
        for cb in callbacks:
            try:
                cb(type_name, payload)
            except Exception:
                log.exception("client '%s': callback of topic '%s' failed", self.name, topic)

    # ------------------------------------------------------------------ services
    def advertise_service(self, name: str, input_type: type[Message], output_type: type[Message],
                          handler: Callable[[Any], Message]) -> None:
        """Offer service ``name``: ``handler(request: input_type) -> output_type`` runs in the service thread.

        An exception in the handler is answered as a GenericAnswer{success=false, errorMessage}.

        Raises:
            InvalidName: ``name`` breaks the name rule (:mod:`mvsim_core.comms.names`).
        """
        check_name("service name", name)
        if self._srv_rep is None:
            raise CommsError(f"client '{self.name}' is not connected; call connect() first")
        if name in self._services:
            raise CommsError(f"Service `{name}` already registered in this same client")
        self._services[name] = (input_type, output_type, handler)
        ans = self._request(AdvertiseServiceRequest_pb2.AdvertiseServiceRequest(
            serviceName=name, inputTypeName=input_type.DESCRIPTOR.full_name,
            outputTypeName=output_type.DESCRIPTOR.full_name, endpoint=self._srv_endpoint, nodeName=self.name),
            GenericAnswer_pb2.GenericAnswer)
        if not ans.success:
            del self._services[name]
            raise CommsError(f"Error registering service `{name}` in server: `{ans.errorMessage}`")

    def _service_loop(self) -> None:
        rep = self._srv_rep
        assert rep is not None
        try:
            while not self._stop.is_set():
                if not rep.poll(_POLL_MS):
                    continue
                parts = rep.recv_multipart()
                rep.send(self._serve_call(parts[0]) if len(parts) == 1 else pack_message(
                    GenericAnswer_pb2.GenericAnswer(success=False, errorMessage="expected one frame per call")))
        except zmq.ZMQError as e:
            if not self._stop.is_set():
                log.error("client '%s' service thread: %s", self.name, e)
        finally:
            rep.close(linger=0)

    def _serve_call(self, frame: bytes) -> bytes:
        """The framed answer to one CallService frame. Never raises."""
        try:
            type_name, payload = unpack(frame)
            call = parse_payload(type_name, payload, CallService_pb2.CallService)
            entry = self._services.get(call.serviceName)
            if entry is None:
                raise ServiceError(f"Requested unknown service `{call.serviceName}`")
            tin, tout, handler = entry
            try:
                req = parse_bytes(call.serializedInput, tin)
            except FramingError as e:
                raise FramingError(f"input of service `{call.serviceName}`: {e}") from None
            out = handler(req)
            if not isinstance(out, tout):
                raise ServiceError(f"service `{call.serviceName}` produced {type(out).__name__}, not "
                                   f"{tout.DESCRIPTOR.full_name}")
            return pack_message(out)
        except CommsError as e:
            msg = str(e)
        except Exception as e:
            log.exception("client '%s': service handler failed", self.name)
            msg = f"service handler failed: {type(e).__name__}: {e}"
        return pack_message(GenericAnswer_pb2.GenericAnswer(success=False, errorMessage=msg))

    def call_service_raw(self, name: str, serialized_input: bytes, timeout: float | None = None
                         ) -> tuple[str, bytes]:
        """Call service ``name`` with an already-serialized input; (type name, payload) of the answer.

        Raises:
            ServiceError: no node offers ``name``, or it answered an error (a GenericAnswer with success=false).
            CommsTimeout: the server or the service did not answer in time.
        """
        t = self.timeout if timeout is None else timeout
        with self._svc_lock:
            endpoint = self._svc_cache.get(name)
            if endpoint is None:
                info = self.service_info(name)
                if not info.success:
                    raise ServiceError(f"Error requesting information about service `{name}`: {info.errorMessage}")
                endpoint = self._svc_cache[name] = self._connect_host(info.serviceEndpoint)
            sock = self._svc_socks.get(endpoint)
            if sock is None:
                sock = self._svc_socks[endpoint] = self._new_req(endpoint)
            frame = pack_message(CallService_pb2.CallService(serviceName=name, serializedInput=serialized_input))
            try:
                type_name, payload = self._exchange(sock, frame, t, f"service `{name}` at {endpoint}")
            except (CommsError, zmq.ZMQError):
                sock.close(linger=0)
                self._svc_socks.pop(endpoint, None)
                self._svc_cache.pop(name, None)  # ask the server again next time (the node may have moved)
                raise
        err = _generic_error(type_name, payload)
        if err is not None:
            if "unknown service" in err:
                with self._svc_lock:
                    self._svc_cache.pop(name, None)
            raise ServiceError(f"service `{name}` failed: {err}")
        return type_name, payload

    def call_service(self, name: str, request: Message, response_type: type[M] | None = None,
                     timeout: float | None = None) -> Message:
        """Call service ``name`` with ``request``; the answer as a protobuf message.

        Args:
            response_type: the expected answer class; None = whatever known type the answer names.
        Raises:
            ServiceError, CommsTimeout: see :meth:`call_service_raw`.
            UnexpectedMessageError: the answer is not a ``response_type`` (or of an unknown type).
        """
        type_name, payload = self.call_service_raw(name, request.SerializeToString(), timeout)
        if response_type is not None:
            return parse_payload(type_name, payload, response_type)
        if message_class(type_name) is None:
            raise UnexpectedMessageError(f"service `{name}` answered an unknown type {type_name}")
        return decode_payload(type_name, payload)

    # ------------------------------------------------------------------ ground truth (services of the World node)
    def get_all_poses(self, prefix: str = "", timeout: float | None = None
                      ) -> tuple[float, dict[str, tuple[tuple[float, ...], tuple[float, float, float]]]]:
        """Every object's pose and twist in one snapshot (service ``get_all_poses``).

        Args:
            prefix: only the objects whose name starts with it ("" = all).

        Returns:
            (simulated time of the snapshot in s, {name: (pose, twist)}) in the World's order (vehicles, blocks,
            actors); pose = (x, y, z, yaw, pitch, roll) in the world frame (m, rad), twist = (vx, vy, wz) in the
            object's body frame (m/s, rad/s).

        Raises:
            ServiceError: no World node serves it, or it answered an error. CommsTimeout: no answer in time.
        """
        req = SrvGetAllPoses_pb2.SrvGetAllPoses()
        if prefix:
            req.prefix = prefix
        ans = cast(SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer,
                   self.call_service("get_all_poses", req, SrvGetAllPosesAnswer_pb2.SrvGetAllPosesAnswer, timeout))
        if not ans.success:
            raise ServiceError(f"service `get_all_poses` failed: {ans.errorMessage or 'no reason given'}")
        out: dict[str, tuple[tuple[float, ...], tuple[float, float, float]]] = {}
        for o in ans.objects:
            p, t = o.pose, o.twist
            out[o.name] = ((p.x, p.y, p.z, p.yaw, p.pitch, p.roll), (t.vx, t.vy, t.wz))
        return ans.simulTime, out

    # ------------------------------------------------------------------ run-time objects (services of the World node)
    def spawn_objects(self, objects: Iterable[str | tuple[str, str | None, Sequence[float] | None]],
                      timeout: float | None = None) -> list[str]:
        """Add objects to the served world while it runs (service ``spawn_xml_objects``): all of them or none.

        Args:
            objects: each the XML text of one ``<vehicle>``, ``<block>`` or ``<actor>`` as in world files, or a tuple
                (xml, name or None, pose or None) where pose = (x, y, yaw) in m, m, rad, world frame.

        Returns:
            The new objects' names, in order.

        Raises:
            ServiceError: the world refused (``service `spawn_xml_objects` failed: object 2: <why>``; nothing was
                added), or no World node serves it. CommsTimeout: no answer in time.
        """
        req = mvsim_core_msgs_pb2.SrvSpawnXmlObjects()
        for item in objects:
            xml, name, pose = (item, None, None) if isinstance(item, str) else item
            o = req.objects.add(xml=xml)
            if name:
                o.objectId = name
            if pose is not None:
                x, y, yaw = (float(v) for v in pose)
                o.pose.x, o.pose.y, o.pose.z, o.pose.yaw, o.pose.pitch, o.pose.roll = x, y, 0.0, yaw, 0.0, 0.0
        ans = self.call_service("spawn_xml_objects", req, mvsim_core_msgs_pb2.SrvSpawnXmlObjectsAnswer, timeout)
        return self._names_or_raise("spawn_xml_objects", ans)

    def spawn_object(self, xml: str, name: str | None = None, pose: Sequence[float] | None = None,
                     timeout: float | None = None) -> str:
        """Add one object (see :meth:`spawn_objects`); returns its name."""
        return self.spawn_objects([(xml, name, pose)], timeout)[0]

    def remove_objects(self, names: Iterable[str], timeout: float | None = None) -> list[str]:
        """Take these vehicles, blocks or actors out of the served world (service ``remove_objects_by_name``): all
        of them or none. Returns their names. Raises ServiceError (an unknown name: nothing removed)."""
        req = mvsim_core_msgs_pb2.SrvRemoveObjectsByName(objectIds=list(names))
        ans = self.call_service("remove_objects_by_name", req, mvsim_core_msgs_pb2.SrvRemoveObjectsAnswer, timeout)
        return self._names_or_raise("remove_objects_by_name", ans)

    def remove_spawned_objects(self, timeout: float | None = None) -> list[str]:
        """Take out every object added to the served world while it runs (service ``remove_spawned_objects``);
        returns their names."""
        ans = self.call_service("remove_spawned_objects", mvsim_core_msgs_pb2.SrvRemoveSpawnedObjects(),
                                mvsim_core_msgs_pb2.SrvRemoveObjectsAnswer, timeout)
        return self._names_or_raise("remove_spawned_objects", ans)

    @staticmethod
    def _names_or_raise(service: str, ans: Any) -> list[str]:
        if not ans.success:
            raise ServiceError(f"service `{service}` failed: {ans.errorMessage or 'no reason given'}")
        return list(ans.objectIds)

    # ------------------------------------------------------------------ upstream's pybind11 names, for ported scripts
    def setName(self, name: str) -> None:
        self.name = name

    def serverHostAddress(self, host: str) -> None:
        self.host = host

    def callService(self, name: str, serialized_input: bytes) -> bytes:
        """Upstream's ``callService``: serialized input in, serialized output out."""
        return self.call_service_raw(name, serialized_input)[1]

    def subscribeTopic(self, topic: str, callback: TopicCallback) -> None:
        self.subscribe(topic, callback)


def default_node_name(prefix: str) -> str:
    """``prefix-<pid>``: a node name unique on this machine for a command-line tool."""
    return f"{prefix}-{os.getpid()}"
