"""A task host's source tasks share a producer when their settings are the same: one
librdkafka producer (three threads that wake every second) instead of one per task."""

from __future__ import annotations

import threading
from typing import Any

from confluent_kafka import KafkaError

from sluice.taskhost.producers import HostProducers
from tests.unit.taskhost.fakes import FakeClients, FakeKafkaError

BASE = {"bootstrap.servers": "fake:9092", "linger.ms": "5", "acks": "all"}


def settings(task: int, **more: str) -> dict[str, Any]:
    return {**BASE, "client.id": f"connector-producer-c-{task}", **more}


def lease(producers: HostProducers, task: int, heard: list[Any] | None = None, **more: str) -> Any:
    sink = heard if heard is not None else []
    return producers.lease(settings(task, **more), f"connector-producer-c-{task}", sink.append)


def test_tasks_with_the_same_settings_share_one_producer_named_for_the_host() -> None:
    clients = FakeClients()
    producers = HostProducers(clients)
    first, second = lease(producers, 0), lease(producers, 1)
    assert first.producer is second.producer
    made = clients.only_producer.settings
    assert made["client.id"].startswith("connector-producer-sluice-host-")  # no one task's id
    assert {k: v for k, v in made.items() if k not in ("client.id", "error_cb")} == BASE


def test_different_settings_or_a_client_id_of_their_own_get_producers_of_their_own() -> None:
    clients = FakeClients()
    producers = HostProducers(clients)
    plain = lease(producers, 0)
    slower = lease(producers, 1, **{"linger.ms": "50"})
    named = producers.lease(settings(2, **{"client.id": "mine"}), "connector-producer-c-2", print)
    named_too = producers.lease(settings(3, **{"client.id": "mine"}), "connector-producer-c-3", print)
    assert len({id(plain.producer), id(slower.producer), id(named.producer)}) == 3
    assert named_too.producer is named.producer
    assert named.producer.settings["client.id"] == "mine"


def test_the_last_release_closes_the_producer_and_the_next_lease_makes_a_new_one() -> None:
    clients = FakeClients()
    producers = HostProducers(clients)
    first, second = lease(producers, 0), lease(producers, 1)
    first.release()
    first.release()  # twice is once
    assert not first.producer.closed
    second.release()
    assert second.producer.closed
    third = lease(producers, 2)
    assert third.producer is not first.producer and not third.producer.closed


def test_every_task_on_a_producer_hears_its_errors_and_a_fatal_one_retires_it() -> None:
    clients = FakeClients()
    producers = HostProducers(clients)
    heard_a: list[Any] = []
    heard_b: list[Any] = []
    a, b = lease(producers, 0, heard_a), lease(producers, 1, heard_b)
    transport = FakeKafkaError("Connection refused", error_code=KafkaError._TRANSPORT)
    a.producer.report_client_error(transport)
    a.producer.poll(0)
    assert heard_a == heard_b == [transport]
    held = lease(producers, 2)
    assert held.producer is a.producer  # a passing error: still shared

    fenced = FakeKafkaError("Producer fenced", is_fatal=True)
    a.producer.report_client_error(fenced)
    a.producer.poll(0)
    assert heard_a[-1] is fenced and heard_b[-1] is fenced
    after = lease(producers, 3)
    assert after.producer is not a.producer  # a task started now gets a working producer
    a.release()
    b.release()
    assert not a.producer.closed  # task 2 still holds it
    held.release()
    assert a.producer.closed


def test_two_tasks_polling_a_shared_producer_hear_its_reports_in_order() -> None:
    """Each thread polling the shared producer must not run a later batch of delivery
    reports while another thread is still running an earlier one: a task's
    ``commit_record`` would hear its records out of order."""
    clients = FakeClients()
    producers = HostProducers(clients)
    first, second = lease(producers, 0), lease(producers, 1)
    shared = first.producer
    heard: list[int] = []
    in_first_report = threading.Event()
    second_polled = threading.Event()

    def report(seqno: int) -> Any:
        def on_delivery(err: Any, message: Any) -> None:
            if seqno == 0:  # the first thread is amid its batch when the second one polls
                in_first_report.set()
                assert second_polled.wait(10)
            heard.append(seqno)

        return on_delivery

    for seqno in (0, 1):
        shared.produce("t", b"v", on_delivery=report(seqno))
    clients.only_producer.release(2)  # the first batch: seqnos 0 and 1
    polling = threading.Thread(target=shared.poll, args=(0,))
    polling.start()
    assert in_first_report.wait(10)
    shared.produce("t", b"v", on_delivery=report(2))
    clients.only_producer.release(1)  # a second batch, ready while the first is being served
    assert second.producer.poll(0) == 0  # another thread is serving reports: not this one
    second_polled.set()
    polling.join(10)
    second.producer.poll(0)
    assert heard == [0, 1, 2]


def test_a_poll_with_a_timeout_waits_its_turn_and_then_serves() -> None:
    clients = FakeClients()
    producers = HostProducers(clients)
    first, second = lease(producers, 0), lease(producers, 1)
    heard: list[str] = []
    in_slow, release_first = threading.Event(), threading.Event()

    def slow(err: Any, message: Any) -> None:
        in_slow.set()
        assert release_first.wait(10)
        heard.append("first")

    first.producer.produce("t", b"v", on_delivery=slow)
    clients.only_producer.release(1)
    polling = threading.Thread(target=first.producer.poll, args=(0,))
    polling.start()
    assert in_slow.wait(10)
    second.producer.produce("t", b"v", on_delivery=lambda err, message: heard.append("second"))
    clients.only_producer.release(1)
    threading.Timer(0.2, release_first.set).start()  # whenever: the second poll waits either way
    assert second.producer.poll(10) == 1  # waited for the first thread, then served its own
    polling.join(10)
    assert heard == ["first", "second"]
