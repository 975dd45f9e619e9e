"""Every exception ferrotool raises, under one base: `FerrotoolError`.

These are a programmer's mistakes (a type that cannot become a schema, a duplicate tool name, a
tool asking for a context value the call lacks) and store failures. A model's mistakes never
raise: they come back as `ToolResultBlock` values the model can act on.

Each class also derives from the built-in exception it refines (`SchemaError` is a
`TypeError`, `RegistrationError` a `ValueError`...), so code written against the built-ins
keeps working. `ValidationError` is defined here and raised by the Rust core.

Every warning ferrotool gives derives from `FerrotoolWarning` and from the built-in category
it refines.

One exception is not an error and stands outside the tree: `SuspendTool`, which a tool raises
to end its call suspended (control flow, so ``except FerrotoolError:`` never swallows it).
"""

from __future__ import annotations

from typing import Protocol


class ErrorDetailFields(Protocol):
    """What `ValidationError.errors` holds: the fields of `ferrotool.ErrorDetail`.

    The errors are `ferrotool.ErrorDetail` values, built by the Rust core; this module sits
    below the extension (which imports it to raise `ValidationError`), so it names their fields
    rather than their class.
    """

    @property
    def code(self) -> str:
        """The stable snake_case code, e.g. ``"wrong_type"`` or ``"missing_property"``."""
        ...

    @property
    def path(self) -> tuple[str | int, ...]:
        """Where the value is: object keys and array indices, outermost first."""
        ...

    @property
    def pointer(self) -> str:
        """The same location as a JSON Pointer (``""`` for the whole input)."""
        ...

    @property
    def expected(self) -> str:
        """What the schema expected, e.g. ``"integer"`` or ``"at least 1"``."""
        ...

    @property
    def found(self) -> str:
        """A short rendering of what was found, e.g. ``'string "three"'``."""
        ...

    @property
    def message(self) -> str:
        """A one-line message for a model."""
        ...


class FerrotoolError(Exception):
    """The base of every exception ferrotool raises."""


class SchemaError(FerrotoolError, TypeError):
    """An annotation or a JSON Schema cannot become a tool's schema.

    Raised when a tool is defined (never when it is called): the message names the function
    parameter or the field path (``create_order.customer.email``) and the offending type, for
    example ``cannot derive a schema for parameter 'x' of create_order: unsupported type
    <class 'socket.socket'>``. It subclasses `TypeError` because the problem is the type of a
    parameter.
    """


class ValidationError(FerrotoolError, ValueError):
    """Input did not match a schema (raised by the Rust core).

    Attributes:
        errors: One `ErrorDetail` per problem found, in input order (capped by the validator's
            ``max_errors``).
    """

    errors: tuple[ErrorDetailFields, ...]

    def __init__(self, message: str, errors: tuple[ErrorDetailFields, ...] = ()) -> None:
        super().__init__(message)
        self.errors = errors


class RegistrationError(FerrotoolError, ValueError):
    """A tool cannot be registered (a duplicate or invalid name), or removal is not allowed."""


class UnmatchableRule(FerrotoolError, ValueError):
    """A permission rule that no call can ever match (see `ferrotool.PermissionRule`)."""


class InjectionError(FerrotoolError, LookupError):
    """A tool asked for a value the call's context does not hold (a programming mistake)."""


class SessionConflict(FerrotoolError, RuntimeError):
    """A session changed under an update too many times in a row; nothing was written."""


class CliError(FerrotoolError):
    """A mistake on the ``ferrotool`` command line; printed without a traceback (exit status 2).

    A target that cannot be imported or holds no tools, ``--context`` that is not the expected
    JSON, a context value that cannot be built, a call needing a context value not given.
    """


class ResumeError(FerrotoolError, ValueError):
    """Replies to a suspension were refused: nothing was accepted.

    The message says why, in AgentScope's words: a reply for a call that does not wait (unknown,
    or already settled, say by another delivery of the same reply), a duplicate reply, or text
    that comes with a partial set of results.
    """


class SkillError(FerrotoolError, ValueError):
    """A skill cannot be built: its ``SKILL.md`` lacks a name, a description or a body.

    The message is AgentScope's, so a skill author sees the same words in both libraries.
    """


class McpError(FerrotoolError, RuntimeError):
    """An MCP client could not do what was asked.

    It is not initialized, its server could not be reached or answered with an error, or a
    call timed out. Inside a toolkit these become error results of the calls; they are raised
    only to code that uses an `McpClient` directly.
    """


class SuspendTool(Exception):
    """Raised by a tool to hand its call to someone else: the call ends suspended.

    It is not a failure: the call's result says it awaits external execution, and the caller
    answers it later with the real result for the call's id.

    It is control flow, so it stands outside `FerrotoolError` (as pydantic-ai keeps
    ``CallDeferred`` and ``ApprovalRequired`` outside its errors): a tool that wraps its own
    work in ``except FerrotoolError:`` does not swallow its own suspension. ``except
    Exception:`` still catches it; re-raise it there.

    Args:
        reason: Shown to the model instead of ``[Awaiting external execution]``.
    """

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "Tool execution suspended")
        self.reason = reason


class ProviderShapeError(FerrotoolError, ValueError):
    """A provider's response, event or message is not in the shape its adapter reads.

    Raised by the provider adapters (`ferrotool.providers.openai_chat` and the others) for input
    that did not come from the provider's API: a call without an id or a name, a list that is
    not a list, a kind of tool call ferrotool does not define (OpenAI's free-form ``custom``
    tools), or a result not stamped with the call it answers. The message shows the offending
    value.
    """


class AgentError(FerrotoolError, RuntimeError):
    """The agent loop was used in a way it cannot go on from.

    A scripted model with no reply left, a model adapter given a message kind it does not
    know, or a paused run resumed in a view of another session.
    """


class InteropError(FerrotoolError, TypeError):
    """A tool cannot cross to or from another framework as asked.

    The message names the tool and what the other framework lacks (an external tool handed to
    a framework with no deferred calls, a tool object of an unknown kind).
    """


class MissingExtra(FerrotoolError, ImportError):
    """A module of ferrotool needs an optional dependency that is not installed.

    The message names the module and the command that installs its extra, for example
    ``ferrotool.redis needs the 'redis' extra, which is not installed (No module named 'redis'):
    pip install 'ferrotool[redis]'``. It is an `ImportError` too, so ``except ImportError:``
    around an optional import keeps working.

    Args:
        feature: What needs the extra (a module, or a command such as ``ferrotool serve``).
        extra: The extra's name, as ``pip install 'ferrotool[EXTRA]'`` spells it.
        missing: The module that could not be imported, if known.
        reason: What the import said.

    Attributes:
        feature: What needs the extra.
        extra: The extra's name.
        reason: What the import said, if known.
    """

    def __init__(
        self, feature: str, extra: str, missing: str | None = None, reason: str | None = None
    ) -> None:
        why = f" ({reason})" if reason else ""
        super().__init__(
            f"{feature} needs the {extra!r} extra, which is not installed{why}: "
            f"pip install 'ferrotool[{extra}]'",
            name=missing,
        )
        self.feature = feature
        self.extra = extra
        self.reason = reason


class FerrotoolWarning(Warning):
    """The base of every warning ferrotool gives.

    Each warning also derives from the built-in category it refines (`StrictSchemaWarning` is
    a `UserWarning`, `SandboxWarning` a `RuntimeWarning`), so filters written against those keep
    working; ``warnings.filterwarnings("ignore", category=FerrotoolWarning)`` silences them all.
    """


class FerrotoolDeprecationWarning(FerrotoolWarning, DeprecationWarning):
    """A public name that is going away was used; the message names its replacement."""


class DocumentationWarning(FerrotoolWarning, UserWarning):
    """A tool's docstring and signature disagree about its parameters."""


class StrictSchemaWarning(FerrotoolWarning, UserWarning):
    """Strict mode was asked for a tool whose schema the provider cannot express faithfully.

    The tool was sent with its canonical, non-strict schema instead; the warning names the tool
    and the first reasons.
    """


class SandboxWarning(FerrotoolWarning, RuntimeWarning):
    """A shell tool that wants a sandbox cannot start one here (every command asks first)."""


class StuckToolWarning(FerrotoolWarning, UserWarning):
    """A sync tool still runs on its worker thread after its call ended (timed out, cancelled).

    The call has its result already; the thread keeps one of the toolkit's ``max_threads``
    worker slots until the tool returns, so a tool that blocks for good starves the others.
    The message names the tool and the call.
    """


__all__ = [
    "AgentError",
    "CliError",
    "DocumentationWarning",
    "ErrorDetailFields",
    "FerrotoolDeprecationWarning",
    "FerrotoolError",
    "FerrotoolWarning",
    "InjectionError",
    "InteropError",
    "McpError",
    "MissingExtra",
    "ProviderShapeError",
    "RegistrationError",
    "ResumeError",
    "SandboxWarning",
    "SchemaError",
    "SessionConflict",
    "SkillError",
    "StrictSchemaWarning",
    "StuckToolWarning",
    "SuspendTool",
    "UnmatchableRule",
    "ValidationError",
]
