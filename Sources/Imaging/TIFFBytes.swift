/// Reads a TIFF structure's integers in its own byte order ("II" little-endian, "MM" big-endian), with
/// every read bounds-checked: TIFF files and JPEG's EXIF block (a TIFF inside APP1) are walked by hand,
/// without decoding, to count pages and find the orientation before any limit is passed.
struct TIFFBytes {
    let bytes: ArraySlice<UInt8>
    let little: Bool

    /// Nil when the bytes do not start with a TIFF byte-order mark.
    init?(_ bytes: ArraySlice<UInt8>) {
        guard bytes.count >= 8 else { return nil }
        switch (bytes[bytes.startIndex], bytes[bytes.startIndex + 1]) {
        case (0x49, 0x49): little = true
        case (0x4D, 0x4D): little = false
        default: return nil
        }
        self.bytes = bytes
    }

    /// The 16-bit integer at `offset` from the start of the structure, or nil past its end.
    func u16(_ offset: Int) -> Int? {
        guard offset >= 0, offset + 2 <= bytes.count else { return nil }
        let o = bytes.startIndex + offset
        return little ? Int(bytes[o]) | Int(bytes[o + 1]) << 8 : Int(bytes[o]) << 8 | Int(bytes[o + 1])
    }

    /// The 32-bit integer at `offset`, or nil past the end.
    func u32(_ offset: Int) -> Int? {
        guard offset >= 0, offset + 4 <= bytes.count else { return nil }
        let o = bytes.startIndex + offset
        let b = bytes[o..<o + 4].map(Int.init)
        return little ? b[0] | b[1] << 8 | b[2] << 16 | b[3] << 24 : b[0] << 24 | b[1] << 16 | b[2] << 8 | b[3]
    }
}
