import ReachAPI

extension Summary {
    /// What a `dns` or `icmp` target adds to its line: the resolver that answered (`via
    /// 10.0.0.53:53`), or the burst of echoes (`4/5 echoes, rtt 0.41–0.92 ms, jitter 0.12 ms`).
    static func kindDetail(_ target: StatusDocument.Target) -> String? {
        if let echoes = target.echoes {
            var text = "\(echoes.received)/\(echoes.sent) echoes"
            if let low = echoes.rttMinSeconds, let high = echoes.rttMaxSeconds {
                text += ", rtt \(milliseconds(low).dropLast(3))–\(milliseconds(high))"
            }
            if let jitter = echoes.jitterSeconds { text += ", jitter \(milliseconds(jitter))" }
            return text
        }
        return target.resolver.map { "via \($0)" }
    }
}
