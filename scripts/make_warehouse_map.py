"""Draw worlds/maps/warehouse.png, the occupancy map of our demo world (white = free, black = occupied).

30 m x 20 m at 0.05 m per pixel: outer walls with a loading-bay gap, four shelf rows, pillars and an office corner.
Run from the repository root: ``.venv/bin/python scripts/make_warehouse_map.py``.
"""

from pathlib import Path

from PIL import Image, ImageDraw

RES = 0.05          # m per pixel
W, H = 30.0, 20.0   # m


def px(x: float, y: float) -> tuple[int, int]:
    """World (x, y) in m, origin at the map centre -> pixel (column, row); row 0 is the top (largest y)."""
    return round((x + W / 2) / RES), round((H / 2 - y) / RES)


def rect(d: ImageDraw.ImageDraw, x0: float, y0: float, x1: float, y1: float) -> None:
    (c0, r1), (c1, r0) = px(x0, y0), px(x1, y1)
    d.rectangle([c0, r0, c1 - 1, r1 - 1], fill=0)


def main() -> None:
    img = Image.new("L", (round(W / RES), round(H / RES)), 255)
    d = ImageDraw.Draw(img)
    t = 0.25  # wall thickness, m
    rect(d, -15, -10, 15, -10 + t)            # south wall
    rect(d, -15, 10 - t, 15, 10)              # north wall
    rect(d, -15, -10, -15 + t, 10)            # west wall
    rect(d, 15 - t, -10, 15, -4)              # east wall, with a 3 m loading-bay gap
    rect(d, 15 - t, -1, 15, 10)
    for y in (-6.0, -2.0, 2.0, 6.0):          # shelf rows, 1 m deep, with cross aisles
        for x0, x1 in ((-11.0, -3.0), (0.0, 9.0)):
            rect(d, x0, y - 0.5, x1, y + 0.5)
    for x in (-6.0, 5.0, 11.0):               # pillars 0.4 m
        rect(d, x - 0.2, 8.0 - 0.2, x + 0.2, 8.0 + 0.2)
    rect(d, 11.0, -10.0, 11.0 + t, -7.5)      # office corner
    rect(d, 11.0, -7.5 - t, 13.5, -7.5)
    out = Path(__file__).resolve().parents[1] / "worlds" / "maps" / "warehouse.png"
    img.save(out, optimize=True)
    print(f"wrote {out} ({img.width} x {img.height} px, {RES} m/px)")


if __name__ == "__main__":
    main()
