import Testing
@testable import QuireBench

@Suite("quire bench soak: a process's growth after its warm-up")
struct SoakSummaryTests {
    typealias Sample = SoakBenchReport.ProcessSample

    static func samples(_ megabytes: [Int]) -> [Sample] {
        megabytes.enumerated().map { minute, mb in
            Sample(second: Double(minute) * 60, role: "worker-2", instance: 1, pid: 42, rssBytes: mb << 20, openFiles: 40, threads: 17)
        }
    }

    @Test("A flat floor under pages' peaks is no growth, though the last sample caught a peak")
    func peaksOverAFlatFloor() {
        // Ten warm-up minutes, then forty at a 495 MB floor with a 250 MB page every few minutes, the last one included.
        let rss = Array(repeating: 300, count: 10) + (0..<40).map { $0 % 4 == 3 ? 745 : 495 + $0 % 2 }
        let summary = SoakBenchReport.ProcessSummary(role: "worker-2", instance: 1, samples: Self.samples(rss), warmFrom: 600)
        #expect(summary.fromSecond == 600 && summary.toSecond == 2_940)
        #expect(summary.rssWarmBytes == 495 << 20 && summary.rssEndBytes == 745 << 20 && summary.rssMaxBytes == 745 << 20)
        #expect(summary.rssGrowthPercent == 50.5)
        #expect(summary.floorWindow == 8)
        #expect(summary.rssFloorWarmBytes == 495 << 20 && summary.rssFloorEndBytes == 495 << 20)
        #expect(summary.rssFloorGrowthPercent == 0)
    }

    @Test("A floor that climbs is growth, whatever the last sample caught")
    func aClimbingFloor() {
        // 2 MB more a minute under the same peaks; the last sample is between pages.
        let rss = Array(repeating: 300, count: 10) + (0..<40).map { ($0 % 4 == 3 ? 745 : 495) + 2 * $0 }
        let summary = SoakBenchReport.ProcessSummary(role: "worker-2", instance: 1, samples: Self.samples(rss), warmFrom: 600)
        #expect(summary.rssFloorWarmBytes == 495 << 20)
        // The last window holds minutes 32–39 of the load: its lowest sample is 495 + 64.
        #expect(summary.rssFloorEndBytes == 559 << 20)
        #expect(summary.rssFloorGrowthPercent == 12.9)
    }

    @Test("A short life: at least two samples a window, and a process sampled only in its warm-up measured from its first")
    func shortLives() {
        let short = SoakBenchReport.ProcessSummary(role: "worker-1", instance: 2, samples: Self.samples([400, 410, 420, 430, 440]), warmFrom: 120)
        #expect(short.fromSecond == 120 && short.floorWindow == 2)
        #expect(short.rssFloorWarmBytes == 420 << 20 && short.rssFloorEndBytes == 430 << 20)
        let young = SoakBenchReport.ProcessSummary(role: "worker-1", instance: 3, samples: Self.samples([400]), warmFrom: 600)
        #expect(young.fromSecond == 0 && young.floorWindow == 1 && young.rssFloorGrowthPercent == 0)
    }
}
