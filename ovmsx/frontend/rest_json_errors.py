"""Where and why RapidJSON would refuse a JSON text: the words OVMS puts in its REST errors.

OVMS parses a request with RapidJSON's iterative parser (``kParseIterativeFlag``, no other flag)
and reports ``"Error: <GetParseError_En text> Offset: <n>"``. ovmsx parses with orjson, whose
errors are worded and placed differently, so a text orjson refuses is read again here, by a
scanner that walks it as that parser does: the same states, the same first error, the same
offset (the byte where the parser stood). It also counts nesting, because OVMS counts it in the
same pass and refuses more than its limit wherever that comes first.

Only refused text comes here, so the scanner is written for clarity, not speed; it is linear
and keeps its own stack (no recursion), whatever the nesting.
"""

from __future__ import annotations

import enum
from typing import NamedTuple

# RapidJSON's GetParseError_En texts (include/rapidjson/error/en.h).
DOCUMENT_EMPTY = "The document is empty."
ROOT_NOT_SINGULAR = "The document root must not be followed by other values."
VALUE_INVALID = "Invalid value."
MISS_NAME = "Missing a name for object member."
MISS_COLON = "Missing a colon after a name of object member."
MISS_COMMA_OR_CURLY = "Missing a comma or '}' after an object member."
MISS_COMMA_OR_SQUARE = "Missing a comma or ']' after an array element."
BAD_HEX = "Incorrect hex digit after \\u escape in string."
BAD_SURROGATE = "The surrogate pair in string is invalid."
BAD_ESCAPE = "Invalid escape character in string."
MISS_QUOTE = "Missing a closing quotation mark in string."
BAD_ENCODING = "Invalid encoding in string."
NUMBER_TOO_BIG = "Number too big to be stored in double."
MISS_FRACTION = "Miss fraction part in number."
MISS_EXPONENT = "Miss exponent in number."

_WHITESPACE = b" \t\n\r"
_DIGITS = b"0123456789"
_HEX = b"0123456789abcdefABCDEF"
_SIMPLE_ESCAPES = b'"\\/bfnrt'
_LITERALS = {ord("t"): b"true", ord("f"): b"false", ord("n"): b"null"}


class Fault(NamedTuple):
    """The first thing wrong: RapidJSON's message, or None when the text nests too deeply;
    and the offset of the byte where it was found."""

    message: str | None
    offset: int


class _State(enum.Enum):
    """The iterative parser's states between tokens."""

    START = enum.auto()
    FINISH = enum.auto()
    OBJECT_INITIAL = enum.auto()
    MEMBER_DELIMITER = enum.auto()
    MEMBER_KEY = enum.auto()
    KEY_VALUE_DELIMITER = enum.auto()
    MEMBER_VALUE = enum.auto()
    ARRAY_INITIAL = enum.auto()
    ELEMENT_DELIMITER = enum.auto()
    ELEMENT = enum.auto()


# The error each state reports when the next token cannot follow it (RapidJSON's HandleError).
_ERRORS = {
    _State.START: DOCUMENT_EMPTY,
    _State.FINISH: ROOT_NOT_SINGULAR,
    _State.OBJECT_INITIAL: MISS_NAME,
    _State.MEMBER_DELIMITER: MISS_NAME,
    _State.MEMBER_KEY: MISS_COLON,
    _State.KEY_VALUE_DELIMITER: VALUE_INVALID,
    _State.MEMBER_VALUE: MISS_COMMA_OR_CURLY,
    _State.ARRAY_INITIAL: VALUE_INVALID,
    _State.ELEMENT_DELIMITER: VALUE_INVALID,
    _State.ELEMENT: MISS_COMMA_OR_SQUARE,
}

_EXPECTING_VALUE = (
    _State.START,
    _State.KEY_VALUE_DELIMITER,
    _State.ARRAY_INITIAL,
    _State.ELEMENT_DELIMITER,
)


def find_fault(text: bytes, max_depth: int) -> Fault | None:
    """The first error RapidJSON reports in ``text`` (or the first container deeper than
    ``max_depth``), or None when it finds none. As RapidJSON, it reads up to the first NUL
    byte and takes bytes that are not UTF-8 as they are."""
    scanner = _Scanner(text, max_depth)
    return scanner.run()


class _Scanner:
    def __init__(self, text: bytes, max_depth: int) -> None:
        nul = text.find(b"\0")
        self.text = text if nul < 0 else text[:nul]
        self.max_depth = max_depth
        self.stack: list[int] = []  # the open containers' brackets
        self.state = _State.START

    def run(self) -> Fault | None:
        text = self.text
        end = len(text)
        at = self._skip(0)
        while at < end:
            step = self._step(at)
            if isinstance(step, Fault):
                return step
            at = self._skip(step)
        if self.state is not _State.FINISH:
            return Fault(_ERRORS[self.state], end)
        return None

    def _skip(self, at: int) -> int:
        text, end = self.text, len(self.text)
        while at < end and text[at] in _WHITESPACE:
            at += 1
        return at

    def _step(self, at: int) -> int | Fault:
        """Take the token at ``at``: the offset after it, or the fault it is."""
        char = self.text[at]
        state = self.state
        if state in _EXPECTING_VALUE:
            return self._value(at, char)
        if state in (_State.OBJECT_INITIAL, _State.MEMBER_DELIMITER):
            if char == ord("}") and state is _State.OBJECT_INITIAL:
                return self._close(at)
            if char != ord('"'):
                return Fault(_ERRORS[state], at)
            after = self._string(at)
            if isinstance(after, Fault):
                return after
            self.state = _State.MEMBER_KEY
            return after
        if state is _State.MEMBER_KEY:
            if char != ord(":"):
                return Fault(_ERRORS[state], at)
            self.state = _State.KEY_VALUE_DELIMITER
            return at + 1
        if state in (_State.MEMBER_VALUE, _State.ELEMENT):
            closing = ord("}") if state is _State.MEMBER_VALUE else ord("]")
            if char == ord(","):
                self.state = (
                    _State.MEMBER_DELIMITER
                    if state is _State.MEMBER_VALUE
                    else _State.ELEMENT_DELIMITER
                )
                return at + 1
            if char == closing:
                return self._close(at)
            return Fault(_ERRORS[state], at)
        return Fault(_ERRORS[state], at)  # FINISH: anything more is a second root

    def _value(self, at: int, char: int) -> int | Fault:
        if char in b"[{":
            if len(self.stack) >= self.max_depth:
                return Fault(None, at)
            self.stack.append(char)
            self.state = _State.OBJECT_INITIAL if char == ord("{") else _State.ARRAY_INITIAL
            return at + 1
        if char == ord("]") and self.state is _State.ARRAY_INITIAL:
            return self._close(at)
        if char in b"]},:":
            return Fault(_ERRORS[self.state], at)
        if char == ord('"'):
            after = self._string(at)
        elif char in _LITERALS:
            after = self._literal(at, _LITERALS[char])
        else:
            after = self._number(at)
        if isinstance(after, Fault):
            return after
        self._after_value()
        return after

    def _close(self, at: int) -> int:
        self.stack.pop()
        self._after_value()
        return at + 1

    def _after_value(self) -> None:
        if not self.stack:
            self.state = _State.FINISH
        elif self.stack[-1] == ord("{"):
            self.state = _State.MEMBER_VALUE
        else:
            self.state = _State.ELEMENT

    def _literal(self, at: int, word: bytes) -> int | Fault:
        """true, false, null: the error is at the first byte that differs."""
        text = self.text
        for index in range(1, len(word)):
            if at + index >= len(text) or text[at + index] != word[index]:
                return Fault(VALUE_INVALID, at + index)
        return at + len(word)

    def _number(self, at: int) -> int | Fault:
        text, end = self.text, len(self.text)
        start = at
        if text[at] == ord("-"):
            at += 1
        if at < end and text[at] == ord("0"):
            at += 1
        elif at < end and text[at] in b"123456789":
            at = self._digits(at)
        else:
            return Fault(VALUE_INVALID, at)
        if at < end and text[at] == ord("."):
            at += 1
            if at >= end or text[at] not in _DIGITS:
                return Fault(MISS_FRACTION, at)
            at = self._digits(at)
        if at < end and text[at] in b"eE":
            at += 1
            if at < end and text[at] in b"+-":
                at += 1
            if at >= end or text[at] not in _DIGITS:
                return Fault(MISS_EXPONENT, at)
            at = self._digits(at)
        if float(text[start:at]) in (float("inf"), float("-inf")):
            return Fault(NUMBER_TOO_BIG, start)
        return at

    def _digits(self, at: int) -> int:
        text, end = self.text, len(self.text)
        while at < end and text[at] in _DIGITS:
            at += 1
        return at

    def _string(self, at: int) -> int | Fault:
        """A string from its opening quote: the offset after its closing one."""
        text, end = self.text, len(self.text)
        at += 1
        while True:
            if at >= end:
                return Fault(MISS_QUOTE, end)
            char = text[at]
            if char == ord('"'):
                return at + 1
            if char == ord("\\"):
                escaped = self._escape(at)
                if isinstance(escaped, Fault):
                    return escaped
                at = escaped
            elif char < 0x20:  # RFC 8259: control characters must be escaped
                return Fault(BAD_ENCODING, at)
            else:
                at += 1

    def _escape(self, at: int) -> int | Fault:
        """An escape from its backslash; every error in it is placed at the backslash."""
        text, end = self.text, len(self.text)
        following = text[at + 1] if at + 1 < end else 0
        if following in _SIMPLE_ESCAPES:
            return at + 2
        if following != ord("u"):
            return Fault(BAD_ESCAPE, at)
        code = self._hex4(at + 2)
        if code is None:
            return Fault(BAD_HEX, at)
        after = at + 6
        if 0xD800 <= code <= 0xDBFF:  # a high surrogate needs a low one right after it
            if text[after : after + 2] != b"\\u":
                return Fault(BAD_SURROGATE, at)
            low = self._hex4(after + 2)
            if low is None:
                return Fault(BAD_HEX, at)
            if not 0xDC00 <= low <= 0xDFFF:
                return Fault(BAD_SURROGATE, at)
            return after + 6
        if 0xDC00 <= code <= 0xDFFF:  # a low surrogate alone
            return Fault(BAD_SURROGATE, at)
        return after

    def _hex4(self, at: int) -> int | None:
        digits = self.text[at : at + 4]
        if len(digits) < 4 or any(d not in _HEX for d in digits):
            return None
        return int(digits, 16)
