import Foundation
import QuireWire
import Testing

@testable import QuireOCR
import Imaging

/// A minimal JPEG prefix: SOI, an APP1 Exif segment with IFD0 holding the orientation tag.
func jpegWithOrientation(_ value: UInt16, littleEndian: Bool) -> [UInt8] {
    func u16(_ v: UInt16) -> [UInt8] { littleEndian ? [UInt8(v & 0xff), UInt8(v >> 8)] : [UInt8(v >> 8), UInt8(v & 0xff)] }
    func u32(_ v: UInt32) -> [UInt8] {
        let b = [UInt8(v >> 24), UInt8((v >> 16) & 0xff), UInt8((v >> 8) & 0xff), UInt8(v & 0xff)]
        return littleEndian ? b.reversed() : b
    }
    var tiff: [UInt8] = littleEndian ? [0x49, 0x49] : [0x4D, 0x4D]
    tiff += u16(42) + u32(8)
    tiff += u16(2)                                             // two entries
    tiff += u16(0x010F) + u16(2) + u32(4) + Array("Cam\0".utf8) // Make, ASCII, inline
    tiff += u16(0x0112) + u16(3) + u32(1) + u16(value) + [0, 0] // Orientation, SHORT
    tiff += u32(0)
    let payload: [UInt8] = Array("Exif".utf8) + [0, 0] + tiff
    let length = UInt16(payload.count + 2)
    return [0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x04, 0x00, 0x00,   // an APP0 to skip first
            0xFF, 0xE1, UInt8(length >> 8), UInt8(length & 0xff)] + payload + [0xFF, 0xDA, 0x00, 0x02]
}

@Suite("EXIF orientation and coordinate transforms")
struct OrientationTests {
    @Test("the orientation tag is read in both byte orders", arguments: 1...8)
    func readsTag(value: Int) {
        #expect(EXIFOrientation.read(jpeg: jpegWithOrientation(UInt16(value), littleEndian: true)) == value)
        #expect(EXIFOrientation.read(jpeg: jpegWithOrientation(UInt16(value), littleEndian: false)) == value)
    }

    @Test("missing, truncated or bogus EXIF means orientation 1")
    func robust() {
        #expect(EXIFOrientation.read(jpeg: [0xFF, 0xD8, 0xFF, 0xDA]) == 1)
        #expect(EXIFOrientation.read(jpeg: Array(jpegWithOrientation(6, littleEndian: true).prefix(20))) == 1)
        #expect(EXIFOrientation.read(jpeg: jpegWithOrientation(9, littleEndian: true)) == 1)
        #expect(EXIFOrientation.read(jpeg: Array("not a jpeg".utf8)) == 1)
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<500 {
            let junk = [0xFF, 0xD8] + (0..<Int.random(in: 0...64, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            #expect((1...8).contains(EXIFOrientation.read(jpeg: junk)))
        }
    }

    /// Corners of a W×H stored image must land on the corners of the upright image, and the inverse
    /// must bring them back.
    @Test("each correction maps stored corners to upright corners and back", arguments: 1...8)
    func corrections(orientation: Int) {
        let (turns, mirror) = EXIFOrientation.correction(for: orientation)
        let w = 40.0, h = 30.0
        var toUpright = Affine.rotation(quarterTurns: turns, width: w, height: h)
        let uprightWidth = turns % 2 == 1 ? h : w
        let uprightHeight = turns % 2 == 1 ? w : h
        if mirror { toUpright = toUpright.then(.mirror(width: uprightWidth)) }
        let corners = [(0.0, 0.0), (w, 0), (w, h), (0, h)]
        let mapped = corners.map { apply(toUpright, $0) }
        #expect(Set(mapped.map { "\($0.0),\($0.1)" }) == ["0.0,0.0", "\(uprightWidth),0.0", "\(uprightWidth),\(uprightHeight)", "0.0,\(uprightHeight)"])
        let back = mapped.map { apply(toUpright.inverse, $0) }
        for (a, b) in zip(back, corners) {
            #expect(abs(a.0 - b.0) < 1e-9 && abs(a.1 - b.1) < 1e-9)
        }
    }

    @Test("orientation 6 (rotate 90° clockwise): the stored top-left corner ends top-right")
    func rotate90() {
        let (turns, mirror) = EXIFOrientation.correction(for: 6)
        #expect(turns == 1 && !mirror)
        let t = Affine.rotation(quarterTurns: 1, width: 40, height: 30)
        let p = apply(t, (0, 0))
        #expect(p.0 == 30 && p.1 == 0)
    }

    func apply(_ t: Affine, _ p: (Double, Double)) -> (Double, Double) {
        (t.a * p.0 + t.b * p.1 + t.c, t.d * p.0 + t.e * p.1 + t.f)
    }
}

@Suite("Language names")
struct LanguageTests {
    let installed: Set<String> = ["eng", "deu", "chi_sim", "hin", "jpn", "kor", "osd"]

    @Test("BCP-47 tags and pack names resolve to installed packs", arguments: [
        ("en", "eng"), ("EN", "eng"), ("en-GB", "eng"), ("de", "deu"), ("deu", "deu"), ("zh-Hans", "chi_sim"),
        ("zh-CN", "chi_sim"), ("zh", "chi_sim"), ("hi", "hin"), ("ja", "jpn"), ("ko", "kor"),
    ])
    func resolves(requested: String, pack: String) {
        #expect(Languages.resolve(requested, installed: installed) == pack)
    }

    @Test("languages without a pack do not resolve", arguments: ["fr", "zh-Hant", "tlh", "x"])
    func missing(requested: String) {
        #expect(Languages.resolve(requested, installed: installed) == nil)
    }

    @Test("packs map back to BCP-47")
    func back() {
        #expect(Languages.bcp47(forTesseract: "eng") == "en")
        #expect(Languages.bcp47(forTesseract: "chi_sim") == "zh-Hans")
        #expect(Languages.bcp47(forTesseract: "hin") == "hi")
        #expect(Languages.bcp47(forTesseract: "xyz") == "xyz")
    }
}

@Suite("OCR request options")
struct OCRRequestTests {
    @Test("languages as a list or an eng+deu string")
    func languages() throws {
        #expect(try OCRRequest.parse(Array(#"{"languages":"eng+deu"}"#.utf8)).languages == ["eng", "deu"])
        #expect(try OCRRequest.parse(Array(#"{"languages":["en","de"],"mode":"text"}"#.utf8)) == OCRRequest(languages: ["en", "de"], mode: .text))
        #expect(try OCRRequest.parse(Array("{}".utf8)) == OCRRequest())
    }

    @Test("bad options are typed errors", arguments: [
        (#"{"mode":"fast"}"#, "bad_request"), (#"{"pages":[0]}"#, "bad_request"), (#"{"dpi":5}"#, "bad_request"),
        (#"{"languages":[]}"#, "bad_request"), (#"{"outputs":["docx"]}"#, "bad_request"), (#"{"dpi":"x"}"#, "bad_request"),
        (#"{"mode":"#, "invalid_json"),
    ])
    func bad(json: String, code: String) {
        #expect {
            _ = try OCRRequest.parse(Array(json.utf8))
        } throws: { error in
            (error as? QuireWire.WireError)?.code.rawValue == code
        }
    }
}
