import Foundation
import QuireSupport
import Synchronization
import Testing

@Suite("Memory handed back when idle", .serialized)
struct IdleReleaseTests {
    /// How many times a release ran.
    final class Releases: Sendable {
        private let count = Atomic<Int>(0)
        var value: Int { count.load(ordering: .relaxed) }
        /// An `IdleRelease` that counts here.
        func idle(delay: Milliseconds) -> IdleRelease { IdleRelease(delay: delay) { self.count.add(1, ordering: .relaxed) } }
    }

    @Test("released once the delay passes with nothing running, not before")
    func releasesAfterTheDelay() {
        let releases = Releases()
        let idle = releases.idle(delay: 300)
        idle.started()
        idle.finished()
        #expect(releases.value == 0)
        Thread.sleep(forTimeInterval: 0.8)
        #expect(releases.value == 1)
    }

    @Test("a request still running, or one started during the delay, keeps the memory")
    func busyOrRestartedKeeps() {
        let releases = Releases()
        let idle = releases.idle(delay: 50)
        idle.started()
        idle.started()
        idle.finished()  // one still running
        Thread.sleep(forTimeInterval: 0.2)
        #expect(releases.value == 0)
        idle.finished()  // now idle: a release is due...
        idle.started()  // ...and this one, within the delay, cancels it
        Thread.sleep(forTimeInterval: 0.2)
        #expect(releases.value == 0)
        idle.finished()
        Thread.sleep(forTimeInterval: 1.0)
        #expect(releases.value == 1)
    }

    @Test("a request that starts and ends within the delay moves the release to its own end")
    func shortRequestMovesTheRelease() {
        let releases = Releases()
        let idle = releases.idle(delay: 1_000)
        idle.started()
        idle.finished()
        Thread.sleep(forTimeInterval: 0.5)
        idle.started()
        idle.finished()
        Thread.sleep(forTimeInterval: 0.7)  // past the first end's delay, 0.3 s before the second's
        #expect(releases.value == 0)
        Thread.sleep(forTimeInterval: 1.0)
        #expect(releases.value == 1)
    }

    @Test("free memory below the heap's top goes back to the system")
    func releaseFreeMemoryShrinksRSS() throws {
        // 96 MB in 64 KB blocks (below glibc's mmap threshold, so in the heap), written to; the last
        // block stays allocated, so the heap cannot shrink from its top by itself. RSS is taken before
        // the frees: jemalloc (which the quire binary links, and so this one) may hand some pages back
        // by itself as they are freed, glibc none.
        let blocks = (0..<1_536).map { _ in malloc(64 * 1_024)! }
        for block in blocks { memset(block, 1, 64 * 1_024) }
        let before = try #require(ProcessMemory.residentBytes())
        for block in blocks.dropLast() { free(block) }
        defer { free(blocks.last!) }
        #expect(ProcessMemory.releaseFreeMemory())
        let after = try #require(ProcessMemory.residentBytes())
        #expect(before - after > 64 << 20, "RSS \(before >> 20) MB before, \(after >> 20) MB after")
    }

    @Test("on jemalloc, the decay due is run on request (the broker's idle loop asks once a second)")
    func decayOnRequest() throws {
        try #require(ProcessMemory.runsOnJemalloc, "this test binary should run on jemalloc")
        #expect(ProcessMemory.advanceDecay())
    }

    @Test("on jemalloc, a worker's freed pages under 8 MiB stay until released, larger blocks go back at once")
    func keptUntilReleased() throws {
        // The package's test binary links jemalloc with the quire executable's module (Package.swift).
        try #require(ProcessMemory.runsOnJemalloc, "this test binary should run on jemalloc")
        #expect(ProcessMemory.keepFreedPagesWhileBusy(upTo: 1 << 40))
        let blocks = (0..<1_024).map { _ in malloc(64 * 1_024)! }
        for block in blocks { memset(block, 1, 64 * 1_024) }
        for block in blocks { free(block) }
        let kept = try #require(ProcessMemory.residentBytes())
        // A block over jemalloc's oversize threshold (8 MiB) is handed back as it is freed.
        let large = malloc(32 << 20)!
        memset(large, 1, 32 << 20)
        let withLarge = try #require(ProcessMemory.residentBytes())
        free(large)
        let withoutLarge = try #require(ProcessMemory.residentBytes())
        #expect(withLarge - withoutLarge > 24 << 20, "RSS \(withLarge >> 20) MB with the large block, \(withoutLarge >> 20) MB after")
        // The 64 MB of small blocks were still there, until released.
        #expect(ProcessMemory.releaseFreeMemory())
        let released = try #require(ProcessMemory.residentBytes())
        #expect(kept - released > 48 << 20, "RSS \(kept >> 20) MB with the freed blocks kept, \(released >> 20) MB released")
    }

    @Test("on jemalloc, a busy worker's kept pages go back once they pass its limit, not before")
    func keptUpToTheLimit() throws {
        try #require(ProcessMemory.runsOnJemalloc, "this test binary should run on jemalloc")
        defer { ProcessMemory.keepFreedPagesWhileBusy(upTo: 1 << 40) }
        // Under a limit far above them, 64 MB of freed blocks stay. They come from an arena of the
        // test's own (made with the decay off), so that another suite's frees cannot move its count.
        #expect(ProcessMemory.keepFreedPagesWhileBusy(upTo: 1 << 40))
        let jemalloc = try #require(JemallocArena())
        defer { jemalloc.destroy() }
        let blocks = (0..<64 * 16).map { _ in jemalloc.allocate(64 << 10) }
        for block in blocks { memset(block, 1, 64 << 10) }
        for block in blocks { jemalloc.free(block) }
        let kept = try #require(jemalloc.keptBytes())
        #expect(kept > 48 << 20, "\(kept >> 20) MB kept")
        #expect(ProcessMemory.releaseKeptPagesOverLimit() == nil)
        #expect(try #require(jemalloc.keptBytes()) > 48 << 20)
        // Past a limit of 32 MB they all go back, and the RSS with them.
        #expect(ProcessMemory.keepFreedPagesWhileBusy(upTo: 32 << 20))
        let before = try #require(ProcessMemory.residentBytes())
        let handedBack = try #require(ProcessMemory.releaseKeptPagesOverLimit())
        #expect(handedBack > 48 << 20)
        let after = try #require(ProcessMemory.residentBytes())
        #expect(before - after > 40 << 20, "RSS \(before >> 20) MB with the freed blocks kept, \(after >> 20) MB past the limit")
        #expect(try #require(jemalloc.keptBytes()) < 16 << 20)
    }

    @Test("on jemalloc, smaller requests are carved out of a large extent of kept pages, not from new ones")
    func smallRequestsReuseKeptExtents() throws {
        // The quire binary's jemalloc options (Sources/CJemallocOptions) are linked into this test binary
        // with the executable's module. With jemalloc's default (requests at most 64 times smaller than
        // the extent), the small blocks below come from new pages and none of the kept ones is reused.
        try #require(ProcessMemory.runsOnJemalloc, "this test binary should run on jemalloc")
        #expect(ProcessMemory.keepFreedPagesWhileBusy(upTo: 1 << 40))
        let jemalloc = try #require(JemallocArena())
        defer { jemalloc.destroy() }
        // A block of 64 MiB, freed: one extent of 64 MiB of kept pages. (Blocks of 1 MiB side by side
        // would lie in the arena's mappings, of a few MiB each at first, and coalesce only within them.)
        let large = jemalloc.allocate(64 << 20)
        memset(large, 1, 64 << 20)
        jemalloc.free(large)
        let kept = try #require(jemalloc.keptBytes())
        #expect(kept >= 64 << 20, "\(kept >> 20) MB kept")
        // 64 blocks of 256 KiB, 256 times smaller than that extent: 16 MiB of it reused.
        let small = (0..<64).map { _ in jemalloc.allocate(256 << 10) }
        defer { for block in small { jemalloc.free(block) } }
        let left = try #require(jemalloc.keptBytes())
        #expect(kept - left >= 15 << 20, "\(kept >> 20) MB kept before the small blocks, \(left >> 20) MB after")
    }
}

/// An arena of jemalloc's made for one test, so that no other test's frees move its statistics:
/// `arenas.create`, `mallocx` and `dallocx` with the arena and no thread cache, `arena.<i>.destroy`.
private struct JemallocArena {
    typealias Mallctl = @convention(c) (UnsafePointer<CChar>?, UnsafeMutableRawPointer?, UnsafeMutablePointer<Int>?, UnsafeMutableRawPointer?, Int) -> Int32
    private let mallctl: Mallctl
    private let mallocx: @convention(c) (Int, Int32) -> UnsafeMutableRawPointer?
    private let dallocx: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Void
    private let index: UInt32

    init?() {
        func symbol<T>(_ name: String) -> T? { dlsym(UnsafeMutableRawPointer(bitPattern: 0), name).map { unsafeBitCast($0, to: T.self) } }
        guard let mallctl: Mallctl = symbol("mallctl"), let mallocx: @convention(c) (Int, Int32) -> UnsafeMutableRawPointer? = symbol("mallocx"),
              let dallocx: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Void = symbol("dallocx") else { return nil }
        var index: UInt32 = 0, size = MemoryLayout<UInt32>.size
        guard mallctl("arenas.create", &index, &size, nil, 0) == 0 else { return nil }
        (self.mallctl, self.mallocx, self.dallocx, self.index) = (mallctl, mallocx, dallocx, index)
    }

    /// MALLOCX_ARENA(index) | MALLOCX_TCACHE_NONE (<jemalloc/jemalloc.h>).
    private var flags: Int32 { Int32(bitPattern: (index + 1) << 20 | 1 << 8) }

    func allocate(_ size: Int) -> UnsafeMutableRawPointer { mallocx(size, flags)! }
    func free(_ block: UnsafeMutableRawPointer) { dallocx(block, flags) }

    /// The arena's kept (dirty) pages in bytes.
    func keptBytes() -> Int? { ProcessMemory.keptFreedBytes(arena: index) }

    func destroy() { _ = mallctl("arena.\(index).destroy", nil, nil, nil, 0) }
}
