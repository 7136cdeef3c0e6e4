@testable import EaselCodecs
import EaselTestSupport
import Foundation
import Testing

/// Text marks through Pango and cairo: the glyphs in the colour asked for on transparency,
/// markup's spans, bad markup refused with Pango's reason, and the marks drawn where a
/// watermark puts them, with a shadow when asked.
@Suite(.timeLimit(.minutes(1))) struct TextMarkTests {
    static func count(_ bitmap: Bitmap, _ test: ([UInt8]) -> Bool) -> Int {
        var found = 0
        for y in 0..<bitmap.height { for x in 0..<bitmap.width where test(bitmap.pixel(x: x, y: y)) { found += 1 } }
        return found
    }

    @Test func glyphsAreDrawnInTheirColourOnTransparency() throws {
        let mark = try TextMark(text: "Easel", font: "DejaVu Sans Bold", size: 48, color: (255, 0, 0)).render()
        #expect(mark.width > 100 && mark.width < 220 && mark.height > 40 && mark.height < 80, "\(mark.width)×\(mark.height)")
        #expect(mark.pixel(x: 0, y: 0)[3] == 0 && mark.pixel(x: mark.width - 1, y: mark.height - 1)[3] == 0)
        #expect(Self.count(mark) { $0 == [255, 0, 0, 255] } > 500, "solid red glyphs")
        #expect(Self.count(mark) { $0[3] > 0 && ($0[1] > 0 || $0[2] > 0) } == 0, "nothing but red")
        // Twice the size, about twice the sides.
        let large = try TextMark(text: "Easel", font: "DejaVu Sans Bold", size: 96, color: (255, 0, 0)).render()
        #expect(abs(Double(large.width) / Double(mark.width) - 2) < 0.15)
    }

    @Test func markupGivesSpansTheirOwnStyleAndBadMarkupIsRefused() throws {
        let mark = try TextMark(text: "<b>bold</b> <span foreground='#0000ff' size='xx-large'>blue</span>", markup: true, size: 24).render()
        #expect(Self.count(mark) { $0[2] > 200 && $0[0] < 40 && $0[3] == 255 } > 100, "blue glyphs")
        #expect(Self.count(mark) { $0[0] < 40 && $0[2] < 40 && $0[3] == 255 } > 100, "black glyphs")
        #expect {
            _ = try TextMark(text: "<b>unclosed", markup: true).render()
        } throws: { error in
            guard case CodecError.invalidParameters(let reason) = error else { return false }
            return reason.contains("text mark")
        }
        #expect(throws: CodecError.self) { _ = try TextMark(text: "").render() }
        #expect(throws: CodecError.self) { _ = try TextMark(text: "x", size: 5000).render() }
        #expect(throws: CodecError.self) { _ = try TextMark(text: String(repeating: "w", count: 4000), size: 400).render() }
        // Wrapping makes it narrower and taller.
        let line = try TextMark(text: "one two three four five six", size: 20).render()
        let wrapped = try TextMark(text: "one two three four five six", size: 20, maxWidth: 100).render()
        #expect(wrapped.width <= 110 && wrapped.height > 2 * line.height)
    }

    @Test func aTextMarkIsDrawnWhereTheWatermarkPutsItWithItsShadow() throws {
        var white = paintedOpaque(width: 400, height: 300) { _, _ in [255, 255, 255, 255] }
        white.markOpaque()
        let text = try TextMark(text: "MARK", font: "DejaVu Sans Bold", size: 40, color: (255, 0, 0)).render()
        let marked = try Watermark(mark: text, markIdentifier: "t", position: .southEast, offsetX: 10, offsetY: 10).process(white)
        func reds(_ bitmap: Bitmap, x: Range<Int>, y: Range<Int>) -> Int {
            var found = 0
            for py in y { for px in x where bitmap.pixel(x: px, y: py)[0] > 200 && bitmap.pixel(x: px, y: py)[1] < 60 { found += 1 } }
            return found
        }
        #expect(reds(marked, x: 390 - text.width..<390, y: 290 - text.height..<290) > 300, "red where asked")
        #expect(reds(marked, x: 0..<200, y: 0..<150) == 0, "nothing elsewhere")
        #expect(marked.isKnownOpaque)
        // A shadow darkens below and right of the glyphs; without one, that stays white.
        var shadowed = try Watermark(mark: text, markIdentifier: "t", position: .center)
        shadowed.shadowSigma = 3
        #expect(try shadowed.identifier != Watermark(mark: text, markIdentifier: "t", position: .center).identifier)
        let withShadow = try shadowed.process(white)
        let without = try Watermark(mark: text, markIdentifier: "t", position: .center).process(white)
        func grays(_ bitmap: Bitmap) -> Int { Self.count(bitmap) { $0[0] < 240 && abs(Int($0[0]) - Int($0[1])) < 8 } }
        #expect(grays(withShadow) > grays(without) + 200, "\(grays(withShadow)) vs \(grays(without))")
        #expect(reds(withShadow, x: 0..<400, y: 0..<300) > 300, "the glyphs stay on top")
    }

    @Test func marksAreDrawnFromSeveralThreadsAtOnce() async throws {
        let sizes = try await withThrowingTaskGroup(of: Int.self) { group in
            for index in 0..<8 {
                group.addTask { try TextMark(text: "thread \(index % 2)", size: 30).render().width }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(Set(sizes).count <= 2 && sizes.count == 8)
    }
}
