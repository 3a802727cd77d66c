/// Durations kept in ascending order as they come and go, for a window's median: an insertion or
/// a removal finds its place by bisection and moves the elements after it (a window holds tens).
package struct SortedDurations: Sendable {
    package private(set) var elements: [Duration] = []

    package init() {}

    package mutating func insert(_ duration: Duration) {
        elements.insert(duration, at: index(of: duration))
    }

    /// Removes one element equal to `duration`; one must be there.
    package mutating func remove(_ duration: Duration) {
        let index = index(of: duration)
        precondition(index < elements.count && elements[index] == duration, "removing a duration never inserted")
        elements.remove(at: index)
    }

    /// The middle element (the mean of the two middle ones for an even count); `nil` when empty.
    package var median: Duration? {
        guard !elements.isEmpty else { return nil }
        let middle = elements.count / 2
        return elements.count.isMultiple(of: 2) ? (elements[middle - 1] + elements[middle]) / 2 : elements[middle]
    }

    /// The first index whose element is not less than `duration`.
    private func index(of duration: Duration) -> Int {
        var (low, high) = (0, elements.count)
        while low < high {
            let middle = (low + high) / 2
            if elements[middle] < duration { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
