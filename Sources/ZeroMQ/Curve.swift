internal import CZeroMQ

/// A CURVE key pair (32-byte Curve25519 keys) as libzmq makes it.
public struct CurveKeyPair: Sendable, Equatable {
    public let publicKey: [UInt8]
    public let secretKey: [UInt8]

    public init(publicKey: [UInt8], secretKey: [UInt8]) {
        self.publicKey = publicKey
        self.secretKey = secretKey
    }

    /// A fresh key pair from libzmq's `zmq_curve_keypair` (backed by libsodium).
    public static func generate() throws(ZMQError) -> CurveKeyPair {
        var publicText = [CChar](repeating: 0, count: 41)
        var secretText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_keypair(&publicText, &secretText) == 0 else { throw ZMQError.last("zmq_curve_keypair") }
        let pub = String(decoding: publicText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let sec = String(decoding: secretText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return CurveKeyPair(publicKey: try Z85.decode(pub), secretKey: try Z85.decode(sec))
    }

    /// The public key that belongs to a secret key (`zmq_curve_public`).
    public static func publicKey(forSecret secret: [UInt8]) throws(ZMQError) -> [UInt8] {
        // libzmq decodes into a fixed 32-byte buffer without checking: a short key would read leftover
        // memory, a long one overflow it.
        guard secret.count == 32 else {
            throw ZMQError(code: EINVAL, operation: "zmq_curve_public", context: "secret key is \(secret.count) bytes, not 32")
        }
        let secretText = try Z85.encode(secret)
        var publicText = [CChar](repeating: 0, count: 41)
        guard zmq_curve_public(&publicText, secretText) == 0 else { throw ZMQError.last("zmq_curve_public") }
        return try Z85.decode(String(decoding: publicText.prefix(40).map { UInt8(bitPattern: $0) }, as: UTF8.self))
    }
}

/// Z85 (ZeroMQ RFC 32) text encoding of binary keys, through libzmq's own codec.
public enum Z85 {
    /// Encodes bytes whose count is a multiple of 4.
    public static func encode(_ bytes: [UInt8]) throws(ZMQError) -> String {
        guard bytes.count % 4 == 0 else { throw ZMQError(code: EINVAL, operation: "zmq_z85_encode", context: "length \(bytes.count) is not a multiple of 4") }
        var out = [CChar](repeating: 0, count: bytes.count * 5 / 4 + 1)
        guard zmq_z85_encode(&out, bytes, bytes.count) != nil else { throw ZMQError.last("zmq_z85_encode") }
        return String(decoding: out.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Decodes text whose length is a multiple of 5.
    public static func decode(_ text: String) throws(ZMQError) -> [UInt8] {
        let count = text.utf8.count
        if count == 0 { return [] }
        guard count % 5 == 0 else { throw ZMQError(code: EINVAL, operation: "zmq_z85_decode", context: "length \(count) is not a multiple of 5") }
        var out = [UInt8](repeating: 0, count: count * 4 / 5)
        guard zmq_z85_decode(&out, text) != nil else { throw ZMQError(code: EINVAL, operation: "zmq_z85_decode", context: "not Z85 text") }
        return out
    }
}
