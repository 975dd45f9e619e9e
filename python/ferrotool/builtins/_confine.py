"""Confinement to a folder: moved to the core, `ferrotool._permissions.confine`.

Kept for the modules of this package that still import it from here (the shell tool).
"""

from ferrotool._permissions.confine import (
    HAS_OPENAT2,
    Refused,
    components,
    has_nul,
    is_inside,
    list_beneath,
    open_beneath,
    open_folder,
    opened_root,
    read_beneath,
    read_regular,
    real,
    write_beneath,
    write_in,
)

__all__ = [
    "HAS_OPENAT2",
    "Refused",
    "components",
    "has_nul",
    "is_inside",
    "list_beneath",
    "open_beneath",
    "open_folder",
    "opened_root",
    "read_beneath",
    "read_regular",
    "real",
    "write_beneath",
    "write_in",
]
