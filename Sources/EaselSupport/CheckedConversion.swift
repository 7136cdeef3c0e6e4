/// The one way Easel turns a floating-point value into an integer.
///
/// Swift's `Int(someDouble)` stops the process when the value is NaN, infinite or out of range
/// — one degenerate image (a 0×0 header, a scale of 0/0) was enough to take a server down. Every
/// conversion in `Sources/` goes through `init(checked:rounding:)` instead, which never traps:
/// NaN becomes 0, and values beyond the type's range become its nearest bound. Geometry then
/// clamps the result where it needs a positive side (`max(1, …)`).
///
/// ```swift
/// let side = max(1, Int(checked: Double(width) * scale, rounding: .toNearestOrAwayFromZero))
/// ```
extension FixedWidthInteger {
    /// `value` rounded by `rule`, clamped to `Self.min...Self.max`; NaN is 0.
    /// - Complexity: O(1), no allocation; in hot loops it compiles to a few compares.
    @inlinable @inline(__always)
    package init<Source: BinaryFloatingPoint>(checked value: Source, rounding rule: FloatingPointRoundingRule = .towardZero) {
        let rounded = value.rounded(rule)
        if rounded.isNaN {
            self = 0
        } else if let exact = Self(exactly: rounded) {
            self = exact
        } else {
            self = rounded < 0 ? Self.min : Self.max
        }
    }
}

extension Int {
    /// `a × b`, or nil when it does not fit (sides read from a header can be up to 2³²−1 each).
    @inlinable
    package static func checkedProduct(_ a: Int, _ b: Int) -> Int? {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? nil : product
    }
}
