import Foundation
import Imaging
import QuireRecognition
import QuireSupport
import QuireWire
import SceneText

extension Recognizer {
    /// The Tesseract packs whose languages the scene models read: Latin-script languages, Chinese and
    /// Japanese (PP-OCRv6's multilingual models; not Korean, Cyrillic, Thai, Devanagari or Arabic).
    public static let sceneLanguages: Set<String> = [
        "eng", "deu", "fra", "spa", "ita", "por", "nld", "dan", "swe", "nor", "fin", "isl", "pol", "ces", "slk", "slv", "hrv",
        "bos", "hun", "ron", "lit", "lav", "est", "tur", "aze", "uzb", "ind", "msa", "tgl", "vie", "cat", "eus", "glg", "gle",
        "cym", "lat", "ltz", "mlt", "mri", "oci", "que", "sqi", "swa", "afr", "kur", "chi_sim", "chi_tra", "jpn", "frk",
    ]

    /// What a worker with `configuration` reads photos with, for its start-up log: the runtime and the
    /// models' folder, or why the scene engine is off (`auto` then reads with Tesseract alone).
    public static func sceneStatus(_ configuration: OCRConfiguration) -> String {
        guard SceneEngine.runtimeVersion != nil else { return sceneRuntime }
        let missing = missingModels(configuration)
        guard missing.isEmpty else { return "off, no \(missing.joined(separator: " or ")) in \(configuration.sceneModels)" }
        return "\(sceneRuntime), models in \(configuration.sceneModels)"
    }

    /// Whether a worker with `configuration` has the scene engine: its runtime and both models.
    public static func sceneAvailable(_ configuration: OCRConfiguration) -> Bool {
        SceneEngine.runtimeVersion != nil && missingModels(configuration).isEmpty
    }

    /// The scene models missing from the worker's models folder.
    static func missingModels(_ configuration: OCRConfiguration) -> [String] {
        ["det.onnx", "rec.onnx"].filter { !FileManager.default.fileExists(atPath: configuration.sceneModels + "/" + $0) }
    }

    /// Whether the scene engine reads every one of `languages`.
    public static func sceneReads(_ languages: [String]) -> Bool { languages.allSatisfy(sceneLanguages.contains) }

    /// The engine the request asks for (the worker's default when it names none); `unknown_language`
    /// for the scene engine with a language its models do not read.
    func engineChoice(_ request: OCRRequest, languages: [String]) throws(WireError) -> OCRRequest.Engine {
        let choice = request.engine ?? configuration.defaultEngine
        if choice == .scene, !Self.sceneReads(languages) {
            throw WireError(.unknownLanguage, "the scene engine reads Latin-script languages, Chinese and Japanese, not "
                                + languages.filter { !Self.sceneLanguages.contains($0) }.joined(separator: ", ") + "; use engine tesseract or auto")
        }
        return choice
    }

    /// This thread's scene engine, opened on first use and set to read `languages`; `engine_failure`
    /// when the runtime or the models are missing (the reason is kept: a worker without them does not
    /// try again per page).
    func sceneEngine(languages: [String]) throws(WireError) -> SceneEngine {
        if let scene {
            if scene.languages != languages { scene.languages = languages }
            return scene
        }
        if let sceneUnavailable { throw WireError(.engineFailure, "the scene engine is not available: \(sceneUnavailable)") }
        do throws(SceneError) {
            var settings = SceneEngine.Settings()
            settings.threads = configuration.sceneThreads
            settings.wordTolerance = configuration.sceneWords ? configuration.sceneWordTolerance : nil
            let engine = try SceneEngine(models: configuration.sceneModels, languages: languages, settings: settings)
            scene = engine
            return engine
        } catch {
            sceneUnavailable = error.message
            throw WireError(.engineFailure, "the scene engine is not available: \(error.message)")
        }
    }

    /// Reads one page with the engine `choice` asks for: Tesseract (`engine`), the scene engine, or,
    /// for `auto`, Tesseract first and the scene engine where Tesseract's reading looks like a photo
    /// read badly (few words read confidently, and most not); the `engine` step records what was
    /// measured and chosen.
    func readPage(_ source: PageSource, number: Int, request: OCRRequest, mode: OCRRequest.Mode, outputs: Set<OCRRequest.Output>,
                  engine: any TextRecognizer, choice: OCRRequest.Engine, languages: [String]) throws(WireError) -> PageRead {
        let symbols = request.symbols ?? true
        switch choice {
        case .tesseract:
            return try readPage(source, number: number, request: request, mode: mode, outputs: outputs, engine: engine)
        case .scene:
            return try readScenePage(source, number: number, outputs: outputs, symbols: symbols, engine: sceneEngine(languages: languages))
        case .auto:
            var read = try readPage(source, number: number, request: request, mode: mode, outputs: outputs, engine: engine)
            guard Self.sceneReads(languages) else { return read }
            let words = read.page.blocks.flatMap { $0.paragraphs.flatMap { $0.lines.flatMap(\.words) } }
            let confident = words.filter { ($0.confidence ?? 0) >= 0.8 }.count
            let confidence = read.page.confidence ?? 0
            // Above 1 - gain the scene engine could not win: not worth its time.
            guard confident < configuration.sceneBelowConfidentWords, Double(confident) < configuration.sceneBelowConfidentShare * Double(words.count)
                    || words.isEmpty, confidence < 1 - configuration.sceneGain else { return read }
            var parameters: [String: Double] = [
                "words": Double(words.count), "confidentWords": Double(confident), "minConfidentWords": Double(configuration.sceneBelowConfidentWords),
                "minConfidentShare": configuration.sceneBelowConfidentShare,
                "confidence": Self.hundredths(confidence),
            ]
            guard let scene = try? sceneEngine(languages: languages) else {
                parameters["sceneAvailable"] = 0
                read.steps.append(.init(step: "engine", applied: false, parameters: parameters))
                return read
            }
            let started = Instant.now()
            var other = try readScenePage(source, number: number, outputs: outputs, symbols: symbols, engine: scene)
            let sceneConfidence = other.page.confidence ?? 0
            let found = !other.page.text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
            parameters["sceneConfidence"] = Self.hundredths(sceneConfidence)
            parameters["sceneLines"] = Double(other.page.blocks.reduce(0) { $0 + $1.paragraphs.reduce(0) { $0 + $1.lines.count } })
            parameters["minGain"] = configuration.sceneGain
            parameters["ms"] = started.millisecondsSince
            // The scene engine's reading where it is clearly the more confident one, and its empty
            // page where it found no text and Tesseract's words were mostly guesses.
            let useScene = found ? sceneConfidence >= confidence + configuration.sceneGain : confidence < configuration.noTextBelow
            if !found { parameters["noTextBelow"] = configuration.noTextBelow }
            guard useScene else {
                read.steps.append(.init(step: "engine", applied: false, parameters: parameters))
                read.recognizeSeconds += other.prepareSeconds + other.recognizeSeconds
                return read
            }
            other.steps = [.init(step: "engine", applied: true, parameters: parameters)]
            other.prepareSeconds += read.prepareSeconds
            other.recognizeSeconds += read.recognizeSeconds
            return other
        }
    }

    static func hundredths(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// Reads one page with the scene engine: the picture turned upright by its EXIF orientation, in
    /// colour, reduced only where it is far larger than the detector looks at.
    func readScenePage(_ source: PageSource, number: Int, outputs: Set<OCRRequest.Output>, symbols: Bool,
                       engine: SceneEngine) throws(WireError) -> PageRead {
        let t0 = Instant.now()
        let image: Image, toUpright: Affine, turns: Int, mirror: Bool
        do throws(ImageError) {
            var reduction = 1
            while source.reducible && reduction < 8 && max(source.width, source.height) / (reduction * 2) >= 2 * engine.settings.detectorMaxSide {
                reduction *= 2
            }
            var decoded = try source.decode(reduction)
            // The detector looks at most at detectorMaxSide pixels; twice that is plenty for the line crops.
            let largest = max(decoded.width, decoded.height), enough = 2 * engine.settings.detectorMaxSide
            if largest > enough { decoded = try decoded.scaled(by: Double(enough) / Double(largest)) }
            (image, toUpright, turns, mirror) = try source.upright(decoded)
        } catch {
            throw Self.wire(error)
        }
        let upright = turns % 2 == 1 ? (width: source.height, height: source.width) : (width: source.width, height: source.height)
        let scale = Double(image.width) / Double(upright.width)
        let t1 = Instant.now()
        let recognized: RecognizedPage
        do throws(RecognitionError) {
            recognized = try engine.recognize(image, layout: .sparse, symbols: symbols)
        } catch {
            throw WireError(.engineFailure, error.message)
        }
        var built = ResultBuilder.page(recognized, number: number, size: upright, toPage: Affine(a: 1 / scale, e: 1 / scale), scale: scale,
                                       quarterTurns: turns, mirrored: mirror, deskewAngle: 0, transform: toUpright.inverse, renderings: nil)
        built.renderings = Self.renderings(of: built, outputs)
        return PageRead(page: built, steps: [], prepareSeconds: t1.seconds(since: t0), recognizeSeconds: Instant.now().seconds(since: t1),
                        engine: engine.engineName)
    }
}
