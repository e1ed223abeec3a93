#!/usr/bin/env python3
"""Checks of a report rendered by headless Chromium, with the standard library only.

usage:
  check_render.py png FILE WIDTH HEIGHT SCHEME   a screenshot: valid PNG of that size, not
                                                 blank, background and bar colours of SCHEME
                                                 (light or dark)
  check_render.py dom FILE CPU LABEL...          the DOM (--dump-dom): one SVG chart per kind
                                                 with titles and axis labels, every LABEL in
                                                 every chart, the compare table, no script;
                                                 CPU "yes": the inputs carry per-CPU data, so
                                                 the CPU utilization chart is there, "no": the
                                                 page says it is missing
  check_render.py sweep FILE POINTS LABEL...     the DOM of a page of one sweep summary alone:
                                                 its chart (six panels, a row per point, every
                                                 LABEL in the legend, dots), the overview table
                                                 with a row per point, and the POINTS tables of
                                                 every metric in a closed <details>; no policy
                                                 chart, no script

Prints one "PASS  name" or "FAIL  name: detail" line per check; exits 0 when it could run
all checks (failures are counted by the caller), 2 on bad usage.
"""
import collections
import html.parser
import struct
import sys
import zlib

# Colours of the report's style sheet (src/io/report_html.cpp): background, then the palette
# entries the bars use most (--c0 same cluster / kernel, --c1 cross cluster, --c2 same core).
SCHEMES = {
    "light": {"background": (0xFF, 0xFF, 0xFF),
              "bars": {"--c0": (0x00, 0x72, 0xB2), "--c1": (0xE6, 0x9F, 0x00),
                       "--c2": (0x00, 0x9E, 0x73)}},
    "dark": {"background": (0x0F, 0x14, 0x19),
             "bars": {"--c0": (0x4E, 0xA8, 0xDE), "--c1": (0xF2, 0xB1, 0x34),
                      "--c2": (0x2E, 0xC4, 0xA0)}},
}
CHART_IDS = ["chart-tier-shares", "chart-latency-cdf", "chart-breakdown", "chart-selection"]


def report(name, ok, detail=""):
    print(("PASS  " if ok else "FAIL  ") + name + ("" if ok or not detail else ": " + detail))
    return ok


# ---- PNG ---------------------------------------------------------------------------------------

def read_png(path):
    """(width, height, rows of RGB tuples) of an 8-bit RGB or RGBA, non-interlaced PNG. Raises
    ValueError on anything else or on a corrupt file (bad signature, CRC or data)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG signature")
    pos, header, idat = 8, None, []
    while pos < len(data):
        if pos + 12 > len(data):
            raise ValueError("truncated chunk header at byte %d" % pos)
        (length,) = struct.unpack(">I", data[pos:pos + 4])
        if pos + 12 + length > len(data):
            raise ValueError("truncated chunk at byte %d" % pos)
        kind = data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        (crc,) = struct.unpack(">I", data[pos + 8 + length:pos + 12 + length])
        if zlib.crc32(kind + body) & 0xFFFFFFFF != crc:
            raise ValueError("bad CRC in chunk %r" % kind)
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat.append(body)
        elif kind == b"IEND":
            break
        pos += 12 + length
    if header is None or not idat:
        raise ValueError("no IHDR or IDAT chunk")
    width, height, depth, colour_type, _, _, interlace = header
    if depth != 8 or colour_type not in (2, 6) or interlace != 0:
        raise ValueError("unsupported PNG: depth %d, colour type %d, interlace %d"
                         % (depth, colour_type, interlace))
    bpp = 3 if colour_type == 2 else 4
    raw = zlib.decompress(b"".join(idat))
    stride = width * bpp
    if len(raw) != height * (stride + 1):
        raise ValueError("image data of %d bytes, expected %d" % (len(raw), height * (stride + 1)))
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(bpp, stride):
                line[i] = (line[i] + line[i - bpp]) & 0xFF
        elif kind == 2:
            line = bytearray((a + b) & 0xFF for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - bpp] if i >= bpp else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 0xFF
        elif kind == 4:
            for i in range(stride):
                a = line[i - bpp] if i >= bpp else 0
                b = previous[i]
                c = previous[i - bpp] if i >= bpp else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 0xFF
        elif kind != 0:
            raise ValueError("unknown filter type %d in row %d" % (kind, y))
        rows.append([tuple(line[x:x + 3]) for x in range(0, stride, bpp)])
        previous = line
    return width, height, rows


def near(colour, target, tolerance=6):
    return all(abs(a - b) <= tolerance for a, b in zip(colour, target))


def check_png(path, width, height, scheme):
    try:
        w, h, rows = read_png(path)
    except (OSError, ValueError, zlib.error) as error:
        report("screenshot %s is a valid PNG" % scheme, False, str(error))
        return
    report("screenshot %s is a valid PNG" % scheme, True)
    report("screenshot %s is %dx%d" % (scheme, width, height), (w, h) == (width, height),
           "got %dx%d" % (w, h))
    counts = collections.Counter(pixel for row in rows for pixel in row)
    total = w * h
    report("screenshot %s is not blank (at least 50 distinct colours)" % scheme, len(counts) >= 50,
           "%d distinct colours" % len(counts))
    background, share = counts.most_common(1)[0]
    expected = SCHEMES[scheme]["background"]
    report("screenshot %s has the %s background" % (scheme, scheme), near(background, expected),
           "most common colour %s" % (background,))
    report("screenshot %s background covers less than 95%%" % scheme, share < 0.95 * total,
           "%.1f%%" % (100.0 * share / total))
    for name, colour in SCHEMES[scheme]["bars"].items():
        pixels = sum(n for c, n in counts.items() if near(c, colour))
        report("screenshot %s shows bars in %s" % (scheme, name), pixels >= 500,
               "%d pixels near %s" % (pixels, colour))


# ---- DOM ---------------------------------------------------------------------------------------

class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent, self.children, self.text = tag, attrs, parent, [], ""

    def classes(self):
        return self.attrs.get("class", "").split()

    def walk(self):
        yield self
        for child in self.children:
            yield from child.walk()

    def all_text(self):
        return self.text + "".join(child.all_text() for child in self.children)


class Tree(html.parser.HTMLParser):
    VOID = {"meta", "br", "img", "input", "link", "hr", "source", "wbr", "col", "area", "base"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#root", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, dict(attrs), self.current)
        self.current.children.append(element)
        if tag not in self.VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, dict(attrs), self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not self.root and node.tag != tag:
            node = node.parent
        if node is not self.root:
            self.current = node.parent

    def handle_data(self, data):
        # A text node keeps text and child elements in document order.
        text = Element("#text", {}, self.current)
        text.text = data
        self.current.children.append(text)


def check_dom(path, cpu, labels):
    tree = Tree()
    tree.feed(open(path, encoding="utf-8").read())
    elements = list(tree.root.walk())
    report("DOM has no script element", not any(e.tag == "script" for e in elements))
    chart_ids = CHART_IDS + (["chart-cpu-utilization"] if cpu else [])
    svgs = [e for e in elements if e.tag == "svg"]
    report("DOM has one SVG per chart kind",
           sorted(e.attrs.get("id", "") for e in svgs) == sorted(chart_ids),
           "svg ids %s" % [e.attrs.get("id") for e in svgs])
    missing_note = [e for e in elements if "missing" in e.classes()]
    if cpu:
        report("per-CPU data is not reported missing", not missing_note,
               missing_note[0].all_text() if missing_note else "")
    else:
        report("the page says per-CPU utilization is missing",
               any("Per-CPU utilization is not shown" in e.all_text() for e in missing_note))
    for chart_id in chart_ids:
        svg = next((e for e in svgs if e.attrs.get("id") == chart_id), None)
        if svg is None:
            report("%s is present" % chart_id, False)
            continue
        inside = list(svg.walk())
        texts = [e for e in inside if e.tag == "text"]
        title = [e for e in inside if e.tag == "title" and e.parent is svg]
        report("%s has a title" % chart_id, bool(title) and bool(title[0].all_text().strip()))
        report("%s has a visible chart title" % chart_id,
               any("chart-title" in e.classes() for e in texts))
        axis_labels = [e.all_text() for e in texts if "axis-label" in e.classes()]
        report("%s has axis labels with units" % chart_id,
               any("(%)" in t or "(µs)" in t for t in axis_labels), "axis labels %s" % axis_labels)
        report("%s has tick labels" % chart_id, sum("tick" in e.classes() for e in texts) >= 4)
        shown = {e.all_text() for e in texts}
        missing = [label for label in labels if label not in shown]
        report("%s names every policy" % chart_id, not missing, "missing %s" % missing)
    cdf = next((e for e in svgs if e.attrs.get("id") == "chart-latency-cdf"), None)
    if cdf is not None:
        inside = list(cdf.walk())
        panels = [e for e in inside if e.tag == "g" and "cdf-panel" in e.classes()]
        curves = [e for e in inside if e.tag == "polyline" and "cdf" in e.classes()]
        report("latency CDF has 7 panels", len(panels) == 7, "%d panels" % len(panels))
        report("latency CDF has at most one curve per policy and panel, and some curves",
               0 < len(curves) <= 7 * len(labels), "%d curves" % len(curves))
    for chart_id in ("chart-tier-shares", "chart-breakdown", "chart-selection") + (
            ("chart-cpu-utilization",) if cpu else ()):
        svg = next((e for e in svgs if e.attrs.get("id") == chart_id), None)
        bars = [e for e in svg.walk() if e.tag == "rect" and "bar" in e.classes()] if svg else []
        report("%s draws bars" % chart_id, len(bars) >= len(labels), "%d bars" % len(bars))
    tables = [e for e in elements if e.tag == "table" and "compare-table" in e.classes()]
    report("DOM has one compare table", len(tables) == 1, "%d tables" % len(tables))
    if tables:
        heads = [e.all_text() for e in tables[0].walk() if e.tag == "th"]
        report("compare table has a column per policy",
               all(label in heads for label in labels), "headings %s" % heads)
        rows = [e for e in tables[0].walk() if e.tag == "tr"]
        report("compare table has metric rows", len(rows) > 10, "%d rows" % len(rows))


def check_sweep(path, points, labels):
    tree = Tree()
    tree.feed(open(path, encoding="utf-8").read())
    elements = list(tree.root.walk())
    report("sweep DOM has no script element", not any(e.tag == "script" for e in elements))
    svgs = [e for e in elements if e.tag == "svg"]
    report("sweep page has exactly the sweep chart",
           [e.attrs.get("id") for e in svgs] == ["chart-sweep-0"],
           "svg ids %s" % [e.attrs.get("id") for e in svgs])
    if svgs:
        inside = list(svgs[0].walk())
        texts = [e for e in inside if e.tag == "text"]
        title = [e for e in inside if e.tag == "title" and e.parent is svgs[0]]
        report("sweep chart has a title", bool(title) and bool(title[0].all_text().strip()))
        panels = [e for e in inside if e.tag == "g" and "sweep-panel" in e.classes()]
        report("sweep chart has six panels", len(panels) == 6, "%d panels" % len(panels))
        for panel in panels:
            panel_texts = [e for e in panel.walk() if e.tag == "text"]
            rows = [e for e in panel_texts if "bar-name" in e.classes()]
            ticks = [e for e in panel_texts if "tick" in e.classes()]
            name = next((e.all_text() for e in panel_texts if "panel-title" in e.classes()), "?")
            report("sweep panel %s has a row per point" % name, len(rows) == points,
                   "%d rows" % len(rows))
            report("sweep panel %s has tick labels" % name, len(ticks) >= 3)
        legend = {e.all_text() for e in texts if "legend-text" in e.classes()}
        report("sweep chart's legend names every column", set(labels) <= legend,
               "legend %s" % sorted(legend))
        dots = [e for e in inside if e.tag == "circle" and "marker" in e.classes()]
        report("sweep chart draws a dot per panel, point and column, or fewer",
               6 * points <= len(dots) <= 6 * points * len(labels), "%d dots" % len(dots))
    overview = next((e for e in elements if e.tag == "table" and e.attrs.get("id") == "table-sweep-0"),
                    None)
    body_rows = ([e for e in overview.walk() if e.tag == "tr" and e.parent.tag == "tbody"]
                 if overview else [])
    report("sweep overview has a row per point", len(body_rows) == points,
           "%d rows" % len(body_rows))
    details = [e for e in elements if e.tag == "details"]
    report("sweep page has one closed <details>",
           len(details) == 1 and "open" not in details[0].attrs, "%d details" % len(details))
    point_tables = [e for e in (details[0].walk() if details else [])
                    if e.tag == "table" and e.attrs.get("id", "").startswith("table-sweep-0-point-")]
    report("the details hold a table per point", len(point_tables) == points,
           "%d tables" % len(point_tables))


def main(argv):
    if len(argv) >= 6 and argv[1] == "png":
        check_png(argv[2], int(argv[3]), int(argv[4]), argv[5])
        return 0
    if len(argv) >= 5 and argv[1] == "dom" and argv[3] in ("yes", "no"):
        check_dom(argv[2], argv[3] == "yes", argv[4:])
        return 0
    if len(argv) >= 5 and argv[1] == "sweep" and argv[3].isdigit():
        check_sweep(argv[2], int(argv[3]), argv[4:])
        return 0
    print(__doc__.strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
