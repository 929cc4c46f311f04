/// Levenshtein distance between two sequences (insertions, deletions and substitutions, each 1), in
/// two rows of memory: the benchmarks' character error and the fields' tolerant label match.
public func editDistance<T: Equatable>(_ a: [T], _ b: [T]) -> Int {
    if a.isEmpty { return b.count }
    if b.isEmpty { return a.count }
    var previous = Array(0...b.count)
    var current = [Int](repeating: 0, count: b.count + 1)
    for i in 1...a.count {
        current[0] = i
        let x = a[i - 1]
        for j in 1...b.count {
            let substitution = previous[j - 1] + (x == b[j - 1] ? 0 : 1)
            current[j] = min(substitution, previous[j] + 1, current[j - 1] + 1)
        }
        swap(&previous, &current)
    }
    return previous[b.count]
}
