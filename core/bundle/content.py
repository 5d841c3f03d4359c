"""Member contents as text: gzip undone, UTF-16/UTF-32/CP949 decoded, cut to a bound at a line.

Every text member of a bundle is stored as UTF-8, so nothing in it hides from a plain search
(a UTF-16 log, a gzipped rotated log are decoded before redaction). By hand: ``zcat FILE |
iconv -f UTF-16 -t UTF-8``.
"""

from __future__ import annotations

import codecs
import zlib
from dataclasses import dataclass

GZIP_MAGIC = b"\x1f\x8b"
MAX_INFLATE = 256 * 1024 * 1024
"""Decompressed bytes looked at in one gzip member at most (its tail is kept within ``limit``)."""


@dataclass(frozen=True)
class DecodedText:
    """A member's bytes as text, and how they were stored."""

    text: str
    form: str
    """"utf-8", "utf-16-le", "gzip+utf-8", "cp949" …"""
    original_size: int
    """Bytes (decompressed) before any cut."""
    cut: int = 0
    """Bytes left out to stay within the bound (from the start for a tail, else from the end)."""


def _gunzip(data: bytes, keep: int, tail: bool) -> tuple[bytes, int]:
    """Decompress every gzip stream in ``data``; keep ``keep`` bytes (the end when ``tail``)."""
    out = bytearray()
    total = 0
    remaining = data
    while remaining.startswith(GZIP_MAGIC):
        decompressor = zlib.decompressobj(16 + zlib.MAX_WBITS)
        chunk_input = remaining
        while chunk_input:
            piece = decompressor.decompress(chunk_input, 1024 * 1024)
            total += len(piece)
            out += piece
            if tail and len(out) > 2 * keep:
                del out[: _even(len(out) - keep)]
            elif not tail and len(out) > keep:
                del out[keep:]
            if total > MAX_INFLATE:
                raise ValueError(f"more than {MAX_INFLATE // (1024 * 1024)} MiB when decompressed")
            chunk_input = decompressor.unconsumed_tail
            if decompressor.eof:
                break
        if not decompressor.eof:
            break
        remaining = decompressor.unused_data
    if tail and len(out) > keep:
        del out[: _even(len(out) - keep)]
    return bytes(out), total


def _even(count: int) -> int:
    """Cut an even number of bytes, so UTF-16 text stays aligned."""
    return count + (count % 2)


def _sniff(data: bytes) -> str:
    if data.startswith(codecs.BOM_UTF8):
        return "utf-8-sig"
    if data.startswith((codecs.BOM_UTF32_LE, codecs.BOM_UTF32_BE)) and len(data) % 4 == 0:
        return "utf-32"
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return "utf-16"
    sample = data[:4096]
    if len(sample) >= 4:
        even, odd = sample[0::2], sample[1::2]
        even_nul, odd_nul = even.count(0) / len(even), odd.count(0) / max(1, len(odd))
        if odd_nul > 0.3 and even_nul < 0.05:
            return "utf-16-le"
        if even_nul > 0.3 and odd_nul < 0.05:
            return "utf-16-be"
    return "utf-8"


def decode_bytes(data: bytes) -> tuple[str, str]:
    """Bytes as text: a BOM or UTF-16's NULs decide, else UTF-8, then CP949, then UTF-8 with �."""
    encoding = _sniff(data)
    if encoding != "utf-8":
        try:
            text = data.decode(encoding)
        except UnicodeDecodeError:
            text = data.decode(encoding, errors="replace")
        return text.lstrip("\ufeff"), encoding.replace("-sig", "")
    try:
        return data.decode("utf-8"), "utf-8"
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("cp949"), "cp949"
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace"), "utf-8/replace"


def _cut_utf8(text: str, limit: int, tail: bool) -> tuple[str, int]:
    """At most ``limit`` UTF-8 bytes of ``text``, cut at a line boundary where one is near."""
    encoded = text.encode("utf-8", errors="surrogatepass")
    if len(encoded) <= limit:
        return text, 0
    if tail:
        piece = encoded[len(encoded) - limit :]
        newline = piece.find(b"\n")
        if 0 <= newline < len(piece) // 4:
            piece = piece[newline + 1 :]
    else:
        piece = encoded[:limit]
        newline = piece.rfind(b"\n")
        if newline > len(piece) * 3 // 4:
            piece = piece[: newline + 1]
    return piece.decode("utf-8", errors="ignore"), len(encoded) - len(piece)


def to_text(data: bytes | str, limit: int, tail: bool = True) -> DecodedText:
    """A member's content as text within ``limit`` UTF-8 bytes (the end of a log, the start of others)."""
    if isinstance(data, str):
        text, cut = _cut_utf8(data, limit, tail)
        return DecodedText(text, "utf-8", len(data.encode("utf-8", errors="surrogatepass")), cut)
    form_prefix = ""
    original = len(data)
    depth = 0
    while data.startswith(GZIP_MAGIC) and depth < 3:
        data, original = _gunzip(data, keep=4 * limit + 4, tail=tail)
        form_prefix += "gzip+"
        depth += 1
    text, encoding = decode_bytes(data)
    text, cut = _cut_utf8(text, limit, tail)
    cut_total = cut + max(0, original - len(data))
    return DecodedText(text, form_prefix + encoding, original, cut_total)
