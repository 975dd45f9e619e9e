"""Frozen values: calls, results, content blocks, tool specs, groups, the runtime context."""
