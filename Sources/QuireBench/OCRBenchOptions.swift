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

/// What `quire bench ocr` runs, with every default in one place.
public struct OCRBenchOptions: Sendable, Equatable {
    /// The folders of images, one set each, named by the folder's last path component.
    public var directories: [String]
    /// Look into subfolders too; only the top level when false (a folder with a manifest reads what it lists).
    public var recursive = true
    /// OCR worker threads, `tesseract` processes at a time and raw engine threads alike.
    public var workers = 2
    /// Measured passes over the images (each run: Quire under load, one in flight, CLI, raw engine).
    public var repeats = 1
    /// Languages as given (BCP-47 or Tesseract names); resolved to installed packs for all three.
    /// For the images of folders without a manifest, and for manifest rows without `lang`.
    public var languages: [String] = ["eng"]
    /// The page segmentation, the same for all three.
    public var mode: OCRRequest.Mode = .document
    /// The engine Quire and the raw engine read with (nil: the worker's default, `auto`).
    public var engine: OCRRequest.Engine?
    /// The worker's limits and language packs (also the CLI's `--tessdata-dir`).
    public var configuration = OCRConfiguration()
    /// Switch the worker's scaling policy off (Quire and the raw engine alike): every image is read at
    /// its own size, as the CLI reads it. To see what the policy costs or saves.
    public var noScaling = false {
        didSet {
            guard noScaling else { return }
            configuration.textScaling = false
            configuration.maxRecognitionPixels = .max
        }
    }
    /// Also read every image through Quire without languages (the request names none, so the worker
    /// detects them), in the same passes, and report that reading's accuracy, whether the page's
    /// language came out right, what English pages pay for it and what detection costs (issue 35).
    public var detect = false
    /// The `tesseract` executable; nil skips the CLI.
    public var tesseract: String? = "/usr/bin/tesseract"
    /// One image not answered (or one `tesseract` process not finished) within this fails that image.
    public var requestTimeout: Milliseconds = 300_000
    /// Every phase stops sending new images after this long and reports what it measured; the
    /// warm-ups fail past it.
    public var phaseTimeout: Milliseconds = 1_800_000

    public init(directories: [String]) { self.directories = directories }

    /// `line` when every folder is named `lines`, else `document` (one mode for all sets).
    public static func defaultMode(for directories: [String]) -> OCRRequest.Mode {
        !directories.isEmpty && directories.allSatisfy { setName(of: $0) == "lines" } ? .line : .document
    }

    /// A folder's set name: its last path component (`/data/receipts-dev/` → `receipts-dev`).
    public static func setName(of directory: String) -> String {
        URL(fileURLWithPath: directory).standardizedFileURL.lastPathComponent
    }

    /// The sets' names, one per folder, in order: a name that repeats gets ` (2)`, ` (3)`, … after it.
    public static func setNames(_ directories: [String]) -> [String] {
        var used: [String: Int] = [:]
        return directories.map { directory in
            let name = setName(of: directory)
            let count = (used[name] ?? 0) + 1
            used[name] = count
            return count == 1 ? name : "\(name) (\(count))"
        }
    }

    /// Tesseract's `--psm` for a mode, as the worker maps it.
    public static func psm(for mode: OCRRequest.Mode) -> Int {
        switch mode {
        case .document: 3
        case .text: 11
        case .line: 7
        }
    }
}
