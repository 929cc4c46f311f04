import Foundation
import Testing

@testable import QuireBench

/// CPU time read from /proc, as `bench jobs` reports it per submission.
@Suite struct CPUTimeTests {
    @Test("utime and stime are the 14th and 15th fields, counted after a name that may hold spaces and brackets")
    func statFields() {
        let stat = "4242 (quire (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 3 0 100 0 0"
        #expect(CPUTime.seconds(stat: stat) == 300 * CPUTime.tick)
        #expect(CPUTime.seconds(stat: "4242 (short) S 1") == nil)
    }

    @Test("this process's threads are found by name, and the time spent between two samples is counted")
    func threadsOfThisProcess() {
        let before = CPUTime.threads()
        #expect(before.count >= 1)
        // Burn 0.1 s of this thread's CPU (not of the clock: a loaded machine gives less CPU per second).
        var x = 0.0
        func cpu() -> Double {
            var now = timespec()
            clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now)
            return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
        }
        let start = cpu()
        while cpu() - start < 0.1 { x += sin(x + 1) }
        #expect(x != 0.5)
        let after = CPUTime.threads()
        let spent = CPUTime.spent(before.mapValues(\.seconds), after.mapValues(\.seconds))
        #expect(spent >= 0.05)
        #expect(CPUTime.spent(["a": 1.0, "b": 2.0], ["a": 1.5, "b": 2.0, "c": 0.25]) == 0.75)
    }
}
