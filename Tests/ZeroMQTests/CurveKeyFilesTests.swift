import Foundation
import Testing
import ZeroMQ

@Suite("CURVE key files")
struct CurveKeyFilesTests {
    func write(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "quire-curve-\(UUID().uuidString)"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("a rendered pair reads back, whatever Z85 characters ('=' included) the keys hold", arguments: 0..<20)
    func roundTrip(_ round: Int) throws {
        let pair = try CurveKeyPair.generate()
        let files = try CurveKeyFiles.render(pair)
        let keyPath = try write(files.keyFile)
        let pubPath = try write(files.publicFile)
        defer { try? FileManager.default.removeItem(atPath: keyPath); try? FileManager.default.removeItem(atPath: pubPath) }
        #expect(try CurveKeyFiles.loadKeyPair(path: keyPath) == pair)
        #expect(try CurveKeyFiles.loadPublicKey(pubPath) == pair.publicKey)
        #expect(try CurveKeyFiles.loadPublicKey(try Z85.encode(pair.publicKey)) == pair.publicKey)
        #expect(try CurveKeyFiles.loadAllowList(path: pubPath) == [pair.publicKey])
    }

    @Test("czmq's quoted 'public-key = \"…\"' form, comments, and mismatched or broken keys")
    func formats() throws {
        let pair = try CurveKeyPair.generate()
        let other = try CurveKeyPair.generate()
        let czmq = try write("#   ZeroMQ CURVE Secret Certificate\ncurve\n    public-key = \"\(try Z85.encode(pair.publicKey))\"\n    secret-key = \"\(try Z85.encode(pair.secretKey))\"\n")
        #expect(try CurveKeyFiles.loadKeyPair(path: czmq) == pair)
        let mismatched = try write("public \(try Z85.encode(other.publicKey))\nsecret \(try Z85.encode(pair.secretKey))\n")
        #expect(throws: CurveKeyError.self) { try CurveKeyFiles.loadKeyPair(path: mismatched) }
        let short = try write("secret abcde\n")
        #expect(throws: CurveKeyError.self) { try CurveKeyFiles.loadKeyPair(path: short) }
        let list = try write("# clients\n\(try Z85.encode(pair.publicKey))\n\n\(try Z85.encode(other.publicKey))\n")
        #expect(try CurveKeyFiles.loadAllowList(path: list) == [pair.publicKey, other.publicKey])
        #expect(throws: CurveKeyError.self) { try CurveKeyFiles.loadAllowList(path: "/nonexistent/allow") }
        for path in [czmq, mismatched, short, list] { try? FileManager.default.removeItem(atPath: path) }
    }
}
