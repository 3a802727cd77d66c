import ReachSupport
import Testing

/// The one URL reader: what the probes send, where the portal client connects, and where a
/// redirect points.
@Suite("HTTP URLs: host, port, request target, redirects")
struct HTTPURLTests {
    @Test(arguments: [
        ("http://127.0.0.1:8080/api/v1/health", "127.0.0.1", 8080, "/api/v1/health"),
        ("http://example.com", "example.com", 80, "/"),
        ("HTTPS://Example.com", "Example.com", 443, "/"),
        ("http://example.com?ready=1", "example.com", 80, "/?ready=1"),
        ("http://example.com/a/b?x=1&y=2", "example.com", 80, "/a/b?x=1&y=2"),
        ("http://example.com/health#top", "example.com", 80, "/health"),
        ("http://example.com#top", "example.com", 80, "/"),
        ("https://[::1]:8443/health", "::1", 8443, "/health"),
        ("https://[2001:db8::5]/captive?x=1#y", "2001:db8::5", 443, "/captive?x=1"),
        ("http://example.com:/x", "example.com", 80, "/x"),
        ("http://example.com/login?next=http://other.example/", "example.com", 80, "/login?next=http://other.example/"),
    ])
    func readsHostPortAndTarget(url: String, host: String, port: Int, target: String) throws {
        let read = try #require(HTTPURL(url))
        #expect(read.host == host)
        #expect(read.port == port)
        #expect(read.requestTarget == target, "the path and query; a fragment is never sent")
        #expect(read.userinfo == nil)
        #expect(read.text == url)
    }

    @Test func queryAndFragmentAreKeptApart() throws {
        let read = try #require(HTTPURL("https://portal.example/a?b=1#c"))
        #expect(read.isHTTPS)
        #expect(read.path == "/a")
        #expect(read.query == "b=1")
        #expect(read.fragment == "c")
    }

    @Test(arguments: [
        "ftp://example.com/", "example.com/health", "/relative", "//portal.example/login", "http://", "http:///path",
        "http://example.com:0/", "http://example.com:65536/", "http://example.com:+80/", "http://example.com:x/",
        "http://[::1/", "http://::1/", "http://user@/x", "javascript:alert(1)", "",
    ])
    func refusesWhatIsNotAnAbsoluteHTTPURL(text: String) {
        #expect(HTTPURL(text) == nil)
    }

    /// Kept for the caller to refuse (the portal client does) or skip (reading a venue's host).
    @Test func userinfoIsKeptApartFromTheHost() throws {
        let read = try #require(HTTPURL("http://user:secret@portal.test:8080/x"))
        #expect(read.userinfo == "user:secret")
        #expect(read.host == "portal.test")
        #expect(read.port == 8080)
        #expect(
            try #require(HTTPURL("https://a@b@[2001:db8::1]/")).host == "2001:db8::1",
            "the last @ ends the userinfo"
        )
    }

    @Test(arguments: [
        ("http://example.com/x", "example.com"), ("http://example.com:8080/x", "example.com:8080"),
        ("https://example.com:443/", "example.com"),
        ("https://example.com:80/", "example.com:80"), ("https://[::1]:8443/", "[::1]:8443"),
        ("http://[2001:db8::5]/", "[2001:db8::5]"),
    ])
    func theHostHeaderLeavesOutTheSchemesPort(url: String, header: String) throws {
        #expect(try #require(HTTPURL(url)).hostHeader == header)
    }

    /// What the network names as where to sign in is shown and opened: a web page, nothing else.
    @Test func openableIsAWebPageWithoutSpacesOrControls() {
        #expect(HTTPURL.openable("https://portal.example/login?x=1") == "https://portal.example/login?x=1")
        #expect(HTTPURL.openable("HTTP://[2001:db8::1]:8080/") == "HTTP://[2001:db8::1]:8080/")
        for refused in [
            "javascript:alert(1)", "file:///etc/passwd", "/login", "http://", "http://portal.example/a b",
            "http://portal.example/\n",
            "http://portal.example/\u{7F}", "http://portal.example/" + String(repeating: "a", count: 2048),
        ] {
            #expect(HTTPURL.openable(refused) == nil, "\(refused.prefix(40))")
        }
    }

    /// A redirect's `Location` may be relative (RFC 9110 section 10.2.2): resolved as RFC 3986 says.
    @Test(arguments: [
        ("http://portal.example:8080/login", "http://portal.example:8080/login"),
        ("HTTPS://Portal.example/x", "HTTPS://Portal.example/x"),
        ("//portal.example/login", "http://portal.example/login"),
        ("/login", "http://check.example/login"),
        ("/login?next=http://elsewhere.example/", "http://check.example/login?next=http://elsewhere.example/"),
        ("login", "http://check.example/a/login"),
        ("../login", "http://check.example/login"),
        ("./b/../c/./d", "http://check.example/a/c/d"),
        ("/a/../../x", "http://check.example/x"),
        ("?page=2", "http://check.example/a/generate_204?page=2"),
        ("#top", "http://check.example/a/generate_204?q=1#top"),
        ("", "http://check.example/a/generate_204?q=1"),
    ])
    func resolvesALocationAgainstTheRequestURL(location: String, resolved: String) throws {
        let request = try #require(HTTPURL("http://check.example/a/generate_204?q=1"))
        #expect(request.resolving(location)?.text == resolved)
    }

    @Test func resolvingKeepsTheRequestsSchemeAndPort() throws {
        let request = try #require(HTTPURL("https://[2001:db8::5]:8443/x/y"))
        #expect(request.resolving("/login")?.text == "https://[2001:db8::5]:8443/login")
        #expect(request.resolving("//portal.example/")?.text == "https://portal.example/")
        #expect(request.resolving("javascript:alert(1)") == nil, "a scheme of its own is no place on this host")
        #expect(request.resolving("mailto:ops@example.com") == nil)
        #expect(request.resolving("ftp://files.example/") == nil)
    }
}
