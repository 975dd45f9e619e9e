"""``ferrotool demo --agent``: a turn of parallel calls, an approval, a client tool, resumed."""

from __future__ import annotations

import io

from ferrotool.cli import main


def test_the_agent_demo_prints_a_paused_and_resumed_run() -> None:
    out = io.StringIO()
    assert main(["demo", "--agent"], out) == 0
    lines = out.getvalue().splitlines()
    assert lines[0] == "ferrotool demo --agent: a scripted model over 4 tools"
    assert lines[2].startswith("[turn 1] model says")
    assert lines[2].endswith("calls 4 tools at once")
    paused = lines.index("== paused after turn 1: waiting for geolocate, place_order")
    first_turn = lines[4:paused]
    assert sorted(line.split()[1] for line in first_turn if "started" in line) == [
        "call_1",
        "call_2",
        "call_3",
        "call_4",
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
    assert resumed[0] == "-- a person approves place_order; the client answers geolocate"
    assert "  progress  call_4 place_order: pricing 2 item(s)" in resumed
    assert (
        '  finished  call_4 place_order: success: {"shop":"Corner Shop","total":39.0,'
        '"currency":"EUR","note":null}'
    ) in resumed
    finished = resumed.index("== finished:")
    assert resumed[finished + 1 :] == [
        "   | Here is everything:",
        "   | - get_weather: Paris: sunny, 21°C for the next 2 day(s)",
        "   | - convert: 10.8",
        "   | - geolocate: 48.8566 N, 2.3522 E (Paris)",
        '   | - place_order: {"shop":"Corner Shop","total":39.0,"currency":"EUR","note":null}',
    ]
