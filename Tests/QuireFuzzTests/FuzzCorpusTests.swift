import Foundation
import Testing
@testable import QuireFuzz

/// Every input of the committed fuzz corpora (FuzzTesting/Corpus/NAME, what libFuzzer kept while it
/// fuzzed) through its target again, in the ordinary build: a change that breaks what one of them
/// checks, or crashes on one of them, fails here without a fuzzing build.
@Suite("Fuzz corpora")
struct FuzzCorpusTests {
    static let corpora = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("FuzzTesting/Corpus")

    @Test("each target's corpus runs through it", arguments: FuzzTargets.all.keys.sorted())
    func corpus(_ name: String) throws {
        let folder = Self.corpora.appendingPathComponent(name)
        let files = try FileManager.default.contentsOfDirectory(at: folder, includingPropertiesForKeys: nil)
        // A corpus holds more than the seeds it started from.
        #expect(files.count >= 20, "\(name): \(files.count) inputs")
        let target = try #require(FuzzTargets.all[name])
        for file in files { target(Array(try Data(contentsOf: file))) }
    }

    @Test("the frames a fuzz input is cut into: a length byte, then that many bytes")
    func frames() {
        #expect(FuzzTargets.frames([2, 65, 66, 0, 3, 67]) == [[65, 66], [], [67]])
        #expect(FuzzTargets.frames([]) == [])
    }
}
