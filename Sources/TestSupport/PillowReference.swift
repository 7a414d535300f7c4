import Foundation

/// The independent reference for animated images: Pillow 10.4 (from the reference venv, see
/// `ReferencePython`) makes animated GIF and WebP test sources and reads any image back as its
/// frames composited as a viewer shows them, reduced to numbers (`AnimationDescription`).
///
/// GIF is read block by block here and only each frame's pixels are Pillow's: Pillow's own
/// compositing keeps the previous frame's disposal for a frame that says 0 (unspecified), where
/// browsers and libvips keep the canvas. WebP frames come composited from libwebp's
/// WebPAnimDecoder through Pillow. Pillow 10.4 reads no AVIF.
public enum PillowReference {
    /// An animated GIF of `source`: each frame's rectangle at its offset with its own disposal,
    /// delay and transparency (palette index 0), one global palette of its colours, and a
    /// NETSCAPE2.0 loop block unless it plays once; frames of 16 rows or more are interlaced
    /// (Pillow's choice). Frame pixels are encoded by Pillow, the file
    /// around them is assembled here: Pillow's multi-frame writer chooses the rectangles itself
    /// and merges equal frames, so it could not make a file whose look depends on disposal.
    public static func makeAnimatedGIF(_ source: AnimationSource) async throws -> [UInt8] {
        try await make("gif", source)
    }

    /// An animated lossless WebP of `source` by Pillow (libwebp's WebPAnimEncoder) from the
    /// composited canvases, which the encoder cuts into rectangles, disposal and blending of its
    /// own; its loop count is `source.plays`.
    public static func makeAnimatedWebP(_ source: AnimationSource) async throws -> [UInt8] {
        try await make("webp", source)
    }

    /// Reads `bytes` (GIF, WebP, PNG, JPEG, …): format, canvas, loop count and each frame's
    /// duration and `grid` × `grid` summary of the composited frame, resized first with Pillow's
    /// Lanczos (premultiplied) to `resizedTo` when given, so that a thumbnail's frames can be
    /// compared with its source's.
    public static func describe(
        _ bytes: [UInt8], resizedTo size: (width: Int, height: Int)? = nil, grid: Int = 8
    ) async throws -> AnimationDescription {
        var request: [String: Any] = ["op": "describe", "bytes": Data(bytes).base64EncodedString(), "grid": grid]
        if let size { request["size"] = [size.width, size.height] }
        let output = try await ReferencePython.run(
            program, input: Array(try JSONSerialization.data(withJSONObject: request)))
        do {
            return try JSONDecoder().decode(AnimationDescription.self, from: Data(output))
        } catch {
            throw ReferencePythonError(
                description: "unreadable description (\(error)): \(String(decoding: output.prefix(500), as: UTF8.self))"
            )
        }
    }

    private struct Made: Decodable { let bytes: Data }

    private struct Request: Encodable {
        let op: String
        let source: AnimationSource

        func encode(to encoder: any Encoder) throws {
            try source.encode(to: encoder)
            var container = encoder.container(keyedBy: Key.self)
            try container.encode(op, forKey: .op)
        }

        enum Key: String, CodingKey { case op }
    }

    private static func make(_ op: String, _ source: AnimationSource) async throws -> [UInt8] {
        let input = try JSONEncoder().encode(Request(op: op, source: source))
        let output = try await ReferencePython.run(program, input: Array(input))
        return Array(try JSONDecoder().decode(Made.self, from: Data(output)).bytes)
    }

    /// The reference program: one request (JSON) on standard input, one answer on standard output.
    static let program = #"""
        import base64, io, json, math, struct, sys
        from PIL import Image

        request = json.load(sys.stdin)


        def compose(width, height, frames):
            """The canvas after each frame, as a browser shows it: transparent at first; a frame paints
            its opaque pixels over its rectangle; then its disposal: 2 clears the rectangle to
            transparent, 3 puts back the canvas as it was before the frame, 0 and 1 keep it."""
            canvas = Image.new("RGBA", (width, height), (0, 0, 0, 0))
            shown = []
            for f in frames:
                before = canvas.copy()
                canvas.alpha_composite(layer(f, width, height))
                shown.append(canvas.copy())
                if f["disposal"] == 2:
                    canvas.paste((0, 0, 0, 0), (f["x"], f["y"], f["x"] + f["width"], f["y"] + f["height"]))
                elif f["disposal"] == 3:
                    canvas = before
            return shown


        def patch(f):
            """A frame's rectangle alone: its fill with its patches (relative to the rectangle) on it."""
            rectangle = Image.new("RGBA", (f["width"], f["height"]), tuple(f["fill"]))
            for p in f["patches"]:
                rectangle.paste(tuple(p["fill"]), (p["x"], p["y"], p["x"] + p["width"], p["y"] + p["height"]))
            return rectangle


        def layer(f, width, height):
            """A frame's rectangle at its offset on a transparent canvas of the whole size."""
            canvas = Image.new("RGBA", (width, height), (0, 0, 0, 0))
            canvas.paste(patch(f), (f["x"], f["y"]))
            return canvas


        def gif(spec):
            """A GIF89a assembled around Pillow's LZW: each frame's rectangle is encoded alone by Pillow
            (one palette for all, index 0 transparent), then placed at its offset with its own Graphic
            Control Extension (delay, disposal, transparency) under one global palette and the NETSCAPE2.0
            loop block. Pillow's own multi-frame writer would pick the rectangles, merge equal frames and
            compare each frame with the one before whatever its disposal; this writes what was asked."""
            colours = []
            for f in spec["frames"]:
                for c in [f["fill"]] + [p["fill"] for p in f["patches"]]:
                    if c[3] == 255 and c[:3] not in colours:
                        colours.append(c[:3])
                    elif c[3] not in (0, 255):
                        raise ValueError("a GIF pixel is opaque or transparent")
            if len(colours) > 255:
                raise ValueError("more than 255 colours")
            palette = [0, 0, 0] + [v for c in colours for v in c]
            palette += [0] * (768 - len(palette))
            out = bytearray(b"GIF89a")
            # Logical screen: global table of 256 entries (size field 7), background index 0.
            out += struct.pack("<HHBBB", spec["width"], spec["height"], 0xF7, 0, 0)
            out += bytes(palette)
            # NETSCAPE2.0 counts the repeats after the first play (0: forever); playing once needs none.
            if spec["plays"] != 1:
                out += b"\x21\xff\x0bNETSCAPE2.0\x03\x01" + struct.pack("<H", max(0, spec["plays"] - 1)) + b"\x00"
            for f in spec["frames"]:
                rgba = patch(f)
                indices = Image.new("P", rgba.size, 0)
                indices.putpalette(palette)
                pixels = rgba.load()
                target = indices.load()
                for y in range(rgba.size[1]):
                    for x in range(rgba.size[0]):
                        r, g, b, a = pixels[x, y]
                        target[x, y] = 0 if a == 0 else 1 + colours.index([r, g, b])
                single = io.BytesIO()
                indices.save(single, "GIF", optimize=False, transparency=0)
                data = single.getvalue()
                # Skip the single file's header, screen descriptor and global table, then its extensions.
                flags = data[10]
                at = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
                while data[at] == 0x21:
                    at += 2
                    while data[at]:
                        at += data[at] + 1
                    at += 1
                assert data[at] == 0x2C, "an image descriptor"
                local = data[at + 9]
                if local & 0x80:
                    raise ValueError("Pillow wrote a local colour table")
                body_start = at + 10
                end = body_start + 1
                while data[end]:
                    end += data[end] + 1
                end += 1
                if f["duration"] % 10:
                    raise ValueError("a GIF delay is whole centiseconds")
                delay = f["duration"] // 10
                out += b"\x21\xf9\x04" + bytes([(f["disposal"] << 2) | 1]) + struct.pack("<H", delay) + b"\x00\x00"
                # The descriptor's flags as Pillow wrote them: it interlaces frames of 16 rows or more.
                out += b"\x2c" + struct.pack("<HHHH", f["x"], f["y"], f["width"], f["height"]) + bytes([local])
                out += data[body_start:end]
            out += b"\x3b"
            return bytes(out)


        def webp(spec):
            """An animated WebP by Pillow (libwebp's WebPAnimEncoder), lossless: the composited canvas of
            each frame, which the encoder cuts into rectangles and disposal and blend modes of its own."""
            shown = compose(spec["width"], spec["height"], spec["frames"])
            out = io.BytesIO()
            shown[0].save(
                out, "WEBP", save_all=True, append_images=shown[1:], duration=[f["duration"] for f in spec["frames"]],
                loop=spec["plays"], lossless=True, quality=100, method=4)
            return out.getvalue()


        def summary(rgba, grid, source=None):
            """Premultiplied means (R·A/255, G·A/255, B·A/255, A) over a grid × grid box grid and over
            the whole frame, the share of pixels with alpha < 128, and which cells are flat: one colour
            over the cell's footprint in `source` (the frame before resizing) grown by the reach of a
            Lanczos-3 kernel at that scale, so that no edge of the source can move the cell's mean."""
            premultiplied = rgba.convert("RGBa")
            cells = list(premultiplied.resize((grid, grid), Image.BOX).tobytes())
            alpha = rgba.getchannel("A").histogram()
            total = rgba.size[0] * rgba.size[1]
            mean = []
            for values in premultiplied.split():
                histogram = values.histogram()
                mean.append(sum(i * n for i, n in enumerate(histogram)) / total)
            source = (source or rgba).convert("RGBa")
            width, height = source.size
            reach = 0
            if source.size != rgba.size:
                reach = math.ceil(3 * max(width / rgba.size[0], height / rgba.size[1])) + 1
            flat = []
            for gy in range(grid):
                for gx in range(grid):
                    box = (max(0, math.floor(gx * width / grid) - reach),
                           max(0, math.floor(gy * height / grid) - reach),
                           min(width, math.ceil((gx + 1) * width / grid) + reach),
                           min(height, math.ceil((gy + 1) * height / grid) + reach))
                    flat.append(all(low == high for low, high in source.crop(box).getextrema()))
            return {"grid": cells, "mean": mean, "transparent": sum(alpha[:128]) / total, "flat": flat}


        def gif_frames(data):
            """A GIF's frames as a browser shows them, and its loop count: each image block is cut out
            into a GIF of its own (its palette, transparency and interlace kept) that Pillow decodes, and
            the frames are composited here by the GIF89a rules as browsers apply them — transparent
            canvas; 1 and 0 keep, 2 clears the rectangle to transparent, 3 restores the canvas from
            before. Not Pillow's own seek(): 10.4 keeps the previous frame's disposal for a frame that
            says 0, so after a disposal-3 frame it restores where a browser keeps."""
            width, height, flags = struct.unpack("<HHB", data[6:11])
            at = 13
            global_table = b""
            if flags & 0x80:
                global_table = data[at:at + (3 << ((flags & 7) + 1))]
                at += len(global_table)
            canvas = Image.new("RGBA", (width, height), (0, 0, 0, 0))
            loop, control, frames = None, None, []
            while at < len(data) and data[at] != 0x3B:
                kind = data[at]
                if kind == 0x21:
                    label = data[at + 1]
                    at += 2
                    blocks = []
                    while data[at]:
                        blocks.append(data[at + 1:at + 1 + data[at]])
                        at += data[at] + 1
                    at += 1
                    if label == 0xF9 and blocks:
                        control = blocks[0]
                    elif label == 0xFF and len(blocks) >= 2 and blocks[0] in (b"NETSCAPE2.0", b"ANIMEXTS1.0") \
                            and len(blocks[1]) >= 3 and blocks[1][0] == 1:
                        loop = struct.unpack("<H", blocks[1][1:3])[0]
                elif kind == 0x2C:
                    x, y, w, h, image_flags = struct.unpack("<HHHHB", data[at + 1:at + 10])
                    start = at
                    at += 10
                    if image_flags & 0x80:
                        at += 3 << ((image_flags & 7) + 1)
                    at += 1
                    while data[at]:
                        at += data[at] + 1
                    at += 1
                    disposal = (control[0] >> 2) & 7 if control else 0
                    delay = struct.unpack("<H", control[1:3])[0] if control else 0
                    alone = bytearray(b"GIF89a" + struct.pack("<HHBBB", w, h, flags, 0, 0))
                    alone += global_table
                    if control:
                        alone += b"\x21\xf9\x04" + bytes([control[0] & 1]) + b"\x00\x00" + bytes([control[3]]) + b"\x00"
                    alone += b"\x2c" + struct.pack("<HHHH", 0, 0, w, h) + data[start + 9:at] + b"\x3b"
                    patch = Image.open(io.BytesIO(bytes(alone))).convert("RGBA")
                    before = canvas.copy()
                    layer = Image.new("RGBA", (width, height), (0, 0, 0, 0))
                    layer.paste(patch, (x, y))
                    canvas.alpha_composite(layer)
                    frames.append({"image": canvas.copy(), "duration": delay * 10, "region": [x, y, w, h],
                                   "disposal": disposal})
                    if disposal == 2:
                        canvas.paste((0, 0, 0, 0), (x, y, x + w, y + h))
                    elif disposal == 3:
                        canvas = before
                    control = None
                else:
                    raise ValueError(f"GIF block 0x{kind:02x} at {at}")
            return width, height, loop, frames


        def describe(data, size, grid):
            image = Image.open(io.BytesIO(data))
            if image.format == "GIF":
                width, height, loop, frames = gif_frames(data)
            else:
                width, height = image.size
                loop = image.info.get("loop")
                frames = []
                for index in range(getattr(image, "n_frames", 1)):
                    image.seek(index)
                    rgba = image.convert("RGBA")  # loads the frame, which sets its duration in info
                    frames.append({"image": rgba, "duration": image.info.get("duration", 0)})
            for frame in frames:
                source = frame.pop("image")
                rgba = source.resize(tuple(size), Image.LANCZOS) if size is not None else source
                frame.update(summary(rgba, grid, source))
            return {"format": image.format, "width": width, "height": height, "loop": loop, "frames": frames}


        op = request["op"]
        if op == "describe":
            result = describe(base64.b64decode(request["bytes"]), request.get("size"), request.get("grid", 8))
        else:
            result = {"bytes": base64.b64encode(gif(request) if op == "gif" else webp(request)).decode()}
        json.dump(result, sys.stdout)
        """#
}
