"""Suspensions in a shared Redis store, across OS processes.

One process runs a batch that suspends and exits; the suspension is still there for another
process (it survives a restart). Then the same reply is delivered by two processes at once: it
is accepted exactly once; the approved tool runs once; the other delivery is refused.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# The toolkit both processes serve: `deploy` asks for approval and appends to a file each time
# it runs; `geolocate` is the client's tool.
WORKER = r"""
import json, sys, time
from pathlib import Path

import anyio
import redis

from ferrotool import (
    Confirmation, PermissionDecision, ResumeError, RuntimeContext, SchemaOnlyTool, ToolBase,
    Toolkit, ToolRequestConfig, ToolResultBlock, ToolUseBlock,
)
from ferrotool.redis import RedisSessionStore

url, prefix, runs, action, barrier = sys.argv[1:6]


class Deploy(ToolBase):
    name = "deploy"
    input_schema = {"type": "object", "properties": {"env": {"type": "string"}}}

    async def check_permissions(self, tool_input, context):
        return PermissionDecision.ask("deploy?")

    async def call(self, param):
        with open(runs, "a") as out:
            out.write(param.input["env"] + "\n")
        return "deployed"


GEO = SchemaOnlyTool({"name": "geolocate", "parameters": {"type": "object"}})
kit = Toolkit()
kit.register(Deploy())
registry = kit.snapshot()
context = RuntimeContext(user_id="ann", session_id="two").with_value(ToolRequestConfig([GEO]))


def wait_at_barrier():
    client = redis.Redis.from_url(url)
    client.incr(barrier)
    deadline = time.monotonic() + 20
    while int(client.get(barrier) or 0) < 2 and time.monotonic() < deadline:
        time.sleep(0.001)
    client.close()


async def main():
    async with RedisSessionStore.from_url(url, prefix=prefix) as store:
        if action == "suspend":
            view = await registry.open_view(context, store)
            batch = await view.call_tools(
                [
                    ToolUseBlock("c1", "deploy", '{"env": "prod"}'),
                    ToolUseBlock("c2", "geolocate", "{}"),
                ],
                context,
            )
            print(json.dumps({"reply_id": batch.suspension.reply_id,
                              "pending": [p.id for p in batch.suspension.pending]}))
            return
        replies = {
            "approve": [Confirmation("c1", True)],
            "answer": [ToolResultBlock.success("48.8,2.3", id="c2")],
        }[action]
        wait_at_barrier()
        try:
            batch = await registry.resume(context, store, replies)
        except ResumeError as refused:
            print(json.dumps({"refused": str(refused)}))
        else:
            print(json.dumps({"accepted": [r.content for r in batch.results],
                              "reply_id": batch.reply_id}))


anyio.run(main)
"""


def _run(script: Path, *args: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _pair(script: Path, *args: str) -> list[dict[str, object]]:
    both = [
        subprocess.Popen(
            [sys.executable, str(script), *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = []
    for process in both:
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        outputs.append(json.loads(stdout.strip().splitlines()[-1]))
    return outputs


def test_a_suspension_outlives_its_process_and_each_reply_is_accepted_once(
    redis_url: str, redis_prefix: str, tmp_path: Path
) -> None:
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    runs = tmp_path / "runs.txt"
    runs.touch()
    suspended = _run(script, redis_url, redis_prefix, str(runs), "suspend", "-")
    assert suspended["pending"] == ["c1", "c2"]

    approvals = _pair(script, redis_url, redis_prefix, str(runs), "approve", f"{redis_prefix}b1")
    accepted = [out for out in approvals if "accepted" in out]
    refused = [out for out in approvals if "refused" in out]
    assert len(accepted) == 1
    assert accepted[0]["accepted"] == ["deployed"]
    assert accepted[0]["reply_id"] == suspended["reply_id"]
    assert refused == [
        {"refused": "ConfirmResult references non-ASKING tool call ID: c1. Expected: []"}
    ]
    assert runs.read_text().splitlines() == ["prod"]

    answers = _pair(script, redis_url, redis_prefix, str(runs), "answer", f"{redis_prefix}b2")
    assert sorted("accepted" in out for out in answers) == [False, True]
    assert [out for out in answers if "refused" in out] == [
        {"refused": "Invalid tool result IDs: [c2]. Expected: []"}
    ]
