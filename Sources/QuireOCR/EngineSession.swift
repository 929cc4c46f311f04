import QuireRecognition
import QuireSupport
import QuireWire

/// The engines one request reads with, each made when it is first needed (a born-digital PDF needs
/// none); the time spent making them is kept apart from decoding and reading.
struct EngineSession {
    let factory: any EngineFactory
    /// What the page reader reads with unless told otherwise (a language detected reads with others).
    let pageLanguages: [String]
    /// What the picture reader reads with.
    let pictureLanguages: [String]
    private(set) var loadSeconds = 0.0
    private var made: [String: any TextRecognizer] = [:]

    init(_ factory: any EngineFactory, plan: LanguagePlan) {
        self.factory = factory
        pageLanguages = plan.initial
        pictureLanguages = plan.pictureLanguages(factory.pictureLanguages)
    }

    /// The engine for `role` reading `languages` (the role's own by default), asked of the factory once
    /// per request.
    mutating func reader(_ role: EngineRole, languages: [String]? = nil) throws(WireError) -> any TextRecognizer {
        let languages = languages ?? (role == .page ? pageLanguages : pictureLanguages)
        let key = "\(role):" + languages.joined(separator: "+")
        if let engine = made[key] { return engine }
        let started = Instant.now()
        defer { loadSeconds += Instant.now().seconds(since: started) }
        let engine = try factory.reader(role, languages: languages)
        made[key] = engine
        return engine
    }
}
