import Testing
@testable import QuireBench

@Suite("quire bench ocr: manifest.tsv")
struct ManifestTests {
    @Test("documents-dev's columns: id, image, lang split at '+', group before kind")
    func documents() throws {
        let text = """
            id\timage\tlang\tgroup\tsource\tpage\tkind
            fedreg.p001\tfedreg.p001.png\teng\tthree columns, running heads\tjsvine/pdfplumber a.pdf\t1\tclean-200dpi
            proces-verbal.p002\tproces-verbal.p002.jpg\tfra\tminutes, one column\tjsvine/pdfplumber b.pdf\t2\tscan-like -1.0deg
            menu\tsub/menu.png\tchi_sim+eng\t\tx\t1\tphoto

            """
        let manifest = try OCRBenchManifest.parse(text)
        #expect(manifest.rejected.isEmpty)
        #expect(manifest.entries == [
            .init(id: "fedreg.p001", image: "fedreg.p001.png", languages: ["eng"], group: "three columns, running heads"),
            .init(id: "proces-verbal.p002", image: "proces-verbal.p002.jpg", languages: ["fra"], group: "minutes, one column"),
            // An empty group stays empty: the group column is there, so kind is not used.
            .init(id: "menu", image: "sub/menu.png", languages: ["chi_sim", "eng"], group: ""),
        ])
    }

    @Test("a row whose order is mirrored is listed and not scored, as documents-dev's README says")
    func mirrored() throws {
        let text = """
            id\timage\tlang\tgroup\torder
            scores.p001\tscores.p001.png\teng\tprose\treading
            scores.p002\tscores.p002.png\teng\tprose\tmirrored
            lorem.p001\tlorem.p001.png\teng\ttable\ttable
            """
        let manifest = try OCRBenchManifest.parse(text)
        #expect(manifest.entries.map(\.id) == ["scores.p001", "lorem.p001"])
        #expect(manifest.unscored == ["scores.p002.png"])
        #expect(manifest.rejected.isEmpty)
    }

    @Test("photos-dev's columns: file for image, kind for group; no id column gives the file name's stem")
    func photos() throws {
        let text = "file\tkind\tlang\tsource\r\nsign_thai.jpg\tsign\ttha\tgithub:x\r\nscreen.png\tscreen\t\tgithub:y\r\n"
        let manifest = try OCRBenchManifest.parse(text)
        #expect(manifest.entries == [
            .init(id: "sign_thai", image: "sign_thai.jpg", languages: ["tha"], group: "sign"),
            .init(id: "screen", image: "screen.png", languages: [], group: "screen"),
        ])
    }

    @Test("Rows without an image and repeated images are rejected with their line; short rows are padded")
    func rejected() throws {
        let text = "id\timage\tlang\tgroup\na\ta.png\teng\tg\nb\t\teng\tg\n\nc\ta.png\tfra\tg\nd\td.png\n"
        let manifest = try OCRBenchManifest.parse(text)
        #expect(manifest.entries.map(\.id) == ["a", "d"])
        #expect(manifest.entries[1].languages.isEmpty && manifest.entries[1].group == "")
        #expect(manifest.rejected == [.init(line: 3, reason: "no image in this row"), .init(line: 5, reason: "a.png is listed twice")])
    }

    @Test("A header without an image or file column is an error naming the columns")
    func noImageColumn() {
        #expect(throws: BenchError.self) { try OCRBenchManifest.parse("id\tlang\tgroup\na\teng\tg\n") }
        do {
            _ = try OCRBenchManifest.parse("id\tpicture\n")
            Issue.record("parsed a manifest without an image column")
        } catch {
            #expect(error.message.contains("id, picture"))
        }
        #expect(throws: BenchError.self) { try OCRBenchManifest.parse("\n\n") }
    }
}

@Suite("quire bench ocr: halves A and B")
struct HalvesTests {
    @Test("A document is the id up to the first '.'")
    func document() {
        #expect(Half.document(of: "fedreg.p002") == "fedreg")
        #expect(Half.document(of: "proces-verbal.p001") == "proces-verbal")
        #expect(Half.document(of: "sroie_001") == "sroie_001")
        #expect(Half.document(of: "page1-+3") == "page1-+3")
    }

    @Test("Documents sorted by name alternate, the first in A; a document's pages stay together")
    func assign() {
        let ids = ["sroie_002", "fedreg.p001", "sroie_001", "fedreg.p002", "energy.p001", "cupertino.p001", "fedreg.p015"]
        let halves = Half.assign(ids: ids)
        // cupertino A, energy B, fedreg A, sroie_001 B, sroie_002 A
        #expect(halves == [
            "cupertino.p001": .a, "energy.p001": .b, "fedreg.p001": .a, "fedreg.p002": .a, "fedreg.p015": .a,
            "sroie_001": .b, "sroie_002": .a,
        ])
        #expect(Half.assign(ids: []).isEmpty)
    }

    @Test("Set names are the folders' last components, made unique")
    func setNames() {
        #expect(OCRBenchOptions.setNames(["/data/documents-dev/", "/tmp/x/degraded", "/other/degraded", "receipts-dev"])
            == ["documents-dev", "degraded", "degraded (2)", "receipts-dev"])
        #expect(OCRBenchOptions.defaultMode(for: ["/tmp/qbench/lines"]) == .line)
        #expect(OCRBenchOptions.defaultMode(for: ["/tmp/qbench/lines", "/tmp/qbench/pages"]) == .document)
    }
}
