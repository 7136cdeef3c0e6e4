import EaselCodecs

/// Names every URL style shares: gravities and colours.
extension ImagePlan {
    /// Gravity names shared by the URL styles: imgproxy's (`ce`, `no`, `so`, `ea`, `we`,
    /// `noea`, `nowe`, `soea`, `sowe`, `sm`) and the native ones (`c`, `n`, …, `entropy`).
    public static func gravity(named name: Substring) -> Gravity? {
        switch name {
        case "ce", "c", "center", "centre": .center
        case "no", "n", "north": .north
        case "so", "s", "south": .south
        case "ea", "e", "east": .east
        case "we", "w", "west": .west
        case "noea", "ne": .northEast
        case "nowe", "nw": .northWest
        case "soea", "se": .southEast
        case "sowe", "sw": .southWest
        case "sm", "smart", "attention": .smart(.attention)
        case "entropy": .smart(.entropy)
        case "face", "faces": .smart(.face)
        default: nil
        }
    }

    /// A colour as `RRGGBB`, `RGB` (hex, an optional `#`) or a CSS basic colour name.
    public static func colour(_ text: Substring) -> (red: UInt8, green: UInt8, blue: UInt8)? {
        let named: [Substring: (UInt8, UInt8, UInt8)] = [
            "white": (255, 255, 255), "black": (0, 0, 0), "red": (255, 0, 0), "green": (0, 128, 0), "blue": (0, 0, 255),
            "yellow": (255, 255, 0), "gray": (128, 128, 128), "grey": (128, 128, 128), "silver": (192, 192, 192),
            "orange": (255, 165, 0), "purple": (128, 0, 128), "navy": (0, 0, 128), "teal": (0, 128, 128),
        ]
        let lower = Substring(text.lowercased())
        if let colour = named[lower] { return colour }
        let hex = lower.hasPrefix("#") ? lower.dropFirst() : lower
        // ASCII hex digits only (`isHexDigit` also takes fullwidth forms).
        let values = hex.compactMap { $0.isASCII ? $0.hexDigitValue : nil }
        guard values.count == hex.count, values.count == 3 || values.count == 6 else { return nil }
        let digits = values.count == 3 ? values.flatMap { [$0, $0] } : values
        func byte(_ i: Int) -> UInt8 { UInt8(digits[i] * 16 + digits[i + 1]) }
        return (byte(0), byte(2), byte(4))
    }
}
