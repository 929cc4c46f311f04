import Foundation
import Imaging
import Testing
import Tesseract

/// The patched engine multiplies its int8 weights with VNNI where the processor has AVX512-VNNI and
/// AVX512VL (scripts/tesseract-patches/0008), with the AVX2 kernels elsewhere. The sums are the same
/// integers either way, so both must read every page alike: the same texts, boxes, confidences and
/// baselines at every level.
@Suite("VNNI kernels: chosen by the processor, and reading every page as the AVX2 kernels do", .serialized)
struct VNNITests {
    /// What /proc/cpuinfo says of this processor (the kernel lists a flag only where the OS enables it).
    static var processorHasVNNI: Bool {
        guard let info = try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8),
              let flags = info.split(separator: "\n").first(where: { $0.hasPrefix("flags") }) else { return false }
        let set = Set(flags.split(separator: " ").map(String.init))
        return set.contains("avx512_vnni") && set.contains("avx512vl")
    }

    @Test("On where the processor has the instructions, and the same elements either way")
    func vnniMatchesAVX2() throws {
        guard let running = Engine.setVNNI(true) else {
            // Debian's 5.3 (the fallback engine) has neither the VNNI kernels nor the switch.
            #expect(!Engine.version.hasPrefix("5.5"), "the patched 5.5 build must have the switch")
            return
        }
        defer { Engine.setVNNI(true) }
        #expect(running == Self.processorHasVNNI, "the kernels' choice must follow the processor's flags")
        let pages = try ActivationsTests.pages()
        let first = try ActivationsTests.read(pages)
        #expect(Engine.setVNNI(false) == false)
        let avx2 = try ActivationsTests.read(pages)
        ActivationsTests.expectSame(first, avx2, pages: pages.count)
    }
}
