import QuireRecognition
import QuireSupport
import QuireWire

/// The engines one request reads with, each made when it is first needed (a born-digital PDF needs
/// none); the time spent making them is kept apart from decoding and reading.
struct EngineSession {
    let factory: any EngineFactory
    let languages: [String]
    private(set) var loadSeconds = 0.0
    private var made: [EngineRole: any TextRecognizer] = [:]

    init(_ factory: any EngineFactory, languages: [String]) {
        self.factory = factory
        self.languages = languages
    }

    /// The engine for `role`, asked of the factory once per request.
    mutating func reader(_ role: EngineRole) throws(WireError) -> any TextRecognizer {
        if let engine = made[role] { return engine }
        let started = Instant.now()
        defer { loadSeconds += Instant.now().seconds(since: started) }
        let engine = try factory.reader(role, languages: languages)
        made[role] = engine
        return engine
    }
}
