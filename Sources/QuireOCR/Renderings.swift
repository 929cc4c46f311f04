import Imaging
import QuireRecognition
import Tesseract

/// Tesseract renders in the pixels of the image it read, which Quire may have scaled (small text
/// enlarged, large photos reduced) and deskewed. The result is in pixels of the upright uploaded page;
/// this maps a rendering's boxes back the same way (`ResultBuilder.box`: the box around the mapped
/// corners, left/top down, right/bottom up, within the page); sizes scale by the same factor.
enum Renderings {
    static func map(_ text: String, _ rendering: Engine.Rendering, toPage: Affine, size: (width: Int, height: Int)) -> String {
        guard !toPage.isIdentity else { return text }
        let scale = 1 / toPage.lengthScale
        func mapped(_ l: Double, _ t: Double, _ r: Double, _ b: Double) -> (Int, Int, Int, Int) {
            toPage.pixelBox(x: l, y: t, width: r - l, height: b - t, within: size)
        }
        func near(_ v: Substring) -> String {
            let x = (Double(v) ?? 0) / scale
            return v.contains(".") ? String((x * 100).rounded() / 100) : String(Int(x.rounded()))
        }
        switch rendering {
        case .text:
            return text
        case .tsv:
            // level page block par line word left top width height conf text
            return text.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
                var c = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                guard c.count >= 12, let l = Double(c[6]), let t = Double(c[7]), let w = Double(c[8]), let h = Double(c[9]) else {
                    return String(line)
                }
                let (x0, y0, x1, y1) = mapped(l, t, l + w, t + h)
                c[6] = String(x0); c[7] = String(y0)
                c[8] = String(x1 - x0); c[9] = String(y1 - y0)
                return c.joined(separator: "\t")
            }.joined(separator: "\n")
        case .hocr:
            return text
                .replacing(/bbox (\d+) (\d+) (\d+) (\d+)/) { m in
                    let (x0, y0, x1, y1) = mapped(Double(m.1) ?? 0, Double(m.2) ?? 0, Double(m.3) ?? 0, Double(m.4) ?? 0)
                    return "bbox \(x0) \(y0) \(x1) \(y1)"
                }
                .replacing(/baseline (-?[\d.]+) (-?[\d.]+)/) { m in "baseline \(m.1) \(near(m.2))" }
                .replacing(/(x_size|x_descenders|x_ascenders) ([\d.]+)/) { m in "\(m.1) \(near(m.2))" }
                .replacing(/scan_res (\d+) (\d+)/) { m in "scan_res \(near(m.1)) \(near(m.2))" }
        case .alto:
            // Each element's four attributes map together, as one box.
            return text.replacing(/<[^<>]*HPOS="[^<>]*>/) { tag -> String in
                let element = String(tag.output)
                var found: [String: Double] = [:]
                for m in element.matches(of: /\b(HPOS|VPOS|WIDTH|HEIGHT)="([\d.]+)"/) { found[String(m.1)] = Double(m.2) }
                func value(_ name: String) -> Double? { found[name] }
                guard let l = value("HPOS"), let t = value("VPOS"), let w = value("WIDTH"), let h = value("HEIGHT") else {
                    return element.replacing(/(HPOS|VPOS|WIDTH|HEIGHT)="([\d.]+)"/) { m in "\(m.1)=\"\(near(m.2))\"" }
                }
                let (x0, y0, x1, y1) = mapped(l, t, l + w, t + h)
                let values = ["HPOS": x0, "VPOS": y0, "WIDTH": x1 - x0, "HEIGHT": y1 - y0]
                return element.replacing(/(HPOS|VPOS|WIDTH|HEIGHT)="([\d.]+)"/) { m in "\(m.1)=\"\(values[String(m.1)] ?? 0)\"" }
            }
        }
    }
}
