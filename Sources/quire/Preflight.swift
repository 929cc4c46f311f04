import Foundation
import QuireClient
import QuireJWT
import QuireSupport
import QuireTokens
import QuireWire

/// What a client verb learns before it sends its requests, in a few MMI questions (`mmi.service`,
/// RFC 8) that the broker answers at once: that the broker is there, whether it has a token worker to
/// turn the configured credentials into a token, and whether the target service has a worker.
///
/// Without it a verb waited silently for its request's timeouts (30 s × 3 attempts): for a token
/// nobody could issue (credentials in the data folder, a broker started with `--auth off`), for a
/// service nobody serves, for a broker that is not running.
///
/// The rules (also in each verb's `--help`, see ``Preflight/help``):
/// - credentials but no `auth.token` at a broker with auth off (`mmi.auth` 404, or `501` from an
///   older broker): the requests go without a token; with auth on, the verb waits for a token worker
///   as for any other (a broker just restarted has its workers back within a heartbeat or two);
/// - no worker for the target service: the verb fails with `service_unavailable` after
///   ``patience`` (it asks again every ``probeInterval``, so a worker that is just starting is
///   found), unless the caller asked to wait with `--timeout-ms`/`QUIRE_TIMEOUT_MS`: then it says so
///   on standard error and waits for a worker as the timeout allows;
/// - no answer from the broker within ``patience`` (or the explicit timeout): the verb fails.
struct Preflight {
    /// How long a verb waits for what it needs when the caller did not say how long to wait.
    static let patience = Milliseconds(3_000)
    /// How often a missing worker is asked for again while the verb waits.
    static let probeInterval = Milliseconds(250)

    static let help = """
        Before sending, the verb asks the broker (MMI, RFC 8) whether it is there, whether it wants
        tokens, whether it has a token worker and whether the service has a worker. With credentials but
        no token worker at a broker with --auth off, requests go without a token; with auth on, the verb
        waits for a token worker as for any worker, and fails as unauthenticated if none comes. With no
        worker for the service, the verb fails within 3 s with service_unavailable, unless --timeout-ms
        or QUIRE_TIMEOUT_MS is given: then it says so and waits for a worker up to that long per
        attempt. A broker that does not answer within 3 s (or the given timeout) is
        an error.
        """

    /// The token to present; nil: none.
    var token: String?
    /// Credentials were configured but the broker had no token worker, so no token was fetched.
    var tokenSkipped = false
    /// The broker that answered (the first of several that did).
    var broker: String

    /// Runs the checks for `service` (nil: only the broker and the token), printing the reason on
    /// standard error and returning nil when the verb cannot go on.
    /// `wantsToken` false: no token is fetched (a request that cannot carry one).
    /// With several brokers named (`--broker a,b`), the one that answered goes first in `configuration`
    /// for the verb's own requests.
    static func run(_ invocation: Invocation, configuration: inout ClientConfiguration, service: String?, wantsToken: Bool = true) throws -> Preflight? {
        let endpoints = BrokerEndpoints.split(configuration.broker)
        if endpoints.count > 1, let chosen = choose(among: endpoints, for: service ?? Titanic.request, configuration: configuration) {
            configuration.broker = ([chosen] + endpoints.filter { $0 != chosen }).joined(separator: ",")
        }
        guard let preflight = try check(invocation, configuration: configuration, service: service, wantsToken: wantsToken) else { return nil }
        let others = BrokerEndpoints.split(configuration.broker).filter { $0 != preflight.broker }
        configuration.broker = ([preflight.broker] + others).joined(separator: ",")
        return preflight
    }

    /// Of several brokers (`--broker a,b`), the first that serves `service` now (`mmi.service` 200:
    /// for `titanic.*`, one that keeps durable jobs, not one recovering its store), else
    /// the first that answers at all; each silent one is given ``patience``. Nil when none answers
    /// (the checks then say so).
    static func choose(among endpoints: [String], for service: String, configuration: ClientConfiguration) -> String? {
        let name = ServiceClass(service) == .management ? Titanic.request : service
        let outcome = blockingAwait { () async -> String? in
            var answering: String?
            for endpoint in endpoints {
                var one = configuration
                one.broker = endpoint
                let availability = try? await withClient(configuration: one) { client in
                    try await client.availability(of: name, timeout: patience)
                }
                if availability == .available { return endpoint }
                if availability != nil, answering == nil { answering = endpoint }
            }
            return answering
        }
        return (try? outcome.get()) ?? nil
    }

    private static func check(_ invocation: Invocation, configuration: ClientConfiguration, service: String?, wantsToken: Bool) throws -> Preflight? {
        let given = wantsToken ? try ClientAuth.givenToken(invocation) : nil
        let credentials = wantsToken && given == nil ? try ClientAuth.credentials(invocation) : nil
        let asksToWait = invocation.isGiven(flag: "timeout-ms") || !(invocation.environment["QUIRE_TIMEOUT_MS"] ?? "").isEmpty
        let probeTimeout = asksToWait ? configuration.timeout : patience
        let command = invocation.command
        let outcome = blockingAwait { () async throws -> Preflight in
            try await withClient(configuration: configuration) { client in
                var preflight = Preflight(token: given, broker: configuration.broker)
                var heard = false
                /// One MMI question, its timeout told as the broker's silence.
                func asking<Answer>(_ question: () async throws -> Answer) async throws -> Answer {
                    do {
                        let answer = try await question()
                        heard = true
                        return answer
                    } catch let error as ClientError where error.code == .timeout {
                        throw ClientError(.timeout, "the broker at \(configuration.broker) did not answer within \(probeTimeout.value) ms: "
                                          + "is it running (and, with CURVE, are this client's keys allowed)?"
                                          + (asksToWait ? "" : " --timeout-ms N waits longer"))
                    }
                }
                func ask(_ name: String) async throws -> ServiceAvailability {
                    try await asking { try await client.availability(of: name, timeout: probeTimeout) }
                }
                /// Asks for a worker for `name` until one is there (a worker that is just starting,
                /// or coming back to a restarted broker), for ``patience``; with `--timeout-ms` it says
                /// so and lets the request wait for a worker at the broker.
                /// `missing`: the error when none comes (by default, that the service has no worker).
                func awaitWorker(_ name: String, missing: WireError? = nil) async throws {
                    let start = Instant.now()
                    while try await ask(name) == .absent {
                        if asksToWait {
                            printError("\(command): no worker serves '\(name)' at \(configuration.broker) yet; "
                                       + "waiting for one up to \(configuration.timeout.value) ms per attempt (--timeout-ms)")
                            return
                        }
                        if Instant.now() >= start + patience {
                            let error = missing ?? WireError(.serviceUnavailable, "no worker serves '\(name)' at \(configuration.broker) "
                                                             + "(mmi.service answered 404 for \(patience.value) ms): start one (\(Preflight.starter(name))), "
                                                             + "or give --timeout-ms N to wait for one", service: name)
                            throw ClientError(.remote, error.message, remote: error)
                        }
                        try await Task.sleep(for: .milliseconds(probeInterval.value))
                    }
                }
                if let credentials {
                    var tokenWorker = try await ask(ReservedService.authToken)
                    if tokenWorker == .absent, try await asking({ try await client.wantsTokens(timeout: probeTimeout) }) == true {
                        // Auth is on: the token worker is on its way (the broker was just restarted,
                        // the worker is starting), or missing, which is an error rather than a
                        // request sent without a token to be refused.
                        // None comes: the request could only be refused, as unauthenticated; say
                        // where a token comes from.
                        try await awaitWorker(ReservedService.authToken, missing: WireError(
                            .unauthenticated, "auth is on at the broker \(configuration.broker), but it has no token worker (auth.token) to turn "
                            + "this client's credentials into a token (mmi.service answered 404 for \(patience.value) ms): start one with "
                            + "'quire worker token --data DIR', present a token with --token TOKEN, or give --timeout-ms N to wait for a token worker"))
                        tokenWorker = .available
                    }
                    if tokenWorker == .absent {
                        preflight.tokenSkipped = true
                    } else {
                        do {
                            preflight.token = try await ClientAuth.fetch(.credentials(credentials), client: client).accessToken
                        } catch let error as ClientError {
                            throw TokenFailure(error: error, clientID: credentials.clientID)
                        }
                    }
                }
                if let service, Preflight.needsWorker(service) {
                    try await awaitWorker(service)
                }
                if !heard && !(service.map(Preflight.isMMI) ?? false) {
                    // Nothing asked yet (a given token, a broker-side service): is anyone there?
                    _ = try await ask(Titanic.request)
                }
                preflight.broker = client.brokerInUse
                return preflight
            }
        }
        switch outcome {
        case .success(let preflight):
            return preflight
        case .failure(let failure as TokenFailure):
            printError("\(command): cannot get a token as client \(failure.clientID) (its credentials from --credentials, "
                       + "QUIRE_CLIENT_ID and QUIRE_CLIENT_SECRET, or the data folder's credentials.json, in that order): "
                       + (failure.error.remote.map { String(decoding: $0.jsonFrame, as: UTF8.self) } ?? failure.error.description))
            return nil
        case .failure(let error as ClientError):
            if let remote = error.remote, command == "quire call" {
                printError(String(decoding: remote.jsonFrame, as: UTF8.self))
            } else {
                printError("\(command): \(error)")
            }
            return nil
        case .failure(let error):
            throw error
        }
    }

    /// Whether requests to `service` need a worker: not the broker's own `mmi.*` and `titanic.*`.
    static func needsWorker(_ service: String) -> Bool {
        !ServiceClass(service).isServedByBroker
    }

    static func isMMI(_ service: String) -> Bool { ServiceClass(service) == .management }

    /// The command that starts a worker for `service`.
    static func starter(_ service: String) -> String {
        switch service {
        case "ocr", "echo": "quire worker \(service)"
        case ReservedService.authToken, ReservedService.authJWKS: "quire worker token"
        default: "a worker that sends READY for '\(service)'"
        }
    }

    /// `error` with, when the broker refused a request for want of a token, what to do about it.
    func explain(_ error: WireError) -> WireError {
        guard error.code == .unauthenticated, token == nil else { return error }
        var explained = error
        explained.message += tokenSkipped
            ? "; auth is on at the broker \(broker), but it has no token worker (auth.token) to turn this client's credentials into a token: "
              + "start one with 'quire worker token --data DIR', DIR holding the signing keys, or present a token with --token TOKEN"
            : "; auth is on at the broker \(broker): present a token with --token TOKEN or QUIRE_TOKEN, or client credentials with "
              + "--credentials FILE or QUIRE_CLIENT_ID and QUIRE_CLIENT_SECRET ('quire clients add'); 'quire up' writes local ones to its data folder"
        return explained
    }

    func explain(_ error: ClientError) -> ClientError {
        guard let remote = error.remote else { return error }
        let explained = explain(remote)
        return ClientError(error.code, explained.message, remote: explained)
    }

    /// What to print for a verb's failure.
    func describe(_ error: any Error) -> String {
        (error as? ClientError).map { explain($0).description } ?? String(describing: error)
    }

    /// A failure to get a token, told apart from the probes' own failures.
    private struct TokenFailure: Error {
        let error: ClientError
        let clientID: String
    }
}
