/// "Did you mean" for misspelt keys and values.
enum Suggestion {
    /// The candidate closest to `word` by edit distance, if it is close enough to be a plausible typo.
    static func closest(to word: String, in candidates: [String]) -> String? {
        let word = Array(word.lowercased())
        let scored = candidates.map { ($0, distance(word, Array($0.lowercased()))) }
        guard let (best, score) = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return score <= max(2, word.count / 3) && score < word.count ? best : nil
    }

    /// Damerau–Levenshtein (optimal string alignment): transpositions count as one edit.
    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        guard !a.isEmpty else { return b.count }
        guard !b.isEmpty else { return a.count }
        var rows = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
        for i in 0...a.count { rows[i][0] = i }
        for j in 0...b.count { rows[0][j] = j }
        for i in 1...a.count {
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                rows[i][j] = min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    rows[i][j] = min(rows[i][j], rows[i - 2][j - 2] + 1)
                }
            }
        }
        return rows[a.count][b.count]
    }
}
