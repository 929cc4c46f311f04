/// A small FIFO with O(1) amortised append, prepend and popFirst (a ring buffer over an array).
struct Deque<Element: Sendable>: Sendable {
    private var storage: [Element?] = Array(repeating: nil, count: 8)
    private var head = 0
    private(set) var count = 0

    var isEmpty: Bool { count == 0 }

    private mutating func grow() {
        var bigger = [Element?](repeating: nil, count: storage.count * 2)
        for i in 0..<count { bigger[i] = storage[(head + i) % storage.count] }
        storage = bigger
        head = 0
    }

    mutating func append(_ element: Element) {
        if count == storage.count { grow() }
        storage[(head + count) % storage.count] = element
        count += 1
    }

    mutating func prepend(_ element: Element) {
        if count == storage.count { grow() }
        head = (head - 1 + storage.count) % storage.count
        storage[head] = element
        count += 1
    }

    mutating func popFirst() -> Element? {
        guard count > 0 else { return nil }
        let element = storage[head]
        storage[head] = nil
        head = (head + 1) % storage.count
        count -= 1
        return element
    }

    var first: Element? { count > 0 ? storage[head] : nil }

    /// Removes every element matching `predicate`, keeping the order of the rest.
    mutating func removeAll(where predicate: (Element) throws -> Bool) rethrows {
        var kept = Deque()
        while let element = popFirst() {
            if try !predicate(element) { kept.append(element) }
        }
        self = kept
    }

    mutating func removeAll() { self = Deque() }
}
