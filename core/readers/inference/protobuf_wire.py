"""The protobuf wire format, read without the protobuf package: varints and length-delimited fields.

Enough to walk an ONNX model (onnx.proto) field by field: ``fields(buf)`` yields (field number,
wire type, value), where the value is an int (varint, fixed32/64) or a memoryview (bytes).
"""

from __future__ import annotations

from collections.abc import Iterator


class ModelReadError(ValueError):
    """The file is not an ONNX model this reader understands (truncated, not protobuf, ...)."""


def _varint(buf: memoryview, pos: int) -> tuple[int, int]:
    result = 0
    shift = 0
    while True:
        if pos >= len(buf):
            raise ModelReadError("truncated varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift > 70:
            raise ModelReadError("varint too long")


def fields(buf: memoryview) -> Iterator[tuple[int, int, int | memoryview]]:
    """(field number, wire type, value) for each field of one message; values of type 2 are views."""
    pos = 0
    end = len(buf)
    while pos < end:
        key, pos = _varint(buf, pos)
        number, wire = key >> 3, key & 7
        if number == 0:
            raise ModelReadError("field number 0")
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, wire, value
        elif wire == 1:
            if pos + 8 > end:
                raise ModelReadError("truncated 64-bit field")
            yield number, wire, int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > end:
                raise ModelReadError("truncated length-delimited field")
            yield number, wire, buf[pos : pos + length]
            pos += length
        elif wire == 5:
            if pos + 4 > end:
                raise ModelReadError("truncated 32-bit field")
            yield number, wire, int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise ModelReadError(f"unsupported wire type {wire}")


def _text(value: int | memoryview) -> str:
    if isinstance(value, int):
        raise ModelReadError("expected a string")
    return bytes(value).decode("utf-8", errors="replace")


def _view(value: int | memoryview) -> memoryview:
    if isinstance(value, int):
        raise ModelReadError("expected a sub-message")
    return value


def _int(value: int | memoryview) -> int:
    if not isinstance(value, int):
        raise ModelReadError("expected an integer")
    return value - (1 << 64) if value >= 1 << 63 else value


def _ints(wire: int, value: int | memoryview) -> list[int]:
    if wire == 2:
        out = []
        view = _view(value)
        pos = 0
        while pos < len(view):
            item, pos = _varint(view, pos)
            out.append(item - (1 << 64) if item >= 1 << 63 else item)
        return out
    return [_int(value)]
