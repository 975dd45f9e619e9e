"""Tool definitions in each provider's format: what a tool listing needs of the provider dialects.

A core layer (the registry and the execution engine list tools with it); `ferrotool.providers`
re-exports these names beside its adapters.
"""
