/// Opens a web page in the person's browser: a captive portal's sign-in page.
///
/// A protocol so that the agent can be tested with an opener that records what it was asked to
/// open; ``DesktopURLOpener`` is the real one.
package protocol URLOpener: Sendable {
    /// Opens `url` and returns how, in words for the log. Throws when no way worked.
    func open(_ url: String) async throws(URLOpenFailure) -> String
}

/// A page that could not be opened, in words for the log.
package struct URLOpenFailure: Error, Sendable, CustomStringConvertible {
    package let description: String

    package init(description: String) {
        self.description = description
    }
}
