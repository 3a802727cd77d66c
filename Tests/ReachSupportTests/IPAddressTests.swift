import ReachSupport
import Testing

@Suite("IP addresses and prefixes")
struct IPAddressTests {
    @Test(arguments: [
        ("192.168.1.10", "192.168.1.10"),
        ("0.0.0.0", "0.0.0.0"),
        ("255.255.255.255", "255.255.255.255"),
        ("::", "::"),
        ("::1", "::1"),
        ("2001:db8::1", "2001:db8::1"),
        ("2001:0DB8:0000:0000:0000:0000:0000:0001", "2001:db8::1"),
        ("fe80::1:0:0:1", "fe80::1:0:0:1"),
        ("2001:db8:0:0:1:0:0:1", "2001:db8::1:0:0:1"),
        ("2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"),
        ("::ffff:192.0.2.1", "::ffff:c000:201"),
        ("1::", "1::"),
    ])
    func parsesAndPrintsCanonically(text: String, canonical: String) throws {
        let address = try #require(IPAddress(text))
        #expect(address.description == canonical)
        #expect(IPAddress(canonical) == address)
    }

    @Test(arguments: [
        "", "1.2.3", "1.2.3.4.5", "256.1.1.1", "1.2.3.-4", "01234.1.1.1", "a.b.c.d", "1.2.3.4 ",
        ":::", "1:2:3:4:5:6:7:8:9", "1::2::3", "12345::", "g::1", "1:2:3:4:5:6:7", "::1.2.3",
    ])
    func rejectsMalformedText(text: String) {
        #expect(IPAddress(text) == nil)
    }

    @Test func buildsFromNetworkOrderBytes() {
        #expect(IPAddress(bytes: [10, 0, 0, 1])?.description == "10.0.0.1")
        #expect(
            IPAddress(bytes: [0x20, 0x01, 0x0d, 0xb8] + Array(repeating: 0, count: 11) + [1])?.description
                == "2001:db8::1"
        )
        #expect(IPAddress(bytes: [1, 2, 3]) == nil)
    }

    @Test func knowsLoopback() {
        #expect(IPAddress("127.0.0.1")!.isLoopback)
        #expect(IPAddress("127.255.0.9")!.isLoopback)
        #expect(IPAddress("::1")!.isLoopback)
        #expect(!IPAddress("128.0.0.1")!.isLoopback)
        #expect(!IPAddress("::2")!.isLoopback)
    }

    @Test func prefixesContainTheirHostsOnly() throws {
        let lan = try #require(IPPrefix("192.168.1.0/24"))
        #expect(lan.contains(IPAddress("192.168.1.200")!))
        #expect(!lan.contains(IPAddress("192.168.2.1")!))
        #expect(!lan.contains(IPAddress("::1")!))
        #expect(IPPrefix("0.0.0.0/0")!.contains(IPAddress("8.8.8.8")!))
        #expect(IPPrefix("0.0.0.0/0")!.isDefault)
        #expect(IPPrefix("::/0")!.contains(IPAddress("2001:db8::1")!))
        #expect(IPPrefix("2001:db8::/32")!.contains(IPAddress("2001:db8:ffff::1")!))
        #expect(!IPPrefix("2001:db8::/32")!.contains(IPAddress("2001:db9::1")!))
        #expect(IPPrefix("10.0.0.1")!.length == 32)
        #expect(IPPrefix("10.0.0.1/33") == nil)
        #expect(IPPrefix("10.0.0.1/x") == nil)
    }
}
