import Foundation
import QuireFormats
import QuireOCR
import QuireWire

/// `--format` values: the Quire result, Tesseract's renderings, and the foreign shapes converted
/// from the result on this side (`QuireFormats`).
let outputFormats = ["json", "text", "hocr", "alto", "tsv", "pdf"] + ResultFormat.allCases.map(\.rawValue)

/// What `quire recognize` does with the outputs beyond the JSON result: the PDF frame, the foreign
/// shapes (converted here, from the result), the overlay picture.
extension RecognizeCommand {
    /// `--format pdf` and `--overlay` each make one file from one image, and a PDF on a terminal
    /// helps nobody.
    static func checkOneFileOutputs(files: [String], format: String, overlay: String?) throws(UsageError) {
        if files.count > 1 && (format == "pdf" || overlay != nil) {
            throw UsageError(command: "quire recognize", message: format == "pdf" ? "--format pdf takes one image file" : "--overlay takes one image file")
        }
        if format == "pdf" && isatty(1) == 1 {
            throw UsageError(command: "quire recognize", message: "--format pdf writes a PDF to standard output: redirect it (> out.pdf)")
        }
    }

    /// Writes the PDF frame the result's attachment names (frame 1 is the JSON) to standard output.
    static func writePDF(_ result: OCRResult, attachments: [[UInt8]], name: String) -> Bool {
        guard let pdf = result.attachments?.first(where: { $0.output == "pdf" }), pdf.frame >= 2, pdf.frame - 2 < attachments.count,
              attachments[pdf.frame - 2].count == pdf.size else {
            printError("quire recognize: \(name): the reply has no PDF (asked for with --format pdf? an older worker?)")
            return false
        }
        FileHandle.standardOutput.write(Data(attachments[pdf.frame - 2]))
        return true
    }

    /// Prints the result in another service's shape (one JSON line per file when there are many).
    static func printShape(_ shape: ResultFormat, _ result: OCRResult, name: String, many: Bool) -> Bool {
        guard let json = try? shape.render(result) else {
            printError("quire recognize: \(name): the result cannot be converted to \(shape.rawValue)")
            return false
        }
        let body = String(decoding: json, as: UTF8.self)
        printOut(many ? "{\"file\":\(jsonString(name)),\"result\":\(body)}" : body)
        return true
    }

    /// Draws the result's boxes on the image and writes the PNG to `path`; false (said on standard
    /// error) when it cannot.
    static func writeOverlay(_ frame: [UInt8], image: [UInt8], to path: String, name: String) -> Bool {
        guard let result = OCRResult(replyFrame: frame) else { return false }
        if PDFSniff.isPDF(image) {
            printError("quire recognize: \(name): no overlay: it is drawn on an image's pixels, and a PDF has none (the result has each page's boxes at its `resolution`)")
            return false
        }
        do {
            let png = try Outputs.overlay(result, image: image)
            guard FileManager.default.createFile(atPath: path, contents: Data(png)) else {
                printError("quire recognize: \(path): cannot write the overlay")
                return false
            }
            return true
        } catch {
            printError("quire recognize: \(name): no overlay: \(error)")
            return false
        }
    }
}

/// A page's documents as text lines after its text (`--format text --fields receipt`): each field's
/// name, its value and, where it differs, the text it was read from; nothing for a page without documents.
func fieldsText(_ page: OCRResult.Page) -> String {
    guard let documents = page.documents, !documents.isEmpty else { return "" }
    func value(_ field: OCRResult.Field) -> String {
        if let currency = field.valueCurrency {
            return [currency.currencyCode, String(format: "%.2f", currency.amount)].compactMap { $0 }.joined(separator: " ")
        }
        return field.valueDate ?? field.valueTime ?? field.valuePhoneNumber ?? field.valueString ?? field.valueNumber.map { String($0) } ?? field.content ?? ""
    }
    func lines(_ fields: [String: OCRResult.Field], indent: String) -> [String] {
        fields.sorted { $0.key < $1.key }.flatMap { name, field -> [String] in
            if let array = field.valueArray {
                return ["\(indent)\(name):"] + array.enumerated().flatMap { index, item in
                    ["\(indent)  \(index + 1)."] + lines(item.valueObject ?? [:], indent: indent + "    ")
                }
            }
            let shown = value(field)
            let printed = field.content.map { $0 == shown ? "" : "  (\"\($0)\")" } ?? ""
            return ["\(indent)\(name): \(shown)\(printed)  [\(String(format: "%.2f", field.confidence))]"]
        }
    }
    return documents.map { document in (["-- \(document.kind) --"] + lines(document.fields, indent: "")).joined(separator: "\n") + "\n" }.joined()
}
