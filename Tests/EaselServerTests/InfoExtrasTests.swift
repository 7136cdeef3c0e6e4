import EaselCodecs
@testable import EaselServer
import EaselSupport
import EaselTestSupport
import Foundation
import HummingbirdTesting
import NIOCore
import Testing

/// `/info`'s extras, natively and in imgproxy's info form: a palette, perceptual hashes (the
/// `imagehash` library's, recomputed in Python), the crop a size and gravity would take, the
/// faces and the mean colour.
@Suite(.timeLimit(.minutes(3))) struct InfoExtrasTests {
    static func json(_ response: TestResponse) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(buffer: response.body)) as? [String: Any], "\(String(buffer: response.body))")
    }

    /// The face canvas both face tests use (its face box at 746,450, 95 × 95; the distractor at
    /// 90,60), painted and encoded once.
    static let canvas = try! ImageEncoder.encode(try! faceCanvas(face: (720, 420), loud: (90, 60)), as: .png())

    /// Three bands, red over half the image, green over 30 %, blue over 20 %.
    static let bands = painted(width: 200, height: 100) { x, _ in
        x < 100 ? [255, 0, 0, 255] : (x < 160 ? [0, 255, 0, 255] : [0, 0, 255, 255])
    }

    @Test func thePaletteNamesTheImagesColoursMostPixelsFirst() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try ImageEncoder.encode(Self.bands, as: .png()).write(to: server.origin.child("bands.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let native = try Self.json(try await get(client, "/info/bands.png?palette=5"))
            let palette = try #require(native["palette"] as? [[String: Any]])
            // (The preview's resize blends a few columns where the bands meet: small extra
            // colours after the three.)
            try #require(palette.count >= 3 && palette.count <= 5, "\(palette)")
            func rgb(_ entry: [String: Any]) -> [Int] {
                let hex = (entry["color"] as? String ?? "#000000").dropFirst()
                return stride(from: 0, to: 6, by: 2).map { Int(hex.dropFirst($0).prefix(2), radix: 16) ?? -1 }
            }
            for (entry, expected) in zip(palette, [[255, 0, 0], [0, 255, 0], [0, 0, 255]]) {
                #expect(zip(rgb(entry), expected).allSatisfy { abs($0 - $1) <= 16 }, "\(entry) is near \(expected)")
            }
            let shares = palette.compactMap { $0["share"] as? Double }
            #expect(abs(shares[0] - 0.5) < 0.05 && abs(shares[1] - 0.3) < 0.05 && abs(shares[2] - 0.2) < 0.05, "\(shares)")
            #expect(abs(shares.reduce(0, +) - 1) < 0.001)
            let imgproxy = try Self.json(try await get(client, "/imgproxy/info/insecure/palette:2/plain/local:///bands.png"))
            let two = try #require(imgproxy["palette"] as? [[String: Any]])
            // Half the pixels are red, the other half green or blue: red stands alone.
            #expect(two.count == 2 && two.allSatisfy { $0["A"] as? Int == 255 }, "\(two)")
            #expect(two.contains { ($0["R"] as? Int ?? 0) >= 240 && ($0["G"] as? Int ?? 255) <= 20 && ($0["B"] as? Int ?? 255) <= 20 }, "\(two)")
            #expect(try await get(client, "/info/bands.png?palette=1").status == .badRequest)
            #expect(try await get(client, "/info/bands.png?palette=257").status == .badRequest)
            #expect(try await get(client, "/imgproxy/info/insecure/p:300/plain/local:///bands.png").status == .badRequest)
        }
    }

    @Test func perceptualHashesMatchTheImagehashLibraryAndSurviveAResize() async throws {
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        let cat = try ImageDecoder.decode(catJPEG)
        try ImageEncoder.encode(try Resize(width: 300, height: 300).process(cat), as: .jpeg(quality: 60)).write(to: server.origin.child("small.jpg"))
        try Data(contentsOf: sampleURL("rocket-launchpad.jpg")).write(to: server.origin.child("rocket.jpg"))
        let found = Locked([String: (dhash: UInt64, phash: UInt64)]())
        try await server.test { (client: any TestClientProtocol) async throws in
            for name in ["cat.jpg", "small.jpg", "rocket.jpg"] {
                let object = try Self.json(try await get(client, "/info/\(name)?hashes=1"))
                let pair = try #require(object["hashes"] as? [String: String])
                let dhash = try #require(pair["dhash"].flatMap { UInt64($0, radix: 16) }), phash = try #require(pair["phash"].flatMap { UInt64($0, radix: 16) })
                #expect(pair["dhash"]?.count == 16 && pair["phash"]?.count == 16)
                found.withLock { $0[name] = (dhash, phash) }
            }
        }
        let hashes = found.withLock { $0 }
        let cat0 = try #require(hashes["cat.jpg"]), small = try #require(hashes["small.jpg"]), rocket = try #require(hashes["rocket.jpg"])
        // A smaller, recompressed copy is near; another photo is far.
        #expect(ImageAnalysis.hammingDistance(cat0.phash, small.phash) <= 8)
        #expect(ImageAnalysis.hammingDistance(cat0.dhash, small.dhash) <= 10)
        #expect(ImageAnalysis.hammingDistance(cat0.phash, rocket.phash) >= 20)
        #expect(ImageAnalysis.hammingDistance(cat0.dhash, rocket.dhash) >= 16)

        // The definitions are imagehash's: on the same 100 px previews, its hashes and ours
        // differ in a few bits (its resizer and ours round differently, which flips the bits of
        // nearly equal neighbours in flat regions): at most 8 of 64 on any image.
        let python = AutoQualityTests.python()
        try #require(FileManager.default.isExecutableFile(atPath: python), "no Python with imagehash at \(python): run `make deps`")
        let directory = try TemporaryDirectory()
        let names = ["astronaut.jpg", "chelsea-cat.jpg", "coffee-cup.jpg", "rocket-launchpad.jpg", "hubble-deep-field.jpg", "cameraman-gray.jpg"]
        let script = """
            import sys, imagehash
            from PIL import Image
            with open(sys.argv[1], "w") as out:
                for path in sys.argv[2:]:
                    image = Image.open(path)
                    out.write("%s %s\\n" % (imagehash.dhash(image), imagehash.phash(image)))
            """
        // (The previews and our hashes off the cooperative pool.)
        let ours = try await offThePool { () throws -> [(UInt64, UInt64)] in
            try names.map { name in
                let decoded = try ImageDecoder.decode(try Data(contentsOf: sampleURL(name)), covering: (100, 100))
                let preview = try Resize(width: 100, height: 100).process(decoded)
                try ImageEncoder.encode(preview, as: .png()).write(to: directory.child("\(name).png"))
                return (try ImageAnalysis.differenceHash(preview), try ImageAnalysis.perceptualHash(preview))
            }
        }
        let arguments = ["-c", script, directory.child("out.txt").path] + names.map { directory.child("\($0).png").path }
        #expect(try await runToolOffThePool(python, arguments, timeout: 120), "imagehash ran")
        let lines = try String(contentsOf: directory.child("out.txt"), encoding: .utf8).split(separator: "\n")
        #expect(lines.count == ours.count)
        var distances: [Int] = []
        for (line, mine) in zip(lines, ours) {
            let theirs = line.split(separator: " ").compactMap { UInt64($0, radix: 16) }
            try #require(theirs.count == 2, "\(line)")
            distances += [ImageAnalysis.hammingDistance(theirs[0], mine.0), ImageAnalysis.hammingDistance(theirs[1], mine.1)]
        }
        #expect(distances.allSatisfy { $0 <= 8 }, "dHash and pHash distances to imagehash's: \(distances)")
        #expect(distances.reduce(0, +) <= 3 * distances.count, "\(distances)")
    }

    @Test func theCropIsWhereTheGravityWouldPutIt() async throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try await offThePool { Self.canvas }.write(to: server.origin.child("canvas.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            func crop(_ query: String) async throws -> [String: Any] {
                let object = try Self.json(try await get(client, "/info/canvas.png?\(query)"))
                return try #require(object["crop"] as? [String: Any], "\(query)")
            }
            let corner = try await crop("crop=300x200&gravity=se")
            #expect(corner["x"] as? Int == 700 && corner["y"] as? Int == 500 && corner["width"] as? Int == 300 && corner["height"] as? Int == 200)
            // (Faces are looked for at twice the window's size, as in processing: a window of
            // 600 finds this one.)
            let face = try await crop("crop=600x600&gravity=face&faces=1")
            let (x, y) = (try #require(face["x"] as? Int), try #require(face["y"] as? Int))
            // The face as the detector finds it (its box within the head's, 746,450, 95 × 95).
            let found = try #require(try Self.json(try await get(client, "/info/canvas.png?faces=1"))["faces"] as? [[String: Any]])
            try #require(found.count == 1, "\(found)")
            let (fx, fy) = (try #require(found[0]["x"] as? Int), try #require(found[0]["y"] as? Int))
            let (fw, fh) = (try #require(found[0]["width"] as? Int), try #require(found[0]["height"] as? Int))
            #expect(abs(fx - 746) < 30 && abs(fy - 450) < 30 && fx + fw <= 841 + 10)
            #expect(x <= fx && x + 600 >= fx + fw && y <= fy && y + 600 >= fy + fh, "the face \(found[0]) inside \(face)")
            let attention = try await crop("crop=600x600&gravity=sm")
            #expect((attention["x"] as? Int ?? 1000) + 600 < 746, "attention goes to the distractor: \(attention)")
            // imgproxy's: relative coordinates; sides below 1 are fractions of the source.
            let imgproxy = try Self.json(try await get(client, "/imgproxy/info/insecure/crop:0.5:0.5:ce/plain/local:///canvas.png"))
            let relative = try #require(imgproxy["crop"] as? [String: Double])
            #expect(relative == ["left": 0.25, "top": 0.25, "width": 0.5, "height": 0.5])
            #expect(try await get(client, "/info/canvas.png?crop=300").status == .badRequest)
            #expect(try await get(client, "/info/canvas.png?crop=300x200&gravity=up").status == .badRequest)
        }
    }

    @Test func facesAndTheMeanColourAreListedWhenAskedFor() async throws {
        try #require(FaceDetector.isAvailable, "OpenCV's cascades (opencv-data) are installed by make deps")
        let server = try TestServer { $0.allowUnsignedAdHoc = true }
        try await offThePool { Self.canvas }.write(to: server.origin.child("canvas.png"))
        try ImageEncoder.encode(Self.bands, as: .png()).write(to: server.origin.child("bands.png"))
        try await server.test { (client: any TestClientProtocol) async throws in
            let native = try Self.json(try await get(client, "/info/canvas.png?faces=1"))
            let faces = try #require(native["faces"] as? [[String: Any]])
            try #require(faces.count == 1, "\(faces)")
            let (x, y) = (try #require(faces[0]["x"] as? Int), try #require(faces[0]["y"] as? Int))
            // The face's box is at 746,450, 95 × 95 (within the detector's margin).
            #expect(abs(x - 746) < 30 && abs(y - 450) < 30, "\(faces[0])")
            let imgproxy = try Self.json(try await get(client, "/imgproxy/info/insecure/do:1/plain/local:///canvas.png"))
            let objects = try #require(imgproxy["objects"] as? [[String: Any]])
            #expect(objects.count == 1 && objects[0]["class_name"] as? String == "face")
            #expect(abs((objects[0]["left"] as? Double ?? 0) - 0.746) < 0.03, "\(objects)")
            #expect(try Self.json(try await get(client, "/info/canvas.png"))["faces"] == nil, "only when asked for")

            let average = try Self.json(try await get(client, "/imgproxy/info/insecure/avg:1/plain/local:///bands.png"))
            let mean = try #require(average["average"] as? [String: Int])
            #expect(abs(mean["R", default: 0] - 128) <= 3 && abs(mean["G", default: 0] - 77) <= 3 && abs(mean["B", default: 0] - 51) <= 3, "\(mean)")
        }
    }
}
