import Foundation
import QuireWire
import Testing
@testable import QuireFormats

/// Fixtures: `upright.json` is a Quire result for a 600×400 page read as a document (two paragraphs,
/// every kind of word break, "Tabs" read with low confidence and starting at x = 0); `sideways.json`
/// is the same page from a photo stored sideways (400×600, turned 90° clockwise to be upright) read
/// in `text` mode; `published-shapes.json` has one body per foreign shape, written from the APIs'
/// published examples and definitions.
enum Fixture {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")

    static func data(_ name: String) throws -> Data { try Data(contentsOf: directory.appendingPathComponent(name)) }

    static func result(_ name: String) throws -> OCRResult { try JSONDecoder().decode(OCRResult.self, from: data(name)) }

    /// The published example for `shape`, as JSON bytes.
    static func published(_ shape: String) throws -> Data {
        let all = try #require(try JSONSerialization.jsonObject(with: data("published-shapes.json")) as? [String: Any])
        return try JSONSerialization.data(withJSONObject: try #require(all[shape]))
    }
}

/// The converter's JSON for `result`, parsed back into plain objects (to see what is and is not there).
func json(_ format: ResultFormat, _ result: OCRResult) throws -> [String: Any] {
    let now = Date(timeIntervalSince1970: 1_796_119_200.25)
    return try #require(try JSONSerialization.jsonObject(with: format.render(result, now: now)) as? [String: Any])
}

func object(_ value: Any?) throws -> [String: Any] { try #require(value as? [String: Any]) }
func list(_ value: Any?) throws -> [Any] { try #require(value as? [Any]) }

/// The types Azure's iOS tutorial decodes Read 2.0 into: `boundingBox` is `[Int]` and a word's
/// `confidence` a `String?` (a number there makes `JSONDecoder` throw).
struct TutorialReadResult: Codable {
    struct RecognitionResult: Codable {
        let page: Int
        let clockwiseOrientation: Double
        let width: Int
        let height: Int
        let unit: String
        let lines: [Line]
    }
    struct Line: Codable {
        let boundingBox: [Int]
        let text: String
        let words: [Word]
    }
    struct Word: Codable {
        let boundingBox: [Int]
        let text: String
        let confidence: String?
    }
    let status: String
    let recognitionResults: [RecognitionResult]
}

@Suite("Azure Read 2.0")
struct AzureReadV2Tests {
    @Test("decodes into the tutorial's Codable types", arguments: ["upright.json", "sideways.json"])
    func tutorialDecodes(fixture: String) throws {
        let body = try ResultFormat.azureReadV2.render(Fixture.result(fixture))
        let decoded = try JSONDecoder().decode(TutorialReadResult.self, from: body)
        #expect(decoded.status == "Succeeded")
        #expect(decoded.recognitionResults[0].lines.map(\.text) == ["Tabs VS", "spa-", "ces", "Hello"])
        #expect(decoded.recognitionResults[0].lines.allSatisfy { $0.boundingBox.count == 8 && $0.words.allSatisfy { $0.boundingBox.count == 8 } })
    }

    @Test("a word's confidence is \"Low\" for low-confidence words and absent otherwise")
    func lowOnlyWhenLow() throws {
        let page = try object(list(json(.azureReadV2, Fixture.result("upright.json"))["recognitionResults"]).first)
        let words = try list(page["lines"]).flatMap { try list(object($0)["words"]).map(object) }
        #expect(words.map { $0["text"] as? String } == ["Tabs", "VS", "spa-", "ces", "Hello"])
        #expect(words[0]["confidence"] as? String == "Low")
        #expect(words.dropFirst().allSatisfy { $0["confidence"] == nil })
    }

    @Test("upright page: pixels of the image, orientation 0")
    func upright() throws {
        let r = try #require(AzureReadV2.recognitionResults(Fixture.result("upright.json")).first)
        #expect((r.page, r.width, r.height, r.unit, r.clockwiseOrientation) == (1, 600, 400, "pixel", 0))
        #expect(r.lines[0].boundingBox == [0, 43, 313, 43, 313, 95, 0, 95])
        #expect(r.lines[0].words[0].boundingBox == [0, 43, 153, 43, 153, 83, 0, 83])
    }

    @Test("sideways photo: stored pixels, quads start at the text's top-left, orientation 270")
    func sideways() throws {
        let r = try #require(AzureReadV2.recognitionResults(Fixture.result("sideways.json")).first)
        #expect((r.width, r.height, r.clockwiseOrientation) == (400, 600, 270))
        // Page (x, y) → stored (y, 600 − x): the word runs up the stored image.
        #expect(r.lines[0].words[0].boundingBox == [43, 600, 43, 447, 83, 447, 83, 600])
    }

    @Test("the published example decodes and encodes back unchanged")
    func publishedShape() throws {
        let example = try Fixture.published("azure-read-v2")
        let decoded = try JSONDecoder().decode(AzureReadV2.OperationResult.self, from: example)
        #expect(try sameJSON(JSONEncoder().encode(decoded), example))
    }

    @Test("statuses before success carry no results")
    func pending() throws {
        let body = try JSONEncoder().encode(AzureReadV2.operationResult(status: .running, result: Fixture.result("upright.json")))
        #expect(String(decoding: body, as: UTF8.self) == #"{"status":"Running"}"#)
    }
}

@Suite("Azure Read 3.2")
struct AzureReadTests {
    @Test("the envelope: status, times in ISO 8601 with milliseconds, analyzeResult")
    func envelope() throws {
        let body = try json(.azureRead, Fixture.result("upright.json"))
        #expect(body["status"] as? String == "succeeded")
        #expect(body["createdDateTime"] as? String == "2026-12-01T10:00:00.250Z")
        #expect(body["lastUpdatedDateTime"] as? String == "2026-12-01T10:00:00.250Z")
        let analyze = try object(body["analyzeResult"])
        #expect(analyze["version"] as? String == "v3.2")
        #expect(analyze["modelVersion"] as? String == AzureRead.modelVersion)
    }

    @Test("pages, lines, words with numeric confidences in 0…1")
    func readResults() throws {
        let r = try #require(AzureRead.analyzeResult(Fixture.result("upright.json")).readResults.first)
        #expect((r.page, r.language, r.angle, r.width, r.height, r.unit) == (1, "en", 0, 600, 400, "pixel"))
        #expect(r.lines.map(\.text) == ["Tabs VS", "spa-", "ces", "Hello"])
        #expect(r.lines[0].language == nil, "a line in its page's language does not repeat it")
        #expect(r.lines[0].appearance == .init(style: .init(name: "other", confidence: 0.69)))
        #expect(r.lines[0].words.map(\.confidence) == [0.42, 0.96])
        #expect(r.lines[0].words[1].boundingBox == [259, 55, 313, 55, 313, 95, 259, 95])
    }

    @Test("sideways photo: angle −90, stored pixels")
    func sideways() throws {
        let r = try #require(AzureRead.analyzeResult(Fixture.result("sideways.json")).readResults.first)
        #expect((r.angle, r.width, r.height) == (-90, 400, 600))
        #expect(r.lines[3].boundingBox == [260, 379, 260, 183, 310, 183, 310, 379])
    }

    @Test("a page deskewed before reading: its lean is the angle, the quads lean with the text")
    func deskewed() throws {
        var result = try Fixture.result("upright.json")
        result.pages[0].deskewAngle = 2.5
        // What ResultBuilder gives a deskewed page: the recognised rectangle's corners, turned.
        result.pages[0].blocks[0].paragraphs[0].lines[0].words[0].polygon = [.init(x: 1, y: 50), .init(x: 154, y: 43), .init(x: 156, y: 83), .init(x: 3, y: 90)]
        let r = try #require(AzureRead.analyzeResult(result).readResults.first)
        #expect(r.angle == -2.5)
        #expect(r.lines[0].words[0].boundingBox == [1, 50, 154, 43, 156, 83, 3, 90])
        #expect(AzureReadV2.recognitionResults(result)[0].clockwiseOrientation == 357.5)
    }

    @Test("a PDF page in inches, to four decimals, as Azure measures PDF pages")
    func inches() throws {
        var result = try Fixture.result("upright.json")
        result.pages[0].resolution = 200
        let r = try #require(AzureRead.analyzeResult(result).readResults.first)
        #expect((r.unit, r.width, r.height) == ("inch", 3, 2))
        #expect(r.lines[0].words[1].boundingBox == [1.295, 0.275, 1.565, 0.275, 1.565, 0.475, 1.295, 0.475])
        // Read 2.0 keeps whole pixels, which the tutorial's [Int] decodes.
        #expect(AzureReadV2.recognitionResults(result)[0].unit == "pixel")
    }

    @Test("until it has succeeded, no analyzeResult")
    func pending() throws {
        let created = Date(timeIntervalSince1970: 0)
        let envelope = AzureRead.operationResult(status: .running, created: created, lastUpdated: created, result: nil)
        let body = try #require(try JSONSerialization.jsonObject(with: JSONEncoder().encode(envelope)) as? [String: Any])
        #expect(body.keys.sorted() == ["createdDateTime", "lastUpdatedDateTime", "status"])
        #expect(body["createdDateTime"] as? String == "1970-01-01T00:00:00.000Z")
    }

    @Test("the published example decodes and encodes back unchanged")
    func publishedShape() throws {
        let example = try Fixture.published("azure-read")
        let decoded = try JSONDecoder().decode(AzureRead.OperationResult.self, from: example)
        #expect(try sameJSON(JSONEncoder().encode(decoded), example))
    }
}

@Suite("Image Analysis 4.0")
struct ImageAnalysisTests {
    @Test("modelVersion, metadata, blocks of lines with four-point polygons")
    func shape() throws {
        let r = ImageAnalysis.result(try Fixture.result("upright.json"))
        #expect(r.modelVersion == "2023-10-01")
        #expect(r.metadata == .init(width: 600, height: 400))
        #expect(r.readResult.blocks.count == 1)
        let line = r.readResult.blocks[0].lines[0]
        #expect(line.text == "Tabs VS")
        #expect(line.boundingPolygon == [.init(x: 0, y: 43), .init(x: 313, y: 43), .init(x: 313, y: 95), .init(x: 0, y: 95)])
        #expect(line.words.map(\.confidence) == [0.42, 0.96])
    }

    @Test("one block with every line of every Tesseract block, in order; no text, no block (the swagger's maxItems 1)")
    func oneBlock() throws {
        var result = try Fixture.result("upright.json")
        let block = result.pages[0].blocks[0]
        result.pages[0].blocks = [block, block]
        let merged = ImageAnalysis.result(result)
        let lines = block.paragraphs.flatMap(\.lines).map(\.text)
        #expect(merged.readResult.blocks.count == 1)
        #expect(merged.readResult.blocks[0].lines.map(\.text) == lines + lines)
        result.pages[0].blocks = []
        #expect(ImageAnalysis.result(result).readResult.blocks.isEmpty)
    }

    @Test("the published example decodes and encodes back unchanged")
    func publishedShape() throws {
        let example = try Fixture.published("image-analysis")
        let decoded = try JSONDecoder().decode(ImageAnalysis.Result.self, from: example)
        #expect(try sameJSON(JSONEncoder().encode(decoded), example))
    }
}

@Suite("Cloud Vision v1")
struct CloudVisionTests {
    @Test("textAnnotations: the whole text first, then one per word")
    func textAnnotations() throws {
        let response = CloudVision.response(try Fixture.result("upright.json"), feature: .documentTextDetection)
        let annotations = try #require(response.textAnnotations)
        #expect(annotations.map(\.description) == ["Tabs VS\nspa-\nces\nHello\n", "Tabs", "VS", "spa-", "ces", "Hello"])
        #expect(annotations[0].locale == "en")
        #expect(annotations.dropFirst().allSatisfy { $0.locale == nil })
        #expect(annotations[0].boundingPoly.vertices == [.init(x: 0, y: 43), .init(x: 417, y: 43), .init(x: 417, y: 310), .init(x: 0, y: 310)])
        #expect(response.fullTextAnnotation?.text == annotations[0].description)
    }

    @Test("proto3 JSON: zero coordinates and unset fields are left out")
    func omittedDefaults() throws {
        let body = try json(.cloudVision, Fixture.result("upright.json"))
        let word = try object(list(body["textAnnotations"])[1])
        let vertices = try list(object(word["boundingPoly"])["vertices"]).map(object)
        #expect(vertices[0].keys.sorted() == ["y"], "x = 0 is not written")
        #expect(vertices[1].keys.sorted() == ["x", "y"])
        #expect(word.keys.sorted() == ["boundingPoly", "description"])
    }

    @Test("detectedBreak on each word's last symbol: SPACE, EOL_SURE_SPACE at a line's end, LINE_BREAK at a paragraph's")
    func breaks() throws {
        let page = try #require(CloudVision.response(try Fixture.result("upright.json"), feature: .documentTextDetection).fullTextAnnotation?.pages.first)
        let words = page.blocks.flatMap { $0.paragraphs.flatMap(\.words) }
        #expect(words.map { $0.symbols.last?.property?.detectedBreak?.type } == [.space, .eolSureSpace, .eolSureSpace, .lineBreak, .lineBreak])
        #expect(words.allSatisfy { $0.symbols.dropLast().allSatisfy { $0.property == nil } })
        #expect(words.map { $0.symbols.map(\.text).joined() } == ["Tabs", "VS", "spa-", "ces", "Hello"])
        #expect(page.blocks.map(\.blockType) == ["TEXT"])
        #expect(page.blocks[0].paragraphs.count == 2)
        #expect(words[0].property?.detectedLanguages?.map(\.languageCode) == ["en"])
    }

    @Test("DOCUMENT_TEXT_DETECTION has confidences; TEXT_DETECTION only when asked for")
    func confidences() throws {
        let result = try Fixture.result("upright.json")
        let document = try #require(CloudVision.response(result, feature: .documentTextDetection).fullTextAnnotation?.pages.first)
        #expect(document.confidence == 0.82)
        #expect(document.blocks[0].paragraphs[0].words[0].confidence == 0.42)
        #expect(document.blocks[0].paragraphs[0].words[0].symbols[0].confidence == 0.42)
        let text = try #require(CloudVision.response(result, feature: .textDetection).fullTextAnnotation?.pages.first)
        #expect(text.confidence == nil && text.blocks.allSatisfy { $0.confidence == nil && $0.paragraphs.allSatisfy { $0.confidence == nil && $0.words.allSatisfy { $0.confidence == nil && $0.symbols.allSatisfy { $0.confidence == nil } } } })
        let asked = try #require(CloudVision.response(result, feature: .textDetection, confidenceScores: true).fullTextAnnotation?.pages.first)
        #expect(asked.confidence == 0.82)
        // quire recognize --mode text is TEXT_DETECTION.
        let sideways = try json(.cloudVision, Fixture.result("sideways.json"))
        #expect(!String(decoding: try JSONSerialization.data(withJSONObject: sideways["fullTextAnnotation"] as Any), as: UTF8.self).contains("confidence"))
    }

    @Test("sideways photo: stored-image size and vertices, first vertex the word's top-left")
    func sideways() throws {
        let page = try #require(CloudVision.response(try Fixture.result("sideways.json"), feature: .textDetection).fullTextAnnotation?.pages.first)
        #expect((page.width, page.height) == (400, 600))
        #expect(page.blocks[0].paragraphs[0].words[0].boundingBox.vertices == [.init(x: 43, y: 600), .init(x: 43, y: 447), .init(x: 83, y: 447), .init(x: 83, y: 600)])
    }

    @Test("files:annotate: a response per page with its number, a PDF page in points with normalized polygons")
    func fileResponse() throws {
        var result = try Fixture.result("upright.json")
        result.pages[0].resolution = 200
        var failed = result.pages[0]
        failed.pageNumber = 3
        failed.blocks = []
        failed.error = .init(code: .tooManyPixels, message: "page 3: too large")
        result.pages.append(failed)
        result.metadata.pageCount = 4
        let file = CloudVision.fileResponse(result, feature: .documentTextDetection, mimeType: "application/pdf")
        #expect(file.totalPages == 4 && file.inputConfig?.mimeType == "application/pdf")
        let responses = try #require(file.responses)
        #expect(responses.map(\.context.pageNumber) == [1, 3])
        #expect(responses[1].error == .init(code: 3, message: "page 3: too large") && responses[1].fullTextAnnotation == nil)
        let page = try #require(responses[0].fullTextAnnotation?.pages.first)
        #expect((page.width, page.height) == (216, 144), "600 × 400 pixels at 200 dpi: 3 × 2 inches")
        let word = page.blocks[0].paragraphs[0].words[1].boundingBox
        #expect(word.vertices == nil)
        #expect(word.normalizedVertices?.first == .init(x: 0.431667, y: 0.1375), "259 / 600 and 55 / 400, to six decimals")
        #expect(responses[0].textAnnotations == nil, "a file's page has no pixel annotations")
    }

    @Test("no text: an empty response, as Google answers")
    func empty() throws {
        var result = try Fixture.result("upright.json")
        result.pages[0].blocks = []
        #expect(String(decoding: try ResultFormat.cloudVision.render(result), as: UTF8.self) == "{}")
    }

    @Test("a batch answers one response per image; a failed image carries a google.rpc.Status")
    func batch() throws {
        let ok = CloudVision.response(try Fixture.result("upright.json"), feature: .textDetection)
        let failed = CloudVision.Response(error: .init(code: 3, message: "Bad image data."))
        let body = try JSONSerialization.jsonObject(with: JSONEncoder().encode(CloudVision.BatchResponse(responses: [ok, failed]))) as? [String: Any]
        let responses = try list(body?["responses"]).map(object)
        #expect(responses.count == 2)
        #expect(responses[0].keys.sorted() == ["fullTextAnnotation", "textAnnotations"])
        #expect(NSDictionary(dictionary: responses[1]).isEqual(to: ["error": ["code": 3, "message": "Bad image data."]]))
    }

    @Test("words read without symbols become one symbol each")
    func withoutSymbols() throws {
        var result = try Fixture.result("upright.json")
        result.pages[0].blocks[0].paragraphs[0].lines[0].words[0].symbols = []
        let word = try #require(CloudVision.response(result, feature: .documentTextDetection).fullTextAnnotation?.pages[0].blocks[0].paragraphs[0].words[0])
        #expect(word.symbols.map(\.text) == ["Tabs"])
        #expect(word.symbols[0].property?.detectedBreak?.type == .space)
    }

    @Test("the published example decodes and encodes back unchanged")
    func publishedShape() throws {
        let example = try Fixture.published("cloud-vision")
        let decoded = try JSONDecoder().decode(CloudVision.Response.self, from: example)
        #expect(try sameJSON(JSONEncoder().encode(decoded), example))
    }
}

/// Whether two JSON texts hold the same value (key order and number spelling aside).
func sameJSON(_ a: Data, _ b: Data) throws -> Bool {
    let x = try JSONSerialization.jsonObject(with: a), y = try JSONSerialization.jsonObject(with: b)
    return NSDictionary(dictionary: ["v": x]).isEqual(to: ["v": y])
}

@Suite("The schema's examples")
struct SchemaExampleTests {
    /// `proto-json/ocr-result.schema.json`'s examples decode into `OCRResult` (the Swift type and the
    /// schema change together), attachments included, and every shape converts them.
    @Test("decode into OCRResult and convert to every shape")
    func examples() throws {
        let url = Fixture.directory.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("proto-json/ocr-result.schema.json")
        let schema = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any])
        let examples = try #require(schema["examples"] as? [Any])
        #expect(examples.count >= 3)
        for example in examples {
            let result = try JSONDecoder().decode(OCRResult.self, from: JSONSerialization.data(withJSONObject: example))
            for format in ResultFormat.allCases { _ = try format.render(result) }
        }
        let first = try JSONDecoder().decode(OCRResult.self, from: JSONSerialization.data(withJSONObject: examples[0]))
        #expect(first.attachments == [.init(output: "pdf", frame: 2, mediaType: "application/pdf", size: 48_213)])
    }
}
