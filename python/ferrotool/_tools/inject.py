"""Injection: the parameters a tool receives from the call instead of from the model.

Decided once, when a function tool is defined (`Planner`), and applied per call (`inject`):
`Emitter`, `RuntimeContext`, `CallingAgent`, `ToolUseBlock`, `AgentState` and values read from the
context by type never appear in the tool's schema.
"""

from __future__ import annotations

import enum
import inspect
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Annotated, Final, TypeAlias, TypeVar, cast, final

from ferrotool._schema.params import Param
from ferrotool._tools.base import agent_state
from ferrotool._values.calls import ToolUseBlock
from ferrotool._values.context import (
    AgentState,
    CallingAgent,
    Emitter,
    ProgressSink,
    RuntimeContext,
)
from ferrotool.errors import InjectionError, SchemaError

T = TypeVar("T")


class _InjectMarker:
    __slots__ = ()

    def __repr__(self) -> str:
        return "INJECT"


INJECT: Final = _InjectMarker()
"""``Annotated`` metadata marking a parameter the toolkit fills from the `RuntimeContext` by
type; the parameter never appears in the schema."""

Injected: TypeAlias = Annotated[T, INJECT]
"""``Injected[Database]``: a parameter filled from the `RuntimeContext` with its `Database`."""


class _Inject(enum.Enum):
    EMITTER = "emitter"
    CONTEXT = "context"
    AGENT = "agent"
    AGENT_STATE = "agent_state"
    CALL = "call"
    VALUE = "value"


@final
@dataclass(frozen=True, slots=True)
class Injection:
    name: str
    kind: _Inject
    type: type
    has_default: bool
    optional: bool


_SPECIAL: Final[Mapping[object, _Inject]] = types.MappingProxyType(
    {
        Emitter: _Inject.EMITTER,
        RuntimeContext: _Inject.CONTEXT,
        CallingAgent: _Inject.AGENT,
        ToolUseBlock: _Inject.CALL,
    }
)


def _unwrap(annotation: object) -> tuple[object, tuple[object, ...], bool]:
    """(the bare type, the Annotated metadata, whether None is allowed)."""
    metadata: tuple[object, ...] = ()
    if typing.get_origin(annotation) is Annotated:
        metadata = annotation.__metadata__  # type: ignore[attr-defined]
        annotation = typing.get_args(annotation)[0]
    optional = False
    origin = typing.get_origin(annotation)
    if origin is typing.Union or origin is types.UnionType:
        args = [arg for arg in typing.get_args(annotation) if arg is not type(None)]
        if len(args) == 1 and len(typing.get_args(annotation)) == 2:
            annotation, optional = args[0], True
            if typing.get_origin(annotation) is Annotated:
                metadata = (*metadata, *annotation.__metadata__)  # type: ignore[attr-defined]
                annotation = typing.get_args(annotation)[0]
    return annotation, metadata, optional


class Planner:
    """Decides, parameter by parameter, what the model fills and what the toolkit injects."""

    def __init__(
        self, label: str, inject: tuple[type, ...], explicit_params: bool, state_injected: bool
    ) -> None:
        self.label = label
        self.inject = inject
        self.explicit_params = explicit_params
        self.state_injected = state_injected
        self.injections: dict[str, Injection] = {}
        self.schema_params: list[str] = []
        self.preset: frozenset[str] = frozenset()

    def __call__(self, name: str, annotation: object) -> bool:
        if name in self.preset:
            return True
        injection = self.classify(name, annotation)
        if injection is None:
            if name not in self.schema_params:
                self.schema_params.append(name)
            return False
        self.injections[name] = injection
        return True

    def classify(self, name: str, annotation: object) -> Injection | None:
        if annotation is inspect.Parameter.empty:
            return None
        bare, metadata, optional = _unwrap(annotation)
        marked = any(isinstance(item, Param) for item in metadata)
        kind = _SPECIAL.get(bare)
        if isinstance(bare, type) and issubclass(bare, AgentState):
            if marked:
                raise SchemaError(
                    f"{self.label} declares an AgentState parameter {name!r} with a Param marker; "
                    "the agent state is injected by type and never shown to the model"
                )
            if not self.state_injected:
                raise SchemaError(
                    f"{self.label} declares an AgentState parameter {name!r} but state_injected "
                    "is False; set state_injected=True to inject the agent state"
                )
            kind = _Inject.AGENT_STATE
        elif kind is None and (
            any(item is INJECT for item in metadata)
            or (isinstance(bare, type) and issubclass(bare, self.inject))
        ):
            kind = _Inject.VALUE
        elif kind is None and self.explicit_params and not marked:
            if not isinstance(bare, type):
                raise SchemaError(
                    f"{self.label}: parameter {name!r} has no Param marker, so it is injected "
                    f"by type, but {bare!r} is not a class"
                )
            kind = _Inject.VALUE
        if kind is None:
            return None
        if marked and kind is not _Inject.VALUE:
            raise SchemaError(
                f"{self.label}: parameter {name!r} is injected ({kind.value}) and cannot carry a "
                "Param marker"
            )
        return Injection(name, kind, cast("type", bare), False, optional)

    def finish(self, defaults: Mapping[str, bool]) -> tuple[Injection, ...]:
        states = [i for i in self.injections.values() if i.kind is _Inject.AGENT_STATE]
        if len(states) > 1:
            raise SchemaError(
                f"{self.label} declares more than one AgentState parameter; only one is allowed"
            )
        if self.state_injected and not states:
            raise SchemaError(
                f"{self.label}: state_injected=True requires a parameter annotated with "
                "AgentState (or a subclass)"
            )
        return tuple(
            Injection(i.name, i.kind, i.type, defaults.get(i.name, False), i.optional)
            for i in self.injections.values()
        )


def inject(
    plan: tuple[Injection, ...],
    label: str,
    call: ToolUseBlock,
    context: RuntimeContext,
    agent: object | None,
    sinks: tuple[ProgressSink, ...],
) -> dict[str, object]:
    values: dict[str, object] = {}
    for injection in plan:
        kind = injection.kind
        value: object
        if kind is _Inject.EMITTER:
            value = Emitter(call, sinks)
        elif kind is _Inject.CONTEXT:
            value = context
        elif kind is _Inject.CALL:
            value = call
        elif kind is _Inject.AGENT:
            value = agent
        elif kind is _Inject.AGENT_STATE:
            value = agent_state(context, agent)
        else:
            value = context.get(injection.type)
        if value is None:
            if injection.has_default:
                continue
            if not injection.optional:
                raise InjectionError(
                    f"tool {label}: parameter {injection.name!r} needs "
                    f"{'an agent' if kind is _Inject.AGENT else injection.type.__qualname__} "
                    "but the call's context has none"
                )
        values[injection.name] = value
    return values


__all__ = ["INJECT", "Injected", "Injection", "Planner", "inject"]
