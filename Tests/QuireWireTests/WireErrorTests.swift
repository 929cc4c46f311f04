import Foundation
import Testing
import QuireWire
import QuireTestSupport

extension WireError.Code: CustomTestStringConvertible {
    public var testDescription: String { rawValue }
}

private func text(_ frame: [UInt8]) -> String { String(decoding: frame, as: UTF8.self) }

private func jsonObject(_ frame: [UInt8]) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(frame)) as? [String: Any])
}

/// The error schema, found from this file's path: `Tests/QuireWireTests/<file>` → package root.
private func loadSchema() throws -> [String: Any] {
    let root = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent() // QuireWireTests
        .deletingLastPathComponent() // Tests
        .deletingLastPathComponent() // package root
    let data = try Data(contentsOf: root.appendingPathComponent("proto-json/error.schema.json"))
    return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
}

private func errorProperties(_ schema: [String: Any]) throws -> [String: Any] {
    let properties = try #require(schema["properties"] as? [String: Any])
    let error = try #require(properties["error"] as? [String: Any])
    return error
}

@Suite("WireError")
struct WireErrorTests {
    // MARK: jsonFrame

    @Test("jsonFrame for a simple error is this exact string")
    func exactSimpleFrame() {
        #expect(text(WireError(.busy, "queue full").jsonFrame)
            == #"{"error":{"code":"busy","message":"queue full","retryable":true}}"#)
        #expect(text(WireError(.badRequest, "empty service name").jsonFrame)
            == #"{"error":{"code":"bad_request","message":"empty service name","retryable":false}}"#)
    }

    @Test("jsonFrame with every field: keys sorted, optional fields present")
    func exactFullFrame() {
        let error = WireError(.tooLarge, "frame over limit", retryable: true, service: "ocr", attempts: 2, limit: 1_048_576)
        #expect(text(error.jsonFrame)
            == #"{"error":{"attempts":2,"code":"too_large","limit":1048576,"message":"frame over limit","retryable":true,"service":"ocr"}}"#)
    }

    @Test("jsonFrame is valid JSON whose keys appear in sorted order", arguments: WireError.Code.allCases)
    func validSortedJSON(_ code: WireError.Code) throws {
        let error = WireError(code, "went wrong", service: "svc", attempts: 1, limit: 9)
        let frame = error.jsonFrame
        let object = try jsonObject(frame)
        #expect(Array(object.keys) == ["error"])
        let body = try #require(object["error"] as? [String: Any])
        #expect(Set(body.keys) == ["attempts", "code", "limit", "message", "retryable", "service"])
        #expect(body["code"] as? String == code.rawValue)
        #expect(body["message"] as? String == "went wrong")
        #expect(body["retryable"] as? Bool == code.isRetryableByDefault)
        #expect(body["service"] as? String == "svc")
        #expect(body["attempts"] as? Int == 1)
        #expect(body["limit"] as? Int == 9)
        // Sorted keys: each key occurs after the one before it in the text.
        let json = text(frame)
        let positions = try ["attempts", "code", "limit", "message", "retryable", "service"].map { key in
            try #require(json.range(of: "\"\(key)\":")).lowerBound
        }
        #expect(positions == positions.sorted())
    }

    @Test("jsonFrame leaves out absent optional fields")
    func absentFieldsOmitted() throws {
        let body = try #require(try jsonObject(WireError(.timeout, "late").jsonFrame)["error"] as? [String: Any])
        #expect(Set(body.keys) == ["code", "message", "retryable"])
    }

    @Test("jsonFrame escapes quotes and control characters but not slashes, and keeps non-ASCII as UTF-8")
    func escaping() throws {
        let error = WireError(.internal, "path a/b \"q\" tab\t é")
        let json = text(error.jsonFrame)
        #expect(json.contains(#"a/b"#))
        #expect(json.contains(#"\"q\""#))
        #expect(json.contains(#"\t"#))
        #expect(error.jsonFrame.contains(0xC3) && error.jsonFrame.contains(0xA9))
        #expect(!json.contains("\t"))
        #expect(WireError(jsonFrame: error.jsonFrame) == error)
    }

    // MARK: init?(jsonFrame:)

    @Test("init?(jsonFrame:) round-trips every code", arguments: WireError.Code.allCases)
    func roundTrip(_ code: WireError.Code) throws {
        let minimal = WireError(code, "m")
        #expect(WireError(jsonFrame: minimal.jsonFrame) == minimal)
        let full = WireError(code, "full message", retryable: !code.isRetryableByDefault, service: "ocr", attempts: 3, limit: 0)
        let decoded = try #require(WireError(jsonFrame: full.jsonFrame))
        #expect(decoded == full)
        #expect(decoded.code == code)
        #expect(decoded.retryable == !code.isRetryableByDefault)
        #expect(decoded.attempts == 3)
        #expect(decoded.limit == 0)
    }

    @Test("init?(jsonFrame:) reads hand-written JSON in any key order and with whitespace inside")
    func readsForeignJSON() throws {
        let frame = bytes(#"{ "error" : { "retryable": false, "message": "no", "code": "invalid_json", "extra": [1, {"x": null}] } }"#)
        let error = try #require(WireError(jsonFrame: frame))
        #expect(error == WireError(.invalidJSON, "no"))
    }

    @Test("an unknown code maps to internal with the original code kept in the message")
    func unknownCode() throws {
        let frame = bytes(#"{"error":{"code":"quota_exceeded","message":"too many pages","retryable":true,"service":"ocr"}}"#)
        let error = try #require(WireError(jsonFrame: frame))
        #expect(error.code == .internal)
        #expect(error.message == "quota_exceeded: too many pages")
        #expect(error.retryable == true)
        #expect(error.service == "ocr")
        #expect(error.description == "internal: quota_exceeded: too many pages")
    }

    @Test("an unknown code keeps attempts and limit like it keeps service")
    func unknownCodeKeepsNumbers() throws {
        let frame = bytes(#"{"error":{"code":"quota_exceeded","message":"m","retryable":true,"service":"ocr","attempts":2,"limit":100}}"#)
        let error = try #require(WireError(jsonFrame: frame))
        #expect(error.code == .internal)
        #expect(error.service == "ocr")
        #expect(error.attempts == 2)
        #expect(error.limit == 100)
    }

    @Test("a code is case-sensitive: BUSY is unknown")
    func codeCaseSensitive() throws {
        let error = try #require(WireError(jsonFrame: bytes(#"{"error":{"code":"BUSY","message":"m","retryable":true}}"#)))
        #expect(error.code == .internal)
        #expect(error.message == "BUSY: m")
    }

    static let notErrors: [String] = [
        #"{"result":"ok"}"#,
        #"{}"#,
        #"{"error":"boom"}"#,
        #"{"error":null}"#,
        #"{"error":{"code":"busy"}}"#,
        #"{"error":{"code":"busy","message":"m"}}"#,
        #"{"error":{"message":"m","retryable":true}}"#,
        #"{"error":{"code":"busy","message":"m","retryable":"yes"}}"#,
        #"{"error":{"code":7,"message":"m","retryable":true}}"#,
        #"[{"error":{"code":"busy","message":"m","retryable":true}}]"#,
        #""error""#,
        #"null"#,
        #"{"error":{"code":"busy","message":"m","retryable":true}"#,
        "{not json",
        "{",
        "hello",
        "",
    ]

    @Test("non-error JSON and garbage give nil", arguments: notErrors)
    func notAnError(_ frame: String) {
        #expect(WireError(jsonFrame: bytes(frame)) == nil)
    }

    @Test("binary garbage gives nil")
    func binaryGarbage() {
        #expect(WireError(jsonFrame: []) == nil)
        #expect(WireError(jsonFrame: [0xFF, 0xFE, 0x00]) == nil)
        #expect(WireError(jsonFrame: [0x7B, 0xFF, 0x7D]) == nil) // "{", invalid byte, "}"
        #expect(WireError(jsonFrame: Array(0...255)) == nil)
    }

    // MARK: Codes

    /// Every code with its expected default. A new code must be added here, deciding its retryability.
    static let expectedRetryable: [(WireError.Code, Bool)] = [
        (.badRequest, false), (.invalidJSON, false), (.tooLarge, false), (.busy, true),
        (.serviceUnavailable, true), (.timeout, true), (.workerLost, true), (.shuttingDown, true), (.internal, false),
        // The OCR worker's codes: all about the request's image or languages, so not retryable.
        (.notAnImage, false), (.unsupportedFormat, false), (.corruptImage, false), (.tooManyPixels, false),
        (.tooManyPages, false), (.passwordProtected, false), (.unknownLanguage, false), (.engineFailure, false),
        // Durable jobs: a full or read-only store may recover; the others are final answers about one job.
        (.storageFailure, true), (.unknownJob, false), (.unknownService, false), (.jobDead, false),
        (.jobCancelled, false), (.deadlineExceeded, false),
        // OAuth 2.0 token endpoint errors: the same credentials fail the same way again.
        (.invalidRequest, false), (.invalidClient, false), (.invalidGrant, false), (.unauthorizedClient, false),
        (.unsupportedGrantType, false), (.invalidScope, false),
        // Broker authorization: only a rate limit passes with time.
        (.unauthenticated, false), (.tokenExpired, false), (.forbidden, false), (.rateLimited, true),
    ]

    @Test("retry_after_ms travels on the wire and back")
    func retryAfterRoundTrip() throws {
        let error = WireError(.rateLimited, "slow down", retryAfterMilliseconds: 250)
        let text = String(decoding: error.jsonFrame, as: UTF8.self)
        #expect(text.contains(#""retry_after_ms":250"#))
        let back = try #require(WireError(jsonFrame: error.jsonFrame))
        #expect(back == error)
        #expect(!String(decoding: WireError(.busy, "m").jsonFrame, as: UTF8.self).contains("retry_after_ms"))
    }

    @Test("default retryable per code", arguments: expectedRetryable)
    func defaultRetryable(_ code: WireError.Code, _ retryable: Bool) {
        #expect(code.isRetryableByDefault == retryable)
        #expect(WireError(code, "m").retryable == retryable)
        #expect(WireError(code, "m", retryable: !retryable).retryable == !retryable)
    }

    @Test("the retryable table covers every code exactly once")
    func retryableTableComplete() {
        #expect(Self.expectedRetryable.map(\.0.rawValue).sorted() == WireError.Code.allCases.map(\.rawValue).sorted())
    }

    @Test("raw values are the wire spellings: lower snake_case, unique")
    func rawValues() {
        #expect(WireError.Code.badRequest.rawValue == "bad_request")
        #expect(WireError.Code.invalidJSON.rawValue == "invalid_json")
        #expect(WireError.Code.tooLarge.rawValue == "too_large")
        #expect(WireError.Code.busy.rawValue == "busy")
        #expect(WireError.Code.serviceUnavailable.rawValue == "service_unavailable")
        #expect(WireError.Code.timeout.rawValue == "timeout")
        #expect(WireError.Code.workerLost.rawValue == "worker_lost")
        #expect(WireError.Code.shuttingDown.rawValue == "shutting_down")
        #expect(WireError.Code.internal.rawValue == "internal")
        let raws = WireError.Code.allCases.map(\.rawValue)
        #expect(Set(raws).count == raws.count)
        for raw in raws {
            #expect(raw.wholeMatch(of: /[a-z]+(_[a-z]+)*/) != nil, "\(raw) is not lower snake_case")
        }
    }

    @Test("description is code: message")
    func description() {
        #expect(WireError(.serviceUnavailable, "no worker").description == "service_unavailable: no worker")
    }

    @Test("the initialiser keeps every field")
    func initialiser() {
        let error = WireError(.workerLost, "lost", service: "ocr", attempts: 3)
        #expect(error.code == .workerLost)
        #expect(error.message == "lost")
        #expect(error.retryable == true)
        #expect(error.service == "ocr")
        #expect(error.attempts == 3)
        #expect(error.limit == nil)
    }

    // MARK: Schema

    @Test("every Code raw value is in the schema's enum and vice versa")
    func codesMatchSchema() throws {
        let error = try errorProperties(try loadSchema())
        let properties = try #require(error["properties"] as? [String: Any])
        let code = try #require(properties["code"] as? [String: Any])
        let schemaCodes = try #require(code["enum"] as? [String])
        let swiftCodes = WireError.Code.allCases.map(\.rawValue)
        #expect(Set(schemaCodes).count == schemaCodes.count, "duplicate codes in the schema")
        for raw in swiftCodes {
            #expect(schemaCodes.contains(raw), "\(raw) is missing from error.schema.json")
        }
        for raw in schemaCodes {
            #expect(WireError.Code(rawValue: raw) != nil, "schema code \(raw) has no WireError.Code")
        }
        #expect(Set(schemaCodes) == Set(swiftCodes))
    }

    @Test("jsonFrame emits the schema's required fields and only properties it declares")
    func fieldsMatchSchema() throws {
        let error = try errorProperties(try loadSchema())
        let required = try #require(error["required"] as? [String])
        let declared = try #require(error["properties"] as? [String: Any]).keys
        let minimal = try #require(try jsonObject(WireError(.busy, "m").jsonFrame)["error"] as? [String: Any])
        #expect(Set(minimal.keys) == Set(required))
        let full = try #require(try jsonObject(WireError(.busy, "m", service: "s", attempts: 1, limit: 2, retryAfterMilliseconds: 3).jsonFrame)["error"] as? [String: Any])
        #expect(Set(full.keys) == Set(declared))
    }

    @Test("the schema's examples decode to their codes")
    func schemaExamplesDecode() throws {
        let examples = try #require(try loadSchema()["examples"] as? [[String: Any]])
        #expect(examples.count >= 1)
        for example in examples {
            let frame = Array(try JSONSerialization.data(withJSONObject: example))
            let decoded = try #require(WireError(jsonFrame: frame))
            let body = try #require(example["error"] as? [String: Any])
            #expect(decoded.code.rawValue == body["code"] as? String)
            #expect(decoded.message == body["message"] as? String)
            #expect(decoded.retryable == body["retryable"] as? Bool)
            #expect(decoded.service == body["service"] as? String)
            #expect(decoded.attempts == body["attempts"] as? Int)
        }
    }
}
