import Foundation
import QuireBroker
import QuireSupport
import ZeroMQ

enum BrokerCommand {
    static let command = Command(
        "broker", listing: ("broker", "run the Majordomo broker (clients and workers connect to it)"),
        usage: "quire broker [options]",
        discussion: """
            Runs the Majordomo broker: one ROUTER socket for clients and workers of every dialect
            (MDP/0.2, MDP/0.1, majortomo). Stops cleanly on SIGTERM or SIGINT.
            """,
        groups: [
            OptionGroup(BrokerConfiguration.settings, defaults: BrokerConfiguration()),
            CurveOptions.serverGroup,
            AuthOptions.group,
            DurableJobOptions.group(defaults: BrokerConfiguration()),
        ],
        run: run)

    static func run(_ invocation: Invocation) throws -> Int32 {
        guard invocation.positionals.isEmpty else {
            throw UsageError(command: invocation.command, message: "unexpected argument '\(invocation.positionals[0])'")
        }
        var configuration = try invocation.configured(BrokerConfiguration(), BrokerConfiguration.settings)
        configuration.jobs = try DurableJobOptions.configuration(invocation)
        configuration.auth = try AuthOptions.configuration(invocation)
        let logger = try CommonOptions.logger("quire.broker", invocation)
        if configuration.auth == nil {
            logger.warning("auth is off: any client that reaches the broker may use every service (--auth off)")
        }
        let curve = try CurveOptions.server(invocation)
        if let curve { configuration.curve = CurveServerSettings(secretKey: curve.secretKey, allowedKeys: curve.allowedKeys) }

        let context = try Context()
        var zap: ZAPHandler?
        if let allowed = curve?.allowedKeys {
            zap = try ZAPHandler(context: context, allowedKeys: allowed, logger: logger)
            logger.notice("curve on", metadata: ["server.key": (try? Z85.encode(curve?.publicKey ?? [])) ?? "", "allowed_keys": String(allowed.count)])
        }
        defer { withExtendedLifetime(zap) {} }
        let broker = try Broker(configuration: configuration, context: context, logger: logger)
        let signals = SignalWatcher { number in
            logger.notice("signal received; stopping", metadata: ["signal": String(number)])
            broker.stop()
        }
        defer { withExtendedLifetime(signals) {} }
        do {
            try broker.run()
        } catch {
            logger.error("broker failed", metadata: ["error": "\(error)"])
            printError("quire broker: \(error)")
            context.terminate()
            return 1
        }
        // The socket is closed: let the goodbyes to clients and workers leave before exiting.
        context.terminate()
        return 0
    }
}

/// The durable-job options `quire broker` and `quire up` share: the data folder or a PostgreSQL store,
/// either of which turns jobs on, and ``JobConfiguration/settings``.
enum DurableJobOptions {
    static let store = Option(
        "store", variable: "QUIRE_STORE", JobConfiguration.storeValue,
        help: "a PostgreSQL job store that brokers on several machines serve together",
        defaultNote: "jobs.sqlite3 in the data folder")

    static func group(defaults: BrokerConfiguration, dataNote: String? = nil) -> OptionGroup {
        var data = DataDirectory.option.info
        data.help = "folder of the job store, jobs.sqlite3"
        data.defaultText = dataNote ?? "none: jobs off"
        return OptionGroup("Durable jobs (titanic.*), on when a data folder or a store is given:",
                           options: [data, store.info] + OptionGroup(JobConfiguration.settings, defaults: defaults.jobs ?? JobConfiguration(directory: "")).options)
    }

    /// The job store's configuration: `--store`, else `QUIRE_STORE`, for PostgreSQL; the data folder
    /// `--data`, else `QUIRE_DATA`, else `defaultDirectory`, for SQLite; with the settings applied.
    /// `nil` when neither names a store.
    static func configuration(_ invocation: Invocation, defaultDirectory: String? = nil) throws(UsageError) -> JobConfiguration? {
        let store = try invocation.value(store)
        guard let directory = try invocation.value(DataDirectory.option) ?? defaultDirectory ?? (store == nil ? nil : "") else {
            for flag in JobConfiguration.settings.compactMap(\.flag) where invocation.isGiven(flag: flag) {
                throw UsageError(command: invocation.command, message: "--\(flag) needs a job store (--data DIR or --store URI)")
            }
            return nil
        }
        let configuration = try invocation.configured(JobConfiguration(directory: directory, store: store), JobConfiguration.settings)
        if store != nil, configuration.maxStoreBytes != nil {
            throw UsageError(command: invocation.command, message: "--max-store-bytes " + JobConfiguration.storeBytesWithPostgreSQL)
        }
        return configuration
    }
}

/// The auth options `quire broker` and `quire up` share: whether auth is on, and
/// ``AuthConfiguration/settings``.
enum AuthOptions {
    static let auth = Option("auth", variable: "QUIRE_AUTH", .onOff, default: true,
                             help: "token checks on every service but mmi.* and auth.*; off only on a trusted network or for tests")

    static let group = OptionGroup("Auth (tokens from the token worker, checked on every service but mmi.* and auth.*):",
                                   options: [auth.info] + OptionGroup(AuthConfiguration.settings, defaults: AuthConfiguration()).options)

    /// Auth is on unless `--auth off` or `QUIRE_AUTH=off` says otherwise.
    static func configuration(_ invocation: Invocation) throws(UsageError) -> AuthConfiguration? {
        guard try invocation.value(auth, or: true) else { return nil }
        return try invocation.configured(AuthConfiguration(), AuthConfiguration.settings)
    }
}
