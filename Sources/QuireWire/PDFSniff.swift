/// Whether an upload is a PDF, told from its bytes as readers tell it: `%PDF-` within the first
/// 1,024 bytes (a file may begin with junk before its header). The worker reads PDFs; the gateway
/// routes that read only images refuse them by this test.
public enum PDFSniff {
    public static func isPDF(_ bytes: [UInt8]) -> Bool {
        let marker = Array("%PDF-".utf8)
        let end = min(bytes.count, 1_024) - marker.count
        guard end >= 0 else { return false }
        for start in 0...end where bytes[start] == marker[0] && Array(bytes[start..<start + marker.count]) == marker { return true }
        return false
    }
}
