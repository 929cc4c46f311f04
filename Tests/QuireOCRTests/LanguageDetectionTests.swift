import LanguageID
import QuireRecognition
import QuireTestSupport
import QuireWire
import Testing

@testable import QuireOCR

/// Languages without a hint, on fake engines: which packs a page is read with, what the result says
/// was found, and that a hint stays a hint.
@Suite struct LanguageDetectionTests {
    static func lines(_ texts: [String], confidence: Double = 0.93) -> [FakeWord] {
        texts.enumerated().map { FakeWord($1, at: (0.05, 0.1 + 0.2 * Double($0), 0.9, 0.1), confidence: confidence) }
    }
    static let italian = lines(["La città conserva ancora le mura medievali e una bella piazza",
                                "dove ogni sabato mattina si tiene il mercato dei contadini della valle."])
    static let english = lines(["The committee met on Tuesday to review the budget and agreed",
                                "to publish the minutes of the meeting on the website next week."])
    static let russian = lines(["Сегодня хорошая погода, и мы пошли гулять в парк,",
                                "а потом пообедали в маленьком кафе у реки."])
    static let garbage = lines(["Ceroaua xopoluan noroaa u mbi", "nowan ry1atb B nmapk"], confidence: 0.35)

    func read(_ engines: FakeEngines, _ request: OCRRequest, configure: (inout OCRConfiguration) -> Void = { _ in }) throws -> OCRResult {
        let image = try TestImages.page(width: 1_200, height: 600, glyphHeight: 24)
        var configuration = OCRConfiguration()
        configure(&configuration)
        return try Recognizer(configuration: configuration, engines: engines).recognize(request, image: image).result
    }

    @Test func anEnglishPageIsReadOnceAndSaysEnglish() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.english), installed: ["eng", "ita", "rus", "osd"])
        let result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"]])
        #expect(result.metadata.languages == ["en"])
        let page = result.pages[0]
        #expect(page.detectedLanguages?.first?.language == "en")
        #expect((page.detectedLanguages?.first?.confidence ?? 0) > 0.9)
        let step = try #require(result.metadata.steps.first { $0.step == "language" })
        #expect(!step.applied && step.parameters["rereads"] == 0 && step.parameters["reliable"] == 1)
        #expect(!result.metadata.steps.contains { $0.step == "script" })
    }

    @Test func anItalianPageIsReadAgainInItalian() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.italian), installed: ["eng", "ita", "rus"])
        let result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"], ["ita"]])
        #expect(result.metadata.languages == ["it"])
        #expect(result.pages[0].detectedLanguages?.first?.language == "it")
        // Every level says it, lines included.
        let line = try #require(result.pages[0].blocks.first?.paragraphs.first?.lines.first)
        #expect(line.detectedLanguages?.first?.language == "it")
        let step = try #require(result.metadata.steps.first { $0.step == "language" })
        #expect(step.applied && step.parameters["rereads"] == 1 && (step.parameters["it"] ?? 0) > 0.9)
    }

    @Test func aHintNarrowsAndIsNeverWidened() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.italian), installed: ["eng", "ita"])
        let result = try read(engines, OCRRequest(languages: ["en"], engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"]])
        #expect(!result.metadata.steps.contains { $0.step == "language" })
        // What was read is still reported as what it is.
        #expect(result.pages[0].detectedLanguages?.first?.language == "it")
        #expect(throws: WireError.self) { try read(engines, OCRRequest(languages: ["ko"], engine: .tesseract)) }
    }

    @Test func aWorkerSetToOneLanguageReadsEveryPageInIt() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.italian), installed: ["eng", "ita"])
        _ = try read(engines, OCRRequest(engine: .tesseract)) { $0.defaultLanguages = ["eng"] }
        #expect(engines.asked.map(\.languages) == [["eng"]])
    }

    @Test func aGuessedPageGetsItsScriptFromThePicture() throws {
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.garbage), installed: ["eng", "ita", "rus", "ukr", "osd"])
        engines.pagesByLanguages["rus"] = FakeRecognizer("fake-rus", words: Self.russian)
        engines.detected = OrientationGuess(rotation: 0, confidence: 2, script: "Cyrillic", scriptConfidence: 3.5)
        let result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages).contains(["rus"]))
        #expect(result.metadata.languages == ["ru"])
        #expect(result.pages[0].text.hasPrefix("Сегодня"))
        let script = try #require(result.metadata.steps.first { $0.step == "script" })
        #expect(script.applied && script.parameters["Cyrillic"] == 3.5)
        // The orientation check asked OSD of the same picture (the page read poorly): its answer named
        // the script, and OSD was not asked again.
        #expect(engines.detections == 1 && script.parameters["fromOrientation"] == 1)
    }

    @Test func scriptDetectionAsksOSDItselfWhereTheOrientationCheckDidNot() throws {
        // With the check off, OSD is asked once, for the script.
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.garbage), installed: ["eng", "rus", "osd"])
        engines.pagesByLanguages["rus"] = FakeRecognizer("fake-rus", words: Self.russian)
        engines.detected = OrientationGuess(rotation: 0, confidence: 2, script: "Cyrillic", scriptConfidence: 3.5)
        let result = try read(engines, OCRRequest(engine: .tesseract)) { $0.detectOrientation = false }
        #expect(result.metadata.languages == ["ru"] && engines.detections == 1)
        #expect(!result.metadata.steps.contains { $0.step == "orientation" })
        let script = try #require(result.metadata.steps.first { $0.step == "script" })
        #expect(script.applied && script.parameters["fromOrientation"] == nil)
    }

    @Test func aWrongScriptsGarbageIsNotKept() throws {
        // OSD names Arabic on an English page read badly; the Arabic reading is garbage too, and the
        // first reading stays.
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.garbage), installed: ["eng", "ara", "osd"])
        engines.pagesByLanguages["ara"] = FakeRecognizer("fake-ara", words: Self.lines(["بر م", "صر"], confidence: 0.9))
        engines.detected = OrientationGuess(rotation: 0, confidence: 2, script: "Arabic", scriptConfidence: 16)
        let result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"], ["ara"]])
        #expect(result.metadata.languages == ["en"])
        #expect(result.pages[0].text.hasPrefix("Ceroaua"))
    }

    static let korean = lines(["오늘은 날씨가 좋아서 우리는 공원에 산책을 갔습니다",
                               "그리고 강가의 작은 식당에서 점심을 먹었습니다."])

    @Test func aPageOSDCannotPlaceIsTriedInKorean() throws {
        // Hangul in large type: OSD names Greek at confidence 0, and the first reading is letters of
        // no language. The Korean pack is tried and kept because its reading is reliably Korean.
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.garbage), installed: ["eng", "kor", "ell", "osd"])
        engines.pagesByLanguages["kor"] = FakeRecognizer("fake-kor", words: Self.korean)
        engines.detected = OrientationGuess(rotation: 0, confidence: 0.4, script: "Greek", scriptConfidence: 0)
        let result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"], ["kor"]])
        #expect(result.metadata.languages == ["ko"])
        #expect(result.pages[0].detectedLanguages?.first?.language == "ko")
        let script = try #require(result.metadata.steps.first { $0.step == "script" })
        #expect(script.applied && script.parameters["trial"] == 1 && script.parameters["Greek"] == 0)
    }

    @Test func aTrialIsNotKeptWithoutKoreanAndNotMadeForAFewLetters() throws {
        // The Korean reading of a poorly read English photo is a few syllables: not evidence.
        let engines = FakeEngines(page: FakeRecognizer("fake", words: Self.garbage), installed: ["eng", "kor", "osd"])
        engines.pagesByLanguages["kor"] = FakeRecognizer("fake-kor", words: Self.lines(["오늘 공", "원"], confidence: 0.9))
        engines.detected = OrientationGuess(rotation: 0, confidence: 0.1, script: "Latin", scriptConfidence: 0.1)
        var result = try read(engines, OCRRequest(engine: .tesseract))
        #expect(engines.asked.map(\.languages) == [["eng"], ["kor"]])
        #expect(result.metadata.languages == ["en"] && result.pages[0].text.hasPrefix("Ceroaua"))
        // A sign's one word could never read as enough Hangul to be kept: it is not tried.
        let word = FakeEngines(page: FakeRecognizer("fake", words: Self.lines(["TOAST"], confidence: 0.4)), installed: ["eng", "kor", "osd"])
        word.pagesByLanguages["kor"] = FakeRecognizer("fake-kor", words: Self.korean)
        word.detected = OrientationGuess(rotation: 0, confidence: 0.1, script: "Latin", scriptConfidence: 0.1)
        result = try read(word, OCRRequest(engine: .tesseract))
        #expect(word.asked.map(\.languages) == [["eng"]])
        #expect(result.metadata.steps.first { $0.step == "script" }?.parameters["trial"] == nil)
    }

    @Test func packsFollowTheLanguagesFoundWithinTheScriptRead() throws {
        let engines = FakeEngines(page: nil, installed: ["eng", "ita", "chi_sim", "chi_tra", "rus", "srp", "Latin", "osd"])
        let plan = try LanguagePlan(requested: nil, engines: engines, configuration: OCRConfiguration())
        #expect(plan.initial == ["eng"] && plan.detects)
        #expect(!plan.candidates.contains("osd") && plan.candidates.last == "Latin")
        func found(_ languages: [(String, Int)], reliable: Bool = true) -> LanguageIdentification {
            .init(languages: languages.map { .init(language: $0.0, percent: $0.1, score: 1) }, reliable: reliable, letterBytes: 400)
        }
        #expect(plan.packs(for: found([("it", 70), ("en", 30)]), current: ["eng"]) == ["ita", "eng"])
        #expect(plan.packs(for: found([("it", 90), ("en", 10)]), current: ["eng"]) == ["ita"])
        #expect(plan.packs(for: found([("en", 97)]), current: ["eng"]) == nil)
        // Malay has no pack here: the reading stands (the Latin model read such receipts worse).
        #expect(plan.packs(for: found([("ms", 95)]), current: ["eng"]) == nil)
        #expect(plan.packs(for: found([("it", 90)], reliable: false), current: ["eng"]) == nil)
        #expect(plan.packs(for: found([("zh-Hant", 95)]), current: ["chi_sim"]) == ["chi_tra"])
        #expect(plan.packs(for: found([("sr", 95)]), current: ["rus"]) == ["srp"])
        // Another script's language read with this one is not trusted: the picture decides scripts.
        #expect(plan.packs(for: found([("ru", 95)]), current: ["eng"]) == nil)
        #expect(plan.packs(forScript: "Han", current: ["eng"]) == ["chi_sim"])
        #expect(plan.packs(forScript: "Latin", current: ["eng"]) == nil)
        #expect(plan.packs(forScript: "Thai", current: ["eng"]) == nil)
        #expect(plan.pictureLanguages(["eng", "chi_sim", "chi_tra", "jpn"]) == ["eng", "chi_sim", "chi_tra"])
        #expect(plan.pictureLanguages(["eng", "ita", "chi_sim", "chi_tra"], readWith: ["ita"]) == ["ita", "chi_sim", "chi_tra"])
        #expect(plan.pictureLanguages(["eng", "chi_sim", "chi_tra"], readWith: ["chi_tra"]) == ["chi_tra", "chi_sim"])
    }
}
