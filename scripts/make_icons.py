"""Draw the inbox's app icons: a speech bubble with a question mark, in the page's accent colour.

Run: `python scripts/make_icons.py` (standard library only). It writes the icons the web app
manifest names into `src/user_questions/host/web/static/icons/`, where they are committed as package
data: `icon.svg` (any size), `icon-192.png` and `icon-512.png` (rounded corners), and
`maskable-512.png` (full bleed, the drawing inside the middle 80% that launchers may crop to).

Every shape is drawn from its distance function on a 100 x 100 canvas, so the PNGs and the SVG
are the same drawing, and edges are anti-aliased by the distance itself (one sample per pixel).
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ICONS = ROOT / "src" / "user_questions" / "host" / "web" / "static" / "icons"
ACCENT = (0x2B, 0x6B, 0x5A)
WHITE = (0xFF, 0xFF, 0xFF)

Distance = Callable[[float, float], float]
"""Signed distance from a point of the canvas to a shape's edge (negative inside)."""

# The drawing, in canvas units: the bubble, its tail, and the question mark's parts.
BUBBLE = (50.0, 46.0, 30.0)
TAIL = ((30.0, 64.0), (46.0, 74.0), (24.0, 86.0))
MARK_CENTRE, MARK_RADIUS, MARK_WIDTH = (50.0, 38.0), 9.0, 6.0
ARC_FROM, ARC_TO = -50.0, 160.0
"""The question mark's arc, in degrees counter-clockwise from the right (y pointing up)."""
STEM = ((50.0, 52.0), (50.0, 55.0))
DOT = (50.0, 64.0, 3.8)


def arc_end(degrees: float) -> tuple[float, float]:
    cx, cy = MARK_CENTRE
    angle = math.radians(degrees)
    return cx + MARK_RADIUS * math.cos(angle), cy - MARK_RADIUS * math.sin(angle)


def circle(cx: float, cy: float, r: float) -> Distance:
    return lambda x, y: math.hypot(x - cx, y - cy) - r


def rounded_square(radius: float) -> Distance:
    def distance(x: float, y: float) -> float:
        qx = abs(x - 50) - (50 - radius)
        qy = abs(y - 50) - (50 - radius)
        outside = math.hypot(max(qx, 0.0), max(qy, 0.0))
        return outside + min(max(qx, qy), 0.0) - radius

    return distance


def triangle(points: tuple[tuple[float, float], ...]) -> Distance:
    edges = [(points[i], points[(i + 1) % 3]) for i in range(3)]

    def distance(x: float, y: float) -> float:
        nearest = min(_to_segment(x, y, a, b) for a, b in edges)
        signs = [(b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]) for a, b in edges]
        inside = all(s >= 0 for s in signs) or all(s <= 0 for s in signs)
        return -nearest if inside else nearest

    return distance


def capsule(a: tuple[float, float], b: tuple[float, float], width: float) -> Distance:
    return lambda x, y: _to_segment(x, y, a, b) - width / 2


def arc() -> Distance:
    cx, cy = MARK_CENTRE
    ends = [arc_end(ARC_FROM), arc_end(ARC_TO)]

    def distance(x: float, y: float) -> float:
        angle = math.degrees(math.atan2(-(y - cy), x - cx))
        if ARC_FROM <= angle <= ARC_TO:
            return abs(math.hypot(x - cx, y - cy) - MARK_RADIUS) - MARK_WIDTH / 2
        return min(math.hypot(x - ex, y - ey) for ex, ey in ends) - MARK_WIDTH / 2

    return distance


def union(*shapes: Distance) -> Distance:
    return lambda x, y: min(shape(x, y) for shape in shapes)


def _to_segment(x: float, y: float, a: tuple[float, float], b: tuple[float, float]) -> float:
    (ax, ay), (bx, by) = a, b
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((x - ax) * dx + (y - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(x - ax - t * dx, y - ay - t * dy)


def layers(corner: float, scale: float) -> list[tuple[Distance, tuple[int, int, int]]]:
    """The shapes, bottom first, with the drawing shrunk by `scale` about the centre."""

    def scaled(shape: Distance) -> Distance:
        return lambda x, y: shape(50 + (x - 50) / scale, 50 + (y - 50) / scale) * scale

    end = arc_end(ARC_FROM)
    mark = union(
        arc(),
        capsule(end, STEM[0], MARK_WIDTH),
        capsule(*STEM, MARK_WIDTH),
        circle(*DOT),
    )
    return [
        (rounded_square(corner), ACCENT),
        (scaled(union(circle(*BUBBLE), triangle(TAIL))), WHITE),
        (scaled(mark), ACCENT),
    ]


def png(size: int, corner: float, scale: float) -> bytes:
    """The icon as an RGBA PNG of `size` pixels."""
    shapes = layers(corner, scale)
    unit = 100 / size
    rows = []
    for row in range(size):
        line = bytearray(b"\0")  # filter: none
        y = (row + 0.5) * unit
        for column in range(size):
            x = (column + 0.5) * unit
            colour, alpha = (0.0, 0.0, 0.0), 0.0
            for shape, rgb in shapes:
                cover = min(1.0, max(0.0, 0.5 - shape(x, y) / unit))
                if cover:
                    out = cover + alpha * (1 - cover)
                    colour = tuple(
                        (c * cover + k * alpha * (1 - cover)) / out
                        for c, k in zip(rgb, colour, strict=True)
                    )
                    alpha = out
            line += bytes([*(round(c) for c in colour), round(alpha * 255)])
        rows.append(bytes(line))
    header = struct.pack(">IIBBBBB", size, size, 8, 6, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + _chunk(b"IHDR", header)
        + _chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
        + _chunk(b"IEND", b"")
    )


def _chunk(kind: bytes, data: bytes) -> bytes:
    crc = zlib.crc32(kind + data) & 0xFFFFFFFF
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", crc)


def svg() -> str:
    """The same drawing as SVG."""
    accent = "#{:02x}{:02x}{:02x}".format(*ACCENT)
    (sx, sy), (ex, ey) = arc_end(ARC_TO), arc_end(ARC_FROM)
    tail = " ".join(f"{x:g},{y:g}" for x, y in TAIL)
    (s0x, s0y), (_, s1y) = STEM
    return f"""<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 100 100">
  <rect width="100" height="100" rx="22" fill="{accent}"/>
  <circle cx="{BUBBLE[0]:g}" cy="{BUBBLE[1]:g}" r="{BUBBLE[2]:g}" fill="#fff"/>
  <polygon points="{tail}" fill="#fff"/>
  <path d="M{sx:.2f} {sy:.2f} A{MARK_RADIUS:g} {MARK_RADIUS:g} 0 1 1 {ex:.2f} {ey:.2f} \
L{s0x:g} {s0y:g} V{s1y:g}" fill="none" stroke="{accent}" stroke-width="{MARK_WIDTH:g}" \
stroke-linecap="round" stroke-linejoin="round"/>
  <circle cx="{DOT[0]:g}" cy="{DOT[1]:g}" r="{DOT[2]:g}" fill="{accent}"/>
</svg>
"""


def main() -> None:
    ICONS.mkdir(parents=True, exist_ok=True)
    (ICONS / "icon.svg").write_text(svg(), encoding="utf-8")
    for size in (192, 512):
        (ICONS / f"icon-{size}.png").write_bytes(png(size, corner=22, scale=1.0))
    (ICONS / "maskable-512.png").write_bytes(png(512, corner=0, scale=0.8))
    print(f"wrote the icons in {ICONS}")


if __name__ == "__main__":
    main()
