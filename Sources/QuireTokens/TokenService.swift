import QuireSupport
import QuireWire
import QuireWorker

/// The token worker's two services over one ``TokenAuthority``: `auth.token` (the OAuth 2.0
/// client-credentials grant and the reader-token exchange) and `auth.jwks` (the public keys the broker
/// verifies with). `quire worker token` and `quire up` serve them; the benchmarks too.
public enum TokenService {
    /// Both services, `auth.token` first. Each worker connection serves one of them.
    public static func make(authority: TokenAuthority, logger: Logger) -> [WorkerService] {
        [token(authority: authority, logger: logger), jwks(authority: authority)]
    }

    /// `auth.token`: a token request in, a token (or an RFC 6749 §5.2 error) out. Checking a secret
    /// costs an argon2id hash, so it runs on the worker's execution thread.
    public static func token(authority: TokenAuthority, logger: Logger) -> WorkerService {
        WorkerService(name: ReservedService.authToken) { TokenHandler(authority: authority, logger: logger) }
    }

    /// `auth.jwks`: the current public keys; cheap, so answered on the I/O thread.
    public static func jwks(authority: TokenAuthority) -> WorkerService {
        WorkerService(name: ReservedService.authJWKS, runsInline: true) { JWKSHandler(authority: authority) }
    }

    final class TokenHandler: RequestHandler {
        let authority: TokenAuthority
        let logger: Logger
        init(authority: TokenAuthority, logger: Logger) {
            self.authority = authority
            self.logger = logger
        }

        func handle(_ request: WorkerRequest) throws -> [[UInt8]] {
            let (frame, summary) = authority.respond(to: request.body.first ?? [])
            logger.info("token request", metadata: summary)
            return [frame]
        }
    }

    final class JWKSHandler: RequestHandler {
        let authority: TokenAuthority
        init(authority: TokenAuthority) { self.authority = authority }
        func handle(_ request: WorkerRequest) throws -> [[UInt8]] { [authority.handleJWKSRequest()] }
    }
}
