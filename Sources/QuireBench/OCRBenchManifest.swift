import Foundation

/// A dataset folder's `manifest.tsv`: which files are the pages to score, with each one's languages
/// and group. The datasets hold other files too (the original PDFs, multi-page TIFFs of the same
/// pages, box files), so when a folder has a manifest, only what it lists is read.
///
/// Tab-separated, one header row naming the columns; `image` (or `file`) is required, `id`, `lang`
/// and `group` (or `kind`) are optional, and a row whose `order` is `mirrored` is listed but not
/// scored (documents-dev's mirror images of text: its README says so); other columns are ignored.
/// Empty lines are skipped.
struct OCRBenchManifest: Sendable, Equatable {
    struct Entry: Sendable, Equatable {
        /// The `id` column, or the file name without its extension.
        var id: String
        /// The file, relative to the folder.
        var image: String
        /// Tesseract pack names from `lang` (`chi_sim+eng` → `["chi_sim", "eng"]`); empty when not given.
        var languages: [String]
        /// `group`, else `kind`, else "".
        var group: String
    }

    /// A row that could not be used, and why (lines count from 1, the header's included).
    struct Rejected: Sendable, Equatable {
        var line: Int
        var reason: String
    }

    var entries: [Entry]
    var rejected: [Rejected]
    /// Files the manifest lists and says not to score.
    var unscored: [String] = []

    /// Parses the manifest's text; throws when the header names no `image` or `file` column.
    static func parse(_ text: String) throws(BenchError) -> OCRBenchManifest {
        // Every line, empty ones too, so that a rejected row's number is its line in the file.
        // ("\r\n" is one Character, a newline.)
        let lines = text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).map(String.init)
        guard let headerIndex = lines.firstIndex(where: { !$0.trimmingCharacters(in: .whitespaces).isEmpty }) else {
            throw BenchError("manifest.tsv is empty")
        }
        let header = lines[headerIndex].split(separator: "\t", omittingEmptySubsequences: false)
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        func column(_ names: String...) -> Int? { names.lazy.compactMap { header.firstIndex(of: $0) }.first }
        guard let imageColumn = column("image", "file") else {
            throw BenchError("manifest.tsv has no 'image' or 'file' column (its header: \(header.joined(separator: ", ")))")
        }
        let idColumn = column("id"), langColumn = column("lang"), groupColumn = column("group", "kind"), orderColumn = column("order")
        var manifest = OCRBenchManifest(entries: [], rejected: [])
        var seen: Set<String> = []
        for index in lines.indices.dropFirst(headerIndex + 1) {
            let line = lines[index]
            if line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            let cells = line.split(separator: "\t", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            func cell(_ column: Int?) -> String { column.flatMap { $0 < cells.count ? cells[$0] : nil } ?? "" }
            let image = cell(imageColumn)
            guard !image.isEmpty else {
                manifest.rejected.append(Rejected(line: index + 1, reason: "no \(header[imageColumn]) in this row"))
                continue
            }
            guard seen.insert(image).inserted else {
                manifest.rejected.append(Rejected(line: index + 1, reason: "\(image) is listed twice"))
                continue
            }
            if cell(orderColumn).lowercased() == "mirrored" {
                manifest.unscored.append(image)
                continue
            }
            let id = cell(idColumn)
            manifest.entries.append(Entry(
                id: id.isEmpty ? Self.stem(image) : id, image: image,
                languages: cell(langColumn).split(separator: "+").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty },
                group: cell(groupColumn)))
        }
        return manifest
    }

    /// A file's name without its folder and extension: the id of an image no manifest names.
    static func stem(_ path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }
}

/// The half of a set an image belongs to: tune on one, confirm on the other.
public enum Half: String, Sendable, Codable, CaseIterable {
    case a = "A"
    case b = "B"

    /// The document an image belongs to: its id up to the first `.` (`fedreg.p002` → `fedreg`), so
    /// that the pages of one document fall into the same half.
    static func document(of id: String) -> String {
        String(id.prefix { $0 != "." })
    }

    /// Each id's half: the documents sorted by name go alternately to A and B, the first to A.
    static func assign(ids: [String]) -> [String: Half] {
        let documents = Set(ids.map(document)).sorted()
        var halfOfDocument: [String: Half] = [:]
        for (index, name) in documents.enumerated() { halfOfDocument[name] = index % 2 == 0 ? .a : .b }
        var out: [String: Half] = [:]
        for id in ids { out[id] = halfOfDocument[document(of: id)] }
        return out
    }
}
