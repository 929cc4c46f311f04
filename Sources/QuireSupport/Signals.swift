import Dispatch
#if canImport(Glibc)
import Glibc
#endif

/// Delivers SIGTERM and SIGINT to a handler on an ordinary thread, never inside a signal handler, so
/// the handler may call anything (such as `zmq_ctx_shutdown`). Keep the returned object alive.
public final class SignalWatcher: @unchecked Sendable {
    // Dispatch sources are thread-safe; the array is never mutated after init.
    private let sources: [any DispatchSourceSignal]

    /// `handler` receives the signal number; it runs once per delivered signal.
    public init(signals: [Int32] = [SIGTERM, SIGINT], handler: @escaping @Sendable (Int32) -> Void) {
        let queue = DispatchQueue(label: "quire.signals")
        var sources: [any DispatchSourceSignal] = []
        for number in signals {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
            source.setEventHandler { handler(number) }
            source.resume()
            sources.append(source)
        }
        self.sources = sources
    }

    deinit {
        for source in sources { source.cancel() }
    }
}
