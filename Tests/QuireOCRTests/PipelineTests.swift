import Foundation
import QuireRecognition
import QuireSupport
import QuireTestSupport
import QuireWire
import Testing

@testable import QuireOCR

/// The pipeline (prepare, choose the engine, read, edit, build) on fake engines: what reaches the
/// result, and which engine reads a page under each `engine` choice, with no engine installed.
@Suite struct PipelineTests {
    static let words = [FakeWord("Quire", at: (0.1, 0.1, 0.3, 0.1)), FakeWord("reads", at: (0.5, 0.4, 0.3, 0.1))]
    static let guesses = [FakeWord("Qnire", at: (0.1, 0.1, 0.3, 0.1), confidence: 0.3), FakeWord("reab", at: (0.5, 0.4, 0.3, 0.1), confidence: 0.2)]

    /// A page of small print (10 px glyphs, enlarged before reading) and a pipeline on `engines`.
    func read(_ engines: FakeEngines, _ request: OCRRequest, width: Int = 800, height: Int = 400) throws -> Recognition {
        let image = try TestImages.page(width: width, height: height, glyphHeight: 10)
        var configuration = OCRConfiguration()
        configuration.defaultEngine = .auto
        return try Recognizer(configuration: configuration, engines: engines).recognize(request, image: image)
    }

    @Test func pageReaderWordsComeBackInTheUploadedPixels() throws {
        // A speck read as a word is dropped by the page's edits.
        let page = FakeRecognizer("fake-page 1", words: Self.words + [FakeWord("~~", at: (0.1, 0.7, 0.05, 0.1), confidence: 0.3)])
        let engines = FakeEngines(page: page)
        let result = try read(engines, OCRRequest(languages: ["en"], engine: .tesseract)).result
        // The page was enlarged for its small glyphs before the engine saw it...
        let shown = try #require(page.shown.first)
        #expect(shown.width > 800)
        let scale = try #require(result.metadata.steps.first { $0.step == "scale" })
        #expect(scale.applied)
        // ...and the words' boxes are back in the uploaded page's pixels, where the engine found them.
        let words = result.pages[0].blocks.flatMap { $0.paragraphs.flatMap { $0.lines.flatMap(\.words) } }
        #expect(words.map(\.text) == ["Quire", "reads"])
        let first = words[0].boundingBox
        #expect(abs(first.x - 80) <= 3 && abs(first.y - 40) <= 3 && abs(first.width - 240) <= 3 && abs(first.height - 40) <= 3)
        #expect(words[0].symbols.map(\.text) == ["Q", "u", "i", "r", "e"])
        #expect(words[0].languages == ["en"])
        #expect(result.pages[0].width == 800 && result.pages[0].height == 400)
        #expect(result.metadata.engine == "fake-page 1")
        #expect(result.metadata.languages == ["en"])
        #expect(engines.asked.map(\.role) == [.page])
        #expect(engines.asked.first?.languages == ["eng"])
    }

    @Test("random noise and a blank page come back empty with their blank step, no engine asked, whatever the engine choice")
    func nothingToRead() throws {
        // Noise past the probe's 3 MP too: it is judged before the probe is scaled (interpolated, noise
        // correlates).
        for (image, parameter, width, height) in [(try TestImages.noise(width: 900, height: 700), "neighbourCorrelation", 900, 700),
                                                  (try TestImages.noise(width: 2_100, height: 1_600, seed: 7), "neighbourCorrelation", 2_100, 1_600),
                                                  (try TestImages.noise(width: 900, height: 700, amplitude: 0), "range", 900, 700)] {
            let page = FakeRecognizer("fake-page 1", words: Self.words), picture = FakeRecognizer("fake-picture 1", words: Self.words)
            let engines = FakeEngines(page: page, picture: picture)
            var configuration = OCRConfiguration()
            configuration.defaultEngine = .auto
            // Without a language: no script detection either.
            let result = try Recognizer(configuration: configuration, engines: engines).recognize(OCRRequest(engine: .auto), image: image).result
            #expect(page.shown.isEmpty && picture.shown.isEmpty)
            #expect(engines.asked.map(\.role) == [.page])
            #expect(result.pages.count == 1 && result.pages[0].blocks.isEmpty && result.text.isEmpty)
            #expect(result.pages[0].width == width && result.pages[0].height == height)
            let step = try #require(result.metadata.steps.first)
            #expect(step.step == "blank" && step.applied && step.parameters[parameter] != nil)
            #expect(result.metadata.steps.count == 1)
        }
        // A page of text under noise is read.
        let noisy = try TestImages.noise(width: 800, height: 400, amplitude: 80, page: TestImages.pagePixels(width: 800, height: 400, glyphHeight: 10))
        let page = FakeRecognizer("fake-page 1", words: Self.words)
        let result = try Recognizer(configuration: OCRConfiguration(), engines: FakeEngines(page: page)).recognize(OCRRequest(languages: ["eng"]), image: noisy).result
        #expect(page.shown.count == 1 && !result.metadata.steps.contains { $0.step == "blank" })
    }

    @Test func autoKeepsAConfidentPageReadingWithoutAskingForPictures() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.words), picture: FakeRecognizer("fake-picture 1", words: Self.words))
        let recognition = try read(engines, OCRRequest(languages: ["eng"], engine: .auto))
        #expect(engines.asked.map(\.role) == [.page])
        #expect(recognition.missing == nil)
        #expect(!recognition.result.metadata.steps.contains { $0.step == "engine" })
    }

    @Test func autoTakesThePictureReadingWhereThePageReaderGuessed() throws {
        let picture = FakeRecognizer("fake-picture 1", input: .picture(maxSide: 300), words: Self.words)
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.guesses), picture: picture)
        let recognition = try read(engines, OCRRequest(languages: ["eng"], engine: .auto))
        #expect(engines.asked.map(\.role) == [.page, .picture])
        #expect(recognition.result.pages[0].text == "Quire\nreads\n")
        #expect(recognition.result.metadata.engine == "fake-picture 1")
        let step = try #require(recognition.result.metadata.steps.first { $0.step == "engine" })
        #expect(step.applied)
        #expect(step.parameters["words"] == 2 && step.parameters["confidentWords"] == 0 && step.parameters["sceneConfidence"] == 0.95)
        // The picture reader was shown the picture reduced to what it asked for, not the prepared page.
        let shown = try #require(picture.shown.first)
        #expect(shown.width == 300 && shown.height == 150)
        // Its words are in the uploaded page's pixels too.
        let word = try #require(recognition.result.pages[0].blocks.first?.paragraphs.first?.lines.first?.words.first)
        #expect(abs(word.boundingBox.x - 80) <= 3 && abs(word.boundingBox.width - 240) <= 3)
    }

    @Test func autoKeepsThePageReadingWhereThePictureReaderReadsNoBetter() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.guesses),
                                  picture: FakeRecognizer("fake-picture 1", input: .picture(maxSide: 2_000), words: [FakeWord("x", at: (0.1, 0.1, 0.1, 0.1), confidence: 0.4)]))
        let recognition = try read(engines, OCRRequest(languages: ["eng"], engine: .auto))
        #expect(recognition.result.metadata.engine == "fake-page 1")
        let step = try #require(recognition.result.metadata.steps.first { $0.step == "engine" })
        #expect(!step.applied)
        #expect(step.parameters["sceneConfidence"] == 0.4)
    }

    @Test func autoWithoutAPictureReaderSaysWhichReaderItMissed() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.guesses), picture: nil)
        let recognition = try read(engines, OCRRequest(languages: ["eng"], engine: .auto))
        #expect(recognition.missing == .picture)
        #expect(recognition.result.metadata.engine == "fake-page 1")
        let step = try #require(recognition.result.metadata.steps.first { $0.step == "engine" })
        #expect(!step.applied && step.parameters["sceneAvailable"] == 0)
    }

    @Test func autoReadsLanguagesThePictureModelsDoNotReadWithThePageReaderAlone() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.guesses), picture: FakeRecognizer("fake-picture 1", words: Self.words))
        let recognition = try read(engines, OCRRequest(languages: ["deu"], engine: .auto))
        #expect(engines.asked.map(\.role) == [.page])
        #expect(recognition.missing == nil)
    }

    @Test func sceneWithALanguageItsModelsDoNotReadIsUnknownLanguage() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.words), picture: FakeRecognizer("fake-picture 1", words: Self.words))
        let error = #expect(throws: WireError.self) { try read(engines, OCRRequest(languages: ["deu"], engine: .scene)) }
        #expect(error?.code == .unknownLanguage)
        #expect(engines.asked.isEmpty)
    }

    @Test func sceneReadsWithThePictureReaderOnly() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.guesses),
                                  picture: FakeRecognizer("fake-picture 1", input: .picture(maxSide: 4_000), words: Self.words))
        let result = try read(engines, OCRRequest(languages: ["eng"], engine: .scene)).result
        #expect(engines.asked.map(\.role) == [.picture])
        #expect(result.metadata.engine == "fake-picture 1")
        #expect(result.pages[0].text == "Quire\nreads\n")
    }

    @Test func aLanguageNotInstalledIsUnknownLanguageNamingWhatIs() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake-page 1", words: Self.words))
        let error = #expect(throws: WireError.self) { try read(engines, OCRRequest(languages: ["ja"], engine: .tesseract)) }
        #expect(error?.code == .unknownLanguage)
        #expect(error?.message.contains("installed: deu, eng") == true)
    }

    @Test func anEngineThatCannotBeMadeIsEngineFailure() throws {
        let engines = FakeEngines(page: nil)
        let error = #expect(throws: WireError.self) { try read(engines, OCRRequest(languages: ["eng"], engine: .tesseract)) }
        #expect(error?.code == .engineFailure)
    }
}

/// The probe's glyph height, which decides how much a page is enlarged before it is read.
@Suite struct GlyphMeasureTests {
    func scaleStep(_ image: [UInt8]) throws -> OCRResult.Step {
        let reader = FakeRecognizer("fake-page 1", words: PipelineTests.words)
        let result = try Recognizer(configuration: OCRConfiguration(), engines: FakeEngines(page: reader))
            .recognize(OCRRequest(languages: ["eng"], engine: .tesseract), image: image).result
        return try #require(result.metadata.steps.first { $0.step == "scale" })
    }

    @Test func glyphsCutIntoSlicesByBlankRowsAreMeasuredWhole() throws {
        // 18 px glyphs with every sixth row blank: slices of at most 5 px, which alone would have the
        // page enlarged four times.
        let sliced = try scaleStep(TestImages.page(width: 1_200, height: 600, glyphHeight: 18, blankRowEvery: 6))
        let whole = try scaleStep(TestImages.page(width: 1_200, height: 600, glyphHeight: 18))
        #expect(!sliced.applied && sliced.parameters["factor"] == 1)
        #expect(sliced.parameters["glyphHeight"] == whole.parameters["glyphHeight"])
        #expect(whole.parameters["glyphHeight"] == 18)
    }

    @Test func slicedSmallPrintIsEnlargedAsTheSmallPrintItIs() throws {
        // 12 px glyphs are enlarged to 28 px. With every sixth row blank, their slices of at most 5 px
        // would have had the page enlarged four times; measured whole (a glyph whose top or bottom row
        // is blank is a pixel lower), they are enlarged as small print.
        let whole = try scaleStep(TestImages.page(width: 1_200, height: 600, glyphHeight: 12))
        let sliced = try scaleStep(TestImages.page(width: 1_200, height: 600, glyphHeight: 12, blankRowEvery: 6))
        #expect(whole.applied && whole.parameters["glyphHeight"] == 12)
        let height = try #require(sliced.parameters["glyphHeight"]), factor = try #require(sliced.parameters["factor"])
        #expect(sliced.applied && (11...12).contains(height) && factor <= 28 / 11 + 0.01, "\(sliced.parameters)")
    }
}

/// The orientation check after a poor reading: a turn OSD names is read, and kept only where it reads
/// clearly better and as confidently as an upright page.
@Suite struct OrientationCheckTests {
    static let poor = [FakeWord("Qnire", at: (0.1, 0.1, 0.3, 0.1), confidence: 0.2), FakeWord("reab", at: (0.5, 0.4, 0.3, 0.1), confidence: 0.2)]

    func read(turnedConfidence: Double) throws -> (OCRResult, FakeRecognizer) {
        let reader = FakeRecognizer("fake-page 1", words: Self.poor)
        reader.wordsWhenTall = [FakeWord("Quire", at: (0.1, 0.1, 0.3, 0.1), confidence: turnedConfidence),
                                FakeWord("reads", at: (0.5, 0.4, 0.3, 0.1), confidence: turnedConfidence)]
        let engines = FakeEngines(page: reader, installed: ["eng", "osd"])
        engines.detected = OrientationGuess(rotation: 90, confidence: 2, script: "Latin", scriptConfidence: 1)
        let image = try TestImages.page(width: 800, height: 400, glyphHeight: 24)
        let result = try Recognizer(configuration: OCRConfiguration(), engines: engines)
            .recognize(OCRRequest(languages: ["eng"], engine: .tesseract), image: image).result
        return (result, reader)
    }

    @Test func aTurnThatReadsLikeAnUprightPageIsKept() throws {
        let (result, reader) = try read(turnedConfidence: 0.9)
        #expect(reader.shown.count == 2 && reader.shown[1].height > reader.shown[1].width)
        #expect(result.pages[0].rotation == 90 && result.pages[0].text == "Quire\nreads\n")
        let step = try #require(result.metadata.steps.first { $0.step == "orientation" })
        #expect(step.applied && step.parameters["turnedConfidence"] == 0.9)
    }

    @Test func aTurnThatReadsBetterButStillPoorlyIsNotKept() throws {
        // 0.4 is 0.2 better than the upright reading (more than the 0.1 gain asked), but under the 0.5
        // an upright page reads at: garbage either way up, as a damaged file's picture is.
        let (result, reader) = try read(turnedConfidence: 0.4)
        // Both quarter turns were read (OSD may know a page is sideways but not which way); neither kept.
        #expect(reader.shown.count == 3 && reader.shown.dropFirst().allSatisfy { $0.height > $0.width })
        #expect(result.pages[0].rotation == 0 && result.pages[0].text == "Qnire\nreab\n")
        let step = try #require(result.metadata.steps.first { $0.step == "orientation" })
        #expect(!step.applied && step.parameters["turnedConfidence"] == 0.4 && step.parameters["readConfidence"] == 0.2)
    }
}
