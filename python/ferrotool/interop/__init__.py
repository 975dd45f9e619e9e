"""Bridges to the frameworks users already have, both ways.

Each module exports ferrotool tools as that framework's tool objects (their calls go through
ferrotool's validation and pipeline) and imports that framework's tools into a `Toolkit`:
`ferrotool.interop.pydantic_ai`, `ferrotool.interop.openai_agents`,
`ferrotool.interop.langchain`, and `ferrotool.interop.mcp` (MCP tool definitions). Import the one
you need by name: each needs its framework installed.
"""
