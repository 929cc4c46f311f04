import Foundation
import QuireSupport
import Testing
@testable import QuireBench
import QuireTestSupport

/// The folders `quire bench ocr` reads, made of tiny grey PGM files (no engine is started).
@Suite("quire bench ocr: which images a folder gives")
struct OCRBenchScanTests {
    static let pgm = Array("P5\n16 12\n255\n".utf8) + [UInt8](repeating: 240, count: 16 * 12)

    func folder(_ files: [String: [UInt8]]) throws -> String {
        let root = temporaryDirectory("quire-bench-scan")
        for (name, bytes) in files {
            let path = root + "/" + name
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes)))
        }
        return root
    }

    func benchmark(_ root: String) -> OCRBenchmark {
        OCRBenchmark(options: OCRBenchOptions(directories: [root]), logger: Logger(label: "test.bench", level: .error))
    }

    @Test("A manifest decides: only listed images, each with its languages and group; the rest is reported")
    func manifest() throws {
        let manifest = """
            id\timage\tlang\tgroup\tkind
            alpha.p001\talpha.p001.pgm\teng\tprose\tclean
            alpha.p002\talpha.p002.pgm\tfra\tprose\tscan
            beta\tbeta.pgm\teng+fra\ttables\tclean
            gamma\tgamma.pgm\ttha\tprose\tclean
            delta\tmissing.pgm\teng\tprose\tclean
            notes\tnotes.txt\teng\tprose\tclean

            """
        let root = try folder([
            "manifest.tsv": Array(manifest.utf8), "alpha.p001.pgm": Self.pgm, "alpha.p002.pgm": Self.pgm, "beta.pgm": Self.pgm,
            "gamma.pgm": Self.pgm, "unlisted.pgm": Self.pgm, "notes.txt": Array("not a page".utf8), "doc.pdf": Array("%PDF-1.4".utf8),
            "alpha.p001.gt.txt": Array("Hello world\n".utf8), "beta.key.json": Array(#"{"date": "01/02/2026", "total": "9.90", "n": 3}"#.utf8),
        ])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let problems = OCRBenchmark.Problems()
        let scanned = try benchmark(root).scan(root, set: "docs", defaults: ["deu"], installed: ["eng", "fra", "deu", "osd"], problems: problems)
        #expect(scanned.hasManifest && scanned.unlisted == 1 && scanned.nonImages == 0)
        #expect(scanned.images.map(\.name) == ["alpha.p001.pgm", "alpha.p002.pgm", "beta.pgm"])
        #expect(scanned.images.map(\.languages) == [["eng"], ["fra"], ["eng", "fra"]])
        #expect(scanned.images.map(\.languageKey) == ["eng", "fra", "eng+fra"])
        #expect(scanned.images.map(\.group) == ["prose", "prose", "tables"])
        #expect(scanned.images.map(\.id) == ["alpha.p001", "alpha.p002", "beta"])
        #expect(scanned.images.allSatisfy { $0.set == "docs" && $0.width == 16 && $0.height == 12 })
        // Documents alpha, beta, delta, gamma, notes: A, B, A, B, A (the ones left out count too).
        #expect(scanned.images.map(\.half) == [.a, .a, .b])
        #expect(scanned.images[0].truthText == "Hello world\n" && scanned.images[1].truthText == nil)
        #expect(scanned.images[2].keyFields == ["date": "01/02/2026", "total": "9.90"])
        let left = problems.all
        #expect(left.map(\.file) == ["gamma.pgm", "missing.pgm", "notes.txt"])
        #expect(left.allSatisfy { $0.set == "docs" && $0.phase == "scan" })
        #expect(left[0].message.hasPrefix("language tha not installed") && left[0].message.contains("installed: deu, eng, fra)"))
        #expect(left[1].message == "listed in manifest.tsv but not found")
        #expect(left[2].message == "not an image this benchmark reads")
    }

    @Test("Without a manifest: every image file, subfolders as groups, the default languages")
    func noManifest() throws {
        let root = try folder(["b.pgm": Self.pgm, "skew/a.pgm": Self.pgm, "skew/a.gt.txt": Array("x".utf8), "readme.txt": Array("hi".utf8)])
        defer { try? FileManager.default.removeItem(atPath: root) }
        let problems = OCRBenchmark.Problems()
        let scanned = try benchmark(root).scan(root, set: "degraded", defaults: ["eng"], installed: ["eng"], problems: problems)
        #expect(!scanned.hasManifest && scanned.nonImages == 2 && scanned.unlisted == 0)
        #expect(scanned.images.map(\.name) == ["b.pgm", "skew/a.pgm"])
        #expect(scanned.images.map(\.group) == ["", "skew"])
        #expect(scanned.images.map(\.languages) == [["eng"], ["eng"]])
        #expect(scanned.images.map(\.half) == [.b, .a])
        #expect(problems.all.isEmpty)
    }

    @Test("A manifest without an image column stops the run, naming the folder")
    func badManifest() throws {
        let root = try folder(["manifest.tsv": Array("id\tlang\na\teng\n".utf8), "a.pgm": Self.pgm])
        defer { try? FileManager.default.removeItem(atPath: root) }
        #expect(throws: BenchError.self) {
            try benchmark(root).scan(root, set: "x", defaults: ["eng"], installed: ["eng"], problems: OCRBenchmark.Problems())
        }
    }
}
