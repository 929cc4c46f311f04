import Testing
@testable import QuireBench

@Suite("quire bench soak: a process's growth after its warm-up")
struct SoakSummaryTests {
    typealias Sample = SoakBenchReport.ProcessSample

    static func samples(_ megabytes: [Int]) -> [Sample] {
        megabytes.enumerated().map { minute, mb in
            Sample(second: Double(minute) * 60, role: "worker-2", instance: 1, pid: 42, rssBytes: mb << 20, cpuSeconds: Double(minute) * 54,
                   openFiles: 40, threads: 17)
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

    @Test("The floor's window is capped at ten minutes of readings, however often a process is read")
    func tenMinutesOfReadings() {
        // Read every 10 s for an hour: the floor is the lowest of the first and of the last 60 readings after the warm-up.
        let rss = (0..<360).map { index in index < 60 ? 300 : (index == 70 || index == 250 ? 480 : 500 + (index % 6 == 0 ? 200 : 0)) }
        let readings = rss.enumerated().map { index, mb in
            Sample(second: Double(index) * 10, role: "gateway", instance: 1, pid: 7, rssBytes: mb << 20, cpuSeconds: Double(index), openFiles: 39, threads: 24)
        }
        let summary = SoakBenchReport.ProcessSummary(role: "gateway", instance: 1, samples: readings, warmFrom: 600, maxWindow: 60)
        #expect(summary.floorWindow == 60)
        // Reading 70 lies in the first window, 250 in the middle: the last window's lowest is 500.
        #expect(summary.rssFloorWarmBytes == 480 << 20 && summary.rssFloorEndBytes == 500 << 20)
        #expect(summary.rssFloorGrowthPercent == 4.2)
        // One CPU second in every ten.
        #expect(summary.cpuPercent == 10)
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

    @Test("CPU time and minor faults from /proc/PID/stat, counted after the last ')' of the command name")
    func processCPU() {
        let stat = "4242 (quire (soak) x) S 1 4242 4242 0 -1 4194560 9000 0 12 0 1234 566 0 0 20 0 19 0 1000 900000 1200 18446744073709551615"
        let times = SoakStack.cpuTimes(stat: stat, ticksPerSecond: 100)
        #expect(times?.user == 12.34 && times?.system == 5.66 && times?.minorFaults == 9_000)
        #expect(SoakStack.cpuTimes(stat: "4242 (quire) S 1", ticksPerSecond: 100) == nil)
    }

    @Test("The machine's busy and steal shares, and the workers' CPU across a restart")
    func machineAndWorkers() throws {
        let first = try #require(SoakBenchReport.MachineSample.parse("cpu  100 10 40 800 20 5 5 20 7 0\ncpu0 1 2 3\n", at: 0))
        #expect(first.busyTicks == 160 && first.stealTicks == 20 && first.totalTicks == 1_000)
        let second = try #require(SoakBenchReport.MachineSample.parse("cpu  250 10 190 950 20 5 5 70 7 0\n", at: 60))
        #expect(SoakBenchReport.MachineSample.parse("intr 1 2 3\n", at: 0) == nil)

        func reading(_ second: Double, _ role: String, pid: Int32, cpu: Double) -> SoakBenchReport.ProcessSample {
            .init(second: second, role: role, instance: 1, pid: pid, rssBytes: 1 << 20, cpuSeconds: cpu, openFiles: 1, threads: 1)
        }
        // worker-1 (pid 10) killed after its reading at 30 s, its successor (pid 11) read from 40 s; the
        // broker's CPU is not the workers'.
        let readings = [reading(0, "worker-1", pid: 10, cpu: 100), reading(0, "worker-2", pid: 20, cpu: 90), reading(0, "broker", pid: 1, cpu: 5),
                        reading(30, "worker-1", pid: 10, cpu: 127), reading(30, "worker-2", pid: 20, cpu: 117),
                        reading(40, "worker-1", pid: 11, cpu: 2), reading(60, "worker-1", pid: 11, cpu: 20), reading(60, "worker-2", pid: 20, cpu: 144),
                        reading(60, "broker", pid: 1, cpu: 50), reading(70, "worker-2", pid: 20, cpu: 160)]
        let cpu = SoakBenchReport.Interval.cpu(from: 0, to: 60, samples: readings, machine: [first, second])
        #expect(cpu.workerSeconds == 27 + 54 + 18)
        // Any count goes the same way; a reading without it (an older report's) counts nothing.
        #expect(SoakBenchReport.Interval.workers({ $0.pid == 11 ? nil : $0.cpuSeconds }, from: 0, to: 60, samples: readings) == 27 + 54)
        #expect(cpu.workers == 165)
        // 300 ticks of 500 busy (user, system), 50 stolen.
        #expect(cpu.busy == 60 && cpu.steal == 10)
    }
}
