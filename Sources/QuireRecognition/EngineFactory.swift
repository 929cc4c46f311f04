import QuireWire

/// The engines a worker thread reads with, as values. The pipeline asks for them by what they do
/// (read prepared pages, read pictures, tell which way up a page stands) and never names one:
/// QuireOCR's `InstalledEngines` makes the real ones from what is installed, tests hand in fakes. One per
/// worker thread, like the engines it makes.
public protocol EngineFactory: AnyObject {
    /// The language packs installed, by Tesseract's names (`osd` among them where it is installed).
    var installedLanguages: Set<String> { get }
    /// The languages the picture reader's models read, whether or not it is installed here.
    var pictureLanguages: Set<String> { get }
    /// The engine that reads prepared pages in `languages` (installed packs), made once and kept;
    /// `engine_failure` when it cannot be loaded.
    func pageReader(languages: [String]) throws(WireError) -> any TextRecognizer
    /// The engine that reads pictures, set to read `languages`; `engine_failure` saying why where this
    /// worker has none.
    func pictureReader(languages: [String]) throws(WireError) -> any TextRecognizer
    /// The orientation detector, nil where none is installed.
    func orientationDetector() -> (any OrientationDetector)?
    /// The engine that reads single lines for a second look (``LineReader``), nil where there is none;
    /// by default the picture reader, where it reads lines alone.
    func lineReader() -> (any LineReader)?
}

extension EngineFactory {
    /// Whether the picture reader's models read every one of `languages`.
    public func pictureReaderReads(_ languages: [String]) -> Bool { languages.allSatisfy(pictureLanguages.contains) }

    /// The picture reader as a reader of single lines in Latin letters and digits, nil where this
    /// worker has none or it reads no lines alone: what a page's fields are read again with.
    public func lineReader() -> (any LineReader)? {
        (try? pictureReader(languages: ["eng"])) as? any LineReader
    }

    /// The engine that plays `role` for `languages`.
    public func reader(_ role: EngineRole, languages: [String]) throws(WireError) -> any TextRecognizer {
        switch role {
        case .page: try pageReader(languages: languages)
        case .picture: try pictureReader(languages: languages)
        }
    }
}

/// What an engine does for the pipeline; QuireOCR's `EnginePolicy` decides which reads a page.
public enum EngineRole: Sendable, Hashable {
    /// Reads prepared pages: documents, receipts, screenshots (Tesseract).
    case page
    /// Reads pictures: signs, screens, whiteboards, handwriting (the scene engine).
    case picture
}
