/// What a `dns` target's answer must show (`expect`): the response code, and a record that holds a
/// text. The default, `NOERROR` with at least one record of the asked type, is "the name resolves".
package struct DNSExpectation: Sendable, Hashable {
    /// The code the answer must carry (`expect.rcode`). Expecting `NXDOMAIN` checks that a name
    /// does not exist.
    package var responseCode: DNSResponseCode
    /// A text one record of the answer section must hold (`expect.answer_contains`), as dig prints
    /// its data: an address is compared as an address (`192.0.2.1` is not `192.0.2.10`), a name
    /// without its final dot and in any case, anything else as a part of the text.
    package var answerContains: String?

    package init(responseCode: DNSResponseCode = .noError, answerContains: String? = nil) {
        self.responseCode = responseCode
        self.answerContains = answerContains
    }
}
