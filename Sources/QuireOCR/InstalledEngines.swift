import Foundation
import QuireRecognition
import QuireWire
import SceneText
import Tesseract

/// The engines this machine has: Tesseract with its installed packs for pages and orientation, the
/// scene engine (PP-OCR through ONNX Runtime) for pictures where its runtime and models are there.
/// The only place in QuireOCR that names them. One per worker thread: Tesseract engines are made on
/// first use of each language set and kept (the least recently used dropped past
/// ``OCRConfiguration/enginesPerThread``), the scene engine opened once.
public final class InstalledEngines: EngineFactory {
    let configuration: OCRConfiguration
    public let installedLanguages: Set<String>
    public var pictureLanguages: Set<String> { Self.sceneLanguages }
    private var engines: [String: any TextRecognizer] = [:]
    private var engineUse: [String] = []
    private var scene: SceneEngine?
    /// Why the scene engine could not be opened: a worker without it does not try again per page.
    private var sceneUnavailable: String?
    private var osd: (any OrientationDetector)?
    private var osdUnavailable = false

    public init(configuration: OCRConfiguration) {
        self.configuration = configuration
        installedLanguages = Set(Engine.installedLanguages(dataPath: configuration.dataPath))
    }

    /// The version of the Tesseract library loaded (5.5.0 when scripts/build-tesseract made it; see docs/ocr.md).
    public static var tesseractVersion: String { Engine.version }

    /// The Tesseract packs whose languages the scene models read: Latin-script languages, Chinese and
    /// Japanese (PP-OCRv6's multilingual models; not Korean, Cyrillic, Thai, Devanagari or Arabic).
    public static let sceneLanguages: Set<String> = [
        "eng", "deu", "fra", "spa", "ita", "por", "nld", "dan", "swe", "nor", "fin", "isl", "pol", "ces", "slk", "slv", "hrv",
        "bos", "hun", "ron", "lit", "lav", "est", "tur", "aze", "uzb", "ind", "msa", "tgl", "vie", "cat", "eus", "glg", "gle",
        "cym", "lat", "ltz", "mlt", "mri", "oci", "que", "sqi", "swa", "afr", "kur", "chi_sim", "chi_tra", "jpn", "frk",
    ]

    /// The runtime the scene engine runs on (`onnxruntime 1.32.0`), or why it is off.
    public static var sceneRuntime: String {
        SceneEngine.runtimeVersion.map { "onnxruntime " + $0 } ?? "off, " + (SceneEngine.unavailableReason ?? "no runtime")
    }

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

    /// What a worker with `configuration` reads a request that names no language in, for its start-up
    /// log: `auto` and the installed packs it detects among, or the list it was given.
    public static func languageStatus(_ configuration: OCRConfiguration) -> String {
        let configured = configuration.defaultLanguages.filter { $0 != "auto" }
        guard configured.isEmpty else { return configured.joined(separator: "+") }
        let packs = LanguagePlan.everyInstalled(Set(Engine.installedLanguages(dataPath: configuration.dataPath)))
        return "auto among \(packs.count) packs: " + packs.joined(separator: " ")
    }

    /// Whether the scene engine reads every one of `languages`.
    public static func sceneReads(_ languages: [String]) -> Bool { languages.allSatisfy(sceneLanguages.contains) }

    public func pageReader(languages: [String]) throws(WireError) -> any TextRecognizer {
        let key = languages.joined(separator: "+")
        if let engine = engines[key] {
            engineUse.removeAll { $0 == key }
            engineUse.append(key)
            return engine
        }
        do throws(RecognitionError) {
            let variables = configuration.engineVariables.sorted(by: { $0.key < $1.key })
            let engine = try Engine(dataPath: configuration.dataPath, languages: key, variables: variables.map { (name: $0.key, value: $0.value) })
            engine.rawLineImages = configuration.rawLineImages
            // Init ignores names it does not know; setting them again finds those.
            for (name, value) in variables where !engine.setVariable(name, value) {
                throw RecognitionError(.initFailed, "Tesseract does not take '\(name)=\(value)' (QUIRE_TESSERACT_VARIABLES)")
            }
            engines[key] = engine
            engineUse.append(key)
            if engineUse.count > configuration.enginesPerThread {
                engines[engineUse.removeFirst()] = nil
            }
            return engine
        } catch {
            throw WireError(.engineFailure, "Tesseract could not load the languages '\(key)': \(error.message)")
        }
    }

    public func pictureReader(languages: [String]) throws(WireError) -> any TextRecognizer {
        if let scene {
            if scene.languages != languages { scene.languages = languages }
            return scene
        }
        if let sceneUnavailable { throw WireError(.engineFailure, "the scene engine is not available: \(sceneUnavailable)") }
        do throws(SceneError) {
            var settings = SceneEngine.Settings()
            if configuration.sceneThreads > 0 { settings.threads = configuration.sceneThreads }
            settings.wordTolerance = configuration.sceneWords ? configuration.sceneWordTolerance : nil
            settings.detectorMinSide = configuration.sceneDetectorSide
            let engine = try SceneEngine(models: configuration.sceneModels, languages: languages, settings: settings)
            scene = engine
            return engine
        } catch {
            sceneUnavailable = error.message
            throw WireError(.engineFailure, "the scene engine is not available: \(error.message)")
        }
    }

    public func orientationDetector() -> (any OrientationDetector)? {
        if osdUnavailable { return nil }
        if let osd { return osd }
        guard installedLanguages.contains("osd") else { osdUnavailable = true; return nil }
        do {
            let engine = try Engine(dataPath: configuration.dataPath, languages: "osd")
            // OSD gives up below 50 glyphs by default: a sign or a screen's line has fewer, and its
            // script is still plain from a dozen.
            engine.setVariable("min_characters_to_try", String(configuration.scriptMinGlyphs))
            osd = engine
        } catch {
            osdUnavailable = true
        }
        return osd
    }
}
