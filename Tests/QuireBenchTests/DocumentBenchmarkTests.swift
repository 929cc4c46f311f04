import Testing
@testable import QuireBench

@Suite("quire bench documents: the documents a manifest lists")
struct DocumentBenchmarkTests {
    static func entry(_ id: String, _ lang: [String] = ["eng"]) -> OCRBenchManifest.Entry {
        .init(id: id, image: id + ".png", languages: lang, group: "")
    }

    @Test("pages gathered by document in the order listed, with their numbers in the original and the document's languages")
    func documents() throws {
        let documents = try DocumentBenchmark.documents([
            Self.entry("fedreg.p001"), Self.entry("minutes.p002", ["fra"]), Self.entry("fedreg.p015"), Self.entry("minutes.p001", ["fra"]),
        ])
        #expect(documents.map(\.name) == ["fedreg", "minutes"])
        #expect(documents[0].ids == ["fedreg.p001", "fedreg.p015"] && documents[0].pages == [1, 15])
        #expect(documents[1].pages == [2, 1] && documents[1].languages == ["fra"])
        #expect(try DocumentBenchmark.documents([Self.entry("scan.p003", [])])[0].languages == ["eng"], "no lang: English")
    }

    @Test("an id that is no page of a document is refused", arguments: ["scan", "scan.page1", "scan.p0", "scan.pX"])
    func notPages(_ id: String) {
        #expect(throws: BenchError.self) { try DocumentBenchmark.documents([Self.entry(id)]) }
    }
}
