"""mvsim_ros2.audience: the subscriber count read for free, and never a stale count for another object."""

from __future__ import annotations

import gc
import weakref

from mvsim_ros2 import audience


class FakePublisher:
    def __init__(self, subscribers: int) -> None:
        self.subscribers = subscribers

    def get_subscription_count(self) -> int:
        return self.subscribers


class FakeNode:
    def __init__(self) -> None:
        self.callbacks = []

    def create_publisher(self, msg_type, topic, qos, event_callbacks=None):
        self.callbacks.append(event_callbacks.matched)
        return FakePublisher(0)


class Info:
    def __init__(self, n: int) -> None:
        self.current_count = n


def test_matched_events_set_the_count_and_rmw_is_not_asked():
    node = FakeNode()
    pub = audience.counted_publisher(node, object, "/t", None)
    assert not audience.listened(pub)
    pub.subscribers = 5  # what rmw would say: not asked, the count comes from the events
    assert not audience.listened(pub)
    node.callbacks[0](Info(2))
    assert audience.listened(pub)
    node.callbacks[0](Info(0))
    assert not audience.listened(pub)


def test_an_uncounted_publisher_at_a_dead_ones_address_asks_rmw():
    """A publisher made without counting at the address of a destroyed counted one (ids are reused) must not read
    that one's count (a GNSS test once lost its message to a stale 0)."""
    node = FakeNode()
    pub = audience.counted_publisher(node, object, "/t", None)
    stale = id(pub)
    del pub
    gc.collect()
    other = FakePublisher(3)
    audience._counts[id(other)] = audience._counts.pop(stale)  # as if ``other`` had landed at the dead address
    assert audience._counts[id(other)][0]() is None
    assert audience.listened(other)
    other.subscribers = 0
    assert not audience.listened(other)
    keep = FakePublisher(1)
    audience._counts[id(other)] = (weakref.ref(keep), 0)  # a live, different object's entry
    other.subscribers = 4
    assert audience.listened(other)
