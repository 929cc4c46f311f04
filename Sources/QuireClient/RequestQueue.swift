/// The requests waiting for a connection, first in first out, without moving the rest at each take.
/// A request taken out is let go at once (its slot emptied): a client sends images, and the slots
/// behind `head` are only reclaimed every thousand or so takes.
struct RequestQueue: Sendable {
    private var items: [ClientMachine.Request?] = []
    private var head = 0

    var count: Int { items.count - head }
    var first: ClientMachine.Request? { head < items.count ? items[head] : nil }

    /// The requests whose bodies the queue holds: the waiting ones, never those taken out.
    var held: Int { items.reduce(0) { $0 + ($1 == nil ? 0 : 1) } }

    mutating func append(_ request: ClientMachine.Request) { items.append(request) }

    mutating func popFirst() -> ClientMachine.Request? {
        guard head < items.count else { return nil }
        let request = items[head]
        items[head] = nil
        head += 1
        if head > 1_024 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return request
    }

    /// Takes out the request `id`; whether it was waiting.
    mutating func remove(_ id: ClientMachine.RequestID) -> Bool {
        guard let index = items[head...].firstIndex(where: { $0?.id == id }) else { return false }
        items.remove(at: index)
        return true
    }

    mutating func removeAll() -> [ClientMachine.Request] {
        defer { items = []; head = 0 }
        return items[head...].compactMap { $0 }
    }
}
