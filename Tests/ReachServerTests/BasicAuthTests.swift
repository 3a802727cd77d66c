import Foundation
import Hummingbird
import ReachSupport
import ReachTestRigs
import Testing

@testable import ReachServer

@Suite("Basic auth against bcrypt hashes")
struct BasicAuthTests {
    /// The user and password read from an `Authorization` value, as `user/password`.
    static func read(_ header: String) -> String? {
        BasicAuthMiddleware<BasicRequestContext>.credentials(header).map { "\($0.user)/\($0.password)" }
    }

    @Test func theUserAndPasswordAreReadFromTheHeaderAndAColonMayBeInThePassword() {
        #expect(Self.read("Basic " + Data("prometheus:pa:ss".utf8).base64EncodedString()) == "prometheus/pa:ss")
        #expect(Self.read("basic " + Data("u:".utf8).base64EncodedString()) == "u/")
        #expect(Self.read("Bearer abc") == nil)
        #expect(Self.read("Basic not base64!") == nil)
        #expect(Self.read("Basic " + Data("no-colon".utf8).base64EncodedString()) == nil)
    }

    @Test func aHashFromHtpasswdVerifiesItsPasswordInEveryPrefixAndNoOther() async throws {
        let made = try await WebConfigFile.bcryptHash("correct horse")
        // `$2y$` as htpasswd writes it; `$2a$` and `$2b$` are the same algorithm for such a password.
        for prefix in ["$2y$", "$2b$", "$2a$"] {
            let hash = Secret(prefix + made.dropFirst(4))
            #expect(await BasicAuthMiddleware<BasicRequestContext>.verify("correct horse", hash: hash), "\(prefix)")
            #expect(await !BasicAuthMiddleware<BasicRequestContext>.verify("correct horse ", hash: hash), "\(prefix)")
        }
        // An unknown user fails, whatever the password.
        #expect(await !BasicAuthMiddleware<BasicRequestContext>.verify("reachd-timing-equaliser", hash: nil))
    }
}
