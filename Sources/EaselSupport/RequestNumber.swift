/// The one reader of numbers that come from requests (URL options, query parameters, presets,
/// hints): plain decimal text only, and always within a declared range.
///
/// Every whole number a request may carry is at most `largest` in magnitude (2³¹ − 1), so that
/// the sum of four of them or the product of two is an `Int` whatever arithmetic follows; a
/// style that needs less declares its own range. Decimals are finite (no `inf`, `nan`, hex
/// floats or exponents past the range), so an `Int(checked:)` of one never saturates by surprise.
///
/// ```swift
/// guard let side = RequestNumber.whole("300", in: 0...8192) else { throw … }
/// ```
package enum RequestNumber {
    /// The largest magnitude of any whole number in a request.
    package static let largest = Int(Int32.max)
    /// The widest range a request's whole number may have.
    package static let anyWhole: ClosedRange<Int> = -largest...largest
    /// The widest range a request's decimal may have.
    package static let anyDecimal: ClosedRange<Double> = -Double(largest)...Double(largest)

    /// `text` as a whole number in `range`: an optional sign and 1 to 19 decimal digits
    /// (nothing else, no spaces); nil otherwise.
    /// - Complexity: O(n) in the length of `text`.
    package static func whole<S: StringProtocol>(_ text: S, in range: ClosedRange<Int> = 0...largest) -> Int? {
        let utf8 = text.utf8
        var digits = utf8[...]
        if let first = digits.first, first == UInt8(ascii: "-") || first == UInt8(ascii: "+") { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }),
              let value = Int(String(text)) else { return nil }
        return range.clamped(to: anyWhole).contains(value) ? value : nil
    }

    /// `text` as a finite decimal in `range`: an optional sign, digits with at most one point, and
    /// an optional exponent (`1e3`); never `inf`, `nan` or a hex float. Nil otherwise.
    /// - Complexity: O(n) in the length of `text`.
    package static func decimal<S: StringProtocol>(_ text: S, in range: ClosedRange<Double> = anyDecimal) -> Double? {
        guard !text.isEmpty, text.utf8.count <= 64,
              text.utf8.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "-")
                  || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }),
              let value = Double(String(text)), value.isFinite else { return nil }
        return range.clamped(to: anyDecimal).contains(value) ? value : nil
    }
}
