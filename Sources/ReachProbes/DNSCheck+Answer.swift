import ReachCore
import ReachSupport

extension DNSCheck {
    /// What an answer to this check's query says about the target: `nil` when it is as expected,
    /// else the failure and its detail.
    ///
    /// - The answer must be to the question asked (a server may leave the question out of an
    ///   error answer, as RFC 1035 lets it), else `malformed_answer`.
    /// - Its response code must be ``DNSExpectation/responseCode``. Otherwise `NXDOMAIN`,
    ///   `SERVFAIL` and `REFUSED` are their own reasons (`nxdomain`, `servfail`, `dns_refused`)
    ///   and any other code, or `NOERROR` where an error was expected, `unexpected_answer`.
    /// - Expecting `NOERROR`, the answer section must hold a record of the asked type (a name
    ///   that exists without one, "NODATA", does not resolve), and ``DNSExpectation/answerContains``,
    ///   when set, must be found in one of the section's records (``DNSRecordData/text``).
    package func failure(of answer: DNSMessage) -> ProbeFailure? {
        let name = questionName
        if let question = answer.questions.first {
            guard answer.questions.count == 1, DNSName.same(question.name, name),
                question.type == recordType.code, question.recordClass == 1
            else {
                return ProbeFailure(.malformedAnswer, detail: "the answer is to another question (\(question.name))")
            }
        } else if answer.responseCode == .noError {
            return ProbeFailure(.malformedAnswer, detail: "the answer holds no question")
        }
        let code = answer.responseCode
        let expected = expectation.responseCode
        guard code == expected else {
            switch code {
            case .nonExistentDomain: return ProbeFailure(.nxdomain, detail: "\(name) does not exist")
            case .serverFailure: return ProbeFailure(.servfail)
            case .refused: return ProbeFailure(.dnsRefused)
            default: return ProbeFailure(.unexpectedAnswer, detail: "the answer is \(code), not \(expected)")
            }
        }
        guard code == .noError else { return nil }
        let records = answer.answers.filter { $0.recordClass == 1 }
        guard records.contains(where: { $0.type == recordType.code }) else {
            return ProbeFailure(.unexpectedAnswer, detail: "no \(recordType.rawValue) record for \(name)")
        }
        guard let wanted = expectation.answerContains, !records.contains(where: { $0.data.holds(wanted) }) else {
            return nil
        }
        let seen = records.prefix(4).map(\.data.text).joined(separator: ", ")
        return ProbeFailure(
            .unexpectedAnswer,
            detail: "no record holds \(wanted); the answer: \(seen)\(records.count > 4 ? ", …" : "")"
        )
    }
}

extension DNSRecordData {
    /// Whether this data holds `wanted` (``DNSExpectation/answerContains``): an address equal to it
    /// (when it is one), or text holding it, in any case and without a name's final dot.
    func holds(_ wanted: String) -> Bool {
        if case .address(let address) = self, let other = IPAddress(wanted) { return address == other }
        let needle = (wanted.hasSuffix(".") && wanted != "." ? String(wanted.dropLast()) : wanted).lowercased()
        return text.lowercased().contains(needle)
    }
}
