"""A batch's plan (`ferrotool._core.plan_batch`) against a model of it written plainly.

The model: consecutive concurrency-safe calls share a slot (when the batch is parallel), every
other call has one of its own; a slot of two or more calls that all run on the spot carries
their direct calls. Each name is asked about once, an unhashable one at each of its calls.
"""

from __future__ import annotations

from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from ferrotool import ToolUseBlock
from ferrotool._core import plan_batch

Slot = tuple[list[int], list[object] | None]


def model(names: list[object], kinds: dict[str, tuple[bool, object]], parallel: bool) -> list[Slot]:
    planned: list[Slot] = []
    run: list[int] = []
    direct: list[object] | None = []
    for index, name in enumerate(names):
        safe, immediate = kinds[name] if isinstance(name, str) else (False, None)
        if parallel and safe:
            run.append(index)
            if direct is not None:
                direct = None if immediate is None else [*direct, immediate]
            continue
        if run:
            planned.append((run, direct if len(run) > 1 else None))
            run, direct = [], []
        planned.append(([index], None))
    if run:
        planned.append((run, direct if len(run) > 1 else None))
    return planned


NAMES = ("a", "b", "c", "d")
kinds_strategy = st.fixed_dictionaries(
    {name: st.tuples(st.booleans(), st.sampled_from([None, f"direct-{name}"])) for name in NAMES}
)
names_strategy = st.lists(st.one_of(st.sampled_from(NAMES), st.just(["unhashable"])), max_size=30)


@given(names=names_strategy, kinds=kinds_strategy, parallel=st.booleans())
def test_the_plan_is_the_models(
    names: list[object], kinds: dict[str, tuple[bool, object]], parallel: bool
) -> None:
    calls = tuple(ToolUseBlock(f"c{i}", name, "{}") for i, name in enumerate(names))  # type: ignore[arg-type]
    asked: Counter[str] = Counter()

    def kind_of(name: object) -> tuple[bool, object]:
        key = name if isinstance(name, str) else "unhashable"
        asked[key] += 1
        return kinds[name] if isinstance(name, str) else (False, None)

    assert plan_batch(calls, kind_of, parallel) == model(names, kinds, parallel)  # type: ignore[arg-type]
    hashable = Counter(name for name in names if isinstance(name, str))
    assert {name: asked[name] for name in hashable} == dict.fromkeys(hashable, 1)
    assert asked["unhashable"] == sum(1 for name in names if not isinstance(name, str))
