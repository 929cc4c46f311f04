import QuireSupport
import Testing

@testable import QuireBroker

/// The broker's settings as declared: the environment fallback reads them, and each flag, variable
/// and default is the declaration's.
@Suite struct ConfigurationSettingsTests {
    @Test func noVariablesMeanTheDefaults() throws {
        #expect(try BrokerConfiguration(environment: [:]) == BrokerConfiguration())
        #expect(try JobConfiguration(environment: ["QUIRE_DATA": "/d"]) == JobConfiguration(directory: "/d"))
    }

    @Test func variablesOverrideTheDefaults() throws {
        let configuration = try BrokerConfiguration(environment: [
            "QUIRE_BIND": "tcp://*:7000", "QUIRE_HEARTBEAT_INTERVAL_MS": "1000", "QUIRE_MAX_QUEUED_REQUESTS": "5", "QUIRE_STATS_BIND": "tcp://*:7001",
            "QUIRE_DATA": "/d", "QUIRE_RESULT_TTL_S": "60", "QUIRE_JOB_SERVICES": "ocr, echo", "QUIRE_MAX_STORE_BYTES": "1048576",
        ])
        #expect(configuration.bind == "tcp://*:7000")
        #expect(configuration.heartbeatInterval == 1_000)
        #expect(configuration.maxQueuedRequests == 5)
        #expect(configuration.statsBind == "tcp://*:7001")
        #expect(configuration.jobs?.defaultResultTTL == 60_000)
        #expect(configuration.jobs?.services == ["ocr", "echo"])
        #expect(configuration.jobs?.maxStoreBytes == 1_048_576)
    }

    @Test func statsOffMeansNoStatsSocket() throws {
        #expect(try BrokerConfiguration(environment: ["QUIRE_STATS_BIND": "off"]).statsBind == nil)
    }

    @Test func jobVariablesWaitForADataFolder() throws {
        #expect(try JobConfiguration(environment: ["QUIRE_MAX_JOBS": "lots"]) == nil)
        #expect(throws: ConfigurationError(source: "QUIRE_MAX_JOBS", message: "'lots' is not an integer in 1…100000000")) {
            try JobConfiguration(environment: ["QUIRE_DATA": "/d", "QUIRE_MAX_JOBS": "lots"])
        }
    }

    @Test func aSizeCapIsRefusedWithAPostgreSQLStore() throws {
        #expect(throws: ConfigurationError(source: "QUIRE_MAX_STORE_BYTES", message: JobConfiguration.storeBytesWithPostgreSQL)) {
            try JobConfiguration(environment: ["QUIRE_STORE": "postgresql://db/quire", "QUIRE_MAX_STORE_BYTES": "1048576"])
        }
        // With SQLite the cap holds; with PostgreSQL alone nothing is refused.
        #expect(try JobConfiguration(environment: ["QUIRE_DATA": "/d", "QUIRE_MAX_STORE_BYTES": "1048576"])?.maxStoreBytes == 1_048_576)
        #expect(try JobConfiguration(environment: ["QUIRE_STORE": "postgresql://db/quire"])?.store == "postgresql://db/quire")
    }

    @Test("a variable takes the flag's range", arguments: [
        ("QUIRE_HEARTBEAT_INTERVAL_MS", "3600001", "'3600001' is not an integer in 1…3600000"),
        ("QUIRE_STATS_INTERVAL_MS", "1", "'1' is not an integer in 10…3600000"),
        ("QUIRE_HEARTBEAT_LIVENESS", "-3", "'-3' is not an integer in 1…100"),
    ])
    func rangeOfAVariable(variable: String, value: String, message: String) {
        #expect(throws: ConfigurationError(source: variable, message: message)) {
            try BrokerConfiguration(environment: [variable: value])
        }
    }

    @Test func aRateLimitSetsItsBurst() throws {
        var configuration = AuthConfiguration()
        let found: Setting<AuthConfiguration>? = AuthConfiguration.settings.first { $0.flag == "rate-limit" }
        let rate = try #require(found)
        #expect(rate.apply("50", to: &configuration))
        #expect(configuration.rateLimit == 50)
        #expect(configuration.burst == 100)
        #expect(!rate.apply("0", to: &configuration))
        #expect(configuration.rateLimit == 50)
    }

    @Test func eachFlagAndVariableIsDeclaredOnce() {
        let flags = BrokerConfiguration.settings.compactMap(\.flag) + JobConfiguration.settings.compactMap(\.flag) + AuthConfiguration.settings.compactMap(\.flag)
        let variables = BrokerConfiguration.settings.compactMap(\.variable) + JobConfiguration.settings.compactMap(\.variable)
            + AuthConfiguration.settings.compactMap(\.variable)
        #expect(Set(flags).count == flags.count)
        #expect(Set(variables).count == variables.count)
    }

    @Test("the default --help shows is the default a setting applies")
    func shownDefaultsRoundTrip() {
        func check<Root: Equatable>(_ settings: [Setting<Root>], _ defaults: Root) {
            for setting in settings where setting.defaultNote == nil {
                var root = defaults
                let shown = setting.shown(in: defaults)
                if setting.apply(shown, to: &root) {
                    #expect(root == defaults, "\(setting.flag ?? setting.variable ?? "?"): '\(shown)'")
                }
            }
        }
        check(BrokerConfiguration.settings, BrokerConfiguration())
        check(JobConfiguration.settings, JobConfiguration(directory: "/d"))
        check(AuthConfiguration.settings, AuthConfiguration())
    }
}
