"""Defining tools: `@tool` functions and methods, `ToolBase` classes, injection rules."""

from __future__ import annotations

import dataclasses
from typing import Annotated, Any, Literal

import orjson
import pytest

from ferrotool import (
    AgentState,
    CallingAgent,
    DocumentationWarning,
    Emitter,
    FunctionTool,
    Injected,
    Param,
    PermissionBehavior,
    PermissionContext,
    RuntimeContext,
    SchemaError,
    ToolBase,
    ToolCallParam,
    ToolUseBlock,
    tool,
)


def schema(t: Any) -> dict[str, Any]:
    out = orjson.loads(t.spec.parameters_json)
    assert isinstance(out, dict)
    return out


def test_bare_decorator_reads_google_docstring() -> None:
    @tool
    def get_weather(city: str, unit: Literal["c", "f"] = "c") -> str:
        """Get the current weather.

        Uses the fastest provider.

        Args:
            city: The city, e.g. Paris.
            unit: Celsius or Fahrenheit.
        """
        return city

    assert isinstance(get_weather, FunctionTool)
    assert get_weather.spec.name == "get_weather"
    assert get_weather.spec.description == "Get the current weather.\n\nUses the fastest provider."
    props = schema(get_weather)["properties"]
    assert props["city"]["description"] == "The city, e.g. Paris."
    assert props["unit"]["description"] == "Celsius or Fahrenheit."
    assert get_weather("Oslo") == "Oslo"  # still callable as a function


def test_options() -> None:
    @tool(
        name="wx",
        description="Weather.",
        read_only=True,
        concurrency_safe=False,
        idempotent=False,
        strict=True,
        timeout=3,
        dangerous_files=(".secrets",),
    )
    def f(city: str) -> str:
        return city

    spec = f.spec
    assert (spec.name, spec.description, spec.read_only, spec.concurrency_safe) == (
        "wx",
        "Weather.",
        True,
        False,
    )
    assert (spec.strict, spec.timeout, spec.idempotent) == (True, 3, False)
    assert f.dangerous_files[-1] == ".secrets"
    assert ".env" in f.dangerous_files  # added to the defaults, not replacing them
    assert f.is_dangerous_path("/home/u/.secrets")
    assert f.is_dangerous_path("/repo/.git/config")
    assert not f.is_dangerous_path("/data/notes.txt")


@pytest.mark.parametrize(
    "doc",
    [
        """Search.

        Parameters
        ----------
        query : str
            What to look for.
        limit : int
            How many.
        """,
        """Search.

        :param query: What to look for.
        :param limit: How many.
        """,
    ],
    ids=["numpy", "sphinx"],
)
def test_numpy_and_sphinx_docstrings(doc: str) -> None:
    def search(query: str, limit: int = 5) -> list[str]:
        return []

    search.__doc__ = doc
    props = schema(tool(search))["properties"]
    assert props["query"]["description"] == "What to look for."
    assert props["limit"]["description"] == "How many."


def test_param_marker_wins_over_docstring() -> None:
    @tool
    def f(days: Annotated[int, Param(description="Days ahead", ge=1, le=14)]) -> str:
        """F.

        Args:
            days: Docstring text.
        """
        return ""

    prop = schema(f)["properties"]["days"]
    assert prop["description"] == "Days ahead"
    assert (prop["minimum"], prop["maximum"]) == (1, 14)


def test_documentation_mismatch_is_reported() -> None:
    with pytest.warns(DocumentationWarning, match=r"documents ghost .* does not document b"):

        @tool
        def f(a: int, b: int) -> int:
            """F.

            Args:
                a: A.
                ghost: Not a parameter.
            """
            return a

    with pytest.warns(DocumentationWarning, match="does not document b"):

        @tool
        def g(a: int, b: int) -> int:
            """G.

            Args:
                a: A.
            """
            return a


class Database:
    pass


class MyState(AgentState):
    pass


def test_injected_parameters_never_reach_the_schema() -> None:
    @tool(state_injected=True, inject=(Database,))
    def f(
        city: str,
        emitter: Emitter,
        context: RuntimeContext,
        agent: CallingAgent | None,
        state: MyState,
        db: Database,
        cache: Injected[dict[str, int]] | None = None,
        call: ToolUseBlock | None = None,
    ) -> str:
        return city

    assert list(schema(f)["properties"]) == ["city"]
    assert schema(f)["required"] == ["city"]
    plan = {i.name: i.kind.value for i in f.injections}
    assert plan == {
        "emitter": "emitter",
        "context": "context",
        "agent": "agent",
        "state": "agent_state",
        "db": "value",
        "cache": "value",
        "call": "call",
    }


def test_explicit_params_is_the_chapters_rule() -> None:
    @tool(explicit_params=True)
    def f(
        city: Annotated[str, Param(description="City")],
        db: Database,
        days: Annotated[int, Param()] = 1,
    ) -> str:
        return city

    assert list(schema(f)["properties"]) == ["city", "days"]
    assert [i.name for i in f.injections] == ["db"]


def test_agent_state_rules() -> None:
    with pytest.raises(SchemaError, match="state_injected is False"):

        @tool
        def a(x: int, state: MyState) -> None: ...

    with pytest.raises(SchemaError, match="requires a parameter annotated with AgentState"):

        @tool(state_injected=True)
        def b(x: int) -> None: ...

    with pytest.raises(SchemaError, match="more than one AgentState"):

        @tool(state_injected=True)
        def c(s1: MyState, s2: AgentState) -> None: ...

    with pytest.raises(SchemaError, match="Param marker"):

        @tool(state_injected=True)
        def d(s: Annotated[MyState, Param(description="x")]) -> None: ...


def test_schema_errors_name_the_parameter() -> None:
    with pytest.raises(SchemaError, match=r"'sock'.*open_socket"):

        @tool
        def open_socket(sock: type[int]) -> None: ...

    with pytest.raises(SchemaError, match="generator"):

        @tool
        def gen(x: int) -> Any:
            yield x

    unknown: dict[str, Any] = {"nmae": "typo"}
    with pytest.raises(TypeError, match="nmae"):
        tool(**unknown)

    with pytest.raises(ValueError, match="invalid tool name"):

        @tool(name="bad name")
        def ok(x: int) -> None: ...


class Weather:
    def __init__(self, unit: str) -> None:
        self.unit = unit

    @tool
    def forecast(self, city: str, days: int = 1) -> str:
        """Forecast for a city."""
        return f"{city}/{days}/{self.unit}"

    @tool(read_only=True)
    async def current(self, city: str) -> str:
        """Current weather."""
        return f"{city}/{self.unit}"

    @tool
    @staticmethod
    def units() -> list[str]:
        """Supported units."""
        return ["c", "f"]

    @tool
    @classmethod
    def provider(cls, region: str) -> str:
        """Provider name."""
        return f"{cls.__name__}:{region}"


def test_method_tools_bind_to_their_object() -> None:
    w = Weather("c")
    bound = w.forecast
    assert isinstance(bound, FunctionTool)
    assert bound("Oslo") == "Oslo/1/c"
    assert list(schema(bound)["properties"]) == ["city", "days"]
    assert Weather.forecast.needs_binding
    assert not bound.needs_binding
    assert bound.spec is Weather.forecast.spec  # compiled once, shared
    assert Weather.units() == ["c", "f"]
    assert Weather.provider("eu") == "Weather:eu"
    assert list(schema(Weather.provider)["properties"]) == ["region"]


@dataclasses.dataclass
class SearchArgs:
    query: str
    limit: int = 10


class Search(ToolBase[SearchArgs]):
    """Search the web."""

    name = "search"
    input_schema = SearchArgs
    read_only = True

    async def call(self, param: ToolCallParam[SearchArgs]) -> str:
        return f"{param.input.query}:{param.input.limit}:{param.call.id}"


def test_tool_base_typed_input() -> None:
    search = Search()
    spec = search.spec
    assert (spec.name, spec.description, spec.read_only, spec.concurrency_safe) == (
        "search",
        "Search the web.",
        True,
        True,
    )
    parsed = search.parse_arguments('{"query": "rust"}')
    assert parsed == SearchArgs("rust", 10)


def test_tool_base_defaults_follow_the_chapter() -> None:
    class Plain(ToolBase[dict[str, object]]):
        name = "plain"
        input_schema = {"type": "object", "properties": {"a": {"type": "integer"}}}

    plain = Plain()
    assert plain.description == "Tool: plain"
    assert plain.concurrency_safe
    assert plain.idempotent
    assert not Plain(idempotent=False).spec.idempotent
    assert not plain.read_only
    assert not plain.external
    assert plain.match_rule(None, {})
    assert not plain.match_rule("", {})
    assert not plain.match_rule("x", {})
    (rule,) = plain.generate_suggestions({})
    assert (rule.tool_name, rule.behavior, rule.rule_content, rule.source) == (
        "plain",
        PermissionBehavior.ALLOW,
        None,
        "suggested",
    )
    renamed = Plain(name="other", read_only=True)
    assert (renamed.spec.name, renamed.spec.read_only) == ("other", True)
    with pytest.raises(ValueError, match="mcp_server must not be blank"):
        Plain(mcp_server=" ")
    with pytest.raises(SchemaError, match="invalid input_schema"):
        Plain(input_schema={"type": "object", "properties": {"a": {"pattern": "("}}})


def test_a_tools_fields_are_its_spec() -> None:
    """The flag attributes read the spec; class attributes of those names declare them."""

    class Declared(ToolBase[dict[str, object]]):
        name = "declared"
        read_only = True
        timeout = 5.0

    class Inherited(Declared):
        concurrency_safe = False

    assert (Declared.name, Declared.read_only, Declared.timeout) == ("declared", True, 5.0)
    assert ToolBase.concurrency_safe  # undeclared: ToolSpec's own default
    plain = Inherited()
    assert (plain.name, plain.read_only, plain.concurrency_safe) == ("declared", True, False)
    overridden = Inherited(name="other", read_only=False, timeout=None)
    assert (overridden.name, overridden.read_only, overridden.timeout) == ("other", False, 5.0)
    assert overridden.spec == dataclasses.replace(
        plain.spec, name="other", read_only=False, description="Tool: other"
    )
    with pytest.raises(AttributeError, match="read from the tool's spec"):
        overridden.read_only = True  # type: ignore[misc]

    @tool(read_only=True, timeout=2.0, dangerous_files=(".token",))
    def peek(path: str) -> str:
        """Read a file."""
        return path

    assert (peek.name, peek.read_only, peek.timeout) == ("peek", True, 2.0)
    assert (peek.spec.read_only, peek.spec.timeout) == (True, 2.0)
    assert ".token" in peek.dangerous_files
    with pytest.raises(TypeError, match="nmae"):
        tool(nmae="peek")  # type: ignore[call-overload]


async def test_tool_base_default_call_and_permissions() -> None:
    class External(ToolBase[dict[str, object]]):
        name = "ext"
        external = True

    class Missing(ToolBase[dict[str, object]]):
        name = "missing"

    param: ToolCallParam[dict[str, object]] = ToolCallParam(
        {}, ToolUseBlock("1", "ext"), RuntimeContext(), None, Emitter(ToolUseBlock("1", "ext"))
    )
    with pytest.raises(RuntimeError, match="External is an external tool"):
        await External().call(param)
    with pytest.raises(NotImplementedError, match="Missing does not implement call"):
        await Missing().call(param)
    decision = await Missing().check_permissions({}, PermissionContext())
    assert (decision.behavior, decision.message) == (PermissionBehavior.PASSTHROUGH, "missing")
