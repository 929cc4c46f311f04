import Foundation

/// How a client or worker connects with CURVE: the broker's public key and its own key pair.
public struct CurveClientSettings: Sendable, Equatable {
    public var serverKey: [UInt8]
    public var keyPair: CurveKeyPair

    public init(serverKey: [UInt8], keyPair: CurveKeyPair) {
        self.serverKey = serverKey
        self.keyPair = keyPair
    }
}

/// A key file that cannot be used.
public struct CurveKeyError: Error, Sendable, Equatable, CustomStringConvertible {
    public var message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// Quire's CURVE key files, Z85 text (ZeroMQ RFC 32):
/// - a key pair file (`NAME.key`, mode 0600): the lines `public <z85>` and `secret <z85>`;
/// - a public key file (`NAME.pub`): the line `public <z85>` (a bare 40-character key also reads);
/// - an allow-list: a file of public keys, one per line (`#` comments), or a folder of `*.pub` files.
public enum CurveKeyFiles {
    /// The two files' contents for a key pair.
    public static func render(_ pair: CurveKeyPair) throws(CurveKeyError) -> (keyFile: String, publicFile: String) {
        do {
            let pub = try Z85.encode(pair.publicKey)
            let sec = try Z85.encode(pair.secretKey)
            return ("# Quire CURVE key pair: keep secret\npublic \(pub)\nsecret \(sec)\n", "# Quire CURVE public key\npublic \(pub)\n")
        } catch {
            throw CurveKeyError("cannot encode the key pair: \(error)")
        }
    }

    private static func fields(_ text: String) -> [(String?, String)] {
        text.split(whereSeparator: \.isNewline).compactMap { raw in
            let line = raw.trimmingCharacters(in: .whitespaces)
            if line.isEmpty || line.hasPrefix("#") { return nil }
            // Whitespace separates; '=' is a Z85 character, so it is a separator only on its own
            // (czmq's `public-key = "…"`).
            let parts = line.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
                .filter { !$0.isEmpty && $0 != "=" }
            if parts.count == 1 { return (nil, parts[0]) }
            return (parts[0].lowercased().replacingOccurrences(of: "-key", with: ""), parts.last ?? "")
        }
    }

    private static func key(_ z85: String, _ what: String) throws(CurveKeyError) -> [UInt8] {
        guard z85.utf8.count == 40, let bytes = try? Z85.decode(z85), bytes.count == 32 else {
            throw CurveKeyError("\(what): not a 40-character Z85 CURVE key")
        }
        return bytes
    }

    private static func read(_ path: String) throws(CurveKeyError) -> String {
        guard let data = FileManager.default.contents(atPath: path) else { throw CurveKeyError("cannot read '\(path)'") }
        return String(decoding: data, as: UTF8.self)
    }

    /// Reads a key pair file. The public key is derived from the secret when the file has none.
    public static func loadKeyPair(path: String) throws(CurveKeyError) -> CurveKeyPair {
        let entries = fields(try read(path))
        guard let secretText = entries.first(where: { $0.0 == "secret" || ($0.0 == nil && entries.count == 1) })?.1 else {
            throw CurveKeyError("'\(path)' has no 'secret' line")
        }
        let secret = try key(secretText, "'\(path)' secret key")
        let derived: [UInt8]
        do { derived = try CurveKeyPair.publicKey(forSecret: secret) } catch { throw CurveKeyError("'\(path)': \(error)") }
        if let publicText = entries.first(where: { $0.0 == "public" })?.1 {
            guard try key(publicText, "'\(path)' public key") == derived else {
                throw CurveKeyError("'\(path)': the public key does not belong to the secret key")
            }
        }
        return CurveKeyPair(publicKey: derived, secretKey: secret)
    }

    /// A public key given as Z85 text or as the path of a `.pub` (or `.key`) file.
    public static func loadPublicKey(_ textOrPath: String) throws(CurveKeyError) -> [UInt8] {
        if textOrPath.utf8.count == 40, let bytes = try? Z85.decode(textOrPath), bytes.count == 32,
           !FileManager.default.fileExists(atPath: textOrPath) {
            return bytes
        }
        let entries = fields(try read(textOrPath))
        guard let text = entries.first(where: { $0.0 == "public" || $0.0 == nil })?.1 else {
            throw CurveKeyError("'\(textOrPath)' has no public key")
        }
        return try key(text, "'\(textOrPath)' public key")
    }

    /// The allowed client keys: from a file with one key per line, or a folder of `*.pub` files.
    public static func loadAllowList(path: String) throws(CurveKeyError) -> Set<[UInt8]> {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else {
            throw CurveKeyError("no allow-list at '\(path)'")
        }
        var keys: Set<[UInt8]> = []
        if isDirectory.boolValue {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
            for name in names.sorted() where name.hasSuffix(".pub") {
                keys.insert(try loadPublicKey((path as NSString).appendingPathComponent(name)))
            }
        } else {
            for (label, text) in fields(try read(path)) where label == nil || label == "public" {
                keys.insert(try key(text, "'\(path)'"))
            }
        }
        return keys
    }
}
