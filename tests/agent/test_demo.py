"""``ferrotool demo --agent``: a turn of parallel calls, a denial, an edited approval, a client
tool and a structured result, resumed."""

from __future__ import annotations

import io

import orjson

from ferrotool.cli import main

RECEIPT = '{"shop":"Corner Shop","total":19.0,"currency":"EUR","note":"without B2"}'


def _lines() -> list[str]:
    out = io.StringIO()
    assert main(["demo", "--agent"], out) == 0
    return out.getvalue().splitlines()


def test_the_agent_demo_prints_a_paused_and_resumed_run() -> None:
    lines = _lines()
    assert lines[0] == "ferrotool demo --agent: a scripted model over 4 tools"
    assert lines[2].startswith("[turn 1] model says")
    assert lines[2].endswith("calls 5 tools at once")
    paused = lines.index("== paused after turn 1: waiting for geolocate, place_order")
    first_turn = lines[4:paused]
    assert sorted(line.split()[1] for line in first_turn if "started" in line) == [
        "call_1",
        "call_2",
        "call_3",
        "call_4",
        "call_5",
    ]
    assert (
        "  finished  call_1 get_weather: success: Paris: sunny, 21°C for the next 2 day(s)"
        in first_turn
    )
    assert "  finished  call_2 convert: success: 10.8" in first_turn
    assert "  finished  call_3 geolocate: waiting: [Awaiting external execution]" in first_turn
    assert "  approval needed: place_order (Permission required for place_order)" in first_turn
    assert "  the client must run: geolocate" in first_turn
    resumed = lines[paused + 1 :]
    assert resumed[0] == "-- a person approves place_order without B2; the client answers geolocate"
    finished = resumed.index("== finished:")
    assert resumed[finished + 1 :] == [
        "   | Here is everything:",
        "   | - get_weather: Paris: sunny, 21°C for the next 2 day(s)",
        "   | - convert: 10.8",
        "   | - geolocate: 48.8566 N, 2.3522 E (Paris)",
        f"   | - place_order: {RECEIPT}",
        "   | - pick: Permission denied: Permission to use pick has been denied",
    ]


def test_a_rule_denies_one_call_of_the_turn() -> None:
    lines = _lines()
    paused = lines.index("== paused after turn 1: waiting for geolocate, place_order")
    denied = [line for line in lines[:paused] if "denied" in line]
    assert denied == [
        "  finished  call_5 pick: denied: Permission denied: Permission to use pick has been denied"
    ]


def test_the_approval_edits_the_order_which_runs_as_edited() -> None:
    lines = _lines()
    (answered,) = [line for line in lines if line.startswith("  answered: ")]
    prefix = "  answered: place_order approved as "
    assert answered.startswith(prefix)
    assert orjson.loads(answered.removeprefix(prefix)) == {
        "items": [{"sku": "A1", "qty": 2, "price": 9.5}],
        "note": "without B2",
    }
    after = lines[lines.index(answered) :]
    assert "  started   call_4 place_order" in after
    assert "  progress  call_4 place_order: pricing 1 item(s)" in after


def test_the_order_returns_a_record_shown_as_its_json() -> None:
    lines = _lines()
    (structured,) = [line for line in lines if line.startswith("  structured call_4 ")]
    assert structured == f"  structured call_4 place_order: {RECEIPT}"
    finished = lines[lines.index(structured) - 1]
    assert finished.startswith("  finished  call_4 place_order: success: {")
