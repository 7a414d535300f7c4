/// A frame reduced to `size` × `size` cells, each the mean of its pixels as premultiplied RGBA
/// (R·A/255, G·A/255, B·A/255, A) in 0...255. Premultiplied, because a transparent pixel's
/// colour is nothing to compare and resizers average premultiplied values: so the grid of a
/// downscaled frame is close to the grid of the frame, and flattening onto a background
/// commutes with the means (`flattened(on:)`).
public struct FrameGrid: Sendable, Equatable {
    public let size: Int
    /// `size` × `size` × 4 values, cells row by row.
    public let values: [Double]

    public init(size: Int, values: [Double]) {
        precondition(values.count == size * size * 4, "a grid of \(size) × \(size) RGBA cells")
        self.size = size
        self.values = values
    }

    /// The grid of interleaved 8-bit pixels (`bands` 3 or 4; 3 is opaque), by area: cell
    /// (gx, gy) covers x in [gx·width/size, (gx+1)·width/size) and likewise for y, a pixel
    /// counting by the share of it inside (Pillow's BOX resize, which `PillowReference` uses, gives
    /// the same when the size is a multiple of `size`).
    public init(pixels: [UInt8], width: Int, height: Int, bands: Int = 4, size: Int = 8) {
        precondition(bands == 3 || bands == 4, "RGB or RGBA")
        precondition(pixels.count == width * height * bands, "pixels for \(width) × \(height) × \(bands)")
        var sums = [Double](repeating: 0, count: size * size * 4)
        var weights = [Double](repeating: 0, count: size * size)
        func spans(_ extent: Int) -> [[(cell: Int, share: Double)]] {
            (0..<extent).map { pixel in
                (0..<size).compactMap { cell in
                    let low = Double(cell) * Double(extent) / Double(size)
                    let high = Double(cell + 1) * Double(extent) / Double(size)
                    let share = min(high, Double(pixel + 1)) - max(low, Double(pixel))
                    return share > 0 ? (cell, share) : nil
                }
            }
        }
        let columns = spans(width)
        let rows = spans(height)
        for y in 0..<height {
            for x in 0..<width {
                let offset = (y * width + x) * bands
                let alpha = bands == 4 ? Double(pixels[offset + 3]) : 255
                let premultiplied = (0..<3).map { Double(pixels[offset + $0]) * alpha / 255 } + [alpha]
                for (row, rowShare) in rows[y] {
                    for (column, columnShare) in columns[x] {
                        let cell = row * size + column
                        let weight = rowShare * columnShare
                        weights[cell] += weight
                        for band in 0..<4 { sums[cell * 4 + band] += premultiplied[band] * weight }
                    }
                }
            }
        }
        self.init(size: size, values: sums.indices.map { sums[$0] / weights[$0 / 4] })
    }

    /// Cell (x, y): premultiplied R, G, B and A.
    public func cell(_ x: Int, _ y: Int) -> ArraySlice<Double> { values[(y * size + x) * 4..<(y * size + x) * 4 + 4] }

    /// The grid of the frame laid on an opaque `background` (RGB), as a JPEG encoder flattens it:
    /// each cell's colour plus the background times what its alpha leaves uncovered.
    public func flattened(on background: [UInt8]) -> FrameGrid {
        FrameGrid(
            size: size,
            values: values.indices.map { index in
                let band = index % 4
                guard band < 3 else { return 255 }
                return values[index] + Double(background[band]) * (1 - values[index - band + 3] / 255)
            })
    }

    /// Per cell, the largest difference of one of the four values from `other`'s (same size).
    public func differences(to other: FrameGrid) -> [Double] {
        precondition(size == other.size, "grids of one size")
        var largest = [Double](repeating: 0, count: size * size)
        for index in values.indices {
            let difference: Double = abs(values[index] - other.values[index])
            largest[index / 4] = max(largest[index / 4], difference)
        }
        return largest
    }
}
