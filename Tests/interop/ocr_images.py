"""Test images with known text and known word boxes, for Tests/interop/test_ocr.py.

Everything here is deterministic: images are drawn with Pillow and the DejaVu fonts (Debian
`fonts-dejavu-core`), noise comes from a seeded generator. Each renderer returns the image and
the words it drew, each with the box `ImageDraw.textbbox` gives for it (x0, y0, x1, y1; x1/y1
exclusive), in the coordinates of the returned image.

No pytest fixtures here (Tests/interop/conftest.py belongs to the broker interop suite).
"""

import io
import math
import random
import struct
import warnings
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from PIL import Image, ImageDraw, ImageFilter, ImageFont, ImageOps, TiffImagePlugin

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
FONTS = {
    "sans": DEJAVU / "DejaVuSans.ttf",
    "serif": DEJAVU / "DejaVuSerif.ttf",
    "mono": DEJAVU / "DejaVuSansMono.ttf",
    "bold": DEJAVU / "DejaVuSans-Bold.ttf",
}
# Non-Latin scripts (Debian packages in brackets): Devanagari [fonts-lohit-deva],
# Simplified Chinese [fonts-wqy-microhei].
DEVANAGARI_FONT = Path("/usr/share/fonts/truetype/lohit-devanagari/Lohit-Devanagari.ttf")
CJK_FONT = Path("/usr/share/fonts/truetype/wqy/wqy-microhei.ttc")


@dataclass
class DrawnWord:
    text: str
    box: tuple  # (x0, y0, x1, y1) as ImageDraw.textbbox gives it
    line: int = 0


@dataclass
class Drawn:
    image: Image.Image
    words: list = field(default_factory=list)

    @property
    def lines(self):
        out = {}
        for w in self.words:
            out.setdefault(w.line, []).append(w.text)
        return [" ".join(out[k]) for k in sorted(out)]


def font(name_or_path, size, index=0):
    path = FONTS.get(name_or_path, name_or_path)
    return ImageFont.truetype(str(path), size, index=index)


def render_lines(lines, font_name="sans", size=40, margin=None, width=None, height=None,
                 line_gap=0.6, mode="L", language=None, space=None):
    """Draws `lines` (lists of words, or strings split on spaces) word by word, black on white.

    Words are drawn one at a time so that each one's textbbox is exactly where its ink is; the
    gap between words is the font's space advance (or `space` pixels).
    """
    f = font(font_name, size)
    lines = [ln.split() if isinstance(ln, str) else list(ln) for ln in lines]
    margin = margin if margin is not None else size
    probe = ImageDraw.Draw(Image.new(mode, (1, 1)))
    kwargs = {"language": language} if language else {}
    gap = space if space is not None else max(probe.textlength(" ", font=f, **kwargs), size * 0.3)
    line_height = int(size * (1 + line_gap))
    widths = [sum(probe.textlength(w, font=f, **kwargs) for w in ln) + gap * (len(ln) - 1) for ln in lines]
    w = width or int(max(widths) + 2 * margin)
    h = height or int(len(lines) * line_height + 2 * margin)
    img = Image.new(mode, (w, h), 255 if mode in ("L", "1") else "white")
    draw = ImageDraw.Draw(img)
    drawn = Drawn(img)
    y = margin
    for index, ln in enumerate(lines):
        x = float(margin)
        for word in ln:
            box = draw.textbbox((x, y), word, font=f, **kwargs)
            draw.text((x, y), word, font=f, fill=0, **kwargs)
            drawn.words.append(DrawnWord(word, tuple(int(round(v)) for v in box), index))
            x += draw.textlength(word, font=f, **kwargs) + gap
        y += line_height
    return drawn


# ---------------------------------------------------------------------------
# Degradations
# ---------------------------------------------------------------------------

def rotate(drawn, degrees):
    """Turns the page counter-clockwise by `degrees` about its centre (canvas grows, white fill);
    each word's box becomes the axis-aligned box around its turned corners."""
    img = drawn.image
    w, h = img.size
    out = img.rotate(degrees, resample=Image.BICUBIC, expand=True, fillcolor=255)
    nw, nh = out.size
    t = math.radians(degrees)
    cx, cy, ncx, ncy = w / 2, h / 2, nw / 2, nh / 2

    def turn(x, y):
        # Counter-clockwise on screen (y grows downwards).
        dx, dy = x - cx, y - cy
        return (ncx + dx * math.cos(t) + dy * math.sin(t), ncy - dx * math.sin(t) + dy * math.cos(t))

    words = []
    for word in drawn.words:
        x0, y0, x1, y1 = word.box
        pts = [turn(x, y) for x, y in ((x0, y0), (x1, y0), (x1, y1), (x0, y1))]
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        words.append(DrawnWord(word.text, (int(min(xs)), int(min(ys)), int(math.ceil(max(xs))), int(math.ceil(max(ys)))), word.line))
    return Drawn(out, words)


def blur(drawn, radius=1.2):
    return Drawn(drawn.image.filter(ImageFilter.GaussianBlur(radius)), list(drawn.words))


def noise(drawn, amount=0.25, speckles=0.004, seed=7):
    """Uniform grey noise blended in at `amount`, plus salt-and-pepper speckles; seeded."""
    rng = random.Random(seed)
    img = drawn.image.convert("L")
    w, h = img.size
    grain = Image.frombytes("L", (w, h), rng.randbytes(w * h))
    out = Image.blend(img, grain, amount)
    px = out.load()
    for _ in range(int(w * h * speckles)):
        px[rng.randrange(w), rng.randrange(h)] = rng.choice((0, 255))
    return Drawn(out, list(drawn.words))


# ---------------------------------------------------------------------------
# Encoders
# ---------------------------------------------------------------------------

def encode(img, fmt, **params):
    buf = io.BytesIO()
    img.save(buf, fmt, **params)
    return buf.getvalue()


def png(img, **params):
    return encode(img, "PNG", **params)


def jpeg(img, quality=92, **params):
    return encode(img.convert("L") if img.mode == "1" else img, "JPEG", quality=quality, **params)


def tiff_pages(images, compression="tiff_lzw"):
    """A multi-page TIFF, one IFD per image (pages may differ in size)."""
    first, rest = images[0], list(images[1:])
    return encode(first, "TIFF", save_all=True, append_images=rest, compression=compression)


def heic(img, quality=92):
    """HEIC through pillow-heif (libheif + x265)."""
    import pillow_heif

    heif_file = pillow_heif.from_pillow(img.convert("RGB"))
    buf = io.BytesIO()
    heif_file.save(buf, quality=quality)
    return buf.getvalue()


# ---------------------------------------------------------------------------
# EXIF orientation
# ---------------------------------------------------------------------------

# What a viewer does to the stored pixels for each EXIF orientation (ImageOps.exif_transpose).
_VIEWER = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_270,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_90,
}
# ... and its inverse, which turns an upright picture into the pixels to store.
_STORE = {
    1: None,
    2: Image.Transpose.FLIP_LEFT_RIGHT,
    3: Image.Transpose.ROTATE_180,
    4: Image.Transpose.FLIP_TOP_BOTTOM,
    5: Image.Transpose.TRANSPOSE,
    6: Image.Transpose.ROTATE_90,
    7: Image.Transpose.TRANSVERSE,
    8: Image.Transpose.ROTATE_270,
}
# The page fields Quire documents: degrees the stored image is turned clockwise, then whether it is
# mirrored left-right, to be upright.
EXPECTED_ROTATION = {1: (0, False), 2: (0, True), 3: (180, False), 4: (180, True),
                     5: (90, True), 6: (90, False), 7: (270, True), 8: (270, False)}


def exif_jpeg(upright, orientation, quality=92):
    """A JPEG whose stored pixels, shown by a viewer that applies EXIF `orientation`, are `upright`."""
    stored = upright if _STORE[orientation] is None else upright.transpose(_STORE[orientation])
    exif = Image.Exif()
    exif[0x0112] = orientation
    data = encode(stored.convert("L"), "JPEG", quality=quality, exif=exif.tobytes())
    # Self-check: a viewer shows the upright picture.
    shown = ImageOps.exif_transpose(Image.open(io.BytesIO(data)))
    assert shown.size == upright.size, (orientation, shown.size, upright.size)
    return data


def upright_to_stored(orientation, width, height):
    """Maps a point of the upright picture (continuous coordinates) to the stored pixel grid."""
    W, H = width, height  # upright size

    def f(x, y):
        return {
            1: (x, y),
            2: (W - x, y),
            3: (W - x, H - y),
            4: (x, H - y),
            5: (y, x),
            6: (y, W - x),
            7: (H - y, W - x),
            8: (H - y, x),
        }[orientation]
    return f


# ---------------------------------------------------------------------------
# Broken and hostile files
# ---------------------------------------------------------------------------

def rle8_bmp(width=64, height=16):
    """An 8-bit BMP with BI_RLE8 compression (Pillow reads these but cannot write them)."""
    rows = []
    for y in range(height):
        value = 0 if (y // 4) % 2 else 1
        row = b""
        left = width
        while left:
            n = min(255, left)
            row += bytes([n, value])
            left -= n
        rows.append(row + b"\x00\x00")  # end of line
    pixels = b"".join(rows)[:-2] + b"\x00\x01"  # end of bitmap
    palette = bytes([255, 255, 255, 0, 0, 0, 0, 0]) + bytes(4 * 254)
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 8, 1, len(pixels), 2835, 2835, 256, 0)
    offset = 14 + len(info) + len(palette)
    header = b"BM" + struct.pack("<IHHI", offset + len(pixels), 0, 0, offset)
    data = header + info + palette + pixels
    Image.open(io.BytesIO(data)).load()  # Pillow decodes it: a valid file
    return data


def huge_bilevel_png(width=12000, height=12000):
    """A complete, valid 1-bit white PNG: tens of kilobytes on disk, `width`×`height` pixels once
    decoded. Written chunk by chunk (Pillow takes seconds to compress this many rows)."""
    def chunk(kind, payload):
        return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", zlib.crc32(kind + payload))

    row = b"\x00" + b"\xff" * ((width + 7) // 8)  # filter type 0, then all-white bits
    z = zlib.compressobj(9)
    body = b"".join(z.compress(row) for _ in range(height)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)  # 1 bit, greyscale
    data = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", body) + chunk(b"IEND", b"")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", Image.DecompressionBombWarning)
        assert Image.open(io.BytesIO(data)).size == (width, height)
    return data


def truncated(data, keep=0.5):
    return data[: max(64, int(len(data) * keep))]
