"""What a test reads out of a page or a document: each helper fails naming what it looked for when that is
not there, instead of handing back None for the next line to trip over."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET


def search(pattern: str, text: str, flags: int = 0) -> re.Match[str]:
    found = re.search(pattern, text, flags)
    assert found is not None, f"{pattern!r} is not in the text"
    return found


def child_text(element: ET.Element, path: str) -> str:
    text = element.findtext(path)
    assert text is not None, f"<{element.tag}> has no {path}"
    return text


def attribute(element: ET.Element, name: str) -> str:
    value = element.get(name)
    assert value is not None, f"<{element.tag}> has no {name}="
    return value
