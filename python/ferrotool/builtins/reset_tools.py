"""The ``reset_tools`` meta tool: the model switches the session's tool groups.

The toolkit keeps it in step with its groups, so it lives in the core
(`ferrotool._registry.derived`); its names are kept here too.
"""

from ferrotool._registry.derived import RESET_TOOLS, ResetTools, SessionHandle, activation_text

__all__ = ["RESET_TOOLS", "ResetTools", "SessionHandle", "activation_text"]
