"""The exceptions ferrotool raises."""

from __future__ import annotations


class SchemaError(TypeError):
    """An annotation cannot be turned into a JSON Schema.

    Raised when a tool is registered (never when it is called): the message names the function
    parameter or the field path (``create_order.customer.email``) and the offending type, for
    example ``cannot derive a schema for parameter 'x' of create_order: unsupported type
    <class 'socket.socket'>``. It subclasses `TypeError` because the problem is the type of a
    parameter.
    """


__all__ = ["SchemaError"]
