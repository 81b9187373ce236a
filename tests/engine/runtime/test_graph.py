"""The graph a controller runs: queues made by its queue factory (one given at construction or
installed later) when loading and updating, and scheduling as the controller's call."""

from __future__ import annotations

from engine.flow import load_flow
from engine.queue import FlowFileQueue
from engine.runtime import FlowController, ManualClock, RuntimeConfig
from engine.runtime.graph import FlowFileQueues
from engine.storage import NodeStorage
from engine.testing.flows import connection, flow, processor
from tests.engine.runtime.test_scheduling import seed


class TaggedQueue(FlowFileQueue):
    """A FlowFileQueue a test factory made (the factory's ``strategy`` decides when)."""


class Factory:
    """Records its calls; a connection whose strategy is ROUND_ROBIN gets a TaggedQueue, the
    others a FlowFileQueue; when the kind changes, the FlowFiles of the queue it is given move
    into the new one."""

    def __init__(self, controller: FlowController) -> None:
        self.controller = controller
        self.calls: list[tuple[str, object]] = []
        self.default = FlowFileQueues(controller.storage.flowfiles.swap, controller.clock.time, controller.config)

    def __call__(self, config, existing):
        self.calls.append((config.identifier, existing))
        kind = TaggedQueue if config.load_balance_strategy == "ROUND_ROBIN" else FlowFileQueue
        if type(existing) is kind or (existing is None and kind is FlowFileQueue):
            return self.default(config, existing)
        queue = kind(config.identifier, self.controller.queue_settings(config), self.controller.storage.flowfiles.swap,
                     clock=self.controller.clock.time)
        if existing is not None:
            flowfiles, _ = existing.take_all()
            queue.put_all(flowfiles)
        return queue

def document(strategy: str = "DO_NOT_LOAD_BALANCE", threshold: int = 10_000) -> dict:
    return flow(processors=[processor("gen", "Tick", {"Emit": "true"}, state="ENABLED"),
                            processor("sink", "Pass", state="ENABLED", auto_terminate=["success"])],
                connections=[connection("c", "gen", "sink", loadBalanceStrategy=strategy,
                                        backPressureObjectThreshold=threshold)])


def controller_over(tmp_path, registry, **kwargs) -> FlowController:
    storage = NodeStorage(tmp_path / "node")
    storage.open(background=False)
    return FlowController(storage, registry=registry, clock=ManualClock(), config=RuntimeConfig(swap_threshold=50),
                          **kwargs)


def test_the_default_factory_keeps_a_connections_queue_even_empty_and_updates_its_settings(make_controller):
    controller = make_controller(document())
    before = controller.queue("c")
    controller.update(load_flow(document(threshold=7)))
    assert controller.queue("c") is before, "an empty queue is kept too (a running session may hold its FlowFiles)"
    assert before.settings.back_pressure_object_threshold == 7
    assert before.settings.swap_threshold == controller.config.swap_threshold


def test_queue_settings_are_public_for_other_factories(make_controller):
    controller = make_controller(document(threshold=3))
    config = controller.connections["c"].config
    assert controller.queue_settings(config) == controller.queue("c").settings


def test_a_factory_given_at_construction_makes_the_queues_of_a_load(tmp_path, registry):
    calls = []

    def factory(config, existing):
        calls.append((config.identifier, existing))
        return TaggedQueue(config.identifier, controller.queue_settings(config), controller.storage.flowfiles.swap,
                           clock=controller.clock.time)

    controller = controller_over(tmp_path, registry, queue_factory=factory)
    try:
        controller.load(load_flow(document()))
        assert calls == [("c", None)]
        assert isinstance(controller.queue("c"), TaggedQueue)
        assert controller.queue("c").settings.swap_threshold == 50
    finally:
        controller.shutdown(timeout=1)


def test_a_strategy_change_hands_the_existing_queue_to_the_factory_which_may_replace_it(make_controller):
    controller = make_controller(document())
    factory = Factory(controller)
    controller.set_queue_factory(factory)
    seed(controller, "c", 5)
    plain = controller.queue("c")
    sink = controller.processor("sink")

    controller.update(load_flow(document("ROUND_ROBIN")))
    assert factory.calls == [("c", plain)]
    balanced = controller.queue("c")
    assert isinstance(balanced, TaggedQueue) and len(balanced) == 5
    assert controller.processor("sink") is not sink, "the ends of the changed connection are rebuilt"
    wired = controller.processor("sink").session_component.incoming
    assert wired == [balanced], "the rebuilt ends see the new queue"
    assert controller.processor("gen").session_component.outgoing["success"] == [balanced]

    controller.update(load_flow(document("ROUND_ROBIN", threshold=9)))
    assert controller.queue("c") is balanced and balanced.settings.back_pressure_object_threshold == 9

    controller.update(load_flow(document()))
    assert type(controller.queue("c")) is FlowFileQueue and len(controller.queue("c")) == 5
    assert controller.status().node.queued_count == 5


def test_an_orphaned_queue_is_handed_to_the_factory(make_controller):
    controller = make_controller(flow(processors=[processor("gen", "Tick", state="ENABLED")]))
    factory = Factory(controller)
    controller.set_queue_factory(factory)
    orphan = FlowFileQueue("c", controller.queue_settings(load_flow(document()).root.connections[0]),
                           controller.storage.flowfiles.swap, clock=controller.clock.time)
    controller.orphans["c"] = orphan
    controller.update(load_flow(document()))
    assert factory.calls == [("c", orphan)]
    assert controller.queue("c") is orphan and "c" not in controller.orphans


def test_scheduling_is_the_controllers_call(make_controller):
    controller = make_controller(document())
    node = controller.processor("gen")
    node.start()
    assert not controller.scheduler.is_scheduled(node), "a component does not schedule itself"
    node.stop()
    controller.start_processor("gen")
    assert controller.scheduler.is_scheduled(node)
    controller.stop_processor("gen")
    assert not controller.scheduler.is_scheduled(node)
    controller.update(load_flow(document()))  # the saved states say ENABLED for every processor
    assert not controller.scheduler.is_scheduled(controller.processor("gen"))
