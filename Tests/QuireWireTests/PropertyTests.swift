import Testing
import QuireWire
import QuireTestSupport

/// Random Majordomo-ish messages: mostly well-formed skeletons with random damage, so that both the
/// accepting and every rejecting path are reached, not only "unknown header".
struct MessageGenerator {
    var rng: SplitMix64

    init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    private mutating func chance(_ percent: Int) -> Bool { Int.random(in: 0..<100, using: &rng) < percent }

    private mutating func randomBytes(_ count: ClosedRange<Int>) -> [UInt8] {
        let n = Int.random(in: count, using: &rng)
        return (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
    }

    private mutating func header() -> [UInt8] {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0, 1: Header.mdpc02
        case 2, 3: Header.mdpw02
        case 4: Header.mdpc01
        case 5: Header.mdpw01
        case 6: []
        case 7: Header.mdpc02.dropLast() + [UInt8.random(in: 0...255, using: &rng)]
        default: randomBytes(0...8)
        }
    }

    private mutating func command() -> [UInt8] {
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<7: [UInt8.random(in: 0...7, using: &rng)]
        case 7: []
        case 8: [UInt8.random(in: 0...255, using: &rng)]
        default: randomBytes(2...3)
        }
    }

    private mutating func payloadFrame() -> [UInt8] {
        switch Int.random(in: 0..<12, using: &rng) {
        case 0, 1: return []
        case 2: return bytes(["echo", "ocr", "mmi.service", "é📄"].randomElement(using: &rng)!)
        case 3: return Array(repeating: UInt8(ascii: "s"), count: Int.random(in: 250...260, using: &rng))
        case 4: return [[0xC3, 0x28], [0xFF], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xE2, 0x82]].randomElement(using: &rng)!
        case 5: return bytes("a") + [UInt8.random(in: 0...0x1F, using: &rng)] + bytes("b")
        case 6: return routerAddress
        case 7: return [UInt8.random(in: 0...7, using: &rng)]
        default: return randomBytes(0...24)
        }
    }

    /// A message one of the encoders produced, in a random dialect.
    private mutating func wellFormed() -> [[UInt8]] {
        let dialect = Dialect.allCases.randomElement(using: &rng)!
        let body = (0..<Int.random(in: 0...3, using: &rng)).map { _ in payloadFrame() }
        let service = ["echo", "ocr", "mmi.service", "é📄", String(repeating: "s", count: 255)].randomElement(using: &rng)!
        let kind: ReplyKind = chance(50) ? .partial : .final
        switch Int.random(in: 0..<6, using: &rng) {
        case 0: return MajordomoCodec.clientRequest(dialect, service: service, body: body)
        case 1: return MajordomoCodec.workerReady(dialect, service: service)
        case 2: return MajordomoCodec.workerReply(dialect, kind, address: randomBytes(0...6), body: body)
            ?? MajordomoCodec.workerReply(dialect, .final, address: routerAddress, body: body)!
        case 3: return MajordomoCodec.workerHeartbeat(dialect)
        case 4: return MajordomoCodec.workerDisconnect(dialect)
        default: return MajordomoCodec.clientReply(dialect, kind, service: service, body: body)
            ?? MajordomoCodec.workerRequest(dialect, address: routerAddress, body: body)
        }
    }

    /// One random change: drop, duplicate, replace or insert a frame.
    private mutating func mutate(_ frames: [[UInt8]]) -> [[UInt8]] {
        var frames = frames
        let position = Int.random(in: 0...frames.count, using: &rng)
        switch Int.random(in: 0..<4, using: &rng) {
        case 0 where position < frames.count: frames.remove(at: position)
        case 1 where position < frames.count: frames.insert(frames[position], at: position)
        case 2 where position < frames.count: frames[position] = payloadFrame()
        default: frames.insert(payloadFrame(), at: position)
        }
        return frames
    }

    mutating func next() -> [[UInt8]] {
        if chance(3) { return [] }
        if chance(40) {
            let frames = wellFormed()
            return chance(50) ? mutate(frames) : frames
        }
        var frames: [[UInt8]] = []
        if chance(50) { frames.append([]) }
        if chance(85) {
            frames.append(header())
            if chance(90) { frames.append(command()) }
        }
        for _ in 0..<Int.random(in: 0...6, using: &rng) { frames.append(payloadFrame()) }
        return frames
    }
}

@Suite("Property: random frame arrays")
struct PropertyTests {
    static let seed: UInt64 = 0x5155_4952_4557_4952 // "QUIREWIR"
    static let iterations = 2_000

    @Test("SplitMix64 is deterministic and matches the reference sequence")
    func splitMixReference() {
        // First outputs of the reference splitmix64.c for seed 0.
        var rng = SplitMix64(seed: 0)
        #expect(rng.next() == 0xE220_A839_7B1D_CDAF)
        #expect(rng.next() == 0x6E78_9E6A_A1B9_65F4)
        var a = MessageGenerator(seed: 42), b = MessageGenerator(seed: 42)
        for _ in 0..<50 { #expect(a.next() == b.next()) }
    }

    @Test("decodeAtBroker never crashes; failures are explained, successes re-encode to the input")
    func decodeAtBrokerProperty() throws {
        var generator = MessageGenerator(seed: Self.seed)
        var accepted = 0, rejected = 0
        var roles: Set<String> = []
        for iteration in 0..<Self.iterations {
            let frames = generator.next()
            let context: Comment = "seed \(Self.seed), iteration \(iteration), frames \(frames)"
            switch MajordomoCodec.decodeAtBroker(frames) {
            case .failure(let failure):
                rejected += 1
                roles.insert("\(failure.role)")
                #expect(!failure.error.message.isEmpty, context)
                #expect(!failure.error.description.isEmpty, context)
                #expect(failure.error.code == .badRequest, context)
                #expect(failure.error.retryable == false, context)
                #expect(failure.leadingEmptyFrame == (frames.first?.isEmpty ?? false), context)
                if failure.role == .unknown { #expect(failure.dialect == .mdp02, context) }
                #expect(WireError(jsonFrame: failure.error.jsonFrame) == failure.error, context)
            case .success(let inbound):
                accepted += 1
                switch inbound {
                case .clientRequest(let dialect, let service, let body):
                    #expect(MajordomoCodec.clientRequest(dialect, service: service, body: body) == frames, context)
                case .worker(let dialect, .ready(let service)):
                    #expect(MajordomoCodec.workerReady(dialect, service: service) == frames, context)
                case .worker(let dialect, .reply(let kind, let address, let body)):
                    #expect(MajordomoCodec.workerReply(dialect, kind, address: address, body: body) == frames, context)
                case .worker(let dialect, .heartbeat):
                    let canonical = MajordomoCodec.workerHeartbeat(dialect)
                    #expect(Array(frames.prefix(canonical.count)) == canonical, context)
                case .worker(let dialect, .disconnect):
                    let canonical = MajordomoCodec.workerDisconnect(dialect)
                    #expect(Array(frames.prefix(canonical.count)) == canonical, context)
                }
            }
        }
        // The generator must reach both sides and every role, or the property proves little.
        #expect(accepted >= 300, "only \(accepted) of \(Self.iterations) messages were accepted")
        #expect(rejected >= 800, "only \(rejected) of \(Self.iterations) messages were rejected")
        #expect(roles == ["client", "worker", "unknown"])
    }

    @Test("decodeAtWorker and decodeClientReply never crash; failures are explained", arguments: Dialect.allCases)
    func peerDecodersProperty(_ dialect: Dialect) {
        var generator = MessageGenerator(seed: Self.seed ^ UInt64(dialect.rawValue.utf8.count))
        for iteration in 0..<Self.iterations {
            let frames = generator.next()
            let context: Comment = "iteration \(iteration), frames \(frames)"
            if case .failure(let error) = MajordomoCodec.decodeAtWorker(dialect, frames) {
                #expect(!error.message.isEmpty, context)
                #expect(error.code == .badRequest, context)
            }
            if case .failure(let error) = MajordomoCodec.decodeClientReply(dialect, frames) {
                #expect(!error.message.isEmpty, context)
                #expect(error.code == .badRequest, context)
            }
        }
    }
}
