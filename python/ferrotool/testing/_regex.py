"""ECMA-262 regular expressions (JSON Schema's ``pattern``) rewritten for Python's `re`."""

from __future__ import annotations

import functools
import re
import warnings
from typing import Final

# -- ECMA-262 patterns ----------------------------------------------------------------------------

_ECMA_SPACE: Final = (
    "\\t\\n\\x0b\\x0c\\r \\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000\\ufeff"
)
_OUTSIDE: Final = {
    "d": "[0-9]",
    "D": "[^0-9]",
    "w": "[A-Za-z0-9_]",
    "W": "[^A-Za-z0-9_]",
    "s": f"[{_ECMA_SPACE}]",
    "S": f"[^{_ECMA_SPACE}]",
}
_INSIDE: Final = {"d": "0-9", "w": "A-Za-z0-9_", "s": _ECMA_SPACE}
_KEEP_ESCAPES: Final = frozenset("bBfnrtvx0123456789DWS")
# Unicode property escapes (``\\p{L}``, with the ``u`` flag), as subsets of what they match:
# generation only needs strings that match.
_LETTERS: Final = "A-Za-z\\u00c0-\\u00d6\\u00d8-\\u00f6\\u00f8-\\u024f"
_PROPERTIES: Final = {
    "L": _LETTERS,
    "Letter": _LETTERS,
    "Alphabetic": _LETTERS,
    "Lu": "A-Z",
    "Uppercase_Letter": "A-Z",
    "Ll": "a-z",
    "Lowercase_Letter": "a-z",
    "N": "0-9",
    "Nd": "0-9",
    "Number": "0-9",
    "Decimal_Number": "0-9",
    "P": "!-#%-*,-/:;?@\\[-\\]_{}",
    "Punctuation": "!-#%-*,-/:;?@\\[-\\]_{}",
}


def _translate(pattern: str) -> str:
    """An ECMA-262 regex rewritten for Python's `re` (the differences tool schemas meet)."""
    out: list[str] = []
    i = 0
    in_class = False
    n = len(pattern)
    while i < n:
        char = pattern[i]
        if char == "\\" and i + 1 < n:
            nxt = pattern[i + 1]
            i += 2
            if in_class and nxt in _INSIDE:
                out.append(_INSIDE[nxt])
            elif not in_class and nxt in _OUTSIDE:
                out.append(_OUTSIDE[nxt])
            elif nxt == "u" and i < n and pattern[i] == "{":
                end = pattern.find("}", i)
                if end < 0:
                    out.append("u")
                    continue
                out.append(f"\\U{int(pattern[i + 1 : end] or '0', 16):08x}")
                i = end + 1
            elif nxt == "u" and re.fullmatch(r"[0-9A-Fa-f]{4}", pattern[i : i + 4]):
                out.append("\\u" + pattern[i : i + 4])
                i += 4
            elif nxt in "pP" and i < n and pattern[i] == "{":
                end = pattern.find("}", i)
                letters = _PROPERTIES.get(pattern[i + 1 : end]) if end > 0 else None
                if letters is None or nxt == "P":
                    raise ValueError(f"unsupported property escape in {pattern!r}")
                out.append(letters if in_class else f"[{letters}]")
                i = end + 1
            elif nxt == "c" and i < n and pattern[i].isalpha():
                out.append(f"\\x{ord(pattern[i]) % 32:02x}")
                i += 1
            elif nxt == "k" and i < n and pattern[i] == "<":
                end = pattern.find(">", i)
                out.append(f"(?P={pattern[i + 1 : end]})")
                i = end + 1
            elif nxt in _KEEP_ESCAPES or (in_class and nxt in "dws"):
                out.append("\\" + nxt)
            else:
                out.append(re.escape(nxt))
            continue
        i += 1
        if in_class:
            if char == "]":
                in_class = False
                out.append(char)
            elif char in "[&~|":
                out.append("\\" + char)
            else:
                out.append(char)
        elif char == "[":
            if pattern.startswith("]", i):
                out.append("(?!)")
                i += 1
            elif pattern.startswith("^]", i):
                out.append("(?s:.)")
                i += 2
            else:
                in_class = True
                out.append(char)
                if pattern.startswith("^", i):
                    out.append("^")
                    i += 1
        elif char == "$":
            out.append("\\Z")
        elif char == ".":
            out.append("[^\\n\\r\\u2028\\u2029]")
        elif (
            char == "("
            and pattern.startswith("?<", i)
            and not pattern.startswith(("?<=", "?<!"), i)
        ):
            out.append("(?P<")
            i += 2
        else:
            out.append(char)
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def _regex(pattern: str) -> re.Pattern[str] | None:
    """The ECMA-262 ``pattern`` compiled for Python, or None if it cannot be."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return re.compile(_translate(pattern))
    except (re.error, ValueError, OverflowError):
        return None
