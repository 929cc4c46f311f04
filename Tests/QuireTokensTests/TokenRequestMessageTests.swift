import Foundation
import QuireWire
import Testing
@testable import QuireTokens

/// A malformed `auth.token` request names the member that broke `auth-token-request.schema.json`;
/// the code stays RFC 6749's `invalid_request`.
@Suite("auth.token request error messages")
struct TokenRequestMessageTests {
    @Test("the wrong member is named", arguments: [
        (#"{"grant_type":5}"#, "'grant_type' must be a string"),
        (#"{"grant_type":"client_credentials","client_id":["a"]}"#, "'client_id' must be a string"),
        (#"{"grant_type":"client_credentials","expires_in":"soon"}"#, "'expires_in' must be an integer number of seconds"),
        ("[1]", "frame 1 must be a JSON object with string members grant_type, client_id, client_secret, scope, audience"),
    ])
    func message(frame: String, expected: String) throws {
        let folder = DataFolder()
        let authority = try TokenAuthority(dataDirectory: folder.path, now: 1_000)
        let error = try #require(WireError(jsonFrame: authority.handleTokenRequest(Array(frame.utf8), now: 1_000)))
        #expect(error.code == .invalidRequest)
        #expect(error.message == expected)
    }
}
