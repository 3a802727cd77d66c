import ReachCore
import ReachSupport
import Testing

@Suite("Interface filter globs")
struct InterfaceFilterTests {
    @Test(arguments: [
        ("*", "eth0", true),
        ("eth*", "eth0", true),
        ("eth*", "wlan0", false),
        ("e?h0", "eth0", true),
        ("e?h0", "eh0", false),
        ("wl[a-z]n*", "wlan0", true),
        ("wl[!a]n*", "wlan0", false),
        ("wl[^a]n*", "wlbn0", true),
        ("*0", "enp3s0", true),
        ("*s*0", "enp3s0", true),
        ("*x*", "enp3s0", false),
        ("br-*", "br-1a2b", true),
        ("br-*", "bridge0", false),
        ("[", "[", true),
        ("a*b*c", "aXXbYYc", true),
        ("a*b*c", "aXXbYY", false),
        ("", "", true),
        ("", "eth0", false),
        ("eth[9-0]", "eth5", false),
        ("eth[9-0]", "eth9", false),
        // Brackets as fnmatch reads them: a ] first is literal, a [ without ] is itself.
        ("[]a]", "]", true),
        ("[!]", "x", true),
        ("[a-c-e]", "-", true),
        ("x[", "x[", true),
        ("a[b", "ab", false),
    ])
    func globMatches(pattern: String, name: String, matches: Bool) {
        #expect(InterfaceFilter(include: [pattern], exclude: []).admits(name) == matches)
    }

    /// What the configuration reports: the same brackets the filter matches with.
    @Test func reversedRangesAreFoundInOrder() {
        let ranges = Glob("eth[9-0a-z]x[!z-a]*").reversedRanges.map { "\($0.lower)-\($0.upper)" }
        #expect(ranges == ["9-0", "z-a"])
        #expect(Glob("wl[a-z]n[0-9]").reversedRanges.isEmpty)
        #expect(Glob("[9-0").reversedRanges.isEmpty, "no bracket without its ]")
    }

    @Test func defaultExcludesContainerAndVMPlumbing() {
        let filter = InterfaceFilter()
        for name in [
            "docker0", "br-5f1c2d", "veth1a2b3c", "virbr0", "vnet3", "lxcbr0", "cni0", "flannel.1", "cali123",
            "podman0",
        ] {
            #expect(!filter.admits(name), "\(name) should be excluded by default")
        }
        for name in ["eth0", "enp3s0", "wlan0", "wlp2s0", "wwan0", "wg0", "tun0", "bond0", "br0"] {
            #expect(filter.admits(name), "\(name) should count by default")
        }
    }

    @Test func excludeWinsOverInclude() {
        let filter = InterfaceFilter(include: ["eth*", "wlan*"], exclude: ["eth9"])
        #expect(filter.admits("eth0"))
        #expect(filter.admits("wlan1"))
        #expect(!filter.admits("eth9"))
        #expect(!filter.admits("enp3s0"))
    }
}
