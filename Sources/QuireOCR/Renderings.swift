import Tesseract

/// Tesseract renders in the pixels of the image it read, which Quire may have scaled (low-resolution
/// scans enlarged, large photos reduced). The result is in pixels of the uploaded page; this maps a
/// rendering's coordinates back the same way (`ResultBuilder.box`: left/top down, right/bottom up).
enum Renderings {
    static func rescale(_ text: String, _ rendering: Engine.Rendering, scale: Double) -> String {
        guard abs(scale - 1) > 1e-9 else { return text }
        func down(_ v: Substring) -> Int { Int((Double(v)! / scale).rounded(.down)) }
        func up(_ v: Double) -> Int { Int((v / scale).rounded(.up)) }
        func near(_ v: Substring) -> String {
            let x = Double(v)! / scale
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
                let x0 = down(Substring(c[6])), y0 = down(Substring(c[7]))
                c[6] = String(x0); c[7] = String(y0)
                c[8] = String(up(l + w) - x0); c[9] = String(up(t + h) - y0)
                return c.joined(separator: "\t")
            }.joined(separator: "\n")
        case .hocr:
            return text
                .replacing(/bbox (\d+) (\d+) (\d+) (\d+)/) { m in
                    "bbox \(down(m.1)) \(down(m.2)) \(up(Double(m.3)!)) \(up(Double(m.4)!))"
                }
                .replacing(/baseline (-?[\d.]+) (-?[\d.]+)/) { m in "baseline \(m.1) \(near(m.2))" }
                .replacing(/(x_size|x_descenders|x_ascenders) ([\d.]+)/) { m in "\(m.1) \(near(m.2))" }
                .replacing(/scan_res (\d+) (\d+)/) { m in "scan_res \(near(m.1)) \(near(m.2))" }
        case .alto:
            return text.replacing(/(HPOS|VPOS|WIDTH|HEIGHT)="([\d.]+)"/) { m in "\(m.1)=\"\(near(m.2))\"" }
        }
    }
}
