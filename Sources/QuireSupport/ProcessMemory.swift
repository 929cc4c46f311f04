import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The process's own resident memory, for worker reports.
public enum ProcessMemory {
    /// Resident set size in bytes from `/proc/self/statm` (its second field, in pages); `nil` where
    /// there is no /proc.
    public static func residentBytes() -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return nil }
        return residentBytes(statm: text, pageSize: Int(sysconf(Int32(_SC_PAGESIZE))))
    }

    /// Parses statm's text: `size resident shared text lib data dt`, in pages.
    public static func residentBytes(statm: String, pageSize: Int) -> Int? {
        let fields = statm.split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count >= 2, let pages = Int(fields[1]), pages >= 0, pageSize > 0 else { return nil }
        return pages * pageSize
    }

    /// This process's requests, across its workers: when it has handled none for
    /// ``IdleRelease/delay``, the allocator's free memory goes back to the system.
    public static let requests = IdleRelease()

    /// Whether this process allocates with jemalloc (the `quire` binary links it, Package.swift, and
    /// the package's test binary with it) rather than the C library's malloc.
    public static var runsOnJemalloc: Bool { mallctl != nil }

    /// Returns the allocator's free pages to the system: jemalloc purges every arena's unused pages
    /// (`arena.<all>.purge`), glibc trims its heaps (`malloc_trim`); false where nothing was returned
    /// (glibc) or there is no such call.
    @discardableResult
    public static func releaseFreeMemory() -> Bool {
        if let mallctl {
            return mallctl("arena.4096.purge", nil, nil, nil, 0) == 0  // 4096: MALLCTL_ARENAS_ALL
        }
        guard let trim = mallocTrim else { return false }
        return trim(0) != 0
    }

    /// Lets jemalloc's decay go on while the process's threads are idle: jemalloc hands the pages an
    /// arena freed back to the system over its decay time (10 s by default), but only as that arena
    /// allocates or frees again, so a broker whose store thread read a burst of large requests kept
    /// their pages while it waited for the next (`arena.<all>.decay`: the purging due by the decay
    /// curve, now; nothing when nothing is due). False where the process does not run on jemalloc.
    @discardableResult
    public static func advanceDecay() -> Bool {
        guard let mallctl else { return false }
        return mallctl("arena.4096.decay", nil, nil, nil, 0) == 0  // 4096: MALLCTL_ARENAS_ALL
    }

    /// The most malloc arenas an OCR worker process with `engineThreads` engine threads keeps: one for
    /// each, and at least two; nil where the operator has set `MALLOC_ARENA_MAX`, which glibc reads itself.
    public static func arenaLimit(engineThreads: Int, environment: [String: String]) -> Int? {
        environment["MALLOC_ARENA_MAX"] == nil ? max(2, engineThreads) : nil
    }

    /// Caps glibc's malloc arenas at `count` (`mallopt(M_ARENA_MAX)`), called before the engine threads
    /// start. glibc gives a thread that finds the arenas busy an arena of its own, up to eight per core,
    /// and each arena keeps what its threads freed (a page's or a picture's buffers) at its own high
    /// water. An OCR worker of two engine threads grew 103–154 MB over `quire bench hostile`'s passes
    /// with glibc's default, and 63–75 MB with two arenas, at the same speed (docs/benchmarks.md).
    /// False where it was not set: the process allocates with jemalloc, whose freed pages a worker
    /// bounds itself (``keepFreedPagesWhileBusy(upTo:)``), or the C library has no such call.
    @discardableResult
    public static func limitArenas(_ count: Int) -> Bool {
        guard !runsOnJemalloc, let mallopt else { return false }
        return mallopt(-8, Int32(clamping: count)) == 1  // M_ARENA_MAX, <malloc.h>
    }

    /// The freed pages an OCR worker keeps for reuse while busy, per engine thread: a page's buffers
    /// take 200–250 MB while it is read (``keepFreedPagesWhileBusy(upTo:)``).
    public static let keptPagesPerEngine = 384 << 20

    /// Where the process runs on jemalloc, keeps the pages it frees under 8 MiB for reuse while it works
    /// instead of handing them back to the system bit by bit (jemalloc's decay, 10 s by default): an
    /// OCR worker frees and allocates page-sized images all the time (a grey page of 8 million pixels
    /// is 8 MB), each page handed back faulted in again on its next use, and each fault flushed the
    /// other core's TLB (4% of a worker's samples on documents-dev, 8% less throughput for a worker of
    /// two engines). Requests of 8 MiB and more (jemalloc's `opt.oversize_threshold`: a PDF page
    /// rendered at 300 dpi, a photo's tensors) have an arena of their own, which keeps purging at once,
    /// as glibc unmaps its largest blocks: kept too, they held a worker at its high water (1.1 GB
    /// against glibc's 490 MB in a mixed soak). ``IdleRelease`` hands everything back once the worker
    /// has been idle. The freed images beside each other coalesce into extents of 30–100 MB, and
    /// jemalloc by default carves no request out of a kept extent over 64 times its size
    /// (`opt.lg_extent_max_active_fit`): a worker of one engine held 200 MB allocated and 600 MB of such
    /// pages after 20 minutes of a mixed soak. The quire binary lifts that limit (Sources/CJemallocOptions);
    /// in case the pages still pile up, past `limit` bytes of them ``releaseKeptPagesOverLimit()`` (as
    /// each request ends) hands them all back. Called before the engine threads start; false where the
    /// process does not run on jemalloc or jemalloc refused.
    @discardableResult
    public static func keepFreedPagesWhileBusy(upTo limit: Int) -> Bool {
        guard let mallctl, let allocate, let release else { return false }
        var threshold = 0, automatic: UInt32 = 0
        var size = MemoryLayout<Int>.size, count = MemoryLayout<UInt32>.size
        guard mallctl("opt.oversize_threshold", &threshold, &size, nil, 0) == 0,
              mallctl("opt.narenas", &automatic, &count, nil, 0) == 0 else { return false }
        // jemalloc makes the oversize arena at its first request, purging at once only while the
        // default decay is positive: make it now, before the default changes.
        if threshold > 0, let block = allocate(threshold) { release(block) }
        var never = -1  // ssize_t: decay off
        func set(_ name: String) -> Bool { mallctl(name, nil, nil, &never, MemoryLayout<Int>.size) == 0 }
        // The default for the automatic arenas made from now on, then each one made so far (the
        // oversize arena comes after them); one not made yet answers EFAULT.
        let done = set("arenas.dirty_decay_ms") && set("arenas.muzzy_decay_ms")
        for arena in 0..<automatic {
            _ = set("arena.\(arena).dirty_decay_ms")
            _ = set("arena.\(arena).muzzy_decay_ms")
        }
        if done { keptLimit.store(limit, ordering: .relaxed) }
        return done
    }

    /// The bytes of freed pages past which ``releaseKeptPagesOverLimit()`` hands them back; 0: none kept.
    private static let keptLimit = Atomic<Int>(0)

    /// The freed pages jemalloc keeps for reuse in `arena`, or in all its arenas where nil, in bytes
    /// (`stats.arenas.<i>.pdirty`, its statistics refreshed first); nil where the process does not run
    /// on jemalloc or jemalloc keeps no statistics.
    public static func keptFreedBytes(arena: UInt32? = nil) -> Int? {
        guard let mallctl, let page = jemallocPage else { return nil }
        var epoch: UInt64 = 1, pages = 0, size = MemoryLayout<Int>.size
        let index = arena ?? 4096  // MALLCTL_ARENAS_ALL
        guard mallctl("epoch", nil, nil, &epoch, MemoryLayout<UInt64>.size) == 0,
              mallctl("stats.arenas.\(index).pdirty", &pages, &size, nil, 0) == 0 else { return nil }
        return pages * page
    }

    /// jemalloc's page (`arenas.page`), in bytes, asked once: ``keptFreedBytes()`` runs as each request ends.
    private static let jemallocPage: Int? = {
        guard let mallctl else { return nil }
        var page = 0, size = MemoryLayout<Int>.size
        return mallctl("arenas.page", &page, &size, nil, 0) == 0 ? page : nil
    }()

    /// As a request ends: where the process keeps freed pages (``keepFreedPagesWhileBusy(upTo:)``) and
    /// they have passed its limit, hands them all back, as when idle, and returns how many bytes were
    /// kept; nil where nothing was handed back.
    @discardableResult
    public static func releaseKeptPagesOverLimit() -> Int? {
        let limit = keptLimit.load(ordering: .relaxed)
        guard limit > 0, let kept = keptFreedBytes(), kept > limit, releaseFreeMemory() else { return nil }
        return kept
    }

    /// `malloc` and `free` as function pointers, so that the compiler cannot take the oversize arena's
    /// first request, allocated and freed at once, for dead code.
    private static let allocate: (@convention(c) (Int) -> UnsafeMutableRawPointer?)? = symbol("malloc")
    private static let release: (@convention(c) (UnsafeMutableRawPointer?) -> Void)? = symbol("free")

    /// glibc's `mallopt`, looked up once, as `malloc_trim` below is.
    private static let mallopt: (@convention(c) (Int32, Int32) -> Int32)? = symbol("mallopt")

    /// jemalloc's `mallctl`, looked up once: nil where the process does not link jemalloc.
    private static let mallctl: (@convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?,
                                                  UnsafeMutableRawPointer?, Int) -> Int32)? = symbol("mallctl")

    /// glibc's `malloc_trim`, looked up once: Swift's Glibc module leaves out <malloc.h>, and other
    /// C libraries (musl) have none.
    private static let mallocTrim: (@convention(c) (Int) -> Int32)? = symbol("malloc_trim")

    /// The C function `name` as the function type `T`, looked up in the process (the executable and
    /// the libraries it loaded); nil where there is none or no dynamic loader to ask.
    private static func symbol<T>(_ name: String) -> T? {
        #if canImport(Glibc)
        guard let address = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { return nil }
        return unsafeBitCast(address, to: T.self)
        #else
        return nil
        #endif
    }
}

/// Hands the allocator's free memory back once a process has been idle for a while. glibc keeps in
/// its arenas what a large page or picture freed, so an idle worker would hold its high water for
/// good. Not as soon as a request ends: the next page would fault those pages in again (7% more CPU
/// on documents-dev read one page after the other, every one trimmed); under load they are reused.
public final class IdleRelease: Sendable {
    /// How long nothing must be handled before ``release`` runs.
    public let delay: Milliseconds
    private let release: @Sendable () -> Void
    /// Requests running, and how many have started (a request that started and ended during the
    /// delay also cancels the release).
    private let state = Mutex<(running: Int, started: Int)>((0, 0))
    private let queue = DispatchQueue(label: "quire-idle-release")

    public init(delay: Milliseconds = 5_000, release: @escaping @Sendable () -> Void = { ProcessMemory.releaseFreeMemory() }) {
        self.delay = delay
        self.release = release
    }

    /// A request has started; pair it with ``finished()``.
    public func started() { state.withLock { $0.running += 1; $0.started += 1 } }

    /// A request has ended: where none is left running, ``release`` runs after ``delay`` unless
    /// another request starts before.
    public func finished() {
        let idleFrom = state.withLock { state -> Int? in
            state.running -= 1
            return state.running == 0 ? state.started : nil
        }
        guard let idleFrom else { return }
        queue.asyncAfter(deadline: .now() + .milliseconds(Int(delay.value))) { [self] in
            if state.withLock({ $0.running == 0 && $0.started == idleFrom }) { release() }
        }
    }
}
