"""Permissions: decisions, rules and modes, and dangerous paths."""
