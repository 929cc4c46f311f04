import Testing
import QuireWire
import QuireTestSupport

// MARK: Frame literals

// `bytes(_:)`, a string's UTF-8 bytes, comes from QuireTestSupport.

/// Protocol headers spelled out byte by byte, so that the tests do not trust the constants under test.
enum Header {
    static let mdpc02: [UInt8] = [0x4D, 0x44, 0x50, 0x43, 0x30, 0x32] // "MDPC02"
    static let mdpw02: [UInt8] = [0x4D, 0x44, 0x50, 0x57, 0x30, 0x32] // "MDPW02"
    static let mdpc01: [UInt8] = [0x4D, 0x44, 0x50, 0x43, 0x30, 0x31] // "MDPC01"
    static let mdpw01: [UInt8] = [0x4D, 0x44, 0x50, 0x57, 0x30, 0x31] // "MDPW01"
}

/// A typical ROUTER-generated peer identity (a zero byte and a 32-bit integer).
let routerAddress: [UInt8] = [0x00, 0x6B, 0x8B, 0x45, 0x67]

/// A body exercising bytes that are not text: NUL, 0xFF, a lone continuation byte, an empty frame.
let binaryBody: [[UInt8]] = [[0x00, 0xFF, 0x80, 0x7F], [], [0xC3, 0x28], Array(0...255)]

// MARK: Result helpers

extension Result {
    var successValue: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    var failureValue: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

// MARK: Named argument types (readable names in test output)

extension Dialect: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

extension ReplyKind: CustomTestStringConvertible {
    public var testDescription: String { self == .partial ? "partial" : "final" }
}
