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

    /// Every file in the folder that sniffs as an image and decodes, sorted by path. Files that are no
    /// image are counted; images that cannot be read (or that the worker would refuse) are reported
    /// in `problems` and left out, so that all three runs read the same set.
    func scan(problems: Problems) throws -> (images: [BenchImage], nonImages: Int) {
        let fm = FileManager.default
        var isDirectory: ObjCBool = false
        guard fm.fileExists(atPath: options.directory, isDirectory: &isDirectory), isDirectory.boolValue else {
            throw BenchError("\(options.directory): not a directory")
        }
        let root = URL(fileURLWithPath: options.directory).standardizedFileURL.path
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
        var images: [BenchImage] = []
        var nonImages = 0
        for name in relative {
            let path = root + "/" + name
            var directory: ObjCBool = false
            guard fm.fileExists(atPath: path, isDirectory: &directory), !directory.boolValue else { continue }
            guard let handle = FileHandle(forReadingAtPath: path) else {
                problems.add(name, "scan", "cannot open the file")
                continue
            }
            let head = ((try? handle.read(upToCount: 16)) ?? nil).map { Array($0) } ?? []
            try? handle.close()
            // Padded: the BMP test wants more than 26 bytes, and a tiny file is no image anyway.
            guard ImageFormat.sniff(head + [UInt8](repeating: 0, count: 32)) != nil else {
                nonImages += 1
                continue
            }
            guard let data = fm.contents(atPath: path) else {
                problems.add(name, "scan", "cannot read the file")
                continue
            }
            let bytes = Array(data)
            guard let format = ImageFormat.sniff(bytes) else { nonImages += 1; continue }
            guard bytes.count <= options.configuration.maxImageBytes else {
                problems.add(name, "scan", "\(bytes.count) bytes; the worker's limit is \(options.configuration.maxImageBytes)")
                continue
            }
            do {
                let header = try Image.header(bytes)
                guard header.width * header.height <= options.configuration.maxPixels else {
                    problems.add(name, "scan", "\(header.width)×\(header.height) pixels; the worker's limit is \(options.configuration.maxPixels)")
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
                let folder = (name as NSString).deletingLastPathComponent
                image.group = folder.isEmpty ? (manifestGroups(root)[(name as NSString).lastPathComponent] ?? "") : folder
                images.append(image)
            } catch {
                problems.add(name, "scan", String(describing: error))
            }
        }
        for problem in problems.all { progress("left out \(problem.file): \(problem.message)") }
        return (images, nonImages)
    }

    /// The `group` column of DIR/manifest.tsv by image file name (a header row names the columns
    /// `image` and `group`), empty when there is none.
    func manifestGroups(_ root: String) -> [String: String] {
        if let cached = manifestCache.withLock({ $0 }) { return cached }
        var groups: [String: String] = [:]
        if let text = try? String(contentsOfFile: root + "/manifest.tsv", encoding: .utf8) {
            let rows = text.split(whereSeparator: \.isNewline).map { $0.split(separator: "\t", omittingEmptySubsequences: false).map(String.init) }
            if let header = rows.first, let imageColumn = header.firstIndex(of: "image"), let groupColumn = header.firstIndex(of: "group") {
                for row in rows.dropFirst() where row.count > max(imageColumn, groupColumn) { groups[row[imageColumn]] = row[groupColumn] }
            }
        }
        manifestCache.withLock { $0 = groups }
        return groups
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
