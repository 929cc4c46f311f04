/// EXIF orientation (tag 0x0112) from a JPEG's APP1 segment. Leptonica and the tesseract CLI ignore
/// it, which is why a phone photo tagged "rotate 90" comes out as garbage without this.
public enum EXIFOrientation {
    /// The orientation value 1…8, or 1 when the file has none (or it cannot be read).
    public static func read(jpeg bytes: [UInt8]) -> Int {
        guard bytes.count > 4, bytes[0] == 0xFF, bytes[1] == 0xD8 else { return 1 }
        var offset = 2
        // Walk the markers up to the start of scan; APP1 "Exif\0\0" holds a TIFF structure.
        while offset + 4 <= bytes.count, bytes[offset] == 0xFF {
            let marker = bytes[offset + 1]
            if marker == 0xDA || marker == 0xD9 { break }
            let length = Int(bytes[offset + 2]) << 8 | Int(bytes[offset + 3])
            guard length >= 2, offset + 2 + length <= bytes.count else { break }
            if marker == 0xE1, length >= 8, Array(bytes[(offset + 4)..<(offset + 10)]) == [0x45, 0x78, 0x69, 0x66, 0, 0] {
                return tiffOrientation(Array(bytes[(offset + 10)..<(offset + 2 + length)])) ?? 1
            }
            offset += 2 + length
        }
        return 1
    }

    static func tiffOrientation(_ t: [UInt8]) -> Int? {
        guard let tiff = TIFFBytes(t[...]), let ifd = tiff.u32(4), let count = tiff.u16(ifd), count < 1_000 else { return nil }
        for i in 0..<count {
            let entry = ifd + 2 + i * 12
            guard let tag = tiff.u16(entry) else { return nil }
            if tag == 0x0112, let value = tiff.u16(entry + 8), (1...8).contains(value) { return value }
        }
        return nil
    }

    /// Clockwise quarter turns, then whether to mirror left–right, that make the stored image upright.
    public static func correction(for orientation: Int) -> (quarterTurns: Int, mirror: Bool) {
        switch orientation {
        case 2: (0, true)
        case 3: (2, false)
        case 4: (2, true)
        case 5: (1, true)
        case 6: (1, false)
        case 7: (3, true)
        case 8: (3, false)
        default: (0, false)
        }
    }
}
