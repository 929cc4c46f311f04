import Dispatch
import Foundation
import QuireBroker
import QuireClient
import QuireOCR
import QuireSupport
import QuireWire
import QuireWorker
import Synchronization
import Imaging
import QuireRecognition
import Tesseract
import ZeroMQ
#if canImport(Glibc)
import Glibc
#endif


extension OCRBenchmark {
    // MARK: - The images

    /// One folder's images, and what else it held.
    struct ScannedSet {
        var images: [BenchImage] = []
        /// Files that are no image (a folder without a manifest).
        var nonImages = 0
        /// Image files the manifest does not list (PDF pages' TIFFs, …).
        var unlisted = 0
        /// With a manifest: the images it lists and says not to score.
        var unscored = 0
        var hasManifest = false
    }

    /// A file to read, before it is read: from the manifest, or every image file in the folder.
    private struct Candidate {
        var name: String
        var id: String
        /// Requested names (manifest) or resolved packs (the defaults).
        var languages: [String]
        var group: String
        /// Whether the manifest's `lang` named them (not `defaults`).
        var languagesListed = false
    }

    /// The images of one folder, sorted by path, or in the manifest's order when it has one. Without
    /// a manifest: every file that sniffs as an image (subfolders are groups, `defaults` the
    /// languages). With one: what it lists, each with its `lang` (or `defaults`) and `group`. Files
    /// that cannot be read, languages not installed and images the worker would refuse are reported
    /// in `problems` and left out, so that all three ways read the same images.
    func scan(_ directory: String, set: String, defaults: [String], installed: Set<String>, problems: Problems) throws -> ScannedSet {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BenchError("\(directory): not a directory")
        }
        let root = URL(fileURLWithPath: directory).standardizedFileURL.path
        var relative: [String] = []
        if options.recursive {
            guard let walker = fm.enumerator(atPath: root) else { throw BenchError("\(root): cannot list the directory") }
            while let entry = walker.nextObject() as? String {
                if entry.split(separator: "/").contains(where: { $0.hasPrefix(".") }) { continue }
                relative.append(entry)
            }
        } else {
            do {
                relative = try fm.contentsOfDirectory(atPath: root).filter { !$0.hasPrefix(".") }
            } catch {
                throw BenchError("\(root): cannot list the directory: \(error.localizedDescription)")
            }
        }
        relative.sort()
        /// Whether a file's first bytes are an image's (padded: the BMP test wants more than 26 bytes,
        /// and a tiny file is no image anyway); nil for folders.
        func sniffsAsImage(_ name: String) -> Bool? {
            let path = root + "/" + name
            var directory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &directory), !directory.boolValue else { return nil }
            guard let handle = FileHandle(forReadingAtPath: path) else { return true }  // reported when read
            let head = ((try? handle.read(upToCount: 16)) ?? nil).map { Array($0) } ?? []
            try? handle.close()
            return ImageFormat.sniff(head + [UInt8](repeating: 0, count: 32)) != nil
        }

        var scanned = ScannedSet()
        var candidates: [Candidate] = []
        if fm.fileExists(atPath: root + "/manifest.tsv") {
            scanned.hasManifest = true
            let manifest: OCRBenchManifest
            do {
                let text = try String(contentsOfFile: root + "/manifest.tsv", encoding: .utf8)
                manifest = try OCRBenchManifest.parse(text)
            } catch let error as BenchError {
                throw BenchError("\(root)/\(error.message)")
            } catch {
                throw BenchError("\(root)/manifest.tsv: cannot read it: \(error.localizedDescription)")
            }
            for row in manifest.rejected { problems.add(set, "manifest.tsv:\(row.line)", "scan", row.reason) }
            candidates = manifest.entries.map {
                Candidate(name: $0.image, id: $0.id, languages: $0.languages, group: $0.group, languagesListed: !$0.languages.isEmpty)
            }
            scanned.unscored = manifest.unscored.count
            let listed = Set((manifest.entries.map(\.image) + manifest.unscored).map {
                URL(fileURLWithPath: $0, relativeTo: URL(fileURLWithPath: root + "/")).standardizedFileURL.path
            })
            scanned.unlisted = relative.filter { !listed.contains(root + "/" + $0) && sniffsAsImage($0) == true }.count
        } else {
            for name in relative {
                switch sniffsAsImage(name) {
                case true?:
                    let folder = (name as NSString).deletingLastPathComponent
                    candidates.append(Candidate(name: name, id: OCRBenchManifest.stem(name), languages: defaults, group: folder))
                case false?: scanned.nonImages += 1
                case nil: continue
                }
            }
        }

        // The halves come from every listed (or found) image, read or not, so that an image left out
        // (a language not installed here) does not move the others to the other half.
        let halves = Half.assign(ids: candidates.map(\.id))
        let available = installed.filter { $0 != "osd" }.sorted().joined(separator: ", ")
        for candidate in candidates {
            let name = candidate.name
            var packs: [String] = []
            var missing: [String] = []
            for language in candidate.languages.isEmpty ? defaults : candidate.languages {
                if let pack = Languages.resolve(language, installed: installed), pack != "osd" {
                    if !packs.contains(pack) { packs.append(pack) }
                } else {
                    missing.append(language)
                }
            }
            guard missing.isEmpty else {
                problems.add(set, name, "scan", "language\(missing.count == 1 ? "" : "s") \(missing.joined(separator: "+")) not installed "
                    + "in \(options.configuration.dataPath) (installed: \(available))")
                continue
            }
            guard options.engine != .scene || InstalledEngines.sceneReads(packs) else {
                problems.add(set, name, "scan", "the scene engine does not read \(packs.joined(separator: "+")) (--engine scene)")
                continue
            }
            let path = URL(fileURLWithPath: name, relativeTo: URL(fileURLWithPath: root + "/")).standardizedFileURL.path
            var directory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &directory), !directory.boolValue else {
                problems.add(set, name, "scan", scanned.hasManifest ? "listed in manifest.tsv but not found" : "not found")
                continue
            }
            guard let data = fm.contents(atPath: path) else {
                problems.add(set, name, "scan", "cannot read the file")
                continue
            }
            let bytes = Array(data)
            guard let format = ImageFormat.sniff(bytes + [UInt8](repeating: 0, count: 32)) else {
                // Only a manifest can name a file that is no image; a scan found these by sniffing.
                problems.add(set, name, "scan", "not an image this benchmark reads")
                continue
            }
            guard bytes.count <= options.configuration.maxImageBytes else {
                problems.add(set, name, "scan", "\(bytes.count) bytes; the worker's limit is \(options.configuration.maxImageBytes)")
                continue
            }
            do {
                let header = try Image.header(bytes)
                guard header.width * header.height <= options.configuration.maxPixels else {
                    problems.add(set, name, "scan", "\(header.width)×\(header.height) pixels; the worker's limit is \(options.configuration.maxPixels)")
                    continue
                }
                // Decode it once: a damaged file is reported here, not as a failure in one run only.
                _ = try Image.decode(bytes, format: header.format, page: 0, jpegReduction: header.format == .jpeg ? 8 : 1)
                let stem = (path as NSString).deletingPathExtension
                let truthText = [stem + ".gt.txt", path + ".gt.txt"].lazy
                    .compactMap { try? String(contentsOfFile: $0, encoding: .utf8) }.first
                var image = BenchImage(path: path, name: name, bytes: bytes, truth: truthText.map(Self.words), format: format,
                                       width: header.width, height: header.height)
                image.truthText = truthText
                if let data = fm.contents(atPath: stem + ".key.json"),
                   let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                    image.keyFields = object.compactMapValues { $0 as? String }.filter { !$0.value.isEmpty }
                }
                image.set = set
                image.id = candidate.id
                image.half = halves[candidate.id] ?? .a
                image.group = candidate.group
                image.languages = packs
                image.languagesListed = candidate.languagesListed
                scanned.images.append(image)
            } catch {
                problems.add(set, name, "scan", String(describing: error))
            }
        }
        for problem in problems.all where problem.set == set {
            progress("\(set): left out \(problem.file): \(problem.message)")
        }
        return scanned
    }

    /// Lower-case words of letters and digits: what "found the word" compares.
    static func words(_ text: String) -> [String] {
        text.lowercased().split(whereSeparator: \.isWhitespace)
            .map { String($0.unicodeScalars.filter { CharacterSet.alphanumerics.contains($0) }.map(Character.init)) }
            .filter { !$0.isEmpty }
    }

    /// The share of `truth`'s words (with repeats) that `text` has, 0…1.
    static func recall(truth: [String], text: String) -> Double {
        guard !truth.isEmpty else { return 1 }
        var found: [String: Int] = [:]
        for word in words(text) { found[word, default: 0] += 1 }
        var hits = 0
        for word in truth where (found[word] ?? 0) > 0 {
            found[word]! -= 1
            hits += 1
        }
        return Double(hits) / Double(truth.count)
    }
}
