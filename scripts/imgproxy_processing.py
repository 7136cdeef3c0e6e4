"""imgproxy's own processing tests, replayed as URLs against a running `easel serve`.

imgproxy's `processing/*_test.go` (vendored unchanged, with the test images, the pixel hashes
and imgproxy's licence, in Tests/Compat/imgproxy/processing/; see its README.md) ask imgproxy's
test server for `/unsafe/<options>/plain/local:///<image>` and assert the answer's size, its
interpretation and a hash of its pixels, stored in `testdata/test-hashes/<test name>/test.hash`.

What this does:

1. Reads the table-driven tests out of the Go files: every `func (s *XTestSuite) TestY()` with a
   `testCases := []…{…}` table. A small Go-literal reader evaluates the table (struct literals,
   keyed or positional, with the field order read from the `type … struct` declarations; the
   function's local and the file's package-level variables; `processing.Gravity*`,
   `processing.Resize*`, `imagetype.*`, `vips.Interpretation*`, `color.*` constants; `&`, `*`,
   `/`, `+`), then the loop after it: the sub-test's name (`s.Run(<expr>, …)`, evaluated before
   the closure changes the case, as in Go, with Go's `#01` suffix for a repeated name), the
   closure's `tc.opts.<field> = <expr>` assignments and its `s.Config().Processing.<X> = …`
   settings. Each test-case type's `URLOptions()`/`String()`/`ShortName()` is ported below
   (`OPTS`, one Python function per Go method); the run stops if a vendored file declares a
   test-case type it has no port for.
   `rotate_and_flip_test.go` is not table-driven: its loops (8 images, rotations 0/90/180/270,
   both flips, auto-rotation off and on) are ported as they are (checked against the file).
   A case's hash file must exist under its name (the names are the check that the port reads
   the tables as Go does).
2. Turns each case into `/imgproxy/insecure/<the test's options>/plain/local:///<image>`; where
   the test's options name no `format`, `@<the source's format>` is appended, because imgproxy
   answers in the source's format when none is asked (easel, asked without one, answers a PNG
   source as JPEG). imgproxy's test options are a Go map, so their order in imgproxy's URL is
   random; here they keep the order the test adds them. The test server's settings become
   environment variables (`IMGPROXY_WATERMARK_PATH` for the watermark suites' `geometry.png` or
   the colour-space case's watermark file; `IMGPROXY_PRESERVE_HDR`,
   `IMGPROXY_USE_LINEAR_COLORSPACE` for `Config().Processing.*`); one `easel serve` runs per
   distinct set, with the vendored `testdata/` as its origin (`local:///` reads from it).
3. Compares, for every case, the answer's size with the test's `outSize` (rotate/flip cases
   assert none) and, where the test asserts one, its interpretation as libvips reports it on
   loading the answer; and computes the answer's pixel hash as imgproxy's `testutil` does:
   - SHA-256 (`HashTypeSHA256`, the suites' default, compared exactly: imgproxy's maxDistance
     is 0.0005 on a distance that is 0 or 1): libvips loads the answer, `vips_colourspace` to
     sRGB, `vips_addalpha` if it has no alpha, and the raw pixels (8-bit RGBA) are hashed
     (testutil/vips.c). libvips is called through ctypes (libvips.so.42) when it is installed;
     otherwise Pillow makes the same RGBA bytes for 8- and 16-bit answers (16-bit values
     shifted right by 8, as libvips' RGB16→sRGB).
   - DCT (`HashTypeDct`: TestLinearColorspace, TestPreserveHDROptionOverride,
     TestWatermarkColorspace): the 8×8 low DCT-II coefficients of each Lab channel (L only for
     a grey answer) of the answer made scRGB, shrunk to 64 px a side with Lanczos3, flattened
     on magenta (testutil/dct2.c), and the mean squared difference with the stored one, which
     the test holds to 0.0005. Only with libvips; reported apart, as information.
   Which of the two a case uses is the stored hash's type byte (as `LoadImageHash` reads it):
   the suite's matcher carries over from one test method to the next, so
   TestPreserveHDROptionOverride, which runs after TestLinearColorspace, stores DCT hashes.

   The SHA-256 comparison counts only where the case involves no resampling: the Go test's
   options are read back and imgproxy's own geometry (`processing/prepare.go`, `calcScale`,
   `calcSizes`, `limitScale`, ported below with the source's size, crop, DPR, enlarge, extend,
   padding and `max_result_dimension`) gives a scale of exactly 1 on both axes, and the case
   has no blur, sharpen or pixelate (convolutions and imgproxy's shrink-and-zoom pixelate) and
   no watermark `scale` (which resizes the mark). Elsewhere easel's resampler is not libvips',
   so a bit-exact hash is not expected; those hashes are counted as information only. A
   resample-free mismatch is also hashed again with the colour under fully transparent pixels
   made 0,0,0 (what libvips' `vips_embed` leaves where imgproxy extends), to tell an invisible
   difference from a visible one.

Prints a line per mismatch and a summary; exits 0 (a report), unless a server fails to start.
Every request is bounded (120 s).

    python3 scripts/imgproxy_processing.py .build/debug/easel [-v]
"""
import collections, ctypes, ctypes.util, hashlib, io, math, os, re, shutil, struct, sys, tempfile
import urllib.error, urllib.request

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import easel_serve  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SUITE = os.path.join(ROOT, "Tests", "Compat", "imgproxy", "processing")
TESTDATA = os.path.join(SUITE, "testdata")
GO_DIR = os.path.join(SUITE, "processing")
TIMEOUT = 120

# --------------------------------------------------------------------------------------------
# Go's formatting


def go_g(x):
    """Go's %g / %v of a number (shortest representation)."""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, int):
        return str(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    text = repr(float(x))
    if "e" in text:
        mantissa, exponent = text.split("e")
        text = "%se%s%02d" % (mantissa, "-" if exponent.startswith("-") else "+", abs(int(exponent)))
    return text


def go_v(x):
    """Go's %v of a value the tests pass to OptionArgs.Set."""
    if isinstance(x, (bool, int, float)):
        return go_g(x)
    return str(x)


def go_f(x):
    return "%f" % x


def go_t(x):
    return "true" if x else "false"


class Enum:
    """A Go named integer constant whose String() is `name` (GravityType, ResizeType, …)."""

    def __init__(self, name, value):
        self.name, self.value = name, value

    def __str__(self):
        return self.name

    def __bool__(self):
        return self.value != 0

    def __eq__(self, other):
        return isinstance(other, Enum) and (self.name, self.value) == (other.name, other.value)

    def __hash__(self):
        return hash((self.name, self.value))


class RGB:
    def __init__(self, r, g, b):
        self.R, self.G, self.B = r, g, b

    def __str__(self):  # color.RGB.String()
        return "#%02x%02x%02x" % (self.R, self.G, self.B)


GRAVITIES = ["", "ce", "no", "ea", "so", "we", "nowe", "noea", "sowe", "soea", "sm", "fp", "re"]
GRAVITY_NAMES = ["Unknown", "Center", "North", "East", "South", "West", "NorthWest", "NorthEast",
                 "SouthWest", "SouthEast", "Smart", "FocusPoint", "Replicate"]
CONSTANTS = {"processing.Gravity" + n: Enum(g, i) for i, (n, g) in enumerate(zip(GRAVITY_NAMES, GRAVITIES))}
CONSTANTS.update({"processing.Resize" + n: Enum(s, i) for i, (n, s) in
                  enumerate([("Fit", "fit"), ("Fill", "fill"), ("FillDown", "fill-down"), ("Force", "force"), ("Auto", "auto")])})
CONSTANTS.update({"imagetype." + n: Enum(s, i) for i, (n, s) in
                  enumerate([("Unknown", ""), ("JPEG", "jpeg"), ("PNG", "png"), ("WEBP", "webp"), ("GIF", "gif"),
                             ("AVIF", "avif"), ("BMP", "bmp"), ("TIFF", "tiff"), ("HEIC", "heic"), ("JXL", "jxl")])})
# libvips' VipsInterpretation values (vips/interpretation.go maps them one to one)
INTERPRETATIONS = {"MultiBand": 0, "BW": 1, "CMYK": 15, "RGB": 17, "SRGB": 22, "RGB16": 25, "Grey16": 26, "ScRGB": 28}
INTERPRETATION_NAMES = {v: k for k, v in INTERPRETATIONS.items()}
CONSTANTS.update({"vips.Interpretation" + n: Enum(n, v) for n, v in INTERPRETATIONS.items()})
CONSTANTS.update({"color." + n: RGB(*v) for n, v in {
    "Black": (0, 0, 0), "White": (255, 255, 255), "Gray": (127, 127, 127), "Red": (255, 0, 0), "Green": (0, 255, 0),
    "Blue": (0, 0, 255), "Cyan": (0, 255, 255), "Yellow": (255, 255, 0), "Magenta": (255, 0, 255)}.items()})
CONSTANTS.update({"true": True, "false": False, "nil": None})

# --------------------------------------------------------------------------------------------
# A reader for the Go literals of the test tables

TOKEN = re.compile(r"""\s*(?:(//[^\n]*)|(/\*.*?\*/)|("(?:[^"\\]|\\.)*")|(`[^`]*`)|([0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?)|([A-Za-z_][A-Za-z0-9_]*)|(:=|&&|\|\||==|!=|<=|>=|\+\+|--|[^\s\w"`]))""", re.S)


def tokenize(text):
    tokens, pos = [], 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m:
            if text[pos:].strip() == "":
                break
            raise ValueError("cannot read Go at %r" % text[pos:pos + 40])
        pos = m.end()
        if m.group(1) or m.group(2):
            continue
        if m.group(3):
            tokens.append(("str", bytes(m.group(3)[1:-1], "utf-8").decode("unicode_escape")))
        elif m.group(4):
            tokens.append(("str", m.group(4)[1:-1]))
        elif m.group(5):
            number = m.group(5)
            tokens.append(("num", float(number) if any(c in number for c in ".eE") else int(number)))
        elif m.group(6):
            tokens.append(("id", m.group(6)))
        else:
            tokens.append(("op", m.group(7)))
    return tokens


class Struct(dict):
    def __init__(self, type_name, fields):
        super().__init__(fields)
        self.type_name = type_name


class GoReader:
    """Evaluates a Go expression (composite literals included) from a token list."""

    def __init__(self, tokens, structs, scope):
        self.t, self.i, self.structs, self.scope = tokens, 0, structs, scope

    def peek(self, k=0):
        return self.t[self.i + k] if self.i + k < len(self.t) else ("eof", None)

    def take(self, value=None):
        token = self.peek()
        if value is not None and token[1] != value:
            raise ValueError("expected %r, got %r" % (value, token))
        self.i += 1
        return token

    def skip_braces(self):
        depth = 0
        while True:
            kind, value = self.take()
            if value == "{":
                depth += 1
            elif value == "}":
                depth -= 1
                if depth == 0:
                    return

    def parse_type(self):
        """A type before a composite literal's `{`: returns its name (None for `[]…` or struct)."""
        if self.peek()[1] == "[":
            self.take("[")
            self.take("]")
            self.parse_type()
            return "[]"
        if self.peek()[1] == "struct":
            self.take()
            self.skip_braces()
            return "struct"
        name = self.take()[1]
        if self.peek()[1] == ".":
            self.take()
            name += "." + self.take()[1]
        if self.peek()[1] == "[":  # generic: testCase[T]
            self.take("[")
            self.parse_type()
            self.take("]")
        return name

    def composite(self, type_name):
        self.take("{")
        items, keyed = [], {}
        while self.peek()[1] != "}":
            if self.peek()[0] == "id" and self.peek(1)[1] == ":":
                key = self.take()[1]
                self.take(":")
                keyed[key] = self.element(type_name, key)
            else:
                items.append(self.element(type_name, None))
            if self.peek()[1] == ",":
                self.take()
        self.take("}")
        if type_name == "[]":
            return items
        base = type_name.split("[")[0]
        fields = self.structs.get(base, [])
        value = Struct(base, {name: None for name in fields})
        for name, item in zip(fields, items):
            value[name] = item
        value.update(keyed)
        return value

    def element(self, outer, key):
        """An element of a composite literal, whose type may be elided (`{opts: …}` in a slice)."""
        if self.peek()[1] == "{":
            return self.composite(self.elided.get((outer, key), "struct"))
        return self.expr()

    elided = {}

    def expr(self):
        left = self.term()
        while self.peek()[1] in ("+", "-"):
            op = self.take()[1]
            right = self.term()
            left = left + right if op == "+" else left - right
        return left

    def term(self):
        left = self.unary()
        while self.peek()[1] in ("*", "/"):
            op = self.take()[1]
            right = self.unary()
            if op == "*":
                left = left * right
            elif isinstance(left, int) and isinstance(right, int):
                left = int(left / right)  # Go's integer division truncates
            else:
                left = left / right
        return left

    def unary(self):
        kind, value = self.peek()
        if value == "&":
            self.take()
            return self.unary()
        if value == "-":
            self.take()
            return -self.unary()
        if value == "(":
            self.take()
            inner = self.expr()
            self.take(")")
            return inner
        if kind in ("num", "str"):
            self.take()
            return value
        if kind == "id":
            start = self.i
            name = self.take()[1]
            while self.peek()[1] == "." and self.peek(1)[0] == "id":
                self.take()
                name += "." + self.take()[1]
            if self.peek()[1] in ("{", "[") and (name.split(".")[-1] in self.structs or name in ("testCase", "testSize")):
                self.i = start
                return self.composite(self.parse_type())
            return self.lookup(name)
        if value == "[":
            return self.composite(self.parse_type())
        raise ValueError("cannot evaluate %r" % (value,))

    def lookup(self, name):
        if name in CONSTANTS:
            return CONSTANTS[name]
        parts = name.split(".")
        if parts[0] in self.scope:
            value = self.scope[parts[0]]
            for part in parts[1:]:
                value = value[part]
            return value
        raise ValueError("unknown name %s" % name)


def block(text, start):
    """The text between the `{` at or after `start` and its matching `}` (exclusive), and the end."""
    open_at = text.index("{", start)
    depth, i = 0, open_at
    in_string = None
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\" and in_string == '"':
                i += 2
                continue
            if c == in_string:
                in_string = None
        elif c in "\"`":
            in_string = c
        elif text.startswith("//", i):
            i = text.index("\n", i)
            continue
        elif c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return text[open_at + 1:i], i + 1
        i += 1
    raise ValueError("unbalanced braces")


def struct_fields(text):
    structs = {}
    for m in re.finditer(r"^type (\w+) struct\s*{", text, re.M):
        body, _ = block(text, m.end() - 1)
        fields = []
        for line in body.splitlines():
            line = line.split("//")[0].strip()
            words = line.replace(",", " ").split()
            if len(words) >= 2:  # `a, b T` or `a T`; an embedded type has one word
                fields.extend(words[:-1])
        structs[m.group(1)] = fields
    return structs


# --------------------------------------------------------------------------------------------
# Ports of the test-case types' methods (the Go code they stand for is in the comment above each)


class Options:
    """testutil.OptionsBuilder: options in the order added; arguments trimmed of empty ones at the end."""

    def __init__(self):
        self.options = collections.OrderedDict()

    def add(self, key):
        return self.options.setdefault(key, {})

    def __str__(self):
        parts = []
        for key, args in self.options.items():
            values = [""] * (max(args) + 1 if args else 0)
            for index, value in args.items():
                values[index] = go_v(value)
            while values and values[-1] == "":
                values.pop()
            parts.append("%s:%s" % (key, ":".join(values)))
        return "/".join(parts)


def size_url(r):  # processing_test.go sizeTestCase.URLOptions
    o = Options()
    if r["limit"] and r["limit"] > 0:
        o.add("max_result_dimension")[0] = r["limit"]
    o.add("resize").update({0: r["resizingType"], 1: r["width"] or 0, 2: r["height"] or 0})
    if r["enlarge"]:
        o.add("enlarge")[0] = 1
    if r["extend"]:
        o.add("extend")[0] = 1
    if r["extendAR"]:
        o.add("extend_aspect_ratio")[0] = 1
    if r["rotate"]:
        o.add("rotate")[0] = r["rotate"]
    pads = [r["paddingTop"] or 0, r["paddingRight"] or 0, r["paddingBottom"] or 0, r["paddingLeft"] or 0]
    if any(p > 0 for p in pads):
        o.add("padding").update(dict(enumerate(pads)))
    return str(o)


def size_string(r):  # sizeTestCase.String
    s = "%s:%dx%d" % (r["resizingType"], r["width"] or 0, r["height"] or 0)
    if r["limit"]:
        s += ":limit:%d" % r["limit"]
    if r["enlarge"]:
        s += "_en:true"
    if r["extend"]:
        s += "_ex:true"
    if r["extendAR"]:
        s += "_exAR:true"
    if r["rotate"]:
        s += "_rotate:%d" % r["rotate"]
    pads = [r["paddingTop"] or 0, r["paddingRight"] or 0, r["paddingBottom"] or 0, r["paddingLeft"] or 0]
    if any(p > 0 for p in pads):
        s += "_padding:%dx%dx%dx%d" % tuple(pads)
    return s


def offsets_string(x, y, dpr):
    s = ""
    if x or y:
        s += "_offset_%s_%s" % (go_f(x or 0), go_f(y or 0))
    if dpr and dpr > 0:
        s += "_dpr_%s" % go_g(dpr)
    return s


def resize_fill_url(r):  # crop_test.go resizeFillGravityTestCase.URLOptions
    o = Options()
    o.add("rs").update({0: "fill", 1: r["size"]["width"], 2: r["size"]["height"]})
    if r["gravity"]:
        args = o.add("g")
        args[0] = r["gravity"]
        if r["xOffset"]:
            args[1] = r["xOffset"]
        if r["yOffset"]:
            args[2] = r["yOffset"]
    if r["dpr"]:
        o.add("dpr")[0] = r["dpr"]
    return str(o)


def resize_fill_string(r):
    s = "resizeFill_%dx%d" % (r["size"]["width"], r["size"]["height"])
    if r["gravity"]:
        s += "_gravity_%s" % r["gravity"]
    return s + offsets_string(r["xOffset"], r["yOffset"], r["dpr"])


def crop_url(c):  # crop_test.go cropTestCase.URLOptions
    o = Options()
    args = o.add("crop")
    args.update({0: c["cropSize"]["width"], 1: c["cropSize"]["height"]})
    if c["cropGravity"]:
        args[2] = c["cropGravity"]
        if c["xOffset"]:
            args[3] = c["xOffset"]
        if c["yOffset"]:
            args[4] = c["yOffset"]
    if c["gravity"]:
        o.add("gravity")[0] = c["gravity"]
    if c["dpr"]:
        o.add("dpr")[0] = c["dpr"]
    return str(o)


def crop_string(c):
    s = ""
    if c["gravity"]:
        s += "_gravity_%s" % c["gravity"]
    if c["cropGravity"]:
        s += "_crop_gravity_%s" % c["cropGravity"]
    if c["cropSize"]["width"] > 0 and c["cropSize"]["height"] > 0:
        s += "_crop_%dx%d" % (c["cropSize"]["width"], c["cropSize"]["height"])
    s += offsets_string(c["xOffset"], c["yOffset"], c["dpr"])
    return s[1:] if s.startswith("_") else s


def extend_url(option):  # extend_test.go extendTestCase / extendArTestCase .URLOptions
    def url(e):
        o = Options()
        o.add("width")[0] = e["size"]["width"]
        o.add("height")[0] = e["size"]["height"]
        args = o.add(option)
        args[0] = 1
        if e["gravity"]:
            args[1] = e["gravity"]
            if e["xOffset"]:
                args[2] = e["xOffset"]
            if e["yOffset"]:
                args[3] = e["yOffset"]
        if e["dpr"]:
            o.add("dpr")[0] = e["dpr"]
        return str(o)
    return url


def extend_string(prefix):
    def string(e):
        s = "%s_%dx%d" % (prefix, e["size"]["width"], e["size"]["height"])
        if e["gravity"]:
            s += "_gravity_%s" % e["gravity"]
        return s + offsets_string(e["xOffset"], e["yOffset"], e["dpr"])
    return string


def effect_url(r):  # apply_filters_test.go effectTestCase.URLOptions
    return "blur:%s/sharpen:%s/pixelate:%d" % (go_f(r["blur"] or 0), go_f(r["sharpen"] or 0), r["pixelate"] or 0)


def effect_string(r):
    s = ""
    if r["blur"] and r["blur"] > 0:
        s += "_blur_%s" % go_f(r["blur"])
    if r["sharpen"] and r["sharpen"] > 0:
        s += "_sharpen_%s" % go_f(r["sharpen"])
    if r["pixelate"] and r["pixelate"] > 0:
        s += "_pixelate_%d" % r["pixelate"]
    return s[1:] if s.startswith("_") else s


def flatten_url(c):  # flatten_test.go flattenTestCase.URLOptions
    o = Options()
    o.add("resize").update({0: "fill", 1: 300, 2: 300})
    o.add("enlarge")[0] = 1
    o.add("padding")[0] = 100
    o.add("format")[0] = c["format"]
    if c["background"] is not None:
        o.add("background").update({0: c["background"].R, 1: c["background"].G, 2: c["background"].B})
    return str(o)


def padding_url(r):  # padding_test.go paddingTestCase.URLOptions
    return "dpr:%s/padding:%d:%d:%d:%d/background:f00/enlarge:1" % (
        go_f(r["dpr"] or 0), r["paddingTop"] or 0, r["paddingRight"] or 0, r["paddingBottom"] or 0, r["paddingLeft"] or 0)


def padding_string(r):
    return "dpr_%s_pad_%d_%d_%d_%d" % (go_g(r["dpr"] or 0), r["paddingTop"] or 0, r["paddingRight"] or 0,
                                      r["paddingBottom"] or 0, r["paddingLeft"] or 0)


def trim_url(r):  # trim_test.go trimTestCase.URLOptions
    o = Options()
    args = o.add("trim")
    args[0] = r["threshold"] or 0
    if r["color"] is not None:
        args[1] = "%02x%02x%02x" % (r["color"].R, r["color"].G, r["color"].B)
    if r["equalHor"]:
        args[2] = 1
    if r["equalVer"]:
        args[3] = 1
    return str(o)


def trim_string(r):
    s = "_trim_threshold_%d" % (r["threshold"] or 0)
    if r["color"] is not None:
        s += "_color_" + str(r["color"])
    if r["equalHor"]:
        s += "_equalHor"
    if r["equalVer"]:
        s += "_equalVer"
    return s[1:]


def watermark_url(w):  # watermark_test.go watermarkTestCase.URLOptions
    o = Options()
    args = o.add("watermark")
    args[0] = w["opacity"] or 0
    args[1] = w["position"]
    if w["xOffset"]:
        args[2] = w["xOffset"]
    if w["yOffset"]:
        args[3] = w["yOffset"]
    if w["scale"]:
        args[4] = w["scale"]
    if w["dpr"]:
        o.add("dpr")[0] = w["dpr"]
    if w["format"]:
        o.add("format")[0] = w["format"]
    return str(o)


def watermark_string(w):
    s = "%s_opacity_%s" % (w["position"], go_g(w["opacity"] or 0))
    if w["xOffset"] or w["yOffset"]:
        s += "_offset_%s_%s" % (go_g(w["xOffset"] or 0), go_g(w["yOffset"] or 0))
    if w["scale"]:
        s += "_scale_%s" % go_g(w["scale"])
    if w["dpr"]:
        s += "_dpr_%s" % go_g(w["dpr"])
    return s


def colorspace_url(tc, scope):  # colorspace_test.go colorspaceTestCase.URLOptions
    size = scope["colorspaceTestOutSize"]
    url = "resize:fill:%d:%d/enlarge:1/format:%s" % (size["width"], size["height"], tc["outFormat"])
    if tc["watermarkFile"]:
        url += "/watermark:0.5"
    return url


def preserve_hdr_url(tc, scope):  # colorspace_test.go preserveHDRTestCase.URLOptions
    size = scope["colorspaceTestOutSize"]
    return "resize:fill:%d:%d/enlarge:1/format:%s/preserve_hdr:%s" % (
        size["width"], size["height"], tc["outFormat"], go_t(tc["preserveHDR"]))


# type → (URLOptions, String, ImagePath); ShortName only sizeTestCase has.
OPTS = {
    "sizeTestCase": (size_url, size_string, lambda r: "geometry.png"),
    "resizeFillGravityTestCase": (resize_fill_url, resize_fill_string, lambda r: "geometry.png"),
    "cropTestCase": (crop_url, crop_string, lambda r: "geometry.png"),
    "extendTestCase": (extend_url("extend"), extend_string("extend"), lambda r: "geometry.png"),
    "extendArTestCase": (extend_url("extend_aspect_ratio"), extend_string("extendAr"), lambda r: "geometry.png"),
    "effectTestCase": (effect_url, effect_string, lambda r: "test-images/png/png.png"),
    "flattenTestCase": (flatten_url, None, lambda r: r["sourceFile"]),
    "paddingTestCase": (padding_url, padding_string, lambda r: "geometry.png"),
    "trimTestCase": (trim_url, trim_string, lambda r: r["sourceFile"]),
    "watermarkTestCase": (watermark_url, watermark_string, lambda r: r["sourceFile"]),
    "colorspaceTestCase": (colorspace_url, None, lambda r: r["sourceFile"]),
    "preserveHDRTestCase": (preserve_hdr_url, None, lambda r: r["sourceFile"]),
}
NEEDS_SCOPE = {"colorspaceTestCase", "preserveHDRTestCase"}
CONFIG_ENV = {"PreserveHDR": "IMGPROXY_PRESERVE_HDR", "UseLinearColorspace": "IMGPROXY_USE_LINEAR_COLORSPACE"}

Case = collections.namedtuple("Case", "name image options size interpretation hash_path env")


def url_options(opts, scope):
    function = OPTS[opts.type_name][0]
    return function(opts, scope) if opts.type_name in NEEDS_SCOPE else function(opts)


def read_go(path):
    with open(path) as f:
        return f.read()


def table_cases():
    """Every table-driven case of the vendored processing tests."""
    files = sorted(f for f in os.listdir(GO_DIR) if f.endswith("_test.go"))
    texts = {f: read_go(os.path.join(GO_DIR, f)) for f in files}
    structs = {}
    for text in texts.values():
        structs.update(struct_fields(text))
    structs["testSize"] = ["width", "height"]
    declared = {name for name in structs if name.endswith("TestCase") or name == "sizeTestCase"}
    unported = declared - set(OPTS) - {"rotateAndFlipTestCase"}
    if unported:
        raise SystemExit("no port of the Go test-case type(s) %s: the vendored tests changed" % ", ".join(sorted(unported)))
    # Elided element types: a `[]testCase[T]{ {opts: …} }` element is a testCase whose opts is a T.
    cases = []
    for file, text in texts.items():
        suites = dict(re.findall(r"func (Test\w+)\(t \*testing\.T\) {\s*suite\.Run\(t, new\((\w+)\)\)", text))
        suite_test = {v: k for k, v in suites.items()}
        package_scope = {}
        for m in re.finditer(r"^var (\w+) = (.+)$", text, re.M):
            package_scope[m.group(1)] = GoReader(tokenize(m.group(2)), structs, {}).expr()
        setup_env = {}
        for m in re.finditer(r"func \(s \*(\w+)\) SetupSubTest\(\) {", text):
            body, _ = block(text, m.end() - 1)
            path = re.search(r'WatermarkImage\.Path = s\.TestData\.Path\("([^"]+)"\)', body)
            if path:
                setup_env[m.group(1)] = {"IMGPROXY_WATERMARK_PATH": path.group(1)}
        run_test_case_sets_watermark = bool(re.search(r"WatermarkImage\.Path = s\.TestData\.Path\(tc\.opts\.watermarkFile\)", text))
        for m in re.finditer(r"^func \(s \*(\w+)\) (Test\w+)\(\) {", text, re.M):
            suite_type, method = m.group(1), m.group(2)
            body, _ = block(text, m.end() - 1)
            table = re.search(r"testCases := ", body)
            if suite_type not in suite_test or not table:
                continue
            scope = dict(package_scope)
            for local in re.finditer(r"^\s*(\w+) := (\w+{[^\n]*})\s*$", body[:table.start()], re.M):
                scope[local.group(1)] = GoReader(tokenize(local.group(2)), structs, scope).expr()
            reader = GoReader(tokenize(body[table.end():]), structs, scope)
            slice_type_start = reader.i
            reader.take("[")
            reader.take("]")
            element = reader.t[reader.i:reader.i + 4]
            reader.i = slice_type_start
            opts_type = None
            if element[0][1] == "testCase":
                opts_type = element[2][1]
            elif element[0][1] == "struct":
                fields_text = block(body, body.index("struct", table.end()))[0]
                opts_type = re.search(r"opts\s+(\w+)", fields_text).group(1)
            GoReader.elided = {("[]", None): "testCase", ("testCase", "opts"): opts_type, ("struct", "opts"): opts_type,
                               ("testCase", "outSize"): "testSize", ("struct", "outSize"): "testSize"}
            rows = reader.composite(reader.parse_type())
            # The loop: `for _, tc := range testCases { s.Run(<name>, func() { <body> }) }`
            loop = re.search(r"for _, tc := range testCases {\s*s\.Run\((.+?), func\(\) {", body)
            closure, _ = block(body, loop.end() - 1)
            seen = collections.Counter()
            for row in rows:
                opts = row["opts"]
                name = eval_name(loop.group(1), row, scope)
                seen[name] += 1
                if seen[name] > 1:
                    name = "%s#%02d" % (name, seen[name] - 1)
                env = dict(setup_env.get(suite_type, {}))
                for line in closure.splitlines():
                    line = line.strip()
                    assign = re.match(r"tc\.opts\.(\w+) = (.+)$", line)
                    if assign:
                        opts[assign.group(1)] = GoReader(tokenize(assign.group(2)), structs, {"tc": row}).expr()
                    setting = re.match(r"s\.Config\(\)\.Processing\.(\w+) = (.+)$", line)
                    if setting:
                        env[CONFIG_ENV[setting.group(1)]] = go_t(GoReader(tokenize(setting.group(2)), structs, {"tc": row}).expr())
                if run_test_case_sets_watermark and "runTestCase" in closure and opts.get("watermarkFile"):
                    env["IMGPROXY_WATERMARK_PATH"] = opts["watermarkFile"]
                full = "%s/%s/%s" % (suite_test[suite_type], method, name)
                interpretation = row.get("outInterpretation")
                cases.append(Case(full, OPTS[opts.type_name][2](opts), url_options(opts, scope),
                                  (row["outSize"]["width"], row["outSize"]["height"]),
                                  interpretation if interpretation and interpretation.value != 0 else None,
                                  os.path.join(TESTDATA, "test-hashes", full, "test.hash"), env))
    return cases


def eval_name(expression, row, scope):
    opts = row["opts"]
    expression = expression.strip()
    if expression == "tc.opts.ShortName()":
        return "%dx%d" % (opts["width"] or 0, opts["height"] or 0)
    if expression == "tc.opts.String()":
        return OPTS[opts.type_name][1](opts)
    m = re.match(r'tc\.opts\.name(?:\s*\+\s*"([^"]*)")?$', expression)
    if m:
        return opts["name"] + (m.group(1) or "")
    raise SystemExit("cannot read the sub-test name %r" % expression)


def rotate_flip_cases():
    """rotate_and_flip_test.go, whose cases its loops make (ported; checked against the file)."""
    text = read_go(os.path.join(GO_DIR, "rotate_and_flip_test.go"))
    for needle in ('rotates := []int{0, 90, 180, 270}', 'flips := []bool{false, true}', 'for i := range 8 {',
                   'fmt.Sprintf("orientation-%d.png", i)', '"img-%d_rotate-%v_flip-%v_%v_ar-%v"',
                   's.collectRotationsFlips(i, false)', 's.collectRotationsFlips(i, true)'):
        if needle not in text:
            raise SystemExit("rotate_and_flip_test.go changed (%r not found): update the port" % needle)

    def url(rotate, flip_h, flip_v, auto_rotate):
        o = Options()
        if rotate:
            o.add("rotate")[0] = rotate
        if flip_h:
            o.add("flip")[0] = 1
        if flip_v:
            o.add("flip")[1] = 1
        if not auto_rotate:
            o.add("auto_rotate")[0] = 0
        return str(o)

    def case(method, i, rotate, flip_h, flip_v, auto_rotate):
        key = "img-%d_rotate-%d_flip-%s_%s_ar-%s" % (i, rotate, go_t(flip_h), go_t(flip_v), go_t(auto_rotate))
        return Case("TestRotateAndFlip/%s/%s" % (method, key), "orientation-%d.png" % i,
                    url(rotate, flip_h, flip_v, auto_rotate), None, None,
                    os.path.join(TESTDATA, "test-hashes", "TestRotateAndFlip", method, key + ".hash"), {})

    cases = []
    for auto_rotate in (False, True):
        cases += [case("TestOrientationAutoRotate", i, 0, False, False, auto_rotate) for i in range(8)]
    for method, auto_rotate in (("TestRotateFlip", False), ("TestRotateFlipAutoRotate", True)):
        for i in range(8):
            for rotate in (0, 90, 180, 270):
                for flip_h in (False, True):
                    for flip_v in (False, True):
                        cases.append(case(method, i, rotate, flip_h, flip_v, auto_rotate))
    return cases


# --------------------------------------------------------------------------------------------
# imgproxy's geometry (processing/prepare.go), to tell which cases resample

OPTION_ALIASES = {"rs": "resize", "w": "width", "h": "height", "el": "enlarge", "ex": "extend", "exar": "extend_aspect_ratio",
                  "g": "gravity", "pd": "padding", "mrd": "max_result_dimension", "wm": "watermark", "c": "crop",
                  "rot": "rotate", "bl": "blur", "sh": "sharpen", "pix": "pixelate", "f": "format", "ext": "format"}


def parse_options(text):
    options = {}
    for part in filter(None, text.split("/")):
        name, *args = part.split(":")
        options[OPTION_ALIASES.get(name, name)] = args
    return options


def go_round(x):
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def scale_int(a, s):  # imath.Scale
    return 0 if a == 0 else go_round(a * s)


def scale_even(a, s):  # imath.ScaleToEven
    return 0 if a == 0 else int(round(a * s))


def min_non_zero(a, b):
    return b if a == 0 else a if b == 0 else min(a, b)


def imgproxy_scales(options, src_w, src_h):
    """(WScale, HScale) as imgproxy's CalcParams computes them for this source size."""
    def number(name, index=0, default=0.0):
        args = options.get(name, [])
        return float(args[index]) if len(args) > index and args[index] != "" else default

    def flag(name, index=0):
        args = options.get(name, [])
        return len(args) > index and args[index] in ("1", "t", "true")

    resize = options.get("resize", [])
    rtype = resize[0] if resize and resize[0] else "fit"
    width = int(number("resize", 1)) if len(resize) > 1 else int(number("width"))
    height = int(number("resize", 2)) if len(resize) > 2 else int(number("height"))
    enlarge = flag("enlarge") or flag("resize", 3)
    extend = flag("extend") or flag("resize", 4)
    extend_ar = flag("extend_aspect_ratio")
    dpr = number("dpr", 0, 1.0) or 1.0
    pads = [int(float(a)) if a else None for a in options.get("padding", [])] + [None] * 4
    top = pads[0] or 0
    right = pads[1] if pads[1] is not None else top
    bottom = pads[2] if pads[2] is not None else top
    left = pads[3] if pads[3] is not None else right
    mrd = int(number("max_result_dimension"))
    if int(number("rotate")) % 180 == 90:
        src_w, src_h = src_h, src_w

    def crop_size(orig, crop):
        return 0 if crop == 0 else int(crop) if crop >= 1 else max(1, scale_int(orig, crop))

    w_to_scale = min_non_zero(crop_size(src_w, number("crop", 0)), src_w)
    h_to_scale = min_non_zero(crop_size(src_h, number("crop", 1)), src_h)

    # calcScale
    wshrink = hshrink = 1.0
    sw, sh = float(w_to_scale), float(h_to_scale)
    dw, dh = float(width) or sw, float(height) or sh
    if dw != sw:
        wshrink = sw / dw
    if dh != sh:
        hshrink = sh / dh
    if wshrink != 1 or hshrink != 1:
        rt = rtype
        if rt == "auto":
            rt = "fill" if (sw - sh >= 0) == (dw - dh >= 0) else "fit"
        if width == 0 and rt != "force":
            wshrink = hshrink
        elif height == 0 and rt != "force":
            hshrink = wshrink
        elif rt == "fit":
            wshrink = hshrink = max(wshrink, hshrink)
        elif rt in ("fill", "fill-down"):
            wshrink = hshrink = min(wshrink, hshrink)
    dpr_scale = dpr
    if not enlarge:
        min_shrink = min(wshrink, hshrink)
        if min_shrink < 1:
            wshrink /= min_shrink
            hshrink /= min_shrink
            if not extend:
                dpr_scale /= min_shrink
        dpr_scale = min(dpr_scale, min(wshrink, hshrink))
    wshrink /= dpr_scale
    hshrink /= dpr_scale
    wshrink, hshrink = min(wshrink, sw), min(hshrink, sh)
    wscale, hscale = 1.0 / wshrink, 1.0 / hshrink

    def sizes(wscale, hscale, dpr_scale):
        tw, th = scale_int(width, dpr_scale), scale_int(height, dpr_scale)
        scw, sch = scale_int(w_to_scale, wscale), scale_int(h_to_scale, hscale)
        cw, ch = tw, th
        if rtype == "fill-down" and not enlarge:
            diff_w, diff_h = tw / scw, th / sch
            if diff_w > diff_h and diff_w > 1.0:
                cw, ch = scw, scale_int(scw, th / tw)
            elif diff_h > diff_w and diff_h > 1.0:
                cw, ch = scale_int(sch, tw / th), sch
        arw = arh = 0
        if extend_ar and tw > 0 and th > 0:
            ow, oh = min_non_zero(scw, cw), min_non_zero(sch, ch)
            diff_w, diff_h = tw / ow, th / oh
            if diff_h > diff_w:
                arw, arh = ow, scale_int(ow, th / tw)
            elif diff_w > diff_h:
                arw, arh = scale_int(oh, tw / th), oh
        return tw, th, scw, sch, cw, ch, arw, arh

    # limitScale
    if mrd > 0:
        tw, th, scw, sch, cw, ch, arw, arh = sizes(wscale, hscale, dpr_scale)
        ow, oh = min_non_zero(scw, cw), min_non_zero(sch, ch)
        if extend:
            ow, oh = max(ow, tw), max(oh, th)
        elif extend_ar:
            ow, oh = max(ow, arw), max(oh, arh)
        ow += scale_even(left, dpr_scale) + scale_even(right, dpr_scale)
        oh += scale_even(top, dpr_scale) + scale_even(bottom, dpr_scale)
        if ow > mrd or oh > mrd:
            down = mrd / max(ow, oh)
            wscale, hscale = max(wscale * down, 1.0 / w_to_scale), max(hscale * down, 1.0 / h_to_scale)
    return wscale, hscale


def source_size(name):
    try:
        with Image.open(os.path.join(TESTDATA, name)) as image:
            return image.size
    except OSError:
        if VIPS is None:
            return None
        with open(os.path.join(TESTDATA, name), "rb") as f:
            image = VIPS.load(f.read())
        try:
            return VIPS.v.vips_image_get_width(image), VIPS.v.vips_image_get_height(image)
        finally:
            VIPS.g.g_object_unref(image)


def resampling(case):
    """Why the case resamples (a reason), or None when it involves no resampling."""
    options = parse_options(case.options)
    for effect in ("blur", "sharpen", "pixelate"):
        if float((options.get(effect) or ["0"])[0] or 0) != 0:
            return effect
    if len(options.get("watermark", [])) > 4 and float(options["watermark"][4] or 0) != 0:
        return "watermark scale"
    size = source_size(case.image)
    if size is None:
        return "source size unknown"
    wscale, hscale = imgproxy_scales(options, *size)
    if wscale != 1 or hscale != 1:
        return "scale %.4g×%.4g" % (wscale, hscale)
    return None


# --------------------------------------------------------------------------------------------
# Pixel hashes as imgproxy's testutil computes them


class Vips:
    """libvips through ctypes (testutil/vips.c and dct2.c, step by step)."""

    def __init__(self):
        self.v = ctypes.CDLL(ctypes.util.find_library("vips") or "libvips.so.42")
        self.g = ctypes.CDLL(ctypes.util.find_library("gobject-2.0") or "libgobject-2.0.so.0")
        self.glib = ctypes.CDLL(ctypes.util.find_library("glib-2.0") or "libglib-2.0.so.0")
        if self.v.vips_init(b"imgproxy_processing") != 0:
            raise OSError("vips_init failed")
        self.v.vips_image_new_from_buffer.restype = ctypes.c_void_p
        self.v.vips_image_write_to_memory.restype = ctypes.c_void_p
        self.v.vips_image_write_to_memory.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
        self.v.vips_error_buffer.restype = ctypes.c_char_p
        self.v.vips_array_double_new.restype = ctypes.c_void_p
        self.v.vips_array_double_new.argtypes = [ctypes.POINTER(ctypes.c_double), ctypes.c_int]
        for name in ("vips_image_hasalpha", "vips_image_get_width", "vips_image_get_height", "vips_image_get_bands",
                     "vips_image_guess_interpretation", "vips_image_get_interpretation"):
            getattr(self.v, name).argtypes = [ctypes.c_void_p]
        self.g.g_object_unref.argtypes = [ctypes.c_void_p]

    def error(self, what):
        message = self.v.vips_error_buffer().decode("utf-8", "replace")
        self.v.vips_error_clear()
        return ValueError("%s: %s" % (what, message.strip()))

    def load(self, data):
        image = self.v.vips_image_new_from_buffer(data, ctypes.c_size_t(len(data)), b"", None)
        if not image:
            raise self.error("load")
        return image

    def op(self, images, name, image, *args):
        out = ctypes.c_void_p()
        if getattr(self.v, name)(ctypes.c_void_p(image), ctypes.byref(out), *args, None) != 0:
            raise self.error(name)
        images.append(out.value)
        return out.value

    def memory(self, image):
        size = ctypes.c_size_t()
        pointer = self.v.vips_image_write_to_memory(image, ctypes.byref(size))
        if not pointer:
            raise self.error("write_to_memory")
        data = ctypes.string_at(pointer, size.value)
        self.glib.g_free(ctypes.c_void_p(pointer))
        return data

    def interpretation(self, data):
        image = self.load(data)
        try:
            return self.v.vips_image_get_interpretation(image)
        finally:
            self.g.g_object_unref(image)

    def rgba(self, data):
        """testutil's vips_rgba_image_data: the answer made sRGB, with alpha, as raw bytes."""
        images = [self.load(data)]
        try:
            image = self.op(images, "vips_colourspace", images[0], ctypes.c_int(22))  # sRGB
            if not self.v.vips_image_hasalpha(image):
                image = self.op(images, "vips_addalpha", image)
            return self.memory(image)
        finally:
            for image in images:
                self.g.g_object_unref(image)

    def dct(self, data):
        import numpy as np
        images = [self.load(data)]
        try:
            interpretation = self.v.vips_image_guess_interpretation(images[0])
            is_bw = interpretation in (1, 26)
            image = self.op(images, "vips_colourspace", images[0], ctypes.c_int(28))  # scRGB
            w, h = self.v.vips_image_get_width(image), self.v.vips_image_get_height(image)
            image = self.op(images, "vips_resize", image, ctypes.c_double(min(64.0 / w, 1.0)),
                            b"vscale", ctypes.c_double(min(64.0 / h, 1.0)), b"kernel", ctypes.c_int(5))  # Lanczos3
            if self.v.vips_image_hasalpha(image):
                background = (ctypes.c_double * 3)(1.0, 0.0, 1.0)
                array = self.v.vips_array_double_new(background, 3)
                try:
                    image = self.op(images, "vips_flatten", image, b"background", ctypes.c_void_p(array))
                finally:
                    self.v.vips_area_unref(ctypes.c_void_p(array))
            image = self.op(images, "vips_colourspace", image, ctypes.c_int(13))  # Lab
            if is_bw:
                image = self.op(images, "vips_extract_band", image, ctypes.c_int(0))
            w, h, bands = (self.v.vips_image_get_width(image), self.v.vips_image_get_height(image),
                           self.v.vips_image_get_bands(image))
            pixels = np.frombuffer(self.memory(image), dtype=np.float32).reshape(h, w, bands).astype(np.float64)
        finally:
            for image in images:
                self.g.g_object_unref(image)
        # calc_raw_dct2: out[c][v][u] = a(u) a(v) Σ p(y,x,c) cos((2x+1)uπ/2w) cos((2y+1)vπ/2h), cosf in float
        u = np.arange(8)
        cos_x = np.cos(((2.0 * np.arange(w)[None, :] + 1.0) * u[:, None] * np.pi / (2.0 * w)).astype(np.float32)).astype(np.float64)
        cos_y = np.cos(((2.0 * np.arange(h)[None, :] + 1.0) * u[:, None] * np.pi / (2.0 * h)).astype(np.float32)).astype(np.float64)
        alpha_u = np.where(u == 0, 1.0 / math.sqrt(w), math.sqrt(2.0 / w))
        alpha_v = np.where(u == 0, 1.0 / math.sqrt(h), math.sqrt(2.0 / h))
        out = np.einsum("vy,yxc,ux->cvu", cos_y, pixels, cos_x) * alpha_v[None, :, None] * alpha_u[None, None, :]
        return out.astype(np.float32).reshape(-1)


def pillow_rgba(data):
    """The same bytes as testutil's vips_rgba_image_data, by Pillow, for 8- and 16-bit answers."""
    import numpy as np
    image = Image.open(io.BytesIO(data))
    if image.mode in ("I;16", "I;16B", "I;16L", "I"):
        grey = (np.asarray(image, dtype=np.uint32) >> 8).astype(np.uint8)
        return np.dstack([grey, grey, grey, np.full_like(grey, 255)]).tobytes()
    return image.convert("RGBA").tobytes()


def transparent_zeroed(rgba):
    """The RGBA bytes with the colour under every fully transparent pixel made 0,0,0 (libvips'
    `vips_embed` black, which imgproxy extends with)."""
    import numpy as np
    pixels = np.frombuffer(rgba, dtype=np.uint8).reshape(-1, 4).copy()
    pixels[pixels[:, 3] == 0] = 0
    return pixels.tobytes()


def load_hash(path):
    """testutil.LoadImageHash: a type byte, then 32 bytes (SHA-256) or a uint16 count of float32s (DCT)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[0] == 0:
        return "sha256", data[1:33]
    count = struct.unpack("<H", data[1:3])[0]
    return "dct", struct.unpack("<%df" % count, data[3:3 + 4 * count])


# --------------------------------------------------------------------------------------------

VIPS = None
SOURCE_FORMATS = {"png": "png", "gif": "gif", "bmp": "bmp", "tiff": "tiff", "jpg": "jpg", "jpeg": "jpg", "webp": "webp"}


def request_path(case):
    path = "/imgproxy/insecure/%s/plain/local:///%s" % (case.options, case.image) if case.options else \
        "/imgproxy/insecure/plain/local:///%s" % case.image
    if "format" not in parse_options(case.options):
        path += "@" + SOURCE_FORMATS[case.image.rsplit(".", 1)[1].lower()]
    return path


def get(base, path):
    try:
        with urllib.request.urlopen(base + path, timeout=TIMEOUT) as response:
            return response.status, response.headers.get("Content-Type"), response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.headers.get("Content-Type"), error.read()


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    easel = os.path.abspath(sys.argv[1])
    verbose = "-v" in sys.argv[2:]
    cases = table_cases() + rotate_flip_cases()
    missing = [c.name for c in cases if not os.path.exists(c.hash_path)]
    global VIPS
    try:
        vips = VIPS = Vips()
        rgba_of = vips.rgba
    except OSError as error:
        print("libvips not loadable (%s): SHA-256 by Pillow, no DCT hashes, no interpretations" % error)
        vips, rgba_of = None, pillow_rgba

    work = tempfile.mkdtemp(prefix="easel-imgproxy-processing.")
    groups = collections.OrderedDict()
    for case in cases:
        groups.setdefault(tuple(sorted(case.env.items())), []).append(case)
    results = []
    try:
        for n, (env, group) in enumerate(groups.items()):
            environment = {k: os.path.join(TESTDATA, v) if k == "IMGPROXY_WATERMARK_PATH" else v for k, v in env}
            config = {"origin": TESTDATA, "cacheDirectory": os.path.join(work, "cache-%d" % n)}
            server, base = easel_serve.start(easel, work, config, ["--allow-unsigned-ad-hoc"], environment)
            try:
                for case in group:
                    results.append((case,) + get(base, request_path(case)))
            finally:
                easel_serve.stop(server)
    finally:
        shutil.rmtree(work, ignore_errors=True)

    counts = collections.Counter()
    lines = []
    for case, status, content_type, body in results:
        path = request_path(case)
        reason = resampling(case)
        kind, expected = load_hash(case.hash_path) if os.path.exists(case.hash_path) else ("sha256", None)
        if case.size:
            counts["size total"] += 1
        if case.interpretation:
            counts["interpretation total"] += 1
        if kind == "sha256":
            counts["sha total" if reason is None else "resampled total"] += 1
        else:
            counts["dct total"] += 1
        if status != 200:
            lines.append(("STATUS", case.name, "expected 200, got %d: %s" % (
                status, body[:160].decode("utf-8", "replace").strip()), path))
            continue
        counts["ok"] += 1
        try:
            with Image.open(io.BytesIO(body)) as image:
                size = image.size
        except OSError as error:
            lines.append(("DECODE", case.name, str(error), path))
            continue
        if case.size:
            if size == case.size:
                counts["size equal"] += 1
            else:
                lines.append(("SIZE", case.name, "expected %dx%d, got %dx%d" % (case.size + size), path))
        if case.interpretation and vips:
            got = vips.interpretation(body)
            if got == case.interpretation.value:
                counts["interpretation equal"] += 1
            else:
                lines.append(("INTERPRETATION", case.name, "expected %s, got %s (%s)" % (
                    case.interpretation, INTERPRETATION_NAMES.get(got, got), content_type), path))
        if expected is None:
            continue
        if kind == "sha256":
            rgba = rgba_of(body)
            equal = hashlib.sha256(rgba).digest() == expected
            if reason is None:
                if equal:
                    counts["sha equal"] += 1
                elif hashlib.sha256(transparent_zeroed(rgba)).digest() == expected:
                    counts["sha transparent"] += 1
                    lines.append(("HASH", case.name, "only the colour under fully transparent pixels differs "
                                  "(imgproxy's is 0,0,0; %dx%d, %s)" % (size + (content_type,)), path))
                else:
                    lines.append(("HASH", case.name, "pixels differ from imgproxy's (%dx%d, %s)" % (size + (content_type,)), path))
            elif equal:
                counts["resampled equal"] += 1
            elif verbose:
                lines.append(("hash (resampled: %s)" % reason, case.name, "pixels differ", path))
        elif vips:
            got = vips.dct(body)
            if len(got) != len(expected):  # Go's dctHashDistance answers MaxFloat32
                lines.append(("DCT", case.name, "imgproxy's answer hashes %d channel(s) (%s), easel's %d" % (
                    len(expected) // 64, "grey" if len(expected) == 64 else "colour", len(got) // 64), path))
                continue
            distance = float(sum((float(a) - float(b)) ** 2 for a, b in zip(got, expected)) / len(expected))
            if distance <= 0.0005:
                counts["dct equal"] += 1
            else:
                lines.append(("DCT", case.name, "distance %.5f > 0.0005" % distance, path))

    entries = deviations()
    used, unexplained = set(), []
    for tag, name, message, path in lines:
        covering = next((pattern for pattern, _ in entries if pattern in "%s: %s" % (name, message)), None)
        if covering is not None:
            used.add(covering)
        elif tag in GATED:
            unexplained.append((tag, name, message, path))
        print("%s %s: %s  [%s]%s" % (tag, name, message, path, "  (listed: %s)" % covering if covering else ""))
    for name in missing:
        print("NO HASH FILE for %s (the port names the case otherwise than Go)" % name)
    print()
    print("imgproxy processing cases: %d (%d answered 200)" % (len(results), counts["ok"]))
    print("sizes equal %d/%d" % (counts["size equal"], counts["size total"]))
    print("hashes equal %d/%d (resample-free, SHA-256 of RGBA pixels)" % (counts["sha equal"], counts["sha total"]))
    print("  of the others, %d equal once the colour under fully transparent pixels is zeroed" % counts["sha transparent"])
    print("  information: resampled SHA-256 hashes equal %d/%d; DCT hashes within 0.0005 %d/%d; interpretations %d/%d"
          % (counts["resampled equal"], counts["resampled total"], counts["dct equal"], counts["dct total"],
             counts["interpretation equal"], counts["interpretation total"]))
    stale = [pattern for pattern, _ in entries if pattern not in used]
    print("listed deviations in use: %d of %d (%s)" % (len(used), len(entries), os.path.relpath(DEVIATIONS, ROOT)))
    for tag, name, message, path in unexplained:
        print("UNEXPLAINED %s %s: %s  [%s]" % (tag, name, message, path))
    for pattern in stale:
        print("STALE deviation (nothing needs it any more): " + pattern)
    return 1 if unexplained or stale or missing else 0


# What fails the run unless listed: a refused request, a wrong size, a resample-free pixel hash
# that differs, an answer that does not decode. (Resampled hashes, DCT distances and
# interpretations are reported only: easel's resampler is not libvips', and answers are 8-bit sRGB.)
GATED = {"STATUS", "SIZE", "HASH", "DECODE"}
DEVIATIONS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "Tests", "Compat", "imgproxy", "processing-deviations.txt")


def deviations():
    """`<text in "case name: message">  <reason>` lines of the deviations file."""
    return easel_serve.deviations(DEVIATIONS)


if __name__ == "__main__":
    sys.exit(main())
