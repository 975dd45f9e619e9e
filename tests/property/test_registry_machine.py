"""Snapshot isolation as a state machine: every `Registry` answers forever as when it was taken.

`RegistryMachine` registers, removes, regroups and re-presets tools in a `Toolkit` while keeping
a model of what the toolkit holds. Each snapshot is recorded with what the model says it must
contain (names in order, specs, groups, membership, the provider schemas, request views and the
results of calls), and after every step every recorded snapshot is asked again. Views built from
the toolkit itself (`Toolkit.view`) are recorded and asked again the same way.

A second test changes a toolkit from another thread while the main thread takes snapshots and
reads each of them several times: the toolkit's lock makes a change and a snapshot atomic with
respect to each other, so a snapshot never sees half a change nor any change after it.
"""

from __future__ import annotations

import dataclasses
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

import anyio
import orjson
import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from ferrotool import (
    BASIC,
    RESET_TOOLS,
    FunctionTool,
    RegistrationError,
    Registry,
    ToolContextState,
    ToolGroup,
    ToolGroupScope,
    Toolkit,
    ToolkitConfig,
    ToolResultState,
    ToolSpec,
    ToolUseBlock,
    ToolView,
    tool,
    tool_definition,
)

NAMES = tuple(f"t{i}" for i in range(7))
GROUPS = ("g0", "g1", "g2")

# -- the tools: three signatures, each under every name ------------------------------------------


def alpha(a: int, b: str = "x") -> str:
    return f"alpha a={a} b={b}"


def beta(items: list[int], flag: bool = False) -> str:
    return f"beta items={items} flag={flag}"


async def gamma(n: int = 0) -> str:
    return f"gamma n={n}"


@dataclasses.dataclass(frozen=True)
class Template:
    function: Callable[..., Any]
    arguments: Mapping[str, object]
    """Arguments for every parameter: a call sends those that are not preset."""
    presets: tuple[Mapping[str, object], ...]
    """Preset choices (the empty one: none)."""
    text: str
    """The answer, formatted with the arguments the function receives."""

    def answer(self, presets: Mapping[str, object]) -> str:
        return self.text.format_map({**self.arguments, **presets})

    def call_arguments(self, presets: Mapping[str, object]) -> str:
        return orjson.dumps({k: v for k, v in self.arguments.items() if k not in presets}).decode()


TEMPLATES = {
    "alpha": Template(
        alpha,
        {"a": 1, "b": "y"},
        ({}, {"b": "p"}, {"a": 7}, {"a": 8, "b": "q"}),
        "alpha a={a} b={b}",
    ),
    "beta": Template(
        beta,
        {"items": [1, 2], "flag": True},
        ({}, {"flag": False}),
        "beta items={items} flag={flag}",
    ),
    "gamma": Template(gamma, {"n": 3}, ({}, {"n": 4}), "gamma n={n}"),
}
TOOLS: dict[tuple[str, str], FunctionTool[..., str]] = {
    (name, label): tool(template.function, name=name, inline=label != "gamma")
    for name in NAMES
    for label, template in TEMPLATES.items()
}


# -- the model -------------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Entry:
    template: str
    groups: frozenset[str]
    presets: Mapping[str, object]


@dataclasses.dataclass(frozen=True)
class Model:
    """What a toolkit holds, as plain values."""

    meta_tool: bool
    entries: dict[str, Entry | None]
    """Registration order: the meta tool is ``None``."""
    groups: dict[str, ToolGroup]

    def copy(self) -> Model:
        return Model(self.meta_tool, dict(self.entries), dict(self.groups))

    def names(self) -> tuple[str, ...]:
        return tuple(self.entries)

    def groups_of(self, name: str) -> frozenset[str]:
        entry = self.entries[name]
        return (entry.groups if entry is not None else frozenset()) or frozenset({BASIC})

    def visible(self, state: ToolContextState) -> tuple[str, ...]:
        def active(group: str) -> bool:
            return group == BASIC or state.is_active(group, self.groups[group].active)

        return tuple(name for name in self.entries if any(map(active, self.groups_of(name))))

    def refresh_meta(self) -> None:
        """``reset_tools`` exists while a session-scoped group does (and keeps its place)."""
        if not self.meta_tool:
            return
        wanted = any(g.scope is ToolGroupScope.SESSION for g in self.groups.values())
        if wanted and RESET_TOOLS not in self.entries:
            self.entries[RESET_TOOLS] = None
        elif not wanted:
            self.entries.pop(RESET_TOOLS, None)


def check_spec(model: Model, name: str, spec: ToolSpec | None) -> None:
    """The spec the model expects for ``name``: presets hidden, the meta tool's groups."""
    assert spec is not None
    assert spec.name == name
    properties = orjson.loads(spec.parameters_json).get("properties", {})
    entry = model.entries[name]
    if entry is None:
        sessions = [g.name for g in model.groups.values() if g.scope is ToolGroupScope.SESSION]
        assert list(properties) == sessions
    else:
        arguments = TEMPLATES[entry.template].arguments
        assert list(properties) == [key for key in arguments if key not in entry.presets]


# -- the records -----------------------------------------------------------------------------------


@dataclasses.dataclass
class Record:
    """A snapshot and everything it must keep answering."""

    registry: Registry
    model: Model
    specs: dict[str, ToolSpec]
    schemas: bytes
    views: list[tuple[ToolContextState, tuple[str, ...]]]

    def check(self) -> None:
        registry, model = self.registry, self.model
        assert registry.names() == model.names()
        assert tuple(registry) == model.names()
        assert len(registry) == len(model.entries)
        assert registry.groups() == tuple(model.groups.values())
        for name in NAMES:
            assert (name in registry) is (name in model.entries)
            if name not in model.entries:
                assert registry.get_spec(name) is None
                assert registry.get_tool(name) is None
        for name, spec in self.specs.items():
            assert registry.get_spec(name) == spec
            assert registry.group_of(name) == model.groups_of(name)
        assert registry.specs() == tuple(self.specs.values())
        assert registry.schemas_json("openai_chat") == self.schemas
        for state, names in self.views:
            assert registry.view(state).names() == names

    def check_calls(self) -> None:
        """Every tool answers as it did: sync calls, and async ones through `call_tool`."""
        calls = self.calls()
        for call, expected in calls:
            assert_answer(self.registry.call_tool_sync(call), expected)

        async def run() -> None:
            for call, expected in calls:
                assert_answer(await self.registry.call_tool(call), expected)

        anyio.run(run)

    def calls(self) -> list[tuple[ToolUseBlock, str | None]]:
        """Each tool's call and its answer (``None``: an error, the tool being hidden)."""
        out: list[tuple[ToolUseBlock, str | None]] = []
        default = self.model.visible(ToolContextState())
        for name, entry in self.model.entries.items():
            if entry is None:
                continue
            template = TEMPLATES[entry.template]
            call = ToolUseBlock(f"call-{name}", name, template.call_arguments(entry.presets))
            visible = name in default
            out.append((call, template.answer(entry.presets) if visible else None))
        return out


@dataclasses.dataclass
class ViewRecord:
    """A view of the toolkit and what it must keep answering."""

    view: ToolView
    names: tuple[str, ...]
    schemas: bytes

    def check(self) -> None:
        view = self.view
        assert view.names() == self.names
        assert tuple(name for name in (*NAMES, RESET_TOOLS) if name in view) == tuple(
            sorted(self.names, key=(*NAMES, RESET_TOOLS).index)
        )
        assert view.schemas_json("openai_chat") == self.schemas


def assert_answer(result: Any, expected: str | None) -> None:
    if expected is None:
        assert result.state is ToolResultState.ERROR, result
        assert "not available" in str(result.content)
    else:
        assert result.state is ToolResultState.SUCCESS, result
        assert result.content == expected


def expected_schemas(specs: Mapping[str, ToolSpec]) -> bytes:
    """The ``openai_chat`` tool list, built from the specs alone."""
    parts = [tool_definition(spec, "openai_chat").definition_json for spec in specs.values()]
    return b"[" + b",".join(parts) + b"]"


# -- the machine -----------------------------------------------------------------------------------

configs = st.builds(
    ToolkitConfig, allow_removal=st.sampled_from([True, True, True, False]), meta_tool=st.booleans()
)
states = st.dictionaries(st.sampled_from(GROUPS), st.booleans()).map(
    lambda flags: ToolContextState().with_groups(flags)
)


def pick(data: st.DataObject, existing: Iterable[str], universe: tuple[str, ...]) -> str:
    """Mostly a name that exists (the change goes through), now and then any name."""
    present = sorted(existing)
    anything = not present or data.draw(st.integers(0, 4), label="any name?") == 4
    return data.draw(st.sampled_from(universe if anything else present))


STATS: Counter[str] = Counter()


def count(what: str) -> None:
    """Count a step (shown by ``--hypothesis-show-statistics``, and with ``-s`` at the end)."""
    event(what)
    STATS[what] += 1


def teardown_module() -> None:
    print("\n" + "\n".join(f"{key}: {value}" for key, value in sorted(STATS.items())))


class RegistryMachine(RuleBasedStateMachine):
    kit: Toolkit
    model: Model
    records: list[Record]
    views: list[ViewRecord]

    @initialize(config=configs, data=st.data())
    def start(self, config: ToolkitConfig, data: st.DataObject) -> None:
        self.kit = Toolkit(config)
        self.model = Model(config.meta_tool, {}, {})
        self.records = []
        self.views = []
        count("machines")
        # A few groups and tools to start from, made by the rules themselves.
        for _ in range(data.draw(st.integers(0, 3), label="groups to start with")):
            self.create_group(data)
        for _ in range(data.draw(st.integers(0, 5), label="tools to start with")):
            self.register(data)

    # - changes -

    # Every rule takes one argument, `data`: hypothesis prefers the rules with fewer arguments.

    @rule(data=st.data())
    def register(self, data: st.DataObject) -> None:
        label = data.draw(st.sampled_from(sorted(TEMPLATES)), label="template")
        name = pick(data, (n for n in NAMES if n not in self.model.entries), NAMES)
        groups = frozenset(
            pick(data, self.model.groups, (*GROUPS, BASIC))
            for _ in range(data.draw(st.integers(0, 2), label="groups"))
        )
        presets = data.draw(st.sampled_from(TEMPLATES[label].presets))
        fails = name in self.model.entries or any(
            g != BASIC and g not in self.model.groups for g in groups
        )
        before = self.kit.names()
        try:
            self.kit.register(TOOLS[name, label], presets=presets or None, group=groups)
        except RegistrationError:
            assert fails
            assert self.kit.names() == before
            count("register refused")
            return
        assert not fails
        self.model.entries[name] = Entry(label, groups - {BASIC}, presets)
        count("register")

    @rule(data=st.data())
    def remove(self, data: st.DataObject) -> None:
        name = pick(data, (n for n, e in self.model.entries.items() if e), (*NAMES, RESET_TOOLS))
        if not self.kit.config.allow_removal:  # a no-op: nothing removed, nothing raised
            before = self.kit.names()
            assert self.kit.remove(name) is None
            assert self.kit.names() == before
            count("remove disabled")
            return
        fails = self.model.entries.get(name) is None
        try:
            self.kit.remove(name)
        except RegistrationError:
            assert fails
            count("remove refused")
            return
        assert not fails
        del self.model.entries[name]
        count("remove")

    @rule(data=st.data())
    def create_group(self, data: st.DataObject) -> None:
        name = pick(data, (g for g in GROUPS if g not in self.model.groups), GROUPS)
        scope = data.draw(st.sampled_from(ToolGroupScope), label="scope")
        active = data.draw(st.booleans(), label="active")
        try:
            group = self.kit.create_group(name, f"about {name}", scope=scope, active=active)
        except RegistrationError:
            assert name in self.model.groups
            count("create_group refused")
            return
        assert name not in self.model.groups
        assert group == ToolGroup(
            name=name, description=f"about {name}", scope=scope, active=active
        )
        self.model.groups[name] = group
        self.model.refresh_meta()
        count("create_group")

    @rule(data=st.data())
    def remove_group(self, data: st.DataObject) -> None:
        name = pick(data, self.model.groups, GROUPS)
        if not self.kit.config.allow_removal:  # a no-op: nothing removed, nothing raised
            before = self.kit.names(), self.kit.groups()
            assert self.kit.remove_group(name) == ()
            assert (self.kit.names(), self.kit.groups()) == before
            count("remove_group disabled")
            return
        fails = name not in self.model.groups
        try:
            removed = self.kit.remove_group(name)
        except RegistrationError:
            assert fails
            count("remove_group refused")
            return
        assert not fails
        del self.model.groups[name]
        gone = set()
        for tool_name, entry in list(self.model.entries.items()):
            if entry is None or name not in entry.groups:
                continue
            rest = entry.groups - {name}
            if rest:
                self.model.entries[tool_name] = dataclasses.replace(entry, groups=rest)
            else:
                gone.add(tool_name)
                del self.model.entries[tool_name]
        assert set(removed) == gone
        self.model.refresh_meta()
        count("remove_group")

    @rule(data=st.data())
    def add_to_group(self, data: st.DataObject) -> None:
        group = pick(data, self.model.groups, (*GROUPS, BASIC))
        name = pick(data, (n for n, e in self.model.entries.items() if e is not None), NAMES)
        entry = self.model.entries.get(name)
        fails = entry is None or (group != BASIC and group not in self.model.groups)
        try:
            self.kit.add_to_group(group, name)
        except RegistrationError:
            assert fails
            count("add_to_group refused")
            return
        assert entry is not None
        assert not fails
        if group != BASIC:
            self.model.entries[name] = dataclasses.replace(entry, groups=entry.groups | {group})
        count("add_to_group")

    @precondition(lambda self: any(e is not None for e in self.model.entries.values()))
    @rule(data=st.data())
    def set_presets(self, data: st.DataObject) -> None:
        names = [name for name, entry in self.model.entries.items() if entry is not None]
        name = data.draw(st.sampled_from(names))
        entry = self.model.entries[name]
        assert entry is not None
        presets = data.draw(st.sampled_from(TEMPLATES[entry.template].presets))
        self.kit.set_presets(name, presets or None)
        self.model.entries[name] = dataclasses.replace(entry, presets=presets)
        count("set_presets")

    # - reads -

    @rule()
    def snapshot(self) -> None:
        registry = self.kit.snapshot()
        model = self.model.copy()
        specs = {}
        for name in model.entries:
            spec = registry.get_spec(name)
            check_spec(model, name, spec)
            assert spec is not None
            specs[name] = spec
        schemas = expected_schemas(specs)
        record = Record(registry, model, specs, schemas, [])
        record.check()
        record.check_calls()
        self.records.append(record)
        count("snapshot")

    @precondition(lambda self: bool(self.records))
    @rule(data=st.data())
    def view(self, data: st.DataObject) -> None:
        state = data.draw(states, label="state")
        record = self.records[-1]
        names = record.model.visible(state)
        assert record.registry.view(state).names() == names
        record.views.append((state, names))
        count("view")

    @rule(data=st.data())
    def view_of_a_fresh_snapshot(self, data: st.DataObject) -> None:
        state = data.draw(states, label="state")
        assert self.kit.snapshot().view(state).names() == self.model.visible(state)

    @rule(data=st.data())
    def view_of_the_toolkit(self, data: st.DataObject) -> None:
        """A view built from the toolkit itself is a view of the tools as they are now."""
        state = data.draw(states, label="state")
        view = self.kit.view(state)
        names = self.model.visible(state)
        assert view.names() == names
        self.views.append(ViewRecord(view, names, view.schemas_json("openai_chat")))
        count("view of the toolkit")

    # - the law -

    @invariant()
    def toolkit_matches_the_model(self) -> None:
        assert self.kit.names() == self.model.names()
        assert self.kit.groups() == tuple(self.model.groups.values())

    @invariant()
    def every_snapshot_answers_as_recorded(self) -> None:
        for record in self.records:
            record.check()

    @invariant()
    def every_view_of_the_toolkit_answers_as_recorded(self) -> None:
        for record in self.views:
            record.check()

    def teardown(self) -> None:
        for record in self.records:
            record.check_calls()


TestRegistryMachine = RegistryMachine.TestCase
TestRegistryMachine.settings = settings(settings.default, stateful_step_count=50)


def test_a_view_of_the_toolkit_does_not_follow_its_changes() -> None:
    """`Toolkit.view` is the view of a snapshot (it used to read the toolkit's live table)."""
    kit = Toolkit()
    kit.register(TOOLS["t0", "alpha"])
    view = kit.view()
    kit.register(TOOLS["t1", "beta"])
    kit.set_presets("t0", {"b": "p"})
    assert view.names() == ("t0",)
    assert "t1" not in view
    spec = view.get_spec("t0")
    assert spec is not None
    assert list(orjson.loads(spec.parameters_json)["properties"]) == ["a", "b"]
    assert kit.view().names() == ("t0", "t1")


# -- a second thread changes the toolkit while snapshots are taken -------------------------------


class Many:
    """An object with many tools: one registration places them one by one."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix

    def answer(self) -> str:
        return self.prefix


for _i in range(24):
    setattr(Many, f"m{_i}", tool(Many.answer, name=f"m{_i}", inline=True))


def readings(registry: Registry) -> Iterator[object]:
    yield registry.names()
    yield tuple(registry.group_of(name) for name in registry.names())
    yield registry.groups()
    yield registry.schemas_json("openai_chat")
    yield registry.view(ToolContextState().with_groups({"loop": True})).names()


SNAPSHOTS = 1500


@pytest.mark.parametrize("meta_tool", [False, True])
def test_snapshots_stay_still_while_another_thread_changes_the_toolkit(meta_tool: bool) -> None:
    """One thread registers and removes tools and groups in a loop; the main thread takes
    snapshots and reads each several times: the answers never change, and never show half a
    change (a group's tools are all there or none are)."""
    kit = Toolkit(ToolkitConfig(allow_removal=True, meta_tool=meta_tool))
    kit.register(TOOLS["t0", "alpha"])
    stop = threading.Event()
    cycled = threading.Event()
    errors: list[BaseException] = []

    def churn() -> None:
        try:
            while not stop.is_set():
                kit.create_group("loop", "churn", active=True)
                kit.register(Many("x"), group="loop")
                kit.set_presets("t0", {"b": "p"})
                kit.remove_group("loop")  # removes the 24 tools, one by one
                kit.set_presets("t0", None)
                cycled.set()
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often: a race shows within the test's time
    worker = threading.Thread(target=churn, daemon=True)
    worker.start()
    seen: Counter[int] = Counter()
    deadline = time.monotonic() + 60
    try:
        assert cycled.wait(30), "the worker never finished a cycle"
        # Enough snapshots, and enough of them with and without the group's tools.
        while sum(seen.values()) < SNAPSHOTS or min(seen[0], seen[24]) < SNAPSHOTS // 10:
            assert time.monotonic() < deadline, f"the two threads did not interleave: {seen}"
            registry = kit.snapshot()
            first = list(readings(registry))
            for _ in range(3):
                assert list(readings(registry)) == first
            names = registry.names()
            members = [name for name in names if name.startswith("m")]
            assert len(members) in (0, 24), names  # a registration is all or nothing
            seen[len(members)] += 1
            if meta_tool:
                assert (RESET_TOOLS in names) is ("loop" in [g.name for g in registry.groups()])
    finally:
        stop.set()
        worker.join()
        sys.setswitchinterval(switch)
    assert not errors, errors
