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

from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont, ImageOps, TiffImagePlugin

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


# ---------------------------------------------------------------------------
# Degraded document pages, modelled on real captures (tests and scripts/bench-images)
# ---------------------------------------------------------------------------

PROSE_SENTENCES = """
The committee met on Tuesday morning to review the annual budget and the plans for the new library.
Most of the members agreed that the reading room should stay open until nine in the evening.
The river rises quickly in the spring, when the snow melts in the hills above the town.
Farmers along the valley have learned to move their animals to higher ground before the water arrives.
Please read the following instructions carefully before you install the software on your computer.
If the installation stops with an error, write down the message and contact the support team.
The museum holds more than forty thousand objects, from Roman coins to early steam engines.
Guided tours leave from the main hall at ten, twelve and three, and last about ninety minutes.
Our sales grew by eight percent in the third quarter, mainly because of strong demand in Europe.
The board has decided to open a second warehouse near the harbour early next year.
She opened the letter slowly, as if she already knew what it would say.
Bread is one of the oldest prepared foods, and every region has its own way of baking it.
The train leaves the station at seven fifteen and arrives in the city shortly before nine.
Tickets can be bought from the machines on the platform or from the office in the main hall.
""".strip().splitlines()


def _wrap(draw, words, f, width):
    lines, current = [], []
    for word in words:
        trial = " ".join(current + [word])
        if current and draw.textlength(trial, font=f) > width:
            lines.append(current)
            current = [word]
        else:
            current.append(word)
    if current:
        lines.append(current)
    return lines


def document_page(seed=1, columns=2, width=1650, height=2100, size=34, title="Notes from the Meeting"):
    """A page of prose at about 200 dpi: a title across the page, then `columns` columns of left-aligned
    text. Returns Drawn (words in reading order: title, then each column top to bottom); `.lines`
    gives the ground truth in that order."""
    rng = random.Random(seed)
    f, big = font("serif", size), font("bold", int(size * 1.5))
    img = Image.new("L", (width, height), 248)
    draw = ImageDraw.Draw(img)
    drawn = Drawn(img)
    margin = int(width * 0.08)
    gutter = int(size * 2.2)
    y = margin
    x = margin
    line_no = 0
    for word in title.split():
        box = draw.textbbox((x, y), word, font=big)
        draw.text((x, y), word, font=big, fill=15)
        drawn.words.append(DrawnWord(word, box, line_no))
        x += draw.textlength(word + " ", font=big)
    line_no += 1
    top = y + int(size * 3)
    col_width = (width - 2 * margin - gutter * (columns - 1)) // columns
    leading = int(size * 1.45)
    sentences = PROSE_SENTENCES * 2
    rng.shuffle(sentences)
    words = " ".join(sentences).split()
    lines = _wrap(draw, words, f, col_width)
    per_column = (height - margin - top) // leading
    for c in range(columns):
        x0 = margin + c * (col_width + gutter)
        line_no, _ = _paragraph(draw, drawn, lines[c * per_column:(c + 1) * per_column], x0, top, f, leading, line_no)
    return drawn


def _paragraph(draw, drawn, lines, x0, y0, f, leading, line_no):
    """Draws `lines` (lists of words) from (x0, y0); returns the next line number and y."""
    for i, ln in enumerate(lines):
        yy = y0 + i * leading
        x = x0
        for word in ln:
            box = draw.textbbox((x, yy), word, font=f)
            draw.text((x, yy), word, font=f, fill=20)
            drawn.words.append(DrawnWord(word, box, line_no))
            x += draw.textlength(word + " ", font=f)
        line_no += 1
    return line_no, y0 + len(lines) * leading


def _figure(draw, box, seed, frame=True):
    """A line drawing inside `box` (x0, y0, x1, y1): a frame, circles, a hatched hill and a sun, the
    strokes and curves that a page's illustration has and no text has."""
    rng = random.Random(seed)
    x0, y0, x1, y1 = box
    if frame:
        draw.rectangle(box, outline=30, width=4)
    for _ in range(6):
        cx, cy, r = rng.randint(x0 + 60, x1 - 60), rng.randint(y0 + 60, y1 - 60), rng.randint(20, 55)
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), outline=40, width=3)
    hill = [(x0, y1 - 40)] + [(x, y1 - 60 - int(90 * math.sin((x - x0) / (x1 - x0) * math.pi))) for x in range(x0, x1, 12)] + [(x1, y1 - 40)]
    draw.line(hill, fill=40, width=3)
    for x in range(x0 + 10, x1 - 10, 14):
        draw.line((x, y1 - 20, x + 30, y1 - 50), fill=60, width=2)
    sx, sy = x1 - 90, y0 + 80
    draw.ellipse((sx - 35, sy - 35, sx + 35, sy + 35), fill=90)
    for k in range(12):
        a = k * math.pi / 6
        draw.line((sx + 45 * math.cos(a), sy + 45 * math.sin(a), sx + 70 * math.cos(a), sy + 70 * math.sin(a)), fill=60, width=3)


def mixed_layout_page(seed=5, width=1700, height=2200, size=30, figure=False):
    """A page whose layout changes down the page, as a manual's or a magazine's does: a title and a
    paragraph across the page, two columns, then a paragraph across again; with `figure`, the left
    column is a line drawing instead of text. Returns Drawn with the words in reading order (title,
    head, left column, right column, foot)."""
    rng = random.Random(seed)
    f, big = font("serif", size), font("bold", int(size * 1.4))
    img = Image.new("L", (width, height), 250)
    draw = ImageDraw.Draw(img)
    drawn = Drawn(img)
    margin, gutter, leading = int(width * 0.08), int(size * 2), int(size * 1.5)
    sentences = PROSE_SENTENCES * 3
    rng.shuffle(sentences)
    words = iter(" ".join(sentences).split())

    def take(n):
        return [next(words) for _ in range(n)]

    full = width - 2 * margin
    column = (full - gutter) // 2
    line_no, y = _paragraph(draw, drawn, [take(5)], margin, margin, big, int(size * 2.2), 0)
    line_no, y = _paragraph(draw, drawn, _wrap(draw, take(70), f, full), margin, y + size, f, leading, line_no)
    top = y + size * 2
    rows = 22
    if figure:
        _figure(draw, (margin, top, margin + column, top + rows * leading - size), seed)
        right = _wrap(draw, take(260), f, column)[:rows]
        line_no, _ = _paragraph(draw, drawn, right, margin + column + gutter, top, f, leading, line_no)
    else:
        left = _wrap(draw, take(260), f, column)[:rows]
        line_no, _ = _paragraph(draw, drawn, left, margin, top, f, leading, line_no)
        right = _wrap(draw, take(260), f, column)[:rows]
        line_no, _ = _paragraph(draw, drawn, right, margin + column + gutter, top, f, leading, line_no)
    y = top + rows * leading + size * 2
    _paragraph(draw, drawn, _wrap(draw, take(60), f, full), margin, y, f, leading, line_no)
    return drawn


RULED_FORM_TITLES = ["GOVERNOR", "TREASURER", "CONTROLLER", "ASSESSOR", "SHERIFF", "SECRETARY OF STATE",
                     "ATTORNEY GENERAL", "STATE MEASURE 45", "COUNTY MEASURE P", "SUPERIOR COURT 61"]
RULED_FORM_NAMES = ["NEEL KASHKARI", "EDMUND BROWN", "GAVIN NEWSOM", "RON NEHRING", "PETE PETERSON", "ALEX PADILLA",
                    "BETTY YEE", "GREG CONLON", "JOHN CHIANG", "RONALD GOLD", "KAMALA HARRIS", "TED GAINES",
                    "DAVE JONES", "CHRIS PARKER", "GEORGE RUNNER", "TONY STRICKLAND", "STEVE KNIGHT", "MARSHALL TUCK"]


def ruled_form_page(seed=7, width=2200, height=1700, size=26, columns=4):
    """A results bulletin like an election precinct's, at 200 dpi: a head across the page, then
    `columns` columns of entries between long vertical rules, each entry a name, a party and a count
    set flush against the rule on its right, inside a frame. Returns Drawn with the words in reading
    order: the head's lines, then each column's entries from top to bottom, a row per entry."""
    rng = random.Random(seed)
    f = font("sans", size)
    img = Image.new("L", (width, height), 255)
    draw = ImageDraw.Draw(img)
    drawn = Drawn(img)
    left, right, top, bottom = 80, width - 80, 40, height - 70
    draw.rectangle([left, top, right, bottom], outline=0, width=5)
    leading = int(size * 1.2)
    line_no, y = _paragraph(draw, drawn, [["PRECINCT", "BULLETIN", "GENERAL", "ELECTION", "11/04/14"],
                                          ["327", "BALLOTS", "CAST", "OF", "1100", "REGISTERED", "VOTERS"]],
                            left + 20, top + 20, f, leading, 0)
    rule_top = y + size
    draw.line([(left, rule_top), (right, rule_top)], fill=0, width=3)
    step = (right - left) // columns
    for c in range(columns):
        x0, x1 = left + c * step, left + (c + 1) * step
        if c > 0:
            draw.line([(x0, rule_top), (x0, bottom)], fill=0, width=3)
        y = rule_top + size
        while y + 4 * leading < bottom - size:
            title = rng.choice(RULED_FORM_TITLES).split()
            line_no, y = _paragraph(draw, drawn, [title], x0 + 12, y, f, leading, line_no)
            for name in rng.sample(RULED_FORM_NAMES, 2):
                party, count = rng.choice(["REP", "DEM"]), str(rng.randint(10, 299))
                line_no, _ = _paragraph(draw, drawn, [name.split()], x0 + 12, y, f, leading, line_no)
                # The party at 60 % of the column, on the same line; the count flush against the rule.
                box = draw.textbbox((x0 + int(step * 0.6), y), party, font=f)
                draw.text((x0 + int(step * 0.6), y), party, font=f, fill=0)
                drawn.words.append(DrawnWord(party, box, line_no - 1))
                width_count = draw.textlength(count, font=f)
                cx = x1 - 6 - width_count
                box = draw.textbbox((cx, y), count, font=f)
                draw.text((cx, y), count, font=f, fill=0)
                drawn.words.append(DrawnWord(count, box, line_no - 1))
                y += leading
            y += leading // 2
    return drawn


def skewed(img, degrees):
    """Turned counter-clockwise by `degrees` (a crooked scan), canvas grown, paper-white fill."""
    return img.rotate(degrees, resample=Image.BICUBIC, expand=True, fillcolor=248)


def low_resolution(img, dpi, from_dpi=200):
    """Rescanned at `dpi` (a fax, a 72 dpi screenshot of a page); the file says 72 dpi or nothing."""
    f = dpi / from_dpi
    return img.resize((max(1, int(img.width * f)), max(1, int(img.height * f))), Image.LANCZOS)


def uneven_light(img, strength=0.55, seed=3):
    """Photographed under a lamp: light falling off towards one corner and a soft shadow band."""
    w, h = img.size
    rng = random.Random(seed)
    flip_x, flip_y = rng.choice([(False, False), (True, False), (False, True)])
    # Light falls off diagonally: brightness from the sum of a horizontal and a vertical ramp.
    across = Image.linear_gradient("L").rotate(90).resize((w, h))
    down = Image.linear_gradient("L").resize((w, h))
    ramp = ImageChops.add(across, down, scale=2)
    if flip_x:
        ramp = ImageOps.mirror(ramp)
    if flip_y:
        ramp = ImageOps.flip(ramp)
    shade = ramp.point(lambda v: int(255 - strength * 255 * (v / 255) ** 1.5))
    band = Image.new("L", (w, h), 255)
    d = ImageDraw.Draw(band)
    x = int(w * 0.62)
    d.polygon([(x, 0), (x + w // 6, 0), (x - w // 10, h), (x - w // 4, h)], fill=int(255 * (1 - strength * 0.6)))
    band = band.filter(ImageFilter.GaussianBlur(w // 30))
    return ImageChops.multiply(ImageChops.multiply(img.convert("L"), shade), band)


def phone_jpeg(img, quality=60):
    return jpeg(img, quality=quality)


def perspective(img, amount=0.06):
    """Photographed from slightly off square: the top edge narrower than the bottom."""
    w, h = img.size
    d = amount * w
    # PIL maps output (x, y) to input via the 8 coefficients; solve for the quad.
    src = [(d, 0), (w - d, 0), (w, h), (0, h)]
    dst = [(0, 0), (w, 0), (w, h), (0, h)]
    matrix = []
    for (x, y), (u, v) in zip(dst, src):
        matrix.append([x, y, 1, 0, 0, 0, -u * x, -u * y])
        matrix.append([0, 0, 0, x, y, 1, -v * x, -v * y])
    b = [c for p in src for c in p]
    coeffs = _solve(matrix, b)
    return img.transform((w, h), Image.PERSPECTIVE, coeffs, Image.BICUBIC, fillcolor=248)


def _solve(a, b):
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(n):
            if r != col:
                factor = m[r][col] / m[col][col]
                m[r] = [x - factor * y for x, y in zip(m[r], m[col])]
    return [m[i][n] / m[i][i] for i in range(n)]


def cer(truth, text):
    """Character error rate with white space folded (as `quire bench ocr` computes it)."""
    t, o = " ".join(truth.split()), " ".join(text.split())
    if not t:
        return 0.0 if not o else 1.0
    prev = list(range(len(o) + 1))
    for i, ct in enumerate(t, 1):
        cur = [i]
        for j, co in enumerate(o, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ct != co)))
        prev = cur
    return prev[-1] / len(t)
