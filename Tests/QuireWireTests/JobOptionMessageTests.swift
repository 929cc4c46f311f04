import QuireWire
import Testing

/// Titanic job options of the wrong type name the member, in `titanic-options.schema.json`'s words.
@Suite("titanic job option error messages")
struct JobOptionMessageTests {
    @Test("the wrong member is named", arguments: [
        (#"{"job":{"priority":5}}"#, "'job.priority' must be one of high, normal, low"),
        (#"{"job":{"maxAttempts":"3"}}"#, "'job.maxAttempts' must be an integer within 1…20"),
        (#"{"job":{"maxAttempts":2.5}}"#, "'job.maxAttempts' must be an integer within 1…20"),
        (#"{"job":{"deadlineMs":true,"priority":"low"}}"#, "'job.deadlineMs' must be an integer number of milliseconds"),
        (#"{"job":{"idempotencyKey":{}}}"#, "'job.idempotencyKey' must be a string of 1 to 256 bytes"),
        (#"{"job":"high"}"#, "'job' must be an object with priority, idempotencyKey, deadlineMs, maxAttempts, resultTtlSeconds"),
    ])
    func message(frame: String, expected: String) {
        switch BrokerEnvelope.split(Array(frame.utf8)) {
        case .success: Issue.record("\(frame) was accepted")
        case .failure(let error):
            #expect(error.code == .badRequest)
            #expect(error.message == expected)
        }
    }
}
